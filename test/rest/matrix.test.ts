// Every v3 route × every kind of caller, through the real HTTP stack: no token and a bad token get
// 401, a user who does not maintain the project gets 403 on maintainers' routes (and the data on
// public reads), the maintainer gets the route's success status (docs/design/rest-api.md, docs/design/read-the-docs.md §2).
// The routes come from `v3Routes`, so a new route is covered as soon as it is added. Two
// properties hold across all of it: a private project never shows to a non-maintainer, and no
// response ever carries an environment variable's value.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schema } from '../../src/graphql/schema.ts';
import { requiresMaintainer } from '../../src/rest/pre-checks.ts';
import type { Route } from '../../src/rest/route.ts';
import type { TestApp } from '../helpers/app.ts';
import { bodyFor, type Caller, cipher, inSafeOrder, POSTED_SECRET, pathFor, SECRET, send, snapshot, v3Routes, worldApp } from './v3-calls.ts';

/** Every response this file received, to search for secrets at the end. */
const seen: { label: string; text: string; headers: string }[] = [];
function record(label: string, res: { text: string; headers: Record<string, unknown> }) {
  seen.push({ label, text: res.text ?? '', headers: JSON.stringify(res.headers) });
}

// (A 404 in this table is an organization's: `other` is in none.)
const DETAIL: Record<number, string> = {
  403: 'You do not have permission to perform this action.',
};

/**
 * What each route answers a signed-in user who does not maintain the project (`other`) and its
 * maintainer, written out by hand from Read the Docs' behaviour (docs/design/read-the-docs.md §2, §2.3,
 * and §7 on the fixture tests) rather than read from the route's own declaration, so a route declared wrongly
 * fails here. Public reads answer everyone; writes, and redirects and environment variables even
 * to read, are the maintainers'. Every route needs a token (401 without one, docs/design/rest-api.md).
 */
/**
 * `anonymous`: what a caller without a token gets from a public route (otherwise 401); `declared`:
 * the route's success status where this world cannot produce it (no docs are built in it);
 * `otherSeesNone`: `other`'s 200 is an empty page (the organization routes: `me` owns the world's
 * organization, `other` is not in it, and an organization shows to its members only).
 */
const EXPECTED: Record<string, { other: number; maintainer: number; anonymous?: number; declared?: number; otherSeesNone?: true }> = {
  'projects-list': { other: 200, maintainer: 200 },
  'projects-create': { other: 201, maintainer: 201 },
  'projects-detail': { other: 200, maintainer: 200 },
  'projects-update-patch': { other: 403, maintainer: 204 },
  'projects-update-put': { other: 403, maintainer: 204 },
  'projects-superproject': { other: 200, maintainer: 200 },
  'projects-sync-versions': { other: 403, maintainer: 202 },
  'projects-versions-list': { other: 200, maintainer: 200 },
  'projects-versions-detail': { other: 200, maintainer: 200 },
  'projects-versions-update-patch': { other: 403, maintainer: 204 },
  'projects-versions-update-put': { other: 403, maintainer: 204 },
  'projects-versions-builds-list': { other: 200, maintainer: 200 },
  'projects-versions-builds-detail': { other: 200, maintainer: 200 },
  'projects-versions-builds-create': { other: 403, maintainer: 202 },
  'projects-versions-upload': { other: 403, maintainer: 201 },
  'projects-builds-list': { other: 200, maintainer: 200 },
  'projects-builds-detail': { other: 200, maintainer: 200 },
  'projects-subprojects-list': { other: 200, maintainer: 200 },
  'projects-subprojects-create': { other: 403, maintainer: 201 },
  'projects-subprojects-detail': { other: 200, maintainer: 200 },
  'projects-subprojects-delete': { other: 403, maintainer: 204 },
  'projects-translations-list': { other: 200, maintainer: 200 },
  'projects-redirects-list': { other: 403, maintainer: 200 },
  'projects-redirects-create': { other: 403, maintainer: 201 },
  'projects-redirects-detail': { other: 403, maintainer: 200 },
  'projects-redirects-update-put': { other: 403, maintainer: 200 },
  'projects-redirects-update-patch': { other: 403, maintainer: 200 },
  'projects-redirects-delete': { other: 403, maintainer: 204 },
  'projects-environmentvariables-list': { other: 403, maintainer: 200 },
  'projects-environmentvariables-create': { other: 403, maintainer: 201 },
  'projects-environmentvariables-detail': { other: 403, maintainer: 200 },
  'projects-environmentvariables-delete': { other: 403, maintainer: 204 },
  'organizations-list': { other: 200, maintainer: 200, otherSeesNone: true },
  'organizations-detail': { other: 404, maintainer: 200 },
  // A nested list under an organization the caller cannot see is an empty page, as under a project.
  'organizations-projects-list': { other: 404, maintainer: 200 },
  // Not a page in GraphQL: the route answers the organization's 404 itself.
  'organizations-teams-list': { other: 404, maintainer: 200 },
  // Public, as Read the Docs' embed API: without a `url` everyone gets its 400; a bad token still 401.
  embed: { anonymous: 400, other: 400, maintainer: 400, declared: 200 },
  // Public, as Read the Docs' search API: without `q` everyone gets its 400; a bad token still 401.
  search: { anonymous: 400, other: 400, maintainer: 400, declared: 200 },
};

function expected(route: Route, caller: Caller): { status: number; detail?: string } {
  const row = EXPECTED[route.name];
  if (!row) throw new Error(`${route.name} has no expected statuses in this test's EXPECTED table: add them by hand`);
  // The maintainer's limited tokens, by docs/design/tokens.md: a read-only one reads what the
  // maintainer reads but maintainers' settings, and writes nothing; one limited to another project
  // (`new-project`) is an outsider here, who cannot even import a project.
  if (caller === 'readOnly') {
    if (route.method !== 'GET') return { status: 403 };
    return requiresMaintainer(schema, route) ? { status: 403, detail: DETAIL[403] } : { status: row.maintainer };
  }
  if (caller === 'elsewhere') return route.name === 'projects-create' ? { status: 403 } : expected(route, 'other');
  if (caller === 'anonymous')
    return row.anonymous !== undefined ? { status: row.anonymous } : { status: 401, detail: 'Authentication credentials were not provided.' };
  if (caller === 'invalid') return { status: 401, detail: 'Invalid token.' };
  const status = caller === 'other' ? row.other : row.maintainer;
  if (status === 404) return { status, detail: 'No Organization matches the given query.' };
  return status === 403 ? { status, detail: DETAIL[403] } : { status };
}

const label = (r: Route) => `${r.method} ${r.path} (${r.name})`;

function isSorted(value: unknown): boolean {
  if (Array.isArray(value)) return value.every(isSorted);
  if (value && typeof value === 'object') {
    const keys = Object.keys(value);
    return keys.every((k, i) => i === 0 || keys[i - 1]! < k) && Object.values(value).every(isSorted);
  }
  return true;
}

async function check(t: TestApp, route: Route, caller: Caller) {
  const res = await send(t, route.method, pathFor(route), caller, bodyFor(route));
  record(`${caller} ${label(route)}`, res);
  const want = expected(route, caller);
  expect(res.status, `${caller} ${label(route)}: ${res.text}`).toBe(want.status);
  if (want.detail) {
    expect(res.body).toEqual({ detail: want.detail });
    if (want.status === 401) expect(res.headers['www-authenticate']).toBe('Token');
    return res;
  }
  if (want.status === 204) {
    expect(res.text).toBe('');
    return res;
  }
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(isSorted(res.body), 'keys sorted at every level').toBe(true);
  if (route.envelope === 'page') {
    expect(Object.keys(res.body)).toEqual(['count', 'next', 'previous', 'results']);
    if ((caller === 'other' || caller === 'elsewhere') && EXPECTED[route.name]!.otherSeesNone) expect(res.body.count).toBe(0);
    else expect(res.body.count).toBeGreaterThan(0);
    expect(res.body.results.length).toBe(Math.min(res.body.count, 10));
  } else {
    expect(res.body).toBeTypeOf('object');
    expect(Array.isArray(res.body)).toBe(false);
  }
  return res;
}

describe('the routes under test', () => {
  it('each have statuses written out by hand in this test, and the table names no route that is gone', () => {
    expect(v3Routes.map((r) => r.name).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  it("agree with the table: a route's status, its maintainers-only pre-check (read from its GraphQL fields' authScopes) and whether it takes no token", () => {
    for (const r of v3Routes) {
      const row = EXPECTED[r.name]!;
      expect(r.status, r.name).toBe(row.declared ?? row.maintainer);
      expect(requiresMaintainer(schema, r), r.name).toBe(row.other === 403);
      expect(r.tokenless === true, r.name).toBe(row.anonymous !== undefined);
    }
  });

  it('include every write of docs/design/rest-api.md "v3 routes" and the reads around them', () => {
    const names = new Set(v3Routes.map((r) => `${r.method} ${r.path}`));
    for (const r of [
      'GET /projects/',
      'POST /projects/',
      'PATCH /projects/{project}/',
      'PATCH /projects/{project}/versions/{version}/',
      'POST /projects/{project}/versions/{version}/builds/',
      'POST /projects/{project}/subprojects/',
      'DELETE /projects/{project}/subprojects/{alias}/',
      'PUT /projects/{project}/redirects/{redirect}/',
      'DELETE /projects/{project}/redirects/{redirect}/',
      'POST /projects/{project}/environmentvariables/',
      'DELETE /projects/{project}/environmentvariables/{environmentvariable}/',
    ]) {
      expect(names, r).toContain(r);
    }
  });

  it('each route has world parameters and, for a write, a valid body', () => {
    for (const r of v3Routes) {
      expect(() => pathFor(r), r.name).not.toThrow();
      expect(() => bodyFor(r), r.name).not.toThrow();
    }
  });
});

describe.each([
  ['without a token, with a bad token, and as a user who maintains nothing here', ['anonymous', 'invalid', 'other'] as Caller[]],
  ['as the maintainer', ['me'] as Caller[]],
  ["with the maintainer's limited tokens: read-only, and limited to another project", ['readOnly', 'elsewhere'] as Caller[]],
])('every route %s', (_title, callers) => {
  let t: TestApp;
  let before: unknown;
  beforeAll(async () => {
    t = await worldApp();
    before = await snapshot(t);
  });
  afterAll(() => t.close());

  for (const caller of callers) {
    describe(caller, () => {
      it.each(inSafeOrder(v3Routes).map((r) => [label(r), r] as const))('%s', async (_name, route) => {
        await check(t, route, caller);
      });

      if (caller !== 'me') {
        it('changed nothing but what it was allowed to (an import by `other`)', async () => {
          const after = (await snapshot(t)) as Record<string, unknown[]>;
          const was = before as Record<string, unknown[]>;
          for (const [table, rows] of Object.entries(was)) {
            if (caller === 'other' && ['projects', 'versions', 'builds'].includes(table)) {
              // The import adds its project, `latest` and one build; nothing else changes.
              expect(after[table]!.slice(0, rows.length), table).toEqual(rows);
            } else {
              expect(after[table], table).toEqual(rows);
            }
          }
        });
      }
    });
  }

  it('the API root answers the same way', async () => {
    for (const caller of callers) {
      const res = await send(t, 'GET', '/', caller);
      record(`${caller} GET /`, res);
      expect(res.status).toBe(caller === 'anonymous' || caller === 'invalid' ? 401 : 200);
    }
  });

  if (callers.includes('me')) {
    it('the maintainer’s writes took effect', async () => {
      const p = t.db.prisma;
      expect(await p.project.findUnique({ where: { slug: 'matrix-import' } })).not.toBeNull();
      expect((await p.project.findUnique({ where: { slug: 'project' } }))!.homepage).toBe('http://project.example.com/');
      expect(await p.subproject.findMany({ where: { parentId: 1 }, select: { alias: true } })).toEqual([{ alias: 'new-alias' }]);
      expect(await p.redirect.count({ where: { projectId: 1 } })).toBe(1); // one created, redirect 1 deleted
      const variables = await p.environmentVariable.findMany({ where: { projectId: 1 }, orderBy: { id: 'asc' } });
      expect(variables.map((v) => v.name)).toEqual(['SECOND', 'NEWENVVAR']);
      expect(cipher.decrypt(variables[1]!.valueEncrypted)).toBe(POSTED_SECRET);
      expect(await p.build.count({ where: { projectId: 1 } })).toBe(3); // the world's, the triggered one and the upload's
    });
  }
});

describe('a private project never shows to anyone but its maintainers', () => {
  let t: TestApp;
  const HIDDEN = 'classified';
  beforeAll(async () => {
    t = await worldApp();
    const db = t.db.prisma;
    // `classified` (private, maintained by `me`) is a translation of the public `project`, the
    // parent of the public `open-child`, and the main project of the public translation `open-es`.
    const hidden = await db.project.create({
      data: {
        id: 10,
        name: HIDDEN,
        slug: HIDDEN,
        language: 'es',
        repositoryUrl: `https://github.com/rtfd/${HIDDEN}`,
        privacyLevel: 'private',
        mainLanguageProjectId: 1,
        users: { connect: { id: 1 } },
      },
    });
    const latest = await db.version.create({
      data: { id: 10, projectId: hidden.id, slug: 'latest', verboseName: 'latest', machine: true, active: true, built: true, type: 'branch' },
    });
    await db.build.create({
      data: { id: 10, projectId: hidden.id, versionId: latest.id, versionSlug: 'latest', state: 'finished', success: true, commit: 'c1a551f1ed' },
    });
    await db.version.update({ where: { id: latest.id }, data: { lastBuildId: 10 } });
    await db.redirect.create({ data: { id: 10, projectId: hidden.id, type: 'page', fromUrl: `/${HIDDEN}-from/`, toUrl: `/${HIDDEN}-to/` } });
    await db.environmentVariable.create({ data: { id: 10, projectId: hidden.id, name: 'CLASSIFIED', valueEncrypted: cipher.encrypt(SECRET), valueSize: 20 } });
    const child = await db.project.create({
      data: { id: 11, name: 'open-child', slug: 'open-child', repositoryUrl: 'https://github.com/rtfd/open-child', users: { connect: { id: 1 } } },
    });
    await db.subproject.create({ data: { id: 10, parentId: hidden.id, childId: child.id, alias: `${HIDDEN}-alias` } });
    await db.version.create({
      data: { id: 11, projectId: child.id, slug: 'latest', verboseName: 'latest', machine: true, active: true, built: true, type: 'branch' },
    });
    await db.project.create({
      data: {
        id: 12,
        name: 'open-es',
        slug: 'open-es',
        language: 'es',
        repositoryUrl: 'https://github.com/rtfd/open-es',
        mainLanguageProjectId: hidden.id,
        users: { connect: { id: 1 } },
      },
    });
    await db.version.create({
      data: { id: 12, projectId: 12, slug: 'latest', verboseName: 'latest', machine: true, active: true, built: true, type: 'branch' },
    });
  });
  afterAll(() => t.close());

  const PROJECTS = ['project', 'subproject', 'others-project', HIDDEN, 'open-child', 'open-es'];
  const reads = () => v3Routes.filter((r) => r.method === 'GET');
  // Plain, and with every expansion any route offers (lists honour only their permitted names).
  const variants = ['', '?fields=*&expand=active_versions,permissions,organization,config,last_build,active_versions.last_build.config'];

  async function everyRead(caller: Caller, visit: (where: string, text: string, status: number) => void) {
    for (const route of reads()) {
      for (const project of PROJECTS) {
        const params: Record<string, string> = project === 'project' ? { project } : { project, version: 'latest' };
        if (project === HIDDEN) Object.assign(params, { version: 'latest', build: '10', alias: `${HIDDEN}-alias`, redirect: '10', environmentvariable: '10' });
        for (const query of variants) {
          const path = pathFor(route, params) + query;
          const res = await send(t, 'GET', path, caller);
          record(`${caller} GET ${path}`, res);
          expect(res.status, `${caller} GET ${path}`).toBeLessThan(500);
          visit(`${caller} GET ${path}`, res.text, res.status);
        }
      }
    }
  }

  it('the maintainer sees it (so the search below can find it)', async () => {
    const found: string[] = [];
    await everyRead('me', (where, text) => {
      if (text.includes(HIDDEN)) found.push(where);
    });
    expect(found.some((w) => w.includes(`/projects/${HIDDEN}/ `) || w.endsWith(`/projects/${HIDDEN}/`))).toBe(true);
    expect(found.some((w) => w.includes('/projects/open-child/'))).toBe(true); // subproject_of
    expect(found.some((w) => w.includes('/projects/open-es/'))).toBe(true); // translation_of
    expect(found.some((w) => w.includes('/projects/project/translations/'))).toBe(true);
  });

  it.each(['anonymous', 'invalid', 'other'] as Caller[])('%s never sees it, through any read route', async (caller) => {
    const leaks: string[] = [];
    await everyRead(caller, (where, text) => {
      const at = text.indexOf(HIDDEN);
      if (at >= 0) leaks.push(`${where}: …${text.slice(Math.max(0, at - 80), at + 40)}…`);
    });
    expect(leaks).toEqual([]);
  });

  it('its own routes answer a non-maintainer 404, or an empty page, on every method', async () => {
    // Invisible rather than forbidden, as in GraphQL reads (test/graphql/access.test.ts); Read the
    // Docs answers 403 on its maintainers' routes here, which tells that the project exists.
    for (const route of v3Routes.filter((r) => r.path !== '/projects/' && r.path.includes('{project}'))) {
      const path = pathFor(route, { project: HIDDEN, version: 'latest', build: '10', alias: `${HIDDEN}-alias`, redirect: '10', environmentvariable: '10' });
      const res = await send(t, route.method, path, 'other', bodyFor(route));
      record(`other ${route.method} ${path}`, res);
      if (route.envelope === 'page' && !requiresMaintainer(schema, route)) {
        expect(res.body, `${route.method} ${path}`).toEqual({ count: 0, next: null, previous: null, results: [] });
      } else {
        expect(res.status, `${route.method} ${path}`).toBe(404);
        expect(res.text, `${route.method} ${path}`).not.toContain(HIDDEN);
      }
    }
  });

  it('a public project made private disappears the same way', async () => {
    await t.db.prisma.project.update({ where: { slug: 'project' }, data: { privacyLevel: 'private' } });
    const leaks: string[] = [];
    try {
      const detail = await send(t, 'GET', '/projects/project/', 'other');
      expect(detail.status).toBe(404);
      expect(detail.body).toEqual({ detail: 'No Project matches the given query.' });
      for (const route of reads()) {
        for (const project of ['project', 'subproject', 'project-es', 'others-project']) {
          for (const query of variants) {
            const path = pathFor(route, { project }) + query;
            const res = await send(t, 'GET', path, 'other');
            record(`other GET ${path} (project private)`, res);
            expect(res.status, path).toBeLessThan(500);
            // The slug `project` is part of other slugs; its own URLs and slug value are not.
            const leak = /\/projects\/project\/|\/docs\/project\/|"slug":"project"|"project":"project"|"name":"project"/.exec(res.text);
            if (leak) leaks.push(`${path}: …${res.text.slice(Math.max(0, leak.index - 80), leak.index + 40)}…`);
          }
        }
      }
      expect(leaks).toEqual([]);
      // The maintainer still sees it.
      expect((await send(t, 'GET', '/projects/project/', 'me')).status).toBe(200);
    } finally {
      await t.db.prisma.project.update({ where: { slug: 'project' }, data: { privacyLevel: 'public' } });
    }
  });
});

describe('secrets', () => {
  it('the maintainer reading with every expansion still gets no value', async () => {
    const t = await worldApp();
    try {
      for (const route of v3Routes.filter((r) => r.method === 'GET')) {
        for (const query of ['', '?expand=*', '?fields=value,value_encrypted,valueEncrypted&expand=~all']) {
          const res = await send(t, 'GET', pathFor(route, { environmentvariable: '2' }) + query, 'me');
          record(`me GET ${pathFor(route)}${query}`, res);
        }
      }
      const created = await send(t, 'POST', '/projects/project/environmentvariables/', 'me', { name: 'THIRD', value: POSTED_SECRET });
      record('me POST environmentvariables', created);
      expect(created.status).toBe(201);
      expect(Object.keys(created.body)).not.toContain('value');
      const deleted = await send(t, 'DELETE', `/projects/project/environmentvariables/${created.body.pk}/`, 'me');
      record('me DELETE environmentvariables', deleted);
      expect(deleted.status).toBe(204);
      const list = await send(t, 'GET', '/projects/project/environmentvariables/', 'me');
      expect(list.body.results.map((v: { name: string }) => v.name)).toEqual(['ENVVAR', 'SECOND']);
    } finally {
      await t.close();
    }
  });

  it('no response of any route, to any caller, contains an environment variable’s value', () => {
    expect(seen.length).toBeGreaterThan(300);
    for (const s of seen) {
      for (const secret of [SECRET, POSTED_SECRET]) {
        expect(s.text.includes(secret), `${s.label} body`).toBe(false);
        expect(s.headers.includes(secret), `${s.label} headers`).toBe(false);
      }
    }
  });
});
