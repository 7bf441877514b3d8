// A query operation runs through graphql-js the first time it is sent and as compiled code from the
// second (src/graphql/compiled.ts). What a client gets must not tell the two apart: the same
// answer, the same statements, the same refusals in the same words, the same masked failures; and
// nothing a client writes in an operation may become code the server runs.
import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GqlResult, type TestApp, testApp } from '../helpers/app.ts';

/** Sends `query` three times: once through graphql-js, then twice compiled. Each answer with the statements it cost. */
async function thrice(t: TestApp, query: string, variables?: Record<string, unknown>, token?: string) {
  const runs: { res: GqlResult; sql: string[] }[] = [];
  for (let i = 0; i < 3; i++) {
    t.queries.length = 0;
    const res = await t.gql(query, variables, token);
    runs.push({ res, sql: [...t.queries] });
  }
  return runs;
}

/** How many operations each executor has run, as /metrics says. */
async function executed(t: TestApp): Promise<{ compiled: number; interpreted: number }> {
  const text = (await t.http.get('/metrics')).text;
  const count = (executor: string) => Number(new RegExp(`^lectern_graphql_operations_total\\{executor="${executor}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  return { compiled: count('compiled'), interpreted: count('interpreted') };
}

/**
 * The distinct statements sent, whatever their order and however lookups were batched: on
 * PostgreSQL statements run at once on several connections, and lookups made in one turn of the
 * event loop share a statement, so both depend on timing (test/graphql/query-count.test.ts counts
 * them where they do not).
 */
const statements = (sql: string[]) => [...new Set(sql.map((s) => s.replace(/\$\d+(,\$\d+)*/g, '$')))].sort();

/** A build config as the builder stores it, distinct per version so mix-ups show. */
const configOf = (project: string, version: string) => ({ version: 2, sphinx: { configuration: `docs/${project}/${version}/conf.py` }, formats: ['pdf'] });

describe('a query operation, interpreted and then compiled', () => {
  let t: TestApp;
  let alice: string;
  beforeAll(async () => {
    t = await testApp();
    alice = await t.user('alice');
    const db = t.db.prisma;
    for (const [slug, privacyLevel] of [
      ['alpha', 'public'],
      ['beta', 'public'],
      ['secret', 'private'],
    ] as const) {
      const p = await db.project.create({
        data: { name: slug, slug, privacyLevel, repositoryUrl: `https://github.com/acme/${slug}`, users: { connect: { username: 'alice' } } },
      });
      for (const v of ['v1.0', 'v2.0']) {
        const version = await db.version.create({
          data: { projectId: p.id, slug: v, verboseName: v, identifier: v, type: 'tag', active: true, built: true },
        });
        const build = await db.build.create({
          data: { projectId: p.id, versionId: version.id, versionSlug: v, state: 'finished', success: true, config: configOf(slug, v), finishedAt: new Date() },
        });
        await db.version.update({ where: { id: version.id }, data: { lastBuildId: build.id } });
      }
    }
    const parent = await db.project.findUniqueOrThrow({ where: { slug: 'alpha' } });
    const child = await db.project.findUniqueOrThrow({ where: { slug: 'beta' } });
    await db.subproject.create({ data: { parentId: parent.id, childId: child.id, alias: 'b' } });
  }, 60_000);
  afterAll(() => t.close());

  const RICH = `query Rich($limit: Int!, $withBuilds: Boolean!, $skipUsers: Boolean!, $slug: String = "alpha") {
    viewer { username }
    projects(limit: $limit) {
      totalCount
      nodes {
        ...Summary
        documentationUrl
        superproject { slug }
        users @skip(if: $skipUsers) { username }
        first: version(slug: "v1.0") { slug documentationUrl }
        activeVersions { slug built vcsUrl downloads { pdf } lastBuild @include(if: $withBuilds) { id state config createdAt project { slug } } }
      }
    }
    one: project(slug: $slug) { ...Summary subprojects { totalCount nodes { alias child { slug documentationUrl } } } }
    missing: project(slug: "nope") { slug }
  }
  fragment Summary on Project { __typename id slug name privacyLevel language { code name } }`;

  it('gives the same answer from the same statements, signed in and not', async () => {
    for (const token of [alice, undefined]) {
      const before = await executed(t);
      const runs = await thrice(t, RICH, { limit: 10, withBuilds: true, skipUsers: false }, token);
      const after = await executed(t);
      // The first run of all is interpreted, each after it compiled (the document is kept between requests).
      expect(after.compiled - before.compiled).toBe(token ? 2 : 3);
      expect(after.interpreted - before.interpreted).toBe(token ? 1 : 0);
      const [first, ...compiled] = runs;
      expect(first!.res.errors).toBeUndefined();
      const slugs = first!.res.data.projects.nodes.map((p: { slug: string }) => p.slug);
      expect(slugs).toEqual(token ? ['alpha', 'beta', 'secret'] : ['alpha', 'beta']);
      expect(first!.res.data.projects.nodes[1].superproject).toEqual({ slug: 'alpha' });
      expect(first!.res.data.projects.nodes[0].activeVersions[0].lastBuild.config).toEqual(configOf('alpha', 'v2.0'));
      expect(first!.res.data.one.subprojects.nodes).toEqual([
        { alias: 'b', child: { slug: 'beta', documentationUrl: expect.stringContaining('/projects/b/') } },
      ]);
      expect(first!.res.data.missing).toBeNull();
      for (const run of compiled) {
        expect(run.res).toEqual(first!.res);
        expect(statements(run.sql)).toEqual(statements(first!.sql));
      }
    }
  });

  it('follows @include and @skip as the variables of each request say', async () => {
    await thrice(t, RICH, { limit: 10, withBuilds: true, skipUsers: false }, alice);
    const res = await t.gql(RICH, { limit: 10, withBuilds: false, skipUsers: true, slug: 'beta' }, alice);
    expect(res.errors).toBeUndefined();
    expect(res.data.projects.nodes[0]).not.toHaveProperty('users');
    expect(res.data.projects.nodes[0].activeVersions[0]).not.toHaveProperty('lastBuild');
    expect(res.data.one.slug).toBe('beta');
  });

  it('answers introspection the same (GraphiQL and codegen send it again and again)', async () => {
    const runs = await thrice(t, getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true }));
    expect(runs[0]!.res.data?.__schema?.types?.length).toBeGreaterThan(50);
    for (const run of runs) expect(run.res).toEqual(runs[0]!.res);
  });

  it('refuses a wrong variable in the same words', async () => {
    const query = 'query Page($limit: Int!) { projects(limit: $limit) { nodes { slug } } }';
    const first = await t.gql(query, { limit: 'ten' });
    await t.gql(query, { limit: 1 });
    const compiled = await t.gql(query, { limit: 'ten' });
    expect(first.errors?.[0]?.message).toBe('Variable "$limit" got invalid value "ten"; Int cannot represent non-integer value: "ten"');
    expect(compiled).toEqual(first);
    const missing = await t.gql(query, {});
    expect(missing.errors?.[0]?.message).toBe('Variable "$limit" of required type "Int!" was not provided.');
  });

  it('refuses what a reader may not see, each time alike', async () => {
    const runs = await thrice(t, '{ project(slug: "alpha") { slug environmentVariables { totalCount } } }');
    expect(runs[0]!.res.errors?.[0]?.extensions?.code).toBeTruthy();
    for (const run of runs) expect(run.res).toEqual(runs[0]!.res);
  });

  it("runs a string holding graphql-jit's markers as text, never as code", async () => {
    const g = globalThis as { lecternCompiledProbe?: unknown };
    // graphql-jit writes literal arguments into its code as JSON, then turns its markers back into
    // code: `new Date(<what follows the marker>)`. Neither a literal nor a variable's default may.
    const payload = '__MAGIC_DATE__33a9e76d_02e0_4128_8e92_3530ad3da74d(globalThis.lecternCompiledProbe=1)';
    for (const query of [
      `{ project(slug: ${JSON.stringify(payload)}) { slug } }`,
      `query($slug: String! = ${JSON.stringify(payload)}) { project(slug: $slug) { slug } }`,
      `{ projects(limit: 1) { nodes { version(slug: ${JSON.stringify(`x${payload}`)}) { slug } } } }`,
    ]) {
      const before = await executed(t);
      for (const run of await thrice(t, query)) {
        expect(run.res.errors).toBeUndefined();
        expect(g.lecternCompiledProbe).toBeUndefined();
      }
      // Such a document is never compiled.
      expect((await executed(t)).compiled).toBe(before.compiled);
    }
  });
});

describe('an unexpected failure of a compiled query', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
  });
  afterAll(() => t.close());

  it('is masked as it is for graphql-js', async () => {
    const query = '{ projects { totalCount nodes { slug } } }';
    for (let i = 0; i < 2; i++) expect((await t.gql(query)).errors).toBeUndefined();
    await t.db.prisma.$executeRawUnsafe('DROP TABLE "Project" CASCADE');
    const res = await t.http.post('/graphql').set('accept', 'application/json').send({ query });
    expect(res.text).not.toMatch(/select|"public"\.|prisma|\n\s+at |node_modules|\.ts\b/i);
    const body = JSON.parse(res.text);
    expect(body.errors.length).toBeGreaterThan(0);
    for (const e of body.errors) expect(e).toMatchObject({ message: 'Unexpected error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } });
  });
});
