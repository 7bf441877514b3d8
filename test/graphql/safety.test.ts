// /graphql faces the internet: a request too deep, too costly or too large is refused before it
// reaches the database, a malformed one gets a JSON 400, and an internal failure is reported
// without SQL, stack traces or file paths.
//
// Each block builds its own app (testApp()), with its own database and settings: they reach the code
// through the app's context (src/graphql/context.ts), not a process-wide locator.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { dbKind } from '../helpers/db.ts';

const post = (t: TestApp, body: string | object, contentType = 'application/json') =>
  t.http.post('/graphql').set('accept', 'application/json').set('content-type', contentType).send(body);

/** A query nesting `levels` subproject → child hops under `project`: depth 3 per level, plus 2. */
function nested(levels: number): string {
  let selection = 'slug';
  for (let i = 0; i < levels; i++) selection = `subprojects { nodes { child { ${selection} } } }`;
  return `{ project(slug: "root") { ${selection} } }`;
}

/** What must never reach a client: SQL, database and driver messages, stack frames, file paths. */
const LEAKS = [
  /select\s/i,
  /\bfrom\s+"/i,
  /"public"\./,
  /relation|does not exist|table/i,
  /prisma/i,
  /pglite|postgres/i,
  /\n\s+at /,
  /\bat .+:\d+:\d+/,
  /\/work\/|node_modules|\.ts\b|\.js\b/,
  /stack/i,
];

describe('query limits (depth 12, complexity 20000 by default)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
    const root = await t.db.prisma.project.create({ data: { name: 'root', slug: 'root', repositoryUrl: 'https://x.org/root' } });
    const child = await t.db.prisma.project.create({ data: { name: 'child', slug: 'child', repositoryUrl: 'https://x.org/child' } });
    await t.db.prisma.subproject.create({ data: { parentId: root.id, childId: child.id, alias: 'child' } });
  });
  afterAll(() => t.close());

  it('runs a query within the depth limit', async () => {
    const res = await t.gql(nested(3));
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({ project: { subprojects: { nodes: [{ child: { subprojects: { nodes: [] } } }] } } });
  });

  it('refuses a query nested deeper than the limit without running it', async () => {
    t.queries.length = 0;
    const res = await t.gql(nested(4));
    expect(res.errors).toEqual([expect.objectContaining({ message: 'Query exceeds maximum depth (depth: 14, max: 12)' })]);
    expect(res.data?.project ?? null).toBeNull();
    expect(t.queries).toEqual([]);
  });

  it('refuses deeply nested introspection', async () => {
    let selection = 'name';
    for (let i = 0; i < 6; i++) selection = `fields { type { ${selection} } }`;
    const res = await t.gql(`{ __schema { types { ${selection} } } }`);
    expect(res.data).toBeUndefined();
    expect(res.errors).toEqual([expect.objectContaining({ message: 'Maximum introspection depth exceeded' })]);
  });

  it('refuses a query above the complexity limit without running it', async () => {
    t.queries.length = 0;
    const res = await t.gql(`{ projects(limit: 100) { nodes { subprojects(limit: 100) { nodes { child { slug } } } } } }`);
    // 100 (a root page) + 100 rows × (10 (a page per row) + 100 rows × (10 (a relation) + 1)).
    expect(res.errors).toEqual([expect.objectContaining({ message: 'Query exceeds maximum complexity (complexity: 111100, max: 20000)' })]);
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_COSTLY', complexity: 111100, maxComplexity: 20000 });
    expect(res.data).toBeNull();
    expect(t.queries).toEqual([]);
  });

  it('adds up the cost of every aliased root field', async () => {
    const page = `projects(limit: 100) { totalCount nodes { slug users { username } activeVersions { slug lastBuild { id state config } } } }`;
    const one = await t.gql(`{ a: ${page} }`);
    expect(one.errors).toBeUndefined();
    t.queries.length = 0;
    const four = await t.gql(`{ a: ${page} b: ${page} c: ${page} d: ${page} }`);
    expect(four.errors?.[0]?.message).toMatch(/^Query exceeds maximum complexity \(complexity: \d+, max: 20000\)$/);
    expect(four.data).toBeNull();
    expect(t.queries).toEqual([]);
  });

  it('refuses 1,000 aliased root lookups before any SQL runs, saying what they cost and what is allowed', async () => {
    const query = `{ ${Array.from({ length: 1_000 }, (_, i) => `a${i}: project(slug: "root") { slug }`).join(' ')} }`;
    t.queries.length = 0;
    const res = await post(t, { query });
    expect(res.status).toBe(400);
    const errors = res.body.errors as { message: string; extensions: Record<string, unknown> }[];
    // Each alias is a lookup of its own: 1,000 × (100 for a root field + 1 for its slug).
    expect(errors[0]).toMatchObject({
      message: 'Query exceeds maximum complexity (complexity: 101000, max: 20000)',
      extensions: { code: 'QUERY_TOO_COSTLY', complexity: 101000, maxComplexity: 20000 },
    });
    // Said once, not once per alias.
    expect(errors).toHaveLength(1);
    expect(Object.values(res.body.data ?? {}).filter((v) => v !== null)).toEqual([]);
    expect(t.queries).toEqual([]);
  });

  it('refuses 10,000 aliased root lookups while parsing (more tokens than a document may hold), before any SQL', async () => {
    const query = `{ ${Array.from({ length: 10_000 }, (_, i) => `a${i}: project(slug: "root") { slug }`).join(' ')} }`;
    t.queries.length = 0;
    const res = await post(t, { query });
    // A request error: 200 under `application/json`, as GraphQL over HTTP has it for that media type.
    expect(res.status).toBeLessThan(500);
    const errors = res.body.errors as { message: string; extensions: Record<string, unknown> }[];
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toMatch(/^Syntax Error: Document contains more th\w+ 20000 tokens\. Parsing aborted\.$/);
    expect(errors[0]!.extensions).toMatchObject({ code: 'QUERY_TOO_COSTLY', maxTokens: 20000 });
    expect(res.body.data ?? null).toBeNull();
    expect(t.queries).toEqual([]);
  });

  it('counts every alias: 198 root lookups run, 199 are refused', async () => {
    const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: project(slug: "root") { slug }`).join(' ')} }`;
    const allowed = await t.gql(aliases(198));
    expect(allowed.errors).toBeUndefined();
    expect(Object.keys(allowed.data)).toHaveLength(198);
    expect(allowed.data.a197).toEqual({ slug: 'root' });
    t.queries.length = 0;
    const refused = await t.gql(aliases(199));
    expect(refused.errors?.[0]?.message).toBe('Query exceeds maximum complexity (complexity: 20099, max: 20000)');
    expect(t.queries).toEqual([]);
  });

  it('runs the dashboard query at its largest page', async () => {
    const res = await t.gql(`{ projects(limit: 100) { totalCount nodes { slug users { username } activeVersions { slug lastBuild { id state config } } } } }`);
    expect(res.errors).toBeUndefined();
    expect(res.data.projects.totalCount).toBe(2);
  });

  it('refuses lookups nested in a page once they add up', async () => {
    const pages = (n: number) =>
      `{ ${Array.from({ length: n }, (_, i) => `p${i}: projects(limit: 100) { nodes { version(slug: "latest") { slug } } }`).join(' ')} }`;
    // 100 + 100 rows × (10 for the lookup + 1): 1200 each.
    expect((await t.gql(pages(16))).errors).toBeUndefined();
    t.queries.length = 0;
    const res = await t.gql(pages(17));
    expect(res.errors?.[0]?.message).toBe('Query exceeds maximum complexity (complexity: 20400, max: 20000)');
    expect(t.queries).toEqual([]);
  });

  it('counts a page by its limit: what a large page selects is paid once per row it may hold', async () => {
    // 5,000 slugs fit the cost limit; 100,000 do not, and are refused before any SQL.
    const ok = await t.gql(`{ projects(limit: 5000) { totalCount nodes { slug } } }`);
    expect(ok.errors).toBeUndefined();
    expect(ok.data.projects).toEqual({ totalCount: 2, nodes: [{ slug: 'child' }, { slug: 'root' }] });
    t.queries.length = 0;
    const big = await t.gql(`{ projects(limit: 100000) { totalCount nodes { slug } } }`);
    expect(big.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COSTLY');
    expect(t.queries).toEqual([]);
  });

  it('refuses a page over LECTERN_API_MAX_LIMIT by name, never cutting it silently', async () => {
    const res = await t.gql(`{ projects(limit: 10001) { totalCount } }`);
    expect(res.errors?.[0]?.message).toBe('limit: Ensure this value is less than or equal to 10000.');
  });
});

describe('what a field costs (limit 100)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ LECTERN_GRAPHQL_MAX_COMPLEXITY: '100' });
  });
  afterAll(() => t.close());

  /** The cost of an operation, as the refusal names it. */
  async function cost(query: string): Promise<number> {
    const res = await t.gql(query);
    const m = /\(complexity: (\d+), max: 100\)$/.exec(res.errors?.[0]?.message ?? '');
    expect(m, JSON.stringify(res)).not.toBeNull();
    return Number(m![1]);
  }

  it('a root field costs 100, a relation or a lookup 10, a scalar 1, each list its length', async () => {
    expect(await cost('{ project(slug: "x") { slug name } }')).toBe(102);
    expect(await cost('{ project(slug: "x") { slug users { username } } }')).toBe(100 + 1 + (10 + 10 * 1));
    expect(await cost('{ project(slug: "x") { version(slug: "latest") { slug lastBuild { id } } } }')).toBe(100 + (10 + 1 + (10 + 1)));
    expect(await cost('{ projects(limit: 3) { nodes { slug documentationUrl } } }')).toBe(100 + 3 * (1 + 10));
    expect(await cost('{ a: viewer { id } b: viewer { id } }')).toBe(2 * 101);
  });

  it('refuses costly mutations with one error before any of them runs', async () => {
    t.queries.length = 0;
    const res = await t.gql(
      `mutation { ${Array.from({ length: 50 }, (_, i) => `a${i}: deleteSubproject(project: "x", alias: "y${i}") { __typename }`).join(' ')} }`,
    );
    expect(res.errors).toEqual([
      expect.objectContaining({
        message: 'Query exceeds maximum complexity (complexity: 5050, max: 100)',
        extensions: expect.objectContaining({ code: 'QUERY_TOO_COSTLY' }),
      }),
    ]);
    expect(res.data).toBeNull();
    expect(t.queries).toEqual([]);
  });
});

describe('heavy operations take turns (LECTERN_GRAPHQL_MAX_COMPLEXITY 4000)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ LECTERN_GRAPHQL_MAX_COMPLEXITY: '4000' });
    const user = await t.db.prisma.user.create({ data: { username: 'maintainer' } });
    await t.db.prisma.project.createMany({
      data: Array.from({ length: 30 }, (_, i) => ({ name: `p${i}`, slug: `p${String(i).padStart(2, '0')}`, repositoryUrl: `https://x.org/p${i}` })),
    });
    await t.db.prisma.user.update({ where: { id: user.id }, data: { projects: { connect: [{ slug: 'p00' }, { slug: 'p01' }] } } });
  });
  afterAll(() => t.close());

  // 100 + 100 rows × (1 + 10 + 10 × 1) = 2200: more than half the limit, so two never run at once.
  const HEAVY = '{ projects(limit: 100) { nodes { slug users { username } } } }';

  it('answers four heavy operations sent at once, running them one after another', async () => {
    t.queries.length = 0;
    const answers = await Promise.all(Array.from({ length: 4 }, () => t.gql(HEAVY)));
    for (const a of answers) {
      expect(a.errors).toBeUndefined();
      expect(a.data.projects.nodes).toHaveLength(30);
      expect(a.data.projects.nodes[0]).toEqual({ slug: 'p00', users: [{ username: 'maintainer' }] });
    }
    // Each operation reads projects, then their maintainers; one at a time, the reads never interleave.
    const tables = t.queries.map((q) => /FROM "public"\."(\w+)"/.exec(q)?.[1]);
    expect(tables).toEqual(['Project', 'User', 'Project', 'User', 'Project', 'User', 'Project', 'User']);
  });

  it('does not hold small operations behind heavy ones', async () => {
    t.queries.length = 0;
    const heavy = Array.from({ length: 3 }, () => t.gql(HEAVY));
    const small = await t.gql('{ project(slug: "p05") { slug } }');
    expect(small.data).toEqual({ project: { slug: 'p05' } });
    await Promise.all(heavy);
    // The small lookup ran while the heavy ones were still queued: its statement is not the last.
    const lookup = t.queries.findIndex((q) => /WHERE .*"slug" = \$1/.test(q));
    expect(lookup).toBeGreaterThanOrEqual(0);
    expect(lookup).toBeLessThan(t.queries.length - 2);
  });
});

describe("REST's own operations", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
  });
  afterAll(() => t.close());

  it('run at the largest page with every expand, though the same selection over /graphql would be refused', async () => {
    const token = await t.user('alice');
    const user = await t.db.prisma.user.findUniqueOrThrow({ where: { username: 'alice' } });
    for (let i = 0; i < 3; i++) {
      await t.db.prisma.project.create({ data: { name: `p${i}`, slug: `p${i}`, repositoryUrl: `https://x.org/p${i}`, users: { connect: { id: user.id } } } });
    }
    const res = await t.http.get('/api/v3/projects/?limit=100&expand=active_versions,permissions,organization').set('authorization', `Token ${token}`);
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(3);
    expect(res.body.results[0]).toMatchObject({ slug: 'p0', permissions: { admin: true } });
    expect(res.body.results[0]).toHaveProperty('active_versions');
    const versions = await t.http.get('/api/v3/projects/p0/versions/?limit=100&expand=last_build').set('authorization', `Token ${token}`);
    expect(versions.status).toBe(200);

    const gql = await t.gql(
      `{ projects(limit: 100) { totalCount nodes { id name slug documentationUrl documentationType translationOf { slug } users { username } viewerIsMaintainer activeVersions { slug documentationUrl vcsUrl downloads { pdf } lastBuild { id } } } } }`,
      {},
      token,
    );
    expect(gql.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COSTLY');
  });
});

describe('request bodies (limit 2048 bytes)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ LECTERN_MAX_BODY_BYTES: '2048' });
  });
  afterAll(() => t.close());

  const query = '{ projects { totalCount } }';
  const padded = `${query} # ${'x'.repeat(4096)}`;
  const bodies: [string, (q: string) => string | object][] = [
    ['application/json', (q) => ({ query: q })],
    ['application/json; charset=utf-8', (q) => JSON.stringify({ query: q })],
    ['application/graphql+json', (q) => JSON.stringify({ query: q })],
    ['application/graphql', (q) => q],
    ['application/x-www-form-urlencoded', (q) => `query=${encodeURIComponent(q)}`],
  ];

  it.each(bodies)('accepts a small %s body', async (contentType, body) => {
    const res = await post(t, body(query), contentType);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { projects: { totalCount: 0 } } });
  });

  it.each(bodies)('answers 413 JSON to a %s body over the limit, without running it', async (contentType, body) => {
    t.queries.length = 0;
    const res = await post(t, body(padded), contentType);
    expect(res.status).toBe(413);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body.errors).toEqual([expect.objectContaining({ message: 'Request body larger than 2048 bytes.' })]);
    expect(t.queries).toEqual([]);
  });

  it('answers 413 to an oversized body of any other type', async () => {
    const res = await post(t, padded, 'text/plain');
    expect(res.status).toBe(413);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
  });

  it.each(['application/json', 'application/graphql+json'])('answers 400 JSON to malformed %s', async (contentType) => {
    const res = await post(t, '{"query": "{ projects { totalCount } }"', contentType);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({ errors: [expect.objectContaining({ message: 'Malformed JSON in request body.' })] });
  });

  it('refuses a request with no query: 400 when the client accepts graphql-response+json, 200 for plain JSON (GraphQL over HTTP)', async () => {
    const modern = await t.http.post('/graphql').set('accept', 'application/graphql-response+json').send({ variables: {} });
    expect(modern.status).toBe(400);
    expect(JSON.parse(modern.text).errors).toEqual([expect.objectContaining({ message: 'Must provide query string.' })]);
    const legacy = await post(t, { variables: {} });
    expect(legacy.status).toBe(200);
    expect(legacy.body.errors).toEqual([expect.objectContaining({ message: 'Must provide query string.' })]);
  });
});

describe('an unexpected internal error', () => {
  let t: TestApp;
  const nodeEnv = process.env.NODE_ENV;
  beforeAll(async () => {
    // Under NODE_ENV=development yoga would attach the original error (message and stack).
    process.env.NODE_ENV = 'development';
    t = await testApp();
  });
  afterAll(async () => {
    process.env.NODE_ENV = nodeEnv;
    await t.close();
  });

  function expectMasked(res: { status: number; text: string }) {
    expect(res.status === 200 || res.status === 500, `status ${res.status}`).toBe(true);
    for (const leak of LEAKS) expect(res.text).not.toMatch(leak);
    const body = JSON.parse(res.text);
    expect(body.errors.length).toBeGreaterThan(0);
    for (const e of body.errors) expect(e).toMatchObject({ message: 'Unexpected error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } });
  }

  it('is reported without SQL, stack traces or file paths, and the server keeps serving', async () => {
    await t.db.prisma.$executeRawUnsafe('DROP TABLE "Project" CASCADE');
    for (const q of ['{ projects { totalCount nodes { slug } } }', '{ project(slug: "x") { slug } }', '{ builds { nodes { project { slug } } } }']) {
      expectMasked(await post(t, { query: q }));
    }
    const health = await t.http.get('/healthz');
    expect(health.status).toBe(200);
  });

  it('while authenticating is a masked 500, not a crash', async () => {
    await t.db.prisma.$executeRawUnsafe('DROP TABLE "ApiToken" CASCADE');
    const res = await t.http
      .post('/graphql')
      .set('accept', 'application/json')
      .set('content-type', 'application/json')
      .set('authorization', 'Token 0123456789abcdef')
      .send({ query: '{ viewer { username } }' });
    expect(res.status).toBe(500);
    expectMasked(res);
  });
});

describe('the log', () => {
  it("keeps a client's refused operations out of the errors, and an unexpected failure in them", async () => {
    const lines: { level: number; msg: string }[] = [];
    const t = await testApp({}, { log: createLogger('debug', { write: (s: string) => void lines.push(JSON.parse(s)) }) });
    try {
      const errors = () => lines.filter((l) => l.level >= 50);
      // Too many tokens, too costly, a field for maintainers asked without a token, a wrong variable.
      expect((await post(t, { query: `{ ${'a: project(slug: "x") { slug } '.repeat(4000)} }` })).status).toBe(400);
      expect((await post(t, { query: `{ ${Array.from({ length: 300 }, (_, i) => `a${i}: project(slug: "x") { slug }`).join(' ')} }` })).status).toBe(400);
      await t.db.prisma.project.create({ data: { name: 'p', slug: 'p', repositoryUrl: 'https://x.org/p' } });
      expect((await t.gql('{ project(slug: "p") { environmentVariables { totalCount } } }')).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      expect((await t.gql('query($n: Int) { projects(limit: $n) { totalCount } }', { n: 'x' })).errors).toHaveLength(1);
      expect(errors()).toEqual([]);
      await t.db.prisma.$executeRawUnsafe('DROP TABLE "Project" CASCADE');
      await post(t, { query: '{ projects { totalCount } }' });
      expect(errors().map((l) => l.msg)).toContain('graphql error');
    } finally {
      await t.close();
    }
  });
});

describe('a closed database', () => {
  it('gives masked errors and no crash', async () => {
    const t = await testApp();
    try {
      await t.db.close();
      for (const q of ['{ projects { totalCount nodes { slug } } }', '{ project(slug: "x") { slug } }']) {
        const res = await post(t, { query: q });
        // PGlite stays closed; the PostgreSQL client reconnects and answers.
        if (res.body.errors) expectLeakFree(res);
        else expect(res.body.data).toBeDefined();
      }
      expect((await t.http.get('/healthz')).status).toBe(200);
    } finally {
      if (t.databaseUrl) await t.close();
      else rmSync(t.dataDir, { recursive: true, force: true });
    }
  });

  function expectLeakFree(res: { status: number; text: string }) {
    expect(res.status === 200 || res.status === 500, `status ${res.status}`).toBe(true);
    for (const leak of LEAKS) expect(res.text).not.toMatch(leak);
    expect(JSON.parse(res.text).errors[0]).toMatchObject({ message: 'Unexpected error.', extensions: { code: 'INTERNAL_SERVER_ERROR' } });
  }
});

describe('the HTTP surface', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
  });
  afterAll(() => t.close());

  it('serves GraphiQL at GET /graphql to a browser', async () => {
    const res = await t.http.get('/graphql').set('accept', 'text/html');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain('<title>Lectern GraphQL</title>');
    expect(res.text.toLowerCase()).toContain('graphiql');
  });

  it('answers GET /graphql?query= with JSON', async () => {
    const res = await t.http.get(`/graphql?query=${encodeURIComponent('{ projects { totalCount } }')}`).set('accept', 'application/json');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { projects: { totalCount: 0 } } });
  });

  it('refuses mutations over GET', async () => {
    const res = await t.http
      .get(`/graphql?query=${encodeURIComponent('mutation { deleteSubproject(project: "a", alias: "b") { __typename } }')}`)
      .set('accept', 'application/json');
    expect(res.status).toBe(405);
  });

  it('/healthz answers 200', async () => {
    const res = await t.http.get('/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('/readyz answers 200 with the kind of database', async () => {
    const res = await t.http.get('/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready', database: dbKind() });
  });

  it.each([
    ['get', '/api/v1/nothing-here/'],
    ['get', '/api/'],
    ['post', '/api/v2/unknown'],
  ] as const)('%s %s answers 404 {"detail":"Not found."}', async (method, path) => {
    const res = await t.http[method](path);
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({ detail: 'Not found.' });
  });
});
