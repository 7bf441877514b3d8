// A write's answer is read with the write (Pothos-Prisma's `t.prismaField` hands the client's
// selection to the domain function), not looked up again afterwards: what the SQL statements of a
// write show. And a write checks its rule once: the project a write names is read once per request,
// by the rule and the write alike.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GqlResult, type TestApp, testApp } from '../helpers/app.ts';

let t: TestApp;
let alice: string;

beforeAll(async () => {
  t = await testApp();
  alice = await t.user('alice');
});
afterAll(() => t?.close());

/** The statements a request sent, shortened to their verb and first table. */
async function statementsOf(run: () => Promise<unknown>): Promise<string[]> {
  t.queries.length = 0;
  await run();
  // Transaction control is not a statement of the write (the PostgreSQL adapter records it, PGlite's does not).
  return t.queries
    .filter((q) => !/^\s*(BEGIN|COMMIT|ROLLBACK|START TRANSACTION|SAVEPOINT|RELEASE)\b/i.test(q))
    .map((q) => {
      // A read by the table it reads from, a write by the table it writes (a WITH by its first write).
      const w = /^\s*WITH\s+\w+\s+AS\s+\(\s*(INSERT|UPDATE|DELETE)\s+(?:INTO\s+|FROM\s+)?"(?:public"\.")?(\w+)"/.exec(q);
      if (w) return `${w[1]} ${w[2]}`;
      const m = /^\s*SELECT\b.*?\bFROM\s+"(?:public"\.")?(\w+)"/s.exec(q) ?? /^\s*(?:INSERT INTO|UPDATE|DELETE FROM)\s+"(?:public"\.")?(\w+)"/.exec(q);
      return m ? `${q.trim().split(/\s/)[0]} ${m[1]}` : q.slice(0, 40);
    });
}

const ERRORS = '... on Error { code message }';

describe('the statements of a write', () => {
  it('import: the new project with its maintainers and `latest` is read inside the write, once', async () => {
    let res: GqlResult | undefined;
    const sql = await statementsOf(async () => {
      res = await t.gql(
        `mutation { importProject(input: {name: "Docs", repository: {url: "https://example.org/docs.git"}}) {
           ... on MutationImportProjectSuccess { data { slug users { username } versions { nodes { slug lastBuild { state } } } } } ${ERRORS} } }`,
        {},
        alice,
      );
    });
    expect(res!.data.importProject.data).toMatchObject({
      slug: 'docs',
      users: [{ username: 'alice' }],
      versions: { nodes: [{ slug: 'latest', lastBuild: { state: 'triggered' } }] },
    });
    // After the build is queued (its job), the answer is read once: no second read of the project.
    const queued = sql.indexOf('INSERT Job');
    expect(queued, sql.join('\n')).toBeGreaterThan(0);
    const after = sql.slice(queued + 1);
    expect(after.filter((s) => s === 'SELECT Project')).toHaveLength(1);
  });

  it('update: the project is looked up once, by the rule and the write alike, and not read again for the answer', async () => {
    let res: GqlResult | undefined;
    const sql = await statementsOf(async () => {
      res = await t.gql(
        `mutation { updateProject(slug: "docs", input: {description: "new"}) { ... on MutationUpdateProjectSuccess { data { slug description } } ${ERRORS} } }`,
        {},
        alice,
      );
    });
    expect(res!.data.updateProject.data).toEqual({ slug: 'docs', description: 'new' });
    expect(sql.filter((s) => s === 'SELECT Project')).toHaveLength(2); // the project by slug, the projects alice maintains
    expect(sql.filter((s) => s === 'UPDATE Project')).toHaveLength(1);
    // The write, then its entry in the audit log (docs/design/audit.md), in its transaction.
    expect(sql.slice(-2)).toEqual(['UPDATE Project', 'INSERT AuditEntry']);
  });

  it('a REST PATCH of a project runs the same write: the project is read once, no permission pre-query', async () => {
    let status = 0;
    const sql = await statementsOf(async () => {
      status = (await t.http.patch('/api/v3/projects/docs/').set('authorization', `Token ${alice}`).send({ description: 'newer' })).status;
    });
    expect(status).toBe(204);
    // The token with its user, the project, the projects alice maintains, the update and its audit
    // entry: 5, where the pre-query and a two-statement token lookup made it 7, the project read twice.
    expect(sql).toEqual(['SELECT ApiToken', 'SELECT Project', 'SELECT Project', 'UPDATE Project', 'INSERT AuditEntry']);
  });
});
