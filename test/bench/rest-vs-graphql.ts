// Benchmark (not a test): the cost of the REST adapter and of the GraphQL core. In one process and
// one run, on a real PostgreSQL, two reads, each from four endpoints that return the same data:
//   detail    /api/v3/projects/<slug>/?expand=active_versions.last_build (10 versions)
//   list      /api/v3/projects/?expand=active_versions&limit=100 (100 projects, 3 versions each)
// and for each:
//   rest      the REST v3 route
//   graphql   POST /graphql with the operation the route runs, sent by hand
//   direct    a hand-written express handler: the same token check, one Prisma query, JSON
//   rawsql    the same answer from raw SQL with the pg driver (two statements, JSON built in Node)
// The four answers are checked to be the same JSON before anything is timed. It prints requests per
// second, p50/p99 latency, this process's CPU time per request and the ratios. Targets (issue 23):
// REST within 1.1x the cost of GraphQL, GraphQL within 1.3x of the hand-written handler and within
// 2.5x of raw SQL.
// Run: npx tsx test/bench/rest-vs-graphql.ts [seconds-per-round] [detail|list] [rows, e.g. graphql]
// First: the app runs as `lectern serve` runs it, in production mode (src/bin.js).
import './production-mode.ts';

import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import { print } from 'graphql';
import pg from 'pg';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { createUser } from '../../src/domain/users.ts';
import type { Prisma } from '../../src/generated/prisma/client.ts';
import { schema } from '../../src/graphql/schema.ts';
import { createLogger } from '../../src/log.ts';
import { parseFlex } from '../../src/rest/flex.ts';
import { drfDateTime, v3Json } from '../../src/rest/format.ts';
import { buildOperation } from '../../src/rest/operation.ts';
import { selection } from '../../src/rest/resource.ts';
import { v3Routes } from '../../src/rest/v3/routes.ts';
import { hashToken } from '../../src/secrets.ts';
import { startPostgres, withDatabase } from '../setup/postgres.ts';

const seconds = Number(process.argv[2] ?? 8);
const only = process.argv[3];
// A profile of one row: `... 8 detail graphql` loads that row alone and prints no ratios.
const rows = process.argv[4]?.split(',');
const VERSIONS = 10;
const LISTED = 100;
const LISTED_VERSIONS = 3;

const { adminUrl, stop } = await startPostgres();
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query('DROP DATABASE IF EXISTS lectern_bench');
await admin.query('CREATE DATABASE lectern_bench');
await admin.end();
const databaseUrl = withDatabase(adminUrl, 'lectern_bench');
const db = await openDatabase({ dataDir: '/tmp/lectern-bench', databaseUrl });
const prisma = db.prisma;

// A project with ten active, built versions, each with a finished build and its config.
const { user, token } = await createUser(prisma, 'bench');
const project = await prisma.project.create({
  data: { name: 'Bench', slug: 'bench', repositoryUrl: 'https://github.com/acme/bench', users: { connect: { id: user.id } } },
});
for (let i = 0; i < VERSIONS; i++) {
  const v = await prisma.version.create({
    data: { projectId: project.id, slug: `v${i}.0`, verboseName: `v${i}.0`, identifier: `tag${i}`, type: 'tag', active: true, built: true },
  });
  const b = await prisma.build.create({
    data: {
      projectId: project.id,
      versionId: v.id,
      versionSlug: v.slug,
      state: 'finished',
      success: true,
      commit: 'a1b2c3d4',
      duration: 42,
      config: { version: '2', formats: ['htmlzip'], sphinx: { builder: 'sphinx', configuration: 'docs/conf.py', fail_on_warning: false } },
      finishedAt: new Date(),
    },
  });
  await prisma.version.update({ where: { id: v.id }, data: { lastBuildId: b.id } });
}

// A hundred more projects of the same maintainer, with three active, built versions each: the list.
for (let i = 0; i < LISTED; i++) {
  const p = await prisma.project.create({
    data: {
      name: `Listed ${i}`,
      slug: `listed-${String(i).padStart(3, '0')}`,
      repositoryUrl: `https://github.com/acme/listed-${i}`,
      users: { connect: { id: user.id } },
    },
  });
  for (let j = 0; j < LISTED_VERSIONS; j++) {
    await prisma.version.create({
      data: { projectId: p.id, slug: `v${j}.0`, verboseName: `v${j}.0`, identifier: `tag${j}`, type: 'tag', active: true, built: true },
    });
  }
}

const config = loadConfig({
  LECTERN_DATA_DIR: '/tmp/lectern-bench',
  DATABASE_URL: databaseUrl,
  LECTERN_LOG_LEVEL: 'silent',
  LECTERN_API_THROTTLE: '0',
  // The list's operation, sent by hand, is over the default cost limit (171,900 of 20,000, each
  // version's alias a lookup; the REST route's own operation is not held to it): an operator
  // serving such pages raises it.
  LECTERN_GRAPHQL_MAX_COMPLEXITY: '250000',
  LECTERN_PUBLIC_URL: 'http://127.0.0.1:8000',
});
const { app } = buildApp({ config, db, log: createLogger('silent'), secretKey: 'bench-secret-key-0123456789abcdef012345' });

// The hand-written handler: what a developer would write without the GraphQL core, giving the
// same JSON as the REST route from one Prisma query (plus the token check).
const projectLinks = (api: string) => ({
  _self: `${api}/`,
  versions: `${api}/versions/`,
  builds: `${api}/builds/`,
  environmentvariables: `${api}/environmentvariables/`,
  redirects: `${api}/redirects/`,
  subprojects: `${api}/subprojects/`,
  superproject: `${api}/superproject/`,
  translations: `${api}/translations/`,
  notifications: `${api}/notifications/`,
  sync_versions: `${api}/sync-versions/`,
});
const tokenUser = async (authorization: string | undefined) => {
  const key = /^Token (\S+)$/.exec(authorization ?? '')?.[1];
  return key ? await prisma.apiToken.findUnique({ where: { keyHash: hashToken(key) }, select: { userId: true } }) : null;
};
app.get('/bench/direct/:slug/', async (req, res) => {
  const t = await tokenUser(req.headers.authorization);
  if (!t) return void res.status(401).json({ detail: 'Authentication credentials were not provided.' });
  const [p] = await directProjects({ slug: req.params.slug }, t.userId, true, 1);
  if (!p) return void res.status(404).json({ detail: 'No Project matches the given query.' });
  res.type('application/json').send(v3Json(projectBody(p, true)));
});
app.get('/bench/direct-list/', async (req, res) => {
  const t = await tokenUser(req.headers.authorization);
  if (!t) return void res.status(401).json({ detail: 'Authentication credentials were not provided.' });
  const mine = { users: { some: { id: t.userId } } };
  const [projects, count] = await Promise.all([directProjects(mine, t.userId, false, LISTED), prisma.project.count({ where: mine })]);
  res.type('application/json').send(
    v3Json(
      listBody(
        projects.map((p) => projectBody(p, false)),
        count,
      ),
    ),
  );
});

/** Projects the user can see, with their active versions (and their last builds). */
type DirectProject = NonNullable<Awaited<ReturnType<typeof directProjects>>>[number];
function directProjects(where: Prisma.ProjectWhereInput, userId: number, lastBuild: boolean, take: number) {
  return prisma.project.findMany({
    where: { AND: [where, { OR: [{ privacyLevel: 'public' }, { users: { some: { id: userId } } }] }] },
    orderBy: { slug: 'asc' },
    take,
    include: {
      users: { select: { username: true }, orderBy: { username: 'asc' } },
      superprojects: { include: { parent: { select: { slug: true } } } },
      mainLanguageProject: { select: { slug: true } },
      versions: {
        where: { active: true, built: true, privacyLevel: 'public', type: { not: 'external' } },
        orderBy: { verboseName: 'desc' },
        include: { lastBuild: lastBuild },
      },
    },
  });
}
/** REST v3's page of the first LISTED of `count` projects. */
function listBody(results: unknown[], count: number) {
  return {
    count,
    next: count > LISTED ? `${config.publicUrl}/api/v3/projects/?expand=active_versions&limit=${LISTED}&offset=${LISTED}` : null,
    previous: null,
    results,
  };
}
function projectBody(p: DirectProject, withLastBuild: boolean) {
  const root = `${config.publicUrl}/api/v3/projects`;
  const api = `${root}/${p.slug}`;
  const docs = (v: string) => `${config.publicUrl}/docs/${p.slug}/${p.language}/${v}/`;
  const related = (r: { slug: string } | null | undefined) => (r ? { slug: r.slug, _links: projectLinks(`${root}/${r.slug}`) } : null);
  const body = {
    id: p.id,
    name: p.name,
    slug: p.slug,
    created: drfDateTime(p.createdAt.toISOString()),
    modified: drfDateTime(p.modifiedAt.toISOString()),
    language: { code: p.language, name: 'English' },
    programming_language: { code: p.programmingLanguage, name: 'Only Words' },
    homepage: p.homepage || null,
    repository: { url: p.repositoryUrl, type: p.repositoryType },
    default_version: p.defaultVersion,
    default_branch: p.defaultBranch ?? 'master',
    subproject_of: p.mainLanguageProject ? null : related(p.superprojects[0]?.parent),
    translation_of: related(p.mainLanguageProject),
    urls: {
      documentation: docs(p.defaultVersion),
      home: `${config.publicUrl}/docs/${p.slug}/`,
      builds: `${api}/builds/`,
      versions: `${api}/versions/`,
      downloads: null,
    },
    tags: [...p.tags].sort(),
    users: p.users,
    privacy_level: p.privacyLevel,
    external_builds_privacy_level: p.externalBuildsPrivacyLevel,
    versioning_scheme: p.versioningScheme,
    single_version: p.singleVersion,
    readthedocs_yaml_path: p.readthedocsYamlPath,
    _links: projectLinks(api),
    active_versions: Object.fromEntries(
      p.versions.map((v) => {
        const b = 'lastBuild' in v ? v.lastBuild : null;
        const dl = (f: string) => `${config.publicUrl}/docs/${p.slug}/_/downloads/${p.language}/${v.slug}/${f}/`;
        return [
          v.slug,
          {
            id: v.id,
            slug: v.slug,
            verbose_name: v.verboseName,
            identifier: v.identifier,
            // The bench's versions are tags: neither stable nor latest, so no alias and no ref (a
            // hand-written handler serving those would read their original too).
            ref: null,
            aliases: [],
            built: v.built,
            active: v.active,
            hidden: v.hidden,
            type: v.type,
            privacy_level: v.privacyLevel,
            downloads: {
              ...(v.hasPdf ? { pdf: dl('pdf') } : {}),
              ...(v.hasHtmlzip ? { htmlzip: dl('htmlzip') } : {}),
              ...(v.hasEpub ? { epub: dl('epub') } : {}),
            },
            urls: {
              documentation: docs(v.slug),
              vcs: `${p.repositoryUrl}/tree/${v.verboseName}/`,
              dashboard: { edit: `${config.publicUrl}/projects/${p.slug}/versions` },
            },
            _links: { _self: `${api}/versions/${v.slug}/`, builds: `${api}/versions/${v.slug}/builds/`, project: `${api}/` },
            ...(withLastBuild && {
              last_build: b && {
                id: b.id,
                version: b.versionSlug,
                project: p.slug,
                created: drfDateTime(b.createdAt.toISOString()),
                finished: drfDateTime(b.finishedAt?.toISOString()),
                duration: b.duration,
                state: { code: b.state, name: b.state.charAt(0).toUpperCase() + b.state.slice(1) },
                success: b.state === 'finished' ? b.success : null,
                error: b.error,
                commit: b.commit,
                _links: {
                  _self: `${api}/builds/${b.id}/`,
                  project: `${api}/`,
                  version: `${api}/versions/${b.versionSlug}/`,
                  notifications: `${api}/builds/${b.id}/notifications/`,
                },
                urls: { build: `${api}/builds/${b.id}/`, project: `${api}/`, version: `${api}/versions/${b.versionSlug}/` },
              },
            }),
          },
        ];
      }),
    ),
  };
  return body;
}

// The same answers from raw SQL with the pg driver: two statements (the projects with the token
// check, maintainers and parents; their versions, with their last builds for the detail), rows
// shaped as Prisma's, the JSON built in Node by the same function.
const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
const PROJECT_COLUMNS = `p.*,
       ARRAY(SELECT u.username FROM "User" u JOIN "_ProjectMaintainers" m ON m."B" = u.id WHERE m."A" = p.id ORDER BY u.username) AS usernames,
       (SELECT pp.slug FROM "ProjectRelationship" r JOIN "Project" pp ON pp.id = r."parentId" WHERE r."childId" = p.id LIMIT 1) AS "parentSlug",
       (SELECT m.slug FROM "Project" m WHERE m.id = p."mainLanguageProjectId") AS "mainSlug"`;
const ACTIVE = `v.active AND v.built AND v."privacyLevel" = 'public' AND v.type <> 'external'`;
type Row = Record<string, unknown>;
function rawProject(row: Row, versions: Row[]): DirectProject {
  const date = (d: unknown) => (d ? new Date(d as string) : null);
  return {
    ...row,
    users: (row.usernames as string[]).map((username) => ({ username })),
    superprojects: row.parentSlug ? [{ parent: { slug: row.parentSlug } }] : [],
    mainLanguageProject: row.mainSlug ? { slug: row.mainSlug } : null,
    versions: versions.map((v) => {
      const b = v.lastBuild as Row | null | undefined;
      return b === undefined ? v : { ...v, lastBuild: b && { ...b, duration: b.length, createdAt: date(b.createdAt), finishedAt: date(b.finishedAt) } };
    }),
  } as unknown as DirectProject;
}
const keyHashOf = (authorization: string | undefined) => {
  const key = /^Token (\S+)$/.exec(authorization ?? '')?.[1];
  return key ? hashToken(key) : '';
};
app.get('/bench/rawsql/:slug/', async (req, res) => {
  const { rows } = await pool.query(
    `SELECT ${PROJECT_COLUMNS}, (SELECT "userId" FROM "ApiToken" WHERE "keyHash" = $2) AS "viewerId",
       EXISTS (SELECT 1 FROM "_ProjectMaintainers" m JOIN "ApiToken" t ON t."userId" = m."B" WHERE m."A" = p.id AND t."keyHash" = $2) AS maintains
     FROM "Project" p WHERE p.slug = $1`,
    [req.params.slug, keyHashOf(req.headers.authorization)],
  );
  const row = rows[0];
  if (!row?.viewerId) return void res.status(401).json({ detail: 'Authentication credentials were not provided.' });
  if (row.privacyLevel !== 'public' && !row.maintains) return void res.status(404).json({ detail: 'No Project matches the given query.' });
  const versions = await pool.query(
    `SELECT v.*, row_to_json(b.*) AS "lastBuild" FROM "Version" v LEFT JOIN "Build" b ON b.id = v."lastBuildId"
     WHERE v."projectId" = $1 AND ${ACTIVE} ORDER BY v."verboseName" DESC`,
    [row.id],
  );
  res.type('application/json').send(v3Json(projectBody(rawProject(row, versions.rows), true)));
});
app.get('/bench/rawsql-list/', async (req, res) => {
  // The caller's projects (a maintainer sees their own, private ones too), with the total.
  const { rows } = await pool.query(
    `SELECT viewer.id AS "viewerId", count(p.id) OVER () AS total, ${PROJECT_COLUMNS}
     FROM (SELECT "userId" AS id FROM "ApiToken" WHERE "keyHash" = $1) viewer
     LEFT JOIN LATERAL (SELECT p.* FROM "Project" p JOIN "_ProjectMaintainers" m ON m."A" = p.id AND m."B" = viewer.id) p ON true
     ORDER BY p.slug LIMIT $2`,
    [keyHashOf(req.headers.authorization), LISTED],
  );
  if (!rows[0]?.viewerId) return void res.status(401).json({ detail: 'Authentication credentials were not provided.' });
  const projects = rows.filter((r) => r.id !== null);
  const versions = await pool.query(`SELECT v.* FROM "Version" v WHERE v."projectId" = ANY($1) AND ${ACTIVE} ORDER BY v."verboseName" DESC`, [
    projects.map((p) => p.id),
  ]);
  const byProject = Map.groupBy(versions.rows as Row[], (v) => v.projectId as number);
  const results = projects.map((p) => projectBody(rawProject(p, byProject.get(p.id) ?? []), false));
  res.type('application/json').send(v3Json(listBody(results, Number(rows[0].total))));
});

const server = app.listen(0, '127.0.0.1');
await new Promise((r) => server.once('listening', r));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

// The same operations the REST routes run, sent by hand: what a GraphQL client asking for the same
// data would send.
const operation = (name: string, expand: string, variables: object) => {
  const route = v3Routes.find((r) => r.name === name)!;
  return JSON.stringify({ query: print(buildOperation(schema, route, selection(route.resource!, parseFlex({ expand })))), variables });
};
const scenarios = {
  detail: {
    title: `one project, ${VERSIONS} active versions with their last builds`,
    rest: { method: 'GET' as const, path: '/api/v3/projects/bench/?expand=active_versions.last_build' },
    graphql: { method: 'POST' as const, path: '/graphql', body: operation('projects-detail', 'active_versions.last_build', { project: 'bench' }) },
    direct: { method: 'GET' as const, path: '/bench/direct/bench/' },
    rawsql: { method: 'GET' as const, path: '/bench/rawsql/bench/' },
  },
  list: {
    title: `a page of ${LISTED} projects with their active versions (${LISTED_VERSIONS} each)`,
    rest: { method: 'GET' as const, path: `/api/v3/projects/?expand=active_versions&limit=${LISTED}` },
    graphql: {
      method: 'POST' as const,
      path: '/graphql',
      body: operation('projects-list', 'active_versions', { filter: { mine: true }, limit: LISTED, offset: 0 }),
    },
    direct: { method: 'GET' as const, path: '/bench/direct-list/' },
    rawsql: { method: 'GET' as const, path: '/bench/rawsql-list/' },
  },
};
type Scenario = keyof typeof scenarios;
const allNames = ['rest', 'graphql', 'direct', 'rawsql'] as const;
type Name = (typeof allNames)[number];
const names = allNames.filter((n) => !rows || rows.includes(n));
type Target = { method: 'GET' | 'POST'; path: string; body?: string };

const headers = { authorization: `Token ${token}`, 'content-type': 'application/json', accept: 'application/json' };
async function load(name: string, t: Target, duration: number) {
  const result = await autocannon({ url: `${base}${t.path}`, method: t.method, body: t.body, headers, connections: 10, duration });
  if (result.non2xx || result.errors) throw new Error(`${name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return result;
}

/** The answer of one endpoint, as the REST route would give it (GraphQL's turned into REST's by the route's own shaping). */
async function answer(scenario: Scenario, name: Name): Promise<unknown> {
  const t: Target = scenarios[scenario][name];
  const res = await fetch(`${base}${t.path}`, { method: t.method, body: t.body, headers });
  if (!res.ok) throw new Error(`${scenario} ${name}: ${res.status} ${await res.text()}`);
  return res.json();
}

for (const scenario of Object.keys(scenarios) as Scenario[]) {
  if (only && only !== scenario) continue;
  const s = scenarios[scenario];
  // The same JSON from REST and from the two hand-written rows (GraphQL answers its own shape).
  const rest = JSON.stringify(await answer(scenario, 'rest'));
  for (const name of ['direct', 'rawsql'] as const) {
    const other = JSON.stringify(await answer(scenario, name));
    if (other !== rest) throw new Error(`${scenario}: ${name} does not answer what REST does:\n${other.slice(0, 2000)}\n---\n${rest.slice(0, 2000)}`);
  }
  const graphql = (await answer(scenario, 'graphql')) as { errors?: unknown };
  if (graphql.errors) throw new Error(`${scenario}: GraphQL answered errors: ${JSON.stringify(graphql.errors)}`);

  // Warm up, then interleave rounds so drift hits all alike.
  for (const name of names) await load(name, s[name], 1);
  const totals = Object.fromEntries(names.map((n) => [n, { requests: 0, seconds: 0, cpu: 0, p50: [] as number[], p99: [] as number[] }])) as Record<
    Name,
    { requests: number; seconds: number; cpu: number; p50: number[]; p99: number[] }
  >;
  for (let round = 0; round < 2; round++) {
    for (const name of names) {
      const before = process.cpuUsage();
      const r = await load(name, s[name], seconds / 2);
      const used = process.cpuUsage(before);
      totals[name].cpu += (used.user + used.system) / 1000;
      totals[name].requests += r.requests.total;
      totals[name].seconds += r.duration;
      totals[name].p50.push(r.latency.p50);
      totals[name].p99.push(r.latency.p99);
    }
  }
  const rps = (n: Name) => totals[n].requests / totals[n].seconds;
  const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(`\n${scenario}: ${s.title}, 10 connections, ${seconds}s per endpoint, PostgreSQL\n`);
  // CPU: this process's (the server's, and autocannon's, which costs alike per request) per request.
  console.log('endpoint   req/s     p50 ms   p99 ms   cpu ms/req');
  for (const n of names) {
    const t = totals[n];
    console.log(
      `${n.padEnd(9)} ${rps(n).toFixed(0).padStart(6)}  ${avg(t.p50).toFixed(1).padStart(7)}  ${avg(t.p99).toFixed(1).padStart(7)}  ${(t.cpu / t.requests).toFixed(2).padStart(10)}`,
    );
  }
  if (rows) continue;
  console.log(`\ncost of REST relative to GraphQL:      ${(rps('graphql') / rps('rest')).toFixed(2)}x (target <= 1.1x)`);
  console.log(`cost of GraphQL relative to hand-written: ${(rps('direct') / rps('graphql')).toFixed(2)}x (target <= 1.3x)`);
  console.log(`cost of GraphQL relative to raw SQL:   ${(rps('rawsql') / rps('graphql')).toFixed(2)}x (target <= 2.5x)`);
  console.log(`cost of REST relative to hand-written: ${(rps('direct') / rps('rest')).toFixed(2)}x`);
  console.log(`cost of REST relative to raw SQL:      ${(rps('rawsql') / rps('rest')).toFixed(2)}x`);
  const cpu = (n: Name) => totals[n].cpu / totals[n].requests;
  console.log(`CPU per request, GraphQL relative to hand-written: ${(cpu('graphql') / cpu('direct')).toFixed(2)}x`);
}

// autocannon stops with requests in flight: let them finish before the pool closes.
await new Promise((r) => setTimeout(r, 1000));
await new Promise((r) => {
  server.close(r);
  server.closeAllConnections();
});
await pool.end();
await db.close();
await stop();
