// Every /api/v3 route, and every status it can answer, through the real HTTP stack on Read the
// Docs' own fixture world (docs/design/read-the-docs.md §7): whole bodies compared with golden files
// (test/rest/golden/<name>.json), the same on both databases. Each test starts from the world as made.
// Besides the bodies, every response is checked to be JSON (except the empty ones: 204, and the
// superproject 404) and every v3 body to have its keys sorted at every level (docs/design/read-the-docs.md §1.2).
import type { Response } from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Cipher } from '../../src/secrets.ts';
import { TEST_SECRET_KEY, type TestApp, testApp } from '../helpers/app.ts';
import { expectGolden, pinTimes } from './golden.ts';
import { CREATED, MODIFIED, makeWorld, resetWorld } from './world.ts';

let t: TestApp;
const cipher = new Cipher(TEST_SECRET_KEY);

beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t?.close();
});
// The world is made again before a test only when the tests before it may have changed it (the
// app's statement count, t.writes(), moved since it was made): a test that only read finds it as made.
let worldMadeAt = -1;
beforeEach(async () => {
  if (t.writes() === worldMadeAt) return;
  await resetWorld(t.db.prisma);
  await makeWorld(t.db.prisma, (v) => cipher.encrypt(v));
  worldMadeAt = t.writes();
});

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
interface Opts {
  /** `me` unless given; null sends no Authorization header. */
  token?: string | null;
  /** A whole Authorization header instead of `Token <token>`. */
  authorization?: string;
  body?: unknown;
}

const API = 'http://lectern.test/api/v3';

/** One request; checks what every response under /api/ must be before handing it back. */
async function call(method: Method, path: string, opts: Opts = {}): Promise<Response> {
  const agent = t.http;
  let req =
    method === 'GET'
      ? agent.get(path)
      : method === 'POST'
        ? agent.post(path)
        : method === 'PUT'
          ? agent.put(path)
          : method === 'PATCH'
            ? agent.patch(path)
            : agent.delete(path);
  const token = opts.token === undefined ? 'me' : opts.token;
  if (opts.authorization !== undefined) req = req.set('Authorization', opts.authorization);
  else if (token !== null) req = req.set('Authorization', `Token ${token}`);
  if (opts.body !== undefined) req = req.set('Content-Type', 'application/json').send(JSON.stringify(opts.body));
  const res = await req;
  const emptyAllowed = res.status === 204 || (res.status === 404 && path.endsWith('/superproject/'));
  if (emptyAllowed && res.text === '') {
    expect(res.headers['content-type'], `${method} ${path}: an empty body has no content type`).toBeUndefined();
  } else {
    expect(res.status, `${method} ${path}: 204 has no body`).not.toBe(204);
    expect(res.headers['content-type'], `${method} ${path}: JSON content type`).toMatch(/^application\/json(;|$)/);
    const parsed = JSON.parse(res.text);
    // Keys sorted at every level, as AlphabeticalSortedJSONRenderer writes them (json.dumps with
    // sort_keys=True, compact separators).
    expect(res.text, `${method} ${path}: keys sorted at every level`).toBe(pythonSortedJson(parsed));
    checkDatetimes(parsed, `${method} ${path}`);
  }
  return res;
}

/** Python's code-point order, not JavaScript's UTF-16 order. */
const byCodePoint = (a: string, b: string) => {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d) return d;
  }
  return x.length - y.length;
};

/**
 * `json.dumps(value, sort_keys=True, separators=(",", ":"))`, written without relying on object
 * key order (JavaScript puts integer-like keys such as "10" and "9" first, in numeric order).
 */
function pythonSortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonSortedJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort(byCodePoint)
      .map((k) => `${JSON.stringify(k)}:${pythonSortedJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

const DATETIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z$/;

/** Every datetime field is UTC with `Z`, and microseconds only when there are any (docs/design/read-the-docs.md §1.2). */
function checkDatetimes(body: unknown, where: string): void {
  if (Array.isArray(body)) {
    for (const b of body) checkDatetimes(b, where);
    return;
  }
  if (!body || typeof body !== 'object') return;
  for (const [k, v] of Object.entries(body)) {
    if (['created', 'modified', 'finished'].includes(k) && v !== null && typeof v !== 'object') {
      expect(v, `${where}: ${k} is a DRF datetime`).toMatch(DATETIME);
      expect(v, `${where}: ${k} has no zero microseconds`).not.toMatch(/\.000000Z$/);
    } else checkDatetimes(v, where);
  }
}

const get = (path: string, opts?: Opts) => call('GET', `/api/v3${path}`, opts);
const post = (path: string, body?: unknown, opts?: Opts) => call('POST', `/api/v3${path}`, { ...opts, body });
const put = (path: string, body?: unknown, opts?: Opts) => call('PUT', `/api/v3${path}`, { ...opts, body });
const patch = (path: string, body?: unknown, opts?: Opts) => call('PATCH', `/api/v3${path}`, { ...opts, body });
const del = (path: string, opts?: Opts) => call('DELETE', `/api/v3${path}`, opts);

/** Status, then the whole body against its golden file. */
function golden(res: Response, status: number, name: string, body: unknown = res.body): void {
  expect(res.status, `${res.status} ${res.text}`).toBe(status);
  expectGolden(name, body);
}

function empty(res: Response, status = 204): void {
  expect(res.status, res.text).toBe(status);
  expect(res.text).toBe('');
}

const _EMPTY_PAGE = { count: 0, next: null, previous: null, results: [] };
const NOT_FOUND = { detail: 'Not found.' };
const noMatch = (model: string) => ({ detail: `No ${model} matches the given query.` });
const _FORBIDDEN = { detail: 'You do not have permission to perform this action.' };
const NO_CREDENTIALS = { detail: 'Authentication credentials were not provided.' };

function expectError(res: Response, status: number, body: unknown): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body).toEqual(body);
}

function expect401(res: Response, body: unknown = NO_CREDENTIALS): void {
  expectError(res, 401, body);
  expect(res.headers['www-authenticate']).toBe('Token');
}

/** Replaces the value at a dotted path (a time the test itself made). */
function pin(body: any, ...paths: string[]): any {
  const copy = structuredClone(body);
  for (const p of paths) {
    const keys = p.split('.');
    let at = copy;
    for (const k of keys.slice(0, -1)) at = at[k];
    const last = keys[keys.length - 1]!;
    expect(typeof at[last], `${p} is a datetime`).toBe('string');
    expect(at[last]).toMatch(DATETIME);
    at[last] = '<pinned>';
  }
  return copy;
}

/** `new-project` (docs/design/read-the-docs.md §7 `_create_new_project`): like `project`, maintained by testuser. */
async function createNewProject(): Promise<void> {
  await t.db.prisma.project.create({
    data: {
      name: 'new-project',
      slug: 'new-project',
      repositoryUrl: 'https://github.com/rtfd/project',
      homepage: 'http://project.com',
      tags: ['project', 'tag', 'test'],
      users: { connect: { id: 1 } },
      createdAt: CREATED,
      modifiedAt: MODIFIED,
    },
  });
}

/** A Spanish translation of `project`. */
async function createTranslation(): Promise<void> {
  await t.db.prisma.project.create({
    data: {
      name: 'project-es',
      slug: 'project-es',
      language: 'es',
      programmingLanguage: 'py',
      repositoryUrl: 'https://github.com/rtfd/project',
      mainLanguageProjectId: 1,
      users: { connect: { id: 1 } },
      createdAt: CREATED,
      modifiedAt: MODIFIED,
    },
  });
}

const IMPORT = {
  name: 'Test Project',
  repository: { url: 'https://github.com/rtfd/template', type: 'git' },
  homepage: 'http://template.readthedocs.io/',
  programming_language: 'py',
  tags: ['test tag', 'template tag'],
};

describe('root and authentication', () => {
  it('GET /api/v3/ lists the API', async () => {
    golden(await get('/'), 200, 'root');
  });

  it('answers 401 with WWW-Authenticate: Token without a token, the root included', async () => {
    expect401(await get('/', { token: null }));
    expect401(await get('/projects/', { token: null }));
    expect401(await get('/projects/project/', { token: null }));
    expect401(await post('/projects/', IMPORT, { token: null }));
    expect401(await patch('/projects/project/', { name: 'x' }, { token: null }));
    expect401(await get('/projects/project/redirects/', { token: null }));
  });

  it('answers 401 "Invalid token." for an unknown key, and ignores other schemes', async () => {
    expect401(await get('/projects/', { token: 'nope' }), { detail: 'Invalid token.' });
    expect401(await get('/projects/', { authorization: 'Bearer me' }));
  });

  it('answers 401 for a Token header without a key or with spaces in it', async () => {
    expect401(await get('/projects/', { authorization: 'Token' }), { detail: 'Invalid token header. No credentials provided.' });
    expect401(await get('/projects/', { authorization: 'Token m e' }), {
      detail: 'Invalid token header. Token string should not contain spaces.',
    });
  });

  it('redirects a GET without its trailing slash (301, Location, query kept)', async () => {
    const res = await call('GET', '/api/v3/projects?limit=1');
    expect(res.status).toBe(301);
    expect(res.headers.location).toBe('/api/v3/projects/?limit=1');
    const detail = await call('GET', '/api/v3/projects/project/versions/v1.0', { token: null });
    expect(detail.status).toBe(301);
    expect(detail.headers.location).toBe('/api/v3/projects/project/versions/v1.0/');
  });

  it('answers JSON 404 {"detail":"Not found."} on unknown routes', async () => {
    expectError(await get('/nothing/'), 404, NOT_FOUND);
    expectError(await get('/projects/project/nothing/'), 404, NOT_FOUND);
    expectError(await call('GET', '/api/nothing/'), 404, NOT_FOUND);
  });
});

describe('_links key sets (docs/design/read-the-docs.md §3.6)', () => {
  it('Project 10, Version 3, Build 4, Subproject 2, Redirect 2, environment variable 2; all absolute', async () => {
    const keys = (o: Record<string, unknown>) => Object.keys(o).sort();
    const project = (await get('/projects/project/')).body._links;
    expect(keys(project)).toEqual([
      '_self',
      'builds',
      'environmentvariables',
      'notifications',
      'redirects',
      'subprojects',
      'superproject',
      'sync_versions',
      'translations',
      'versions',
    ]);
    expect(keys((await get('/projects/project/versions/v1.0/')).body._links)).toEqual(['_self', 'builds', 'project']);
    expect(keys((await get('/projects/project/builds/1/')).body._links)).toEqual(['_self', 'notifications', 'project', 'version']);
    expect(keys((await get('/projects/project/subprojects/subproject/')).body._links)).toEqual(['_self', 'parent']);
    expect(keys((await get('/projects/project/redirects/1/')).body._links)).toEqual(['_self', 'project']);
    expect(keys((await get('/projects/project/environmentvariables/1/')).body._links)).toEqual(['_self', 'project']);
    for (const url of Object.values(project))
      expect(url).toMatch(/^http:\/\/lectern\.test\/api\/v3\/projects\/project\/[a-z-]+\/$|^http:\/\/lectern\.test\/api\/v3\/projects\/project\/$/);
  });
});

describe('GET /projects/', () => {
  it('lists the projects the caller maintains, by slug', async () => {
    golden(await get('/projects/'), 200, 'projects-list');
  });

  it("lists only the caller's projects", async () => {
    const res = await get('/projects/', { token: 'other' });
    expect(res.status).toBe(200);
    expect(res.body.results.map((p: any) => p.slug)).toEqual(['others-project']);
  });

  it('filters by language and programming_language', async () => {
    const all = await get('/projects/');
    const en = await get('/projects/?language=en');
    expect(en.status).toBe(200);
    expect(en.body).toEqual(all.body);
    golden(await get('/projects/?language=es'), 200, 'projects-list-empty');
    const words = await get('/projects/?programming_language=words');
    expect(words.body).toEqual(all.body);
    expectGolden('projects-list-empty', (await get('/projects/?programming_language=py')).body);
  });

  it('answers 400 for a language or programming language that is not a choice', async () => {
    golden(await get('/projects/?language=xx'), 400, 'projects-list-invalid-language');
    golden(await get('/projects/?programming_language=cobol'), 400, 'projects-list-invalid-programming-language');
  });

  it('pages with limit and offset: first page', async () => {
    golden(await get('/projects/?limit=1'), 200, 'projects-list-limit1-offset0');
  });

  it('pages with limit and offset: last page, previous drops offset, params sorted', async () => {
    golden(await get('/projects/?offset=1&limit=1&language=en'), 200, 'projects-list-limit1-offset1');
  });

  it('pages with limit and offset: past the end is an empty page', async () => {
    golden(await get('/projects/?limit=1&offset=2'), 200, 'projects-list-limit1-offset2');
  });

  it('honours a limit over 100, as Read the Docs has no maximum (the previous link keeps it)', async () => {
    golden(await get('/projects/?limit=1000&offset=1'), 200, 'projects-list-limit-over-100');
  });

  it('answers ?limit=999 with every project past the 100th, for clients that never follow `next` (lftools rtd project-list)', async () => {
    const me = await t.db.prisma.user.findUniqueOrThrow({ where: { username: 'testuser' } });
    const before = (await get('/projects/')).body.count;
    for (let i = 0; i < 150; i++) {
      await t.db.prisma.project.create({
        data: { name: `bulk ${i}`, slug: `bulk-${String(i).padStart(3, '0')}`, repositoryUrl: 'https://example.org/r.git', users: { connect: { id: me.id } } },
      });
    }
    const res = await get('/projects/?limit=999');
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(before + 150);
    expect(res.body.next).toBeNull();
    expect(res.body.results).toHaveLength(before + 150);
  });

  it('falls back to the default limit of 10 on an invalid limit', async () => {
    const res = await get('/projects/?limit=abc&offset=1');
    expect(res.status).toBe(200);
    expect(res.body.previous).toBe(`${API}/projects/?limit=10`);
  });

  it('expands what lists permit (active_versions, permissions)', async () => {
    golden(await get('/projects/?expand=active_versions,permissions'), 200, 'projects-list-expanded');
  });
});

describe('GET /projects/{project}/', () => {
  it('answers the project', async () => {
    golden(await get('/projects/project/'), 200, 'projects-detail');
  });

  it('expand=active_versions: an object keyed by version slug', async () => {
    const res = await get('/projects/project/?expand=active_versions');
    golden(res, 200, 'projects-detail-expand-active_versions');
    expect(Object.keys(res.body.active_versions)).toEqual(['v1.0']);
  });

  it('active_versions keyed by numeric slugs are in string order ("10" before "9")', async () => {
    for (const [id, slug] of [
      [10, '9'],
      [11, '10'],
    ] as const) {
      await t.db.prisma.version.create({
        data: { id, projectId: 1, slug, verboseName: slug, identifier: slug, type: 'tag', active: true, built: true, createdAt: CREATED, modifiedAt: MODIFIED },
      });
    }
    const res = await get('/projects/project/?fields=active_versions&expand=active_versions');
    golden(res, 200, 'projects-detail-active_versions-numeric-slugs');
    expect(res.text.indexOf('"10":')).toBeLessThan(res.text.indexOf('"9":'));
    expect(res.text.indexOf('"9":')).toBeLessThan(res.text.indexOf('"v1.0":'));
  });

  it('expand=active_versions.last_build', async () => {
    golden(await get('/projects/project/?expand=active_versions.last_build'), 200, 'projects-detail-expand-active_versions.last_build');
  });

  it('expand=active_versions.last_build.config', async () => {
    golden(await get('/projects/project/?expand=active_versions.last_build.config'), 200, 'projects-detail-expand-active_versions.last_build.config');
  });

  it("expand=active_versions,permissions (Read the Docs' projects-detail request)", async () => {
    golden(await get('/projects/project/?expand=active_versions,permissions'), 200, 'projects-detail-expand-active_versions-permissions');
  });

  it('expand=organization is null for a project in no organization', async () => {
    const res = await get('/projects/project/?expand=organization');
    expect(res.status).toBe(200);
    expect(res.body.organization).toBeNull();
  });

  it('expand=permissions is admin false for someone who does not maintain it', async () => {
    const res = await get('/projects/project/?expand=permissions', { token: 'other' });
    expect(res.status).toBe(200);
    expect(res.body.permissions).toEqual({ admin: false });
    const mine = await get('/projects/project/?expand=permissions');
    expect(mine.body.permissions).toEqual({ admin: true });
    const { permissions: _a, ...rest } = res.body;
    const { permissions: _b, ...mineRest } = mine.body;
    expect(rest).toEqual(mineRest);
  });

  it('fields= keeps only the fields named (a dotted field keeps its whole top-level field)', async () => {
    golden(await get('/projects/project/?fields=name,slug,repository.url'), 200, 'projects-detail-fields');
  });

  it('omit= leaves fields out', async () => {
    golden(await get('/projects/project/?omit=_links,urls,users'), 200, 'projects-detail-omit');
  });

  it('fields= also filters expanded fields', async () => {
    const res = await get('/projects/project/?fields=slug&expand=active_versions');
    expect(res.body).toEqual({ slug: 'project' });
  });

  it('ignores an unknown expand', async () => {
    golden(await get('/projects/project/?expand=nothing,organization_x'), 200, 'projects-detail');
  });

  it('answers 400 ["Recursive expansion found"] for expand=a.a', async () => {
    golden(await get('/projects/project/?expand=a.a'), 400, 'error-recursive-expansion');
    expectError(await get('/projects/project/?fields=x.y.x'), 400, ['Recursive expansion found']);
  });

  it('shows a public project to someone who does not maintain it', async () => {
    const res = await get('/projects/project/', { token: 'other' });
    expect(res.status).toBe(200);
    expectGolden('projects-detail', res.body);
  });

  it('answers 404 for a project that does not exist', async () => {
    golden(await get('/projects/nope/'), 404, 'error-404-project');
  });
});

describe('POST /projects/ (import)', () => {
  it('answers 201 with the full project, and creates latest and one triggered build', async () => {
    const res = await post('/projects/', IMPORT);
    golden(res, 201, 'projects-list_POST', pin(res.body, 'created', 'modified'));
    expect(res.headers.location).toBeUndefined();

    const versions = await get('/projects/test-project/versions/');
    golden(versions, 200, 'projects-list_POST-versions');
    const builds = await get('/projects/test-project/builds/');
    expect(builds.body.count).toBe(1);
    golden(builds, 200, 'projects-list_POST-builds', { ...builds.body, results: builds.body.results.map((b: any) => pin(b, 'created')) });
  });

  it('ignores expand on the create answer', async () => {
    const res = await post('/projects/?expand=active_versions,permissions', IMPORT);
    expect(res.status).toBe(201);
    expect(res.body).not.toHaveProperty('permissions');
    expect(res.body).not.toHaveProperty('active_versions');
  });

  it('answers 400 when the slug is taken', async () => {
    golden(await post('/projects/', { ...IMPORT, name: 'Project' }), 400, 'projects-list_POST-400-duplicate-slug');
  });

  it('answers 400 with a nested error for a bad repository URL', async () => {
    for (const url of ['not-a-url', 'ftp://example.com/repo', 'javascript:alert(1)', '//github.com/rtfd/x']) {
      const res = await post('/projects/', { ...IMPORT, repository: { url, type: 'git' } });
      golden(res, 400, 'projects-list_POST-400-repository-url');
    }
  });

  it('answers 400 when the name is missing', async () => {
    const { name: _name, ...rest } = IMPORT;
    golden(await post('/projects/', rest), 400, 'projects-list_POST-400-name-required');
  });

  it('answers 400 for a language that is not a choice', async () => {
    golden(await post('/projects/', { ...IMPORT, language: 'xx' }), 400, 'projects-list_POST-400-language');
  });

  it('answers 400 for an empty body, naming every required field', async () => {
    golden(await post('/projects/', {}), 400, 'projects-list_POST-400-empty');
  });

  it('writes nothing when refused', async () => {
    await post('/projects/', { ...IMPORT, repository: { url: 'ftp://x' } });
    expect(await t.db.prisma.project.count()).toBe(3);
    expect(await t.db.prisma.build.count()).toBe(2);
  });
});

describe('PATCH /projects/{project}/', () => {
  it('answers 204 with no body; the slug stays', async () => {
    empty(await patch('/projects/project/', { name: 'Renamed', default_branch: 'main', language: 'es', programming_language: 'py' }));
    const res = await get('/projects/project/');
    golden(res, 200, 'projects-detail-after-PATCH', pin(res.body, 'modified'));
  });

  it('PUT answers 204 as well', async () => {
    empty(await put('/projects/project/', { name: 'project', repository: { url: 'https://github.com/rtfd/project2', type: 'git' } }));
    expect((await get('/projects/project/')).body.repository).toEqual({ type: 'git', url: 'https://github.com/rtfd/project2' });
  });

  it('answers 400 for a bad value', async () => {
    golden(await patch('/projects/project/', { language: 'xx', repository: { url: 'ftp://x' } }), 400, 'projects-PATCH-400');
  });

  it('answers 403 to someone who does not maintain it', async () => {
    golden(await patch('/projects/project/', { name: 'x' }, { token: 'other' }), 403, 'error-403');
  });

  it('answers 404 "No Project matches the given query." for a project that does not exist', async () => {
    golden(await patch('/projects/nope/', { name: 'x' }), 404, 'error-404-project');
  });
});

describe('GET /projects/{project}/superproject/', () => {
  it('answers the parent of a subproject', async () => {
    golden(await get('/projects/subproject/superproject/'), 200, 'projects-superproject');
  });

  it('answers 404 with an empty body when there is no parent', async () => {
    empty(await get('/projects/project/superproject/'), 404);
  });

  it('answers 404 with the detail when the project does not exist', async () => {
    expectError(await get('/projects/nope/superproject/'), 404, noMatch('Project'));
  });
});

describe('POST /projects/{project}/sync-versions/', () => {
  it('answers 202 {"triggered": true} and syncs in the background', async () => {
    // A repository that fails at once, so the background sync neither reaches the network nor
    // writes anything.
    await t.db.prisma.project.update({ where: { id: 1 }, data: { repositoryUrl: '/nonexistent/lectern-test-repository' } });
    golden(await post('/projects/project/sync-versions/'), 202, 'projects-sync-versions');
  });

  it('answers 400 {"triggered": false} when there is no latest version to sync from', async () => {
    await t.db.prisma.version.delete({ where: { id: 1 } });
    golden(await post('/projects/project/sync-versions/'), 400, 'projects-sync-versions-400');
  });

  it('answers 405 to GET, 401 without a token, 403 to someone who does not maintain it, 404 for no project', async () => {
    expectError(await get('/projects/project/sync-versions/'), 405, { detail: 'Method "GET" not allowed.' });
    expect401(await post('/projects/project/sync-versions/', undefined, { token: null }));
    golden(await post('/projects/project/sync-versions/', undefined, { token: 'other' }), 403, 'error-403');
    golden(await post('/projects/nope/sync-versions/'), 404, 'error-404-project');
  });
});

describe('versions', () => {
  it('GET /versions/ lists them by name, highest first', async () => {
    golden(await get('/projects/project/versions/'), 200, 'projects-versions-list');
  });

  it('filters by active and built; other boolean values are ignored', async () => {
    const all = (await get('/projects/project/versions/')).body;
    expect((await get('/projects/project/versions/?active=true')).body).toEqual(all);
    expect((await get('/projects/project/versions/?active=maybe')).body).toEqual(all);
    expectGolden('projects-list-empty', (await get('/projects/project/versions/?active=false')).body);
    golden(await get('/projects/project/versions/?built=true'), 200, 'projects-versions-list-built-true');
    golden(await get('/projects/project/versions/?built=0'), 200, 'projects-versions-list-built-false');
  });

  it('expand=last_build on the list', async () => {
    golden(await get('/projects/project/versions/?expand=last_build'), 200, 'projects-versions-list-expand-last_build');
  });

  it('a nested list under a project that does not exist is an empty page', async () => {
    expectGolden('projects-list-empty', (await get('/projects/nope/versions/')).body);
  });

  it('GET /versions/{version}/ answers the version', async () => {
    golden(await get('/projects/project/versions/v1.0/'), 200, 'projects-versions-detail');
  });

  it('expand=last_build and last_build.config', async () => {
    golden(await get('/projects/project/versions/v1.0/?expand=last_build'), 200, 'projects-versions-detail-expand-last_build');
    golden(await get('/projects/project/versions/v1.0/?expand=last_build.config'), 200, 'projects-versions-detail-expand-last_build.config');
    const latest = await get('/projects/project/versions/latest/?expand=last_build');
    expect(latest.body.last_build).toBeNull();
  });

  it('answers 404 for a version that does not exist', async () => {
    golden(await get('/projects/project/versions/v9/'), 404, 'error-404-version');
  });

  it('PATCH answers 204; deactivating sets built false and drops it from active_versions', async () => {
    empty(await patch('/projects/project/versions/v1.0/', { active: false }));
    golden(await get('/projects/project/versions/v1.0/'), 200, 'projects-versions-detail-after-deactivate');
    expect((await get('/projects/project/?expand=active_versions')).body.active_versions).toEqual({});
  });

  it('PATCH hidden answers 204', async () => {
    empty(await patch('/projects/project/versions/latest/', { hidden: true }));
    expect((await get('/projects/project/versions/latest/')).body.hidden).toBe(true);
  });

  it('PATCH answers 400 for a value that is not a boolean', async () => {
    golden(await patch('/projects/project/versions/v1.0/', { active: 'perhaps' }), 400, 'projects-versions-PATCH-400');
  });

  it('PATCH answers 403 to someone who does not maintain it', async () => {
    golden(await patch('/projects/project/versions/v1.0/', { active: false }, { token: 'other' }), 403, 'error-403');
  });

  it('PATCH answers 404 for a version or project that does not exist', async () => {
    golden(await patch('/projects/project/versions/v9/', { active: false }), 404, 'error-404-version');
    golden(await patch('/projects/nope/versions/v1.0/', { active: false }), 404, 'error-404-project');
  });
});

describe('version builds', () => {
  it('GET /versions/{version}/builds/ lists the builds of that version', async () => {
    golden(await get('/projects/project/versions/v1.0/builds/'), 200, 'projects-versions-builds-list');
    expectGolden('projects-list-empty', (await get('/projects/project/versions/latest/builds/')).body);
  });

  it('GET /versions/{version}/builds/{build}/ answers the build', async () => {
    golden(await get('/projects/project/versions/v1.0/builds/1/'), 200, 'projects-builds-detail');
    golden(await get('/projects/project/versions/v1.0/builds/99/'), 404, 'error-404-build');
  });

  it('POST answers 202 {build, project, version, triggered}', async () => {
    const res = await post('/projects/project/versions/v1.0/builds/');
    golden(res, 202, 'projects-versions-builds-list_POST', pin(res.body, 'build.created'));
    expect(res.body.build.id).toBe(3);
    const running = await get('/projects/project/builds/?running=true');
    expect(running.body.results.map((b: any) => b.id)).toEqual([3]);
  });

  it('POST answers 403 to someone who does not maintain it', async () => {
    golden(await post('/projects/project/versions/v1.0/builds/', undefined, { token: 'other' }), 403, 'error-403');
  });

  it('POST answers 404 for a version or project that does not exist', async () => {
    golden(await post('/projects/project/versions/v9/builds/'), 404, 'error-404-version');
    golden(await post('/projects/nope/versions/v1.0/builds/'), 404, 'error-404-project');
  });
});

describe('builds', () => {
  it('GET /builds/ lists them, newest first', async () => {
    golden(await get('/projects/project/builds/'), 200, 'projects-builds-list');
  });

  it('filters by commit', async () => {
    const all = (await get('/projects/project/builds/')).body;
    expect((await get('/projects/project/builds/?commit=a1b2c3')).body).toEqual(all);
    expectGolden('projects-list-empty', (await get('/projects/project/builds/?commit=ffffff')).body);
  });

  it('filters by running', async () => {
    const all = (await get('/projects/project/builds/')).body;
    expect((await get('/projects/project/builds/?running=false')).body).toEqual(all);
    expectGolden('projects-list-empty', (await get('/projects/project/builds/?running=true')).body);
  });

  it('expand=config on the list', async () => {
    golden(await get('/projects/project/builds/?expand=config'), 200, 'projects-builds-list-expand-config');
  });

  it('GET /builds/{build}/ answers the build', async () => {
    golden(await get('/projects/project/builds/1/'), 200, 'projects-builds-detail');
  });

  it('expand=config', async () => {
    golden(await get('/projects/project/builds/1/?expand=config'), 200, 'projects-builds-detail-expand-config');
  });

  it('a triggered build: state triggered, success, finished and duration null', async () => {
    await post('/projects/project/versions/v1.0/builds/');
    const res = await get('/projects/project/builds/3/');
    golden(res, 200, 'projects-builds-detail-triggered', pin(res.body, 'created'));
  });

  it('answers 404 "Not found." for a build id that is not an integer', async () => {
    golden(await get('/projects/project/builds/abc/'), 404, 'error-404-not-found');
  });

  it("answers 404 for a build that does not exist or is another project's", async () => {
    golden(await get('/projects/project/builds/99/'), 404, 'error-404-build');
    golden(await get('/projects/project/builds/2/'), 404, 'error-404-build');
  });
});

describe('subprojects', () => {
  it('GET /subprojects/ lists them', async () => {
    golden(await get('/projects/project/subprojects/'), 200, 'projects-subprojects-list');
  });

  it('GET /subprojects/{alias}/ answers the relationship', async () => {
    golden(await get('/projects/project/subprojects/subproject/'), 200, 'projects-subprojects-detail');
  });

  it('answers 404 for an alias that does not exist', async () => {
    golden(await get('/projects/project/subprojects/nope/'), 404, 'error-404-subproject');
  });

  it('POST answers 201 with the relationship', async () => {
    await createNewProject();
    golden(await post('/projects/project/subprojects/', { child: 'new-project', alias: 'subproject-alias' }), 201, 'projects-subprojects-list_POST');
  });

  it("POST without an alias uses the child's slug", async () => {
    await createNewProject();
    const res = await post('/projects/project/subprojects/', { child: 'new-project' });
    expect(res.status).toBe(201);
    expect(res.body.alias).toBe('new-project');
    expect(res.body._links._self).toBe(`${API}/projects/project/subprojects/new-project/`);
  });

  it('POST answers 400 for a child that is not valid', async () => {
    // Itself, a project the caller does not maintain, one that is already a subproject, none.
    golden(await post('/projects/project/subprojects/', { child: 'project' }), 400, 'projects-subprojects-400-child-project');
    golden(await post('/projects/project/subprojects/', { child: 'others-project' }), 400, 'projects-subprojects-400-child-others-project');
    golden(await post('/projects/project/subprojects/', { child: 'subproject' }), 400, 'projects-subprojects-400-child-subproject');
    golden(await post('/projects/project/subprojects/', {}), 400, 'projects-subprojects-400-child-required');
  });

  it('POST answers 400 for an alias that is taken', async () => {
    await createNewProject();
    golden(await post('/projects/project/subprojects/', { child: 'new-project', alias: 'subproject' }), 400, 'projects-subprojects-400-alias-taken');
  });

  it('POST answers 400 non_field_errors when the parent is itself a subproject', async () => {
    await createNewProject();
    golden(await post('/projects/subproject/subprojects/', { child: 'new-project' }), 400, 'projects-subprojects-400-nesting');
  });

  it('POST answers 403 to someone who does not maintain the parent', async () => {
    golden(await post('/projects/project/subprojects/', { child: 'others-project' }, { token: 'other' }), 403, 'error-403');
  });

  it('POST answers 404 for a parent that does not exist', async () => {
    golden(await post('/projects/nope/subprojects/', { child: 'subproject' }), 404, 'error-404-project');
  });

  it('DELETE answers 204 and removes only the relationship', async () => {
    empty(await del('/projects/project/subprojects/subproject/'));
    expectGolden('projects-list-empty', (await get('/projects/project/subprojects/')).body);
    expect((await get('/projects/subproject/')).status).toBe(200);
  });

  it('DELETE answers 403, or 404 for an alias that does not exist', async () => {
    golden(await del('/projects/project/subprojects/subproject/', { token: 'other' }), 403, 'error-403');
    golden(await del('/projects/project/subprojects/nope/'), 404, 'error-404-subproject');
  });
});

describe('translations', () => {
  it('GET /translations/ is an empty page without translations', async () => {
    golden(await get('/projects/project/translations/'), 200, 'projects-list-empty');
  });

  it('GET /translations/ lists the translating projects', async () => {
    await createTranslation();
    golden(await get('/projects/project/translations/'), 200, 'projects-translations-list');
  });
});

describe('redirects', () => {
  it('GET /redirects/ lists them', async () => {
    golden(await get('/projects/project/redirects/'), 200, 'projects-redirects-list');
  });

  it('GET /redirects/{id}/ answers the redirect', async () => {
    golden(await get('/projects/project/redirects/1/'), 200, 'projects-redirects-detail');
  });

  it('answers 404 for a redirect that does not exist, or an id that is not one', async () => {
    golden(await get('/projects/project/redirects/99/'), 404, 'error-404-redirect');
    golden(await get('/projects/project/redirects/abc/'), 404, 'error-404-not-found');
  });

  it('reads are for maintainers only: 403', async () => {
    golden(await get('/projects/project/redirects/', { token: 'other' }), 403, 'error-403');
    golden(await get('/projects/project/redirects/1/', { token: 'other' }), 403, 'error-403');
  });

  it('POST answers 201 with the redirect, from_url normalized', async () => {
    const res = await post('/projects/project/redirects/', { from_url: '/page/', to_url: '/another/', type: 'page' });
    golden(res, 201, 'projects-redirects-list_POST', pinTimes(res.body));
  });

  it('POST of a clean-URL type: "" URLs in the answer, null in reads', async () => {
    const res = await post('/projects/project/redirects/', { type: 'sphinx_html' });
    golden(res, 201, 'projects-redirects-list_POST-sphinx_html', pinTimes(res.body));
    const read = await get(`/projects/project/redirects/${res.body.pk}/`);
    golden(read, 200, 'projects-redirects-detail-sphinx_html', pinTimes(read.body));
  });

  it("POST of Read the Docs' current name for a clean-URL type: 201, answered with the name it was created with", async () => {
    const res = await post('/projects/project/redirects/', { type: 'html_to_clean_url' });
    golden(res, 201, 'projects-redirects-list_POST-html_to_clean_url', pinTimes(res.body));
    const read = await get(`/projects/project/redirects/${res.body.pk}/`);
    golden(read, 200, 'projects-redirects-detail-html_to_clean_url', pinTimes(read.body));
    // sphinx_htmldir is the same type under its old name: one per project.
    const again = await post('/projects/project/redirects/', { type: 'sphinx_htmldir' });
    expect([again.status, again.body]).toEqual([400, ['Only one redirect of type `sphinx_htmldir` is allowed per project.']]);
  });

  it('POST answers 400 with a bare list for rules checked on save', async () => {
    golden(await post('/projects/project/redirects/', { from_url: '/a/*/b/', to_url: '/x/', type: 'page' }), 400, 'projects-redirects-400-wildcard');
    golden(await post('/projects/project/redirects/', { from_url: '/a/', to_url: '/x/:splat', type: 'exact' }), 400, 'projects-redirects-400-splat');
    golden(await post('/projects/project/redirects/', { from_url: '/a/$rest', to_url: '/x/', type: 'exact' }), 400, 'projects-redirects-400-rest');
  });

  it('POST answers 400 by field for missing or invalid fields', async () => {
    golden(await post('/projects/project/redirects/', { from_url: '/a/' }), 400, 'projects-redirects-400-type-required');
    golden(await post('/projects/project/redirects/', { from_url: '/a/', type: 'permanent' }), 400, 'projects-redirects-400-type-invalid');
    golden(await post('/projects/project/redirects/', { from_url: '/a/', type: 'page' }), 400, 'projects-redirects-400-to_url-required');
  });

  it('POST answers 403, and 404 for a project that does not exist', async () => {
    golden(await post('/projects/project/redirects/', { from_url: '/a/', type: 'prefix' }, { token: 'other' }), 403, 'error-403');
    golden(await post('/projects/nope/redirects/', { from_url: '/a/', type: 'prefix' }), 404, 'error-404-project');
  });

  it('PUT answers 200 with the redirect', async () => {
    const res = await put('/projects/project/redirects/1/', { from_url: '/changed/', to_url: '/toanother/', type: 'page' });
    golden(res, 200, 'projects-redirects-detail_PUT', pin(res.body, 'modified'));
  });

  it('PUT answers 400 without a type, and with a bare list for a rule', async () => {
    golden(await put('/projects/project/redirects/1/', { from_url: '/changed/', to_url: '/toanother/' }), 400, 'projects-redirects-400-type-required');
    golden(await put('/projects/project/redirects/1/', { from_url: '/a/*/b/', to_url: '/x/', type: 'page' }), 400, 'projects-redirects-400-wildcard');
  });

  it('PATCH answers 200 with the redirect, changing only the fields given', async () => {
    const res = await patch('/projects/project/redirects/1/', { to_url: '/patched/', http_status: 301 });
    golden(res, 200, 'projects-redirects-detail_PATCH', pin(res.body, 'modified'));
  });

  it('PUT/PATCH answer 403, and 404 for a redirect that does not exist', async () => {
    golden(await put('/projects/project/redirects/1/', { from_url: '/a/', type: 'prefix' }, { token: 'other' }), 403, 'error-403');
    golden(await patch('/projects/project/redirects/1/', { to_url: '/a/' }, { token: 'other' }), 403, 'error-403');
    golden(await put('/projects/project/redirects/99/', { from_url: '/a/', type: 'prefix' }), 404, 'error-404-redirect');
    golden(await patch('/projects/project/redirects/99/', { to_url: '/a/' }), 404, 'error-404-redirect');
  });

  it('DELETE answers 204', async () => {
    empty(await del('/projects/project/redirects/1/'));
    expectGolden('projects-list-empty', (await get('/projects/project/redirects/')).body);
  });

  it('DELETE answers 403, and 404 for a redirect that does not exist', async () => {
    golden(await del('/projects/project/redirects/1/', { token: 'other' }), 403, 'error-403');
    golden(await del('/projects/project/redirects/99/'), 404, 'error-404-redirect');
  });
});

describe('environment variables', () => {
  it('GET /environmentvariables/ lists them without values', async () => {
    const res = await get('/projects/project/environmentvariables/');
    golden(res, 200, 'projects-environmentvariables-list');
    expect(res.text).not.toContain('a1b2c3');
  });

  it('GET /environmentvariables/{id}/ answers the variable without its value', async () => {
    const res = await get('/projects/project/environmentvariables/1/');
    golden(res, 200, 'projects-environmentvariables-detail');
    expect(res.body).not.toHaveProperty('value');
  });

  it('answers 404 for a variable that does not exist', async () => {
    golden(await get('/projects/project/environmentvariables/99/'), 404, 'error-404-environmentvariable');
  });

  it('reads are for maintainers only: 403', async () => {
    golden(await get('/projects/project/environmentvariables/', { token: 'other' }), 403, 'error-403');
    golden(await get('/projects/project/environmentvariables/1/', { token: 'other' }), 403, 'error-403');
  });

  it('POST answers 201 without the value', async () => {
    const res = await post('/projects/project/environmentvariables/', { name: 'NEWENVVAR', value: 'c3b2a1', public: true });
    golden(res, 201, 'projects-environmentvariables-list_POST', pinTimes(res.body));
    expect(res.body).not.toHaveProperty('value');
    expect(res.text).not.toContain('c3b2a1');
  });

  it('POST answers 400 for a name taken or a missing value', async () => {
    golden(await post('/projects/project/environmentvariables/', { name: 'ENVVAR', value: 'x' }), 400, 'projects-environmentvariables-400-name-taken');
    golden(await post('/projects/project/environmentvariables/', { name: 'OTHER' }), 400, 'projects-environmentvariables-400-value-required');
  });

  it('POST answers 403, and 404 for a project that does not exist', async () => {
    golden(await post('/projects/project/environmentvariables/', { name: 'X', value: 'y' }, { token: 'other' }), 403, 'error-403');
    golden(await post('/projects/nope/environmentvariables/', { name: 'X', value: 'y' }), 404, 'error-404-project');
  });

  it('DELETE answers 204', async () => {
    empty(await del('/projects/project/environmentvariables/1/'));
    expectGolden('projects-list-empty', (await get('/projects/project/environmentvariables/')).body);
  });

  it('DELETE answers 403, and 404 for a variable that does not exist', async () => {
    golden(await del('/projects/project/environmentvariables/1/', { token: 'other' }), 403, 'error-403');
    golden(await del('/projects/project/environmentvariables/99/'), 404, 'error-404-environmentvariable');
  });

  it('PUT and PATCH answer 405 to a maintainer, after the permission check', async () => {
    golden(await put('/projects/project/environmentvariables/1/', { name: 'ENVVAR', value: 'z' }), 405, 'error-405-PUT');
    expectError(await patch('/projects/project/environmentvariables/1/', { value: 'z' }), 405, { detail: 'Method "PATCH" not allowed.' });
    golden(await put('/projects/project/environmentvariables/1/', { name: 'ENVVAR', value: 'z' }, { token: 'other' }), 403, 'error-403');
    expect401(await put('/projects/project/environmentvariables/1/', { name: 'ENVVAR', value: 'z' }, { token: null }));
  });
});
