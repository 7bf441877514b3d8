// Benchmark (not a test): the cost of the REST adapter. In one process and one run, on a real
// PostgreSQL, it loads three endpoints that return the same data:
//   rest      GET /api/v3/projects/<slug>/?expand=active_versions.last_build
//   graphql   POST /graphql with the equivalent query
//   direct    a hand-written express handler: the same token check, one Prisma query, JSON
//   rawsql    the same answer from raw SQL with the pg driver (two statements, JSON built in Node)
// and prints requests per second, p50/p99 latency and the ratios. Targets (issue 3): REST within
// 1.3x the cost of GraphQL and within 2x of the hand-written handler.
// Run: npx tsx test/bench/rest-vs-graphql.ts [seconds-per-round]
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import { print } from 'graphql';
import pg from 'pg';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { createUser } from '../../src/domain/users.ts';
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
const VERSIONS = 10;

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

const config = loadConfig({
  LECTERN_DATA_DIR: '/tmp/lectern-bench',
  DATABASE_URL: databaseUrl,
  LECTERN_LOG_LEVEL: 'silent',
  LECTERN_API_THROTTLE: '0',
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
app.get('/bench/direct/:slug/', async (req, res) => {
  const key = /^Token (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
  const t = key ? await prisma.apiToken.findUnique({ where: { keyHash: hashToken(key) }, select: { userId: true } }) : null;
  if (!t) return void res.status(401).json({ detail: 'Authentication credentials were not provided.' });
  const p = await directProject(req.params.slug, t.userId);
  if (!p) return void res.status(404).json({ detail: 'No Project matches the given query.' });
  res.type('application/json').send(v3Json(projectBody(p)));
});

/** The v3 body of a project with its active versions and their last builds, from rows shaped as Prisma's. */
type DirectProject = NonNullable<Awaited<ReturnType<typeof directProject>>>;
function directProject(slug: string, userId: number) {
  return prisma.project.findFirst({
    where: { slug, OR: [{ privacyLevel: 'public' }, { users: { some: { id: userId } } }] },
    include: {
      users: { select: { username: true }, orderBy: { username: 'asc' } },
      superprojects: { include: { parent: { select: { slug: true } } } },
      mainLanguageProject: { select: { slug: true } },
      versions: {
        where: { active: true, built: true, privacyLevel: 'public', type: { not: 'external' } },
        orderBy: { verboseName: 'desc' },
        include: { lastBuild: true },
      },
    },
  });
}
function projectBody(p: DirectProject) {
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
        const b = v.lastBuild;
        const dl = (f: string) => `${config.publicUrl}/docs/${p.slug}/_/downloads/${p.language}/${v.slug}/${f}/`;
        return [
          v.slug,
          {
            id: v.id,
            slug: v.slug,
            verbose_name: v.verboseName,
            identifier: v.identifier,
            ref: null,
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
            urls: { documentation: docs(v.slug), vcs: `${p.repositoryUrl}/tree/${v.verboseName}/` },
            _links: { _self: `${api}/versions/${v.slug}/`, builds: `${api}/versions/${v.slug}/builds/`, project: `${api}/` },
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
          },
        ];
      }),
    ),
  };
  return body;
}

// The same answer from raw SQL with the pg driver: two statements (the project with its token
// check, maintainers and parents; its versions with their last builds), rows shaped as Prisma's,
// the JSON built in Node by the same function.
const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
app.get('/bench/rawsql/:slug/', async (req, res) => {
  const key = /^Token (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
  const { rows } = await pool.query(
    `SELECT p.*, (SELECT "userId" FROM "ApiToken" WHERE "keyHash" = $2) AS "viewerId",
       ARRAY(SELECT u.username FROM "User" u JOIN "_ProjectMaintainers" m ON m."B" = u.id WHERE m."A" = p.id ORDER BY u.username) AS usernames,
       (SELECT pp.slug FROM "ProjectRelationship" r JOIN "Project" pp ON pp.id = r."parentId" WHERE r."childId" = p.id LIMIT 1) AS "parentSlug",
       (SELECT m.slug FROM "Project" m WHERE m.id = p."mainLanguageProjectId") AS "mainSlug",
       EXISTS (SELECT 1 FROM "_ProjectMaintainers" m JOIN "ApiToken" t ON t."userId" = m."B" WHERE m."A" = p.id AND t."keyHash" = $2) AS maintains
     FROM "Project" p WHERE p.slug = $1`,
    [req.params.slug, key ? hashToken(key) : ''],
  );
  const row = rows[0];
  if (!row?.viewerId) return void res.status(401).json({ detail: 'Authentication credentials were not provided.' });
  if (row.privacyLevel !== 'public' && !row.maintains) return void res.status(404).json({ detail: 'No Project matches the given query.' });
  const versions = await pool.query(
    `SELECT v.*, row_to_json(b.*) AS "lastBuild" FROM "Version" v LEFT JOIN "Build" b ON b.id = v."lastBuildId"
     WHERE v."projectId" = $1 AND v.active AND v.built AND v."privacyLevel" = 'public' AND v.type <> 'external'
     ORDER BY v."verboseName" DESC`,
    [row.id],
  );
  const p = {
    ...row,
    users: (row.usernames as string[]).map((username) => ({ username })),
    superprojects: row.parentSlug ? [{ parent: { slug: row.parentSlug } }] : [],
    mainLanguageProject: row.mainSlug ? { slug: row.mainSlug } : null,
    versions: versions.rows.map((v) => ({
      ...v,
      lastBuild: v.lastBuild && {
        ...v.lastBuild,
        createdAt: new Date(v.lastBuild.createdAt),
        finishedAt: v.lastBuild.finishedAt && new Date(v.lastBuild.finishedAt),
      },
    })),
  } as unknown as DirectProject;
  res.type('application/json').send(v3Json(projectBody(p)));
});

const server = app.listen(0, '127.0.0.1');
await new Promise((r) => server.once('listening', r));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

// The same operation the REST route runs, sent by hand: what a GraphQL client asking for the same
// data would send.
const route = v3Routes.find((r) => r.name === 'projects-detail')!;
const GRAPHQL = JSON.stringify({
  query: print(buildOperation(schema, route, selection(route.resource!, parseFlex({ expand: 'active_versions.last_build' })))),
  variables: { project: 'bench' },
});

const targets = {
  rest: { method: 'GET' as const, path: '/api/v3/projects/bench/?expand=active_versions.last_build' },
  graphql: { method: 'POST' as const, path: '/graphql', body: GRAPHQL },
  direct: { method: 'GET' as const, path: '/bench/direct/bench/' },
  rawsql: { method: 'GET' as const, path: '/bench/rawsql/bench/' },
};
type Name = keyof typeof targets;

async function load(name: Name, duration: number) {
  const t = targets[name];
  const result = await autocannon({
    url: `${base}${t.path}`,
    method: t.method,
    body: 'body' in t ? t.body : undefined,
    headers: { authorization: `Token ${token}`, 'content-type': 'application/json', accept: 'application/json' },
    connections: 10,
    duration,
  });
  if (result.non2xx || result.errors) throw new Error(`${name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return result;
}

// Check all three answer, then warm up, then interleave rounds so drift hits all alike.
for (const name of Object.keys(targets) as Name[]) await load(name, 1);
const totals: Record<Name, { requests: number; seconds: number; p50: number[]; p99: number[] }> = {
  rest: { requests: 0, seconds: 0, p50: [], p99: [] },
  graphql: { requests: 0, seconds: 0, p50: [], p99: [] },
  direct: { requests: 0, seconds: 0, p50: [], p99: [] },
  rawsql: { requests: 0, seconds: 0, p50: [], p99: [] },
};
for (let round = 0; round < 2; round++) {
  for (const name of Object.keys(targets) as Name[]) {
    const r = await load(name, seconds / 2);
    totals[name].requests += r.requests.total;
    totals[name].seconds += r.duration;
    totals[name].p50.push(r.latency.p50);
    totals[name].p99.push(r.latency.p99);
  }
}
const rps = (n: Name) => totals[n].requests / totals[n].seconds;
const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log(`\n${VERSIONS} active versions with last builds, 10 connections, ${seconds}s per endpoint, PostgreSQL\n`);
console.log('endpoint   req/s     p50 ms   p99 ms');
for (const n of Object.keys(targets) as Name[]) {
  console.log(`${n.padEnd(9)} ${rps(n).toFixed(0).padStart(6)}  ${avg(totals[n].p50).toFixed(1).padStart(7)}  ${avg(totals[n].p99).toFixed(1).padStart(7)}`);
}
const vsGraphql = rps('graphql') / rps('rest');
const vsDirect = rps('direct') / rps('rest');
console.log(`\ncost of REST relative to GraphQL:      ${vsGraphql.toFixed(2)}x (target <= 1.3x)`);
console.log(`cost of REST relative to hand-written: ${vsDirect.toFixed(2)}x (target <= 2x)`);
console.log(`cost of GraphQL relative to raw SQL:   ${(rps('rawsql') / rps('graphql')).toFixed(2)}x (target <= 2x, issue 11)`);
console.log(`cost of REST relative to raw SQL:      ${(rps('rawsql') / rps('rest')).toFixed(2)}x`);

// autocannon stops with requests in flight: let them finish before the pool closes.
await new Promise((r) => setTimeout(r, 1000));
await new Promise((r) => {
  server.close(r);
  server.closeAllConnections();
});
await pool.end();
await db.close();
await stop();
