// Shared by the REST v3 matrix, agreement, bad-input and throttle tests: the RTD fixture world
// (test/rest/world.ts) plus a second, uniquely valued environment variable, every route's path
// with its parameters filled from that world, a valid body for each write, and the callers.

import type supertest from 'supertest';
import type { Route } from '../../src/rest/route.ts';
import { v3Routes } from '../../src/rest/v3/routes.ts';
import { Cipher, hashToken } from '../../src/secrets.ts';
import { TEST_SECRET_KEY, type TestApp, testApp } from '../helpers/app.ts';
import { tarGz } from '../helpers/archives.ts';
import { CREATED, MODIFIED, makeWorld } from './world.ts';

export const cipher = new Cipher(TEST_SECRET_KEY);

/** The value of a second variable of `project`: no response may ever contain it. */
export const SECRET = 'S3cr3t-VALUE-xyz';
/** The value the matrix posts for a new variable: it must not come back either. */
export const POSTED_SECRET = 'P0sted-S3cr3t-VALUE-qrs';
/** Id of the variable holding SECRET. */
export const SECRET_VARIABLE_ID = 2;

/** `readOnly` and `elsewhere`: `me`'s read-only token, and `me`'s token limited to `new-project` (docs/design/tokens.md). */
export type Caller = 'anonymous' | 'invalid' | 'other' | 'me' | 'readOnly' | 'elsewhere';
export const CALLERS: Caller[] = ['anonymous', 'invalid', 'other', 'me'];
export const AUTHORIZATION: Record<Caller, string | undefined> = {
  anonymous: undefined,
  invalid: 'Token 0123456789abcdef-not-a-token',
  other: 'Token other',
  me: 'Token me',
  readOnly: 'Token me-read-only',
  elsewhere: 'Token me-elsewhere',
};

/** Path parameters taken from the world. */
export const WORLD_PARAMS: Record<string, string> = {
  project: 'project',
  version: 'v1.0',
  build: '1',
  alias: 'subproject',
  redirect: '1',
  environmentvariable: '1',
  organization: 'organization',
};

/** Routes whose default parameters would not find anything in the world. */
const PARAM_OVERRIDES: Record<string, Record<string, string>> = {
  // `project` has no parent; `subproject` does.
  'projects-superproject': { project: 'subproject' },
};

/** A valid body for each input type a route reads. */
export const VALID_BODIES: Record<string, unknown> = {
  ImportProjectInput: {
    name: 'Matrix Import',
    repository: { url: 'https://github.com/rtfd/matrix-import', type: 'git' },
    homepage: 'http://matrix.example.com/',
    programming_language: 'py',
    tags: ['matrix'],
  },
  UpdateProjectInput: { homepage: 'http://project.example.com/' },
  UpdateVersionInput: { active: true, hidden: false },
  CreateSubprojectInput: { child: 'new-project', alias: 'new-alias' },
  RedirectInput: { from_url: '/page/', to_url: '/another/', type: 'page' },
  EnvironmentVariableInput: { name: 'NEWENVVAR', value: POSTED_SECRET, public: true },
};

export function pathFor(route: Route, params: Record<string, string> = {}): string {
  const all = { ...WORLD_PARAMS, ...PARAM_OVERRIDES[route.name], ...params };
  return route.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const value = all[name];
    if (value === undefined) throw new Error(`route ${route.name}: no world value for {${name}}; add one to WORLD_PARAMS`);
    return encodeURIComponent(value);
  });
}

/** What an upload route is sent: a .tar.gz of one page. */
export const UPLOAD_BODY = await tarGz([{ name: 'index.html', body: '<html><body><h1>matrix upload</h1></body></html>' }]);

export function bodyFor(route: Route): unknown {
  if (route.upload) return UPLOAD_BODY;
  if (!route.input) return undefined;
  if (!(route.input in VALID_BODIES)) throw new Error(`route ${route.name}: no valid body for ${route.input}; add one to VALID_BODIES`);
  return VALID_BODIES[route.input];
}

/** Writes last, deletes after every other write, so one world serves a whole caller's run. */
export function inSafeOrder(routes: Route[]): Route[] {
  const phase = (r: Route) => (r.method === 'GET' ? 0 : r.method === 'DELETE' ? 2 : 1);
  return [...routes].sort((a, b) => phase(a) - phase(b));
}

export const v3 = (path: string) => `/api/v3${path}`;

export function send(t: TestApp, method: string, path: string, caller: Caller | string | undefined, body?: unknown): supertest.Test {
  const m = method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
  let req = t.http[m](path.startsWith('/api/') ? path : v3(path));
  const auth = caller === undefined ? undefined : caller in AUTHORIZATION ? AUTHORIZATION[caller as Caller] : caller;
  if (auth) req = req.set('authorization', auth);
  if (Buffer.isBuffer(body)) req = req.set('content-type', 'application/gzip').send(body);
  else if (body !== undefined) req = req.set('content-type', 'application/json').send(typeof body === 'string' ? body : JSON.stringify(body));
  return req;
}

/**
 * The RTD world, a second secret variable, a project `me` may make a subproject (`new-project`)
 * and a Spanish translation of `project` (`project-es`), both maintained by `me`, and the
 * organization `organization`, which `me` owns (`other` is not in it), with `new-project` and
 * one read-only team, `team`, of which `me` is the member.
 */
export async function worldApp(env: Parameters<typeof testApp>[0] = {}): Promise<TestApp> {
  const t = await testApp(env);
  const db = t.db.prisma;
  await makeWorld(db, (v) => cipher.encrypt(v));
  await db.environmentVariable.create({
    data: { id: SECRET_VARIABLE_ID, projectId: 1, name: 'SECOND', valueEncrypted: cipher.encrypt(SECRET), valueSize: SECRET.length + 2 },
  });
  await db.project.create({
    data: { id: 4, name: 'new-project', slug: 'new-project', repositoryUrl: 'https://github.com/rtfd/new-project', users: { connect: { id: 1 } } },
  });
  // A translation of `project`, so the translations list has something to show.
  await db.project.create({
    data: {
      id: 5,
      name: 'project-es',
      slug: 'project-es',
      language: 'es',
      repositoryUrl: 'https://github.com/rtfd/project-es',
      mainLanguageProjectId: 1,
      users: { connect: { id: 1 } },
    },
  });
  for (const table of ['Project', 'EnvironmentVariable']) {
    await db.$executeRawUnsafe(`SELECT setval(pg_get_serial_sequence('"${table}"', 'id'), (SELECT MAX(id) FROM "${table}"))`);
  }
  await makeOrganization(db);
  await db.apiToken.create({ data: { userId: 1, keyHash: hashToken('me-read-only'), keyPrefix: 'me-read-', readOnly: true } });
  await db.apiToken.create({
    data: { userId: 1, keyHash: hashToken('me-elsewhere'), keyPrefix: 'me-elsew', projectScoped: true, projects: { create: { projectId: 4 } } },
  });
  return t;
}

/** The organization of the world: owned by `me` (testuser), holding `new-project`, with one team. */
async function makeOrganization(db: TestApp['db']['prisma']): Promise<void> {
  const times = { createdAt: CREATED, modifiedAt: MODIFIED };
  const org = await db.organization.create({
    data: { slug: 'organization', name: 'organization', ...times, members: { create: { userId: 1, role: 'owner' } } },
  });
  await db.project.update({ where: { slug: 'new-project' }, data: { organizationId: org.id } });
  const team = await db.team.create({ data: { organizationId: org.id, slug: 'team', name: 'team', ...times } });
  await db.teamMember.create({ data: { teamId: team.id, organizationId: org.id, userId: 1 } });
}

/** Row counts of every table a REST write could touch. */
export async function rowCounts(t: TestApp): Promise<Record<string, number>> {
  const p = t.db.prisma;
  return {
    project: await p.project.count(),
    version: await p.version.count(),
    build: await p.build.count(),
    redirect: await p.redirect.count(),
    environmentVariable: await p.environmentVariable.count(),
    projectRelationship: await p.subproject.count(),
    user: await p.user.count(),
  };
}

/** Every column of the rows a write could change, to see that nothing did. */
export async function snapshot(t: TestApp): Promise<unknown> {
  const p = t.db.prisma;
  const byId = { orderBy: { id: 'asc' as const } };
  return {
    projects: await p.project.findMany(byId),
    versions: await p.version.findMany(byId),
    builds: await p.build.findMany(byId),
    redirects: await p.redirect.findMany(byId),
    variables: await p.environmentVariable.findMany(byId),
    relationships: await p.subproject.findMany(byId),
  };
}

export { v3Routes };
