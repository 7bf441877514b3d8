// Every /api/v2 route (docs/design/rest-api.md "v2 routes") through the real HTTP stack, on Read the Docs' fixture world
// (world.ts) plus private data that must never show: whole bodies compared with golden files
// (test/rest/golden/v2-*.json), filters, pagination, 404 bodies, and the v2 field shapes of
// docs/design/rest-api.md "v2 representations" (datetimes without offset, scheme-relative downloads, `error` "" on success).
import type { Response } from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { PrismaClient } from '../../src/db/database.ts';
import { Cipher } from '../../src/secrets.ts';
import { TEST_SECRET_KEY, type TestApp, testApp } from '../helpers/app.ts';
import { expectGolden } from './golden.ts';
import { CREATED, MODIFIED, makeWorld, resetWorld } from './world.ts';

let t: TestApp;
const cipher = new Cipher(TEST_SECRET_KEY);
const at = (minutes: number) => new Date(CREATED.getTime() + minutes * 60_000);

/**
 * Beside the world: a private project (maintained by testuser, whose token is `me`) with a built
 * version and a build, a private version of `project` with a build, and on `project`'s `latest`
 * a failed build with commands and a running one. Every build has its own time, so "most recent
 * first" is one order on both databases.
 */
async function makePrivateAndBuilds(db: PrismaClient): Promise<void> {
  await db.build.update({ where: { id: 2 }, data: { createdAt: at(10) } });
  await db.project.create({
    data: {
      id: 10,
      name: 'secret',
      slug: 'secret',
      privacyLevel: 'private',
      repositoryUrl: 'https://github.com/rtfd/secret',
      users: { connect: { id: 1 } },
      createdAt: CREATED,
      modifiedAt: MODIFIED,
    },
  });
  await db.version.create({
    data: { id: 10, projectId: 10, slug: 'latest', verboseName: 'latest', machine: true, active: true, built: true, type: 'branch', identifier: 'main' },
  });
  await db.build.create({
    data: { id: 10, projectId: 10, versionId: 10, versionSlug: 'latest', state: 'finished', success: true, commit: 'a1b2c3', duration: 5, createdAt: at(20) },
  });
  await db.version.create({
    data: {
      id: 11,
      projectId: 1,
      slug: 'hidden-away',
      verboseName: 'hidden-away',
      privacyLevel: 'private',
      active: true,
      built: true,
      type: 'branch',
      identifier: 'hide',
    },
  });
  await db.build.create({
    data: {
      id: 11,
      projectId: 1,
      versionId: 11,
      versionSlug: 'hidden-away',
      state: 'finished',
      success: true,
      commit: 'a1b2c3',
      duration: 5,
      createdAt: at(30),
    },
  });
  await db.build.create({
    data: {
      id: 12,
      projectId: 1,
      versionId: 1,
      versionSlug: 'latest',
      state: 'finished',
      success: false,
      error: 'Building failed: sphinx-build exited with 2.',
      commit: 'd4e5f6',
      duration: 12,
      createdAt: at(40),
      startedAt: at(40),
      finishedAt: at(40.2),
      commands: {
        create: [
          {
            id: 1,
            description: 'Cloning',
            command: 'git clone --depth 50 https://github.com/rtfd/project .',
            output: 'Cloning into .\n',
            exitCode: 0,
            startTime: at(40),
            endTime: new Date(at(40).getTime() + 2_500),
          },
          {
            id: 2,
            description: 'Building html',
            command: 'sphinx-build -b html docs _build/html',
            output: 'error\n',
            exitCode: 2,
            startTime: new Date(at(40).getTime() + 3_123),
            endTime: new Date(at(40).getTime() + 12_000),
          },
        ],
      },
    },
  });
  await db.build.create({
    data: { id: 13, projectId: 1, versionId: 1, versionSlug: 'latest', state: 'building', commit: 'd4e5f6', createdAt: at(50), startedAt: at(50) },
  });
}

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
  await makePrivateAndBuilds(t.db.prisma);
  worldMadeAt = t.writes();
});

const V2_DATETIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/;

/** Every datetime of a v2 body is without offset and with microseconds (docs/design/rest-api.md "v2 representations"). */
function checkDatetimes(body: unknown, where: string): void {
  if (Array.isArray(body)) {
    for (const b of body) checkDatetimes(b, where);
    return;
  }
  if (!body || typeof body !== 'object') return;
  for (const [k, v] of Object.entries(body)) {
    if (['date', 'start_time', 'end_time'].includes(k) && v !== null) expect(v, `${where}: ${k}`).toMatch(V2_DATETIME);
    else checkDatetimes(v, where);
  }
}

/** One GET below /api/v2 (with a token when given, which v2 ignores); every answer is JSON. */
async function get(path: string, token?: string): Promise<Response> {
  let req = t.http.get(`/api/v2${path}`);
  if (token) req = req.set('Authorization', `Token ${token}`);
  const res = await req;
  expect(res.headers['content-type'], `${path}: JSON`).toMatch(/^application\/json(;|$)/);
  checkDatetimes(JSON.parse(res.text), path);
  return res;
}

function golden(res: Response, name: string): void {
  expect(res.status, res.text).toBe(200);
  expectGolden(name, res.body);
}

const NOT_FOUND = { detail: 'Not found.' };
function expect404(res: Response): void {
  expect(res.status, res.text).toBe(404);
  expect(res.body).toEqual(NOT_FOUND);
}

const slugsOf = (res: Response) => (res.body.results as { slug: string }[]).map((r) => r.slug);
const idsOf = (res: Response) => (res.body.results as { id: number }[]).map((r) => r.id);

describe('v2 root and conventions', () => {
  it('GET /api/v2/ lists the resources', async () => {
    golden(await get('/'), 'v2-root');
  });

  it('needs no token, and ignores one, even an invalid one', async () => {
    expect((await get('/project/1/')).status).toBe(200);
    expect((await get('/project/1/', 'not-a-token')).status).toBe(200);
    const res = await t.http.get('/api/v2/project/1/').set('Authorization', 'Token');
    expect(res.status).toBe(200);
  });

  it('is read-only: other methods answer 405 with a JSON body', async () => {
    for (const method of ['post', 'put', 'patch', 'delete'] as const) {
      const res = await t.http[method]('/api/v2/project/1/').set('Authorization', 'Token me');
      expect(res.status, `${method}`).toBe(405);
      expect(res.body.detail).toBe(`Method "${method.toUpperCase()}" not allowed.`);
    }
  });

  it('redirects a path without its trailing slash', async () => {
    const res = await t.http.get('/api/v2/project/1?x=1');
    expect(res.status).toBe(301);
    expect(res.headers.location).toBe('/api/v2/project/1/?x=1');
  });

  it('answers unknown routes with a JSON 404', async () => {
    expect404(await get('/nothing-here/'));
    expect404(await get('/project/1/nothing/'));
  });

  it('writes keys in the representation order, not sorted', async () => {
    const res = await get('/project/1/');
    expect(Object.keys(res.body).slice(0, 3)).toEqual(['id', 'name', 'slug']);
  });
});

describe('projects', () => {
  it('lists public projects only, with or without a token', async () => {
    golden(await get('/project/'), 'v2-project-list');
    expect(slugsOf(await get('/project/', 'me'))).toEqual(['others-project', 'project', 'subproject']);
  });

  it('filters by exact slug', async () => {
    golden(await get('/project/?slug=project'), 'v2-project-list-slug');
    expect((await get('/project/?slug=proj')).body.count).toBe(0);
    expect((await get('/project/?slug=secret', 'me')).body.count).toBe(0);
  });

  it('pages with limit and offset', async () => {
    golden(await get('/project/?limit=1&offset=1'), 'v2-project-list-limit1-offset1');
    const last = await get('/project/?limit=2&offset=2');
    expect(last.body.next).toBeNull();
    expect(last.body.previous).toBe('http://lectern.test/api/v2/project/?limit=2');
  });

  it('shows a project by id', async () => {
    golden(await get('/project/1/'), 'v2-project-detail');
  });

  it('answers 404 for a missing, private or non-numeric id', async () => {
    expect404(await get('/project/999/'));
    expect404(await get('/project/10/'));
    expect404(await get('/project/10/', 'me'));
    expect404(await get('/project/abc/'));
    expect404(await get('/project/-1/'));
    expect404(await get('/project/99999999999999999999/'));
  });

  it('lists active versions, built or not, public only', async () => {
    golden(await get('/project/1/active_versions/'), 'v2-project-active_versions');
    const res = await get('/project/1/active_versions/', 'me');
    expect((res.body.versions as { slug: string }[]).map((v) => v.slug)).toEqual(['v1.0', 'latest']);
  });

  it('answers 404 for the active versions of a missing or private project', async () => {
    expect404(await get('/project/999/active_versions/'));
    expect404(await get('/project/10/active_versions/', 'me'));
  });

  it('refuses a NUL in a filter with a 400', async () => {
    const res = await get('/project/?slug=a%00b');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ slug: ['Null characters are not allowed.'] });
  });
});

describe('versions', () => {
  it('lists public versions of public projects', async () => {
    golden(await get('/version/'), 'v2-version-list');
    expect(idsOf(await get('/version/', 'me'))).not.toContain(10);
    expect(idsOf(await get('/version/', 'me'))).not.toContain(11);
  });

  it('filters by project slug and by active', async () => {
    golden(await get('/version/?project__slug=project'), 'v2-version-list-project');
    expect(idsOf(await get('/version/?project__slug=others-project'))).toEqual([3]);
    expect((await get('/version/?project__slug=secret')).body.count).toBe(0);
    await t.db.prisma.version.update({ where: { id: 1 }, data: { active: false } });
    expect(idsOf(await get('/version/?project__slug=project&active=true'))).toEqual([2]);
    expect(idsOf(await get('/version/?project__slug=project&active=false'))).toEqual([1]);
    expect(idsOf(await get('/version/?project__slug=project&active=maybe'))).toEqual([2, 1]);
  });

  it('shows a version by id with its project', async () => {
    golden(await get('/version/2/'), 'v2-version-detail');
  });

  it('writes downloads scheme-relative, only the formats that were built', async () => {
    const res = await get('/version/2/');
    expect(res.body.downloads).toEqual({
      pdf: '//lectern.test/docs/project/_/downloads/en/v1.0/pdf/',
      htmlzip: '//lectern.test/docs/project/_/downloads/en/v1.0/htmlzip/',
      epub: '//lectern.test/docs/project/_/downloads/en/v1.0/epub/',
    });
    await t.db.prisma.version.update({ where: { id: 2 }, data: { hasPdf: false, hasEpub: false } });
    const fewer = await get('/version/2/');
    expect(fewer.body.downloads).toEqual({ htmlzip: '//lectern.test/docs/project/_/downloads/en/v1.0/htmlzip/' });
    expect([fewer.body.has_pdf, fewer.body.has_htmlzip, fewer.body.has_epub]).toEqual([false, true, false]);
  });

  it('answers 404 for a missing or private version, or one of a private project', async () => {
    expect404(await get('/version/999/'));
    expect404(await get('/version/11/', 'me'));
    expect404(await get('/version/10/', 'me'));
  });
});

describe('builds', () => {
  it('lists builds of public versions, most recent first', async () => {
    golden(await get('/build/'), 'v2-build-list');
    expect(idsOf(await get('/build/', 'me'))).toEqual([13, 12, 2, 1]);
  });

  it('filters by project slug and commit', async () => {
    expect(idsOf(await get('/build/?project__slug=project'))).toEqual([13, 12, 1]);
    expect(idsOf(await get('/build/?commit=a1b2c3'))).toEqual([2, 1]);
    expect(idsOf(await get('/build/?project__slug=project&commit=a1b2c3'))).toEqual([1]);
    expect((await get('/build/?project__slug=secret')).body.count).toBe(0);
    expect((await get('/build/?commit=nothing')).body.count).toBe(0);
  });

  it('pages builds', async () => {
    const res = await get('/build/?limit=2');
    expect(idsOf(res)).toEqual([13, 12]);
    expect(res.body.count).toBe(4);
    expect(res.body.next).toBe('http://lectern.test/api/v2/build/?limit=2&offset=2');
  });

  it('reads bad paging values as Read the Docs does, never failing', async () => {
    expect(idsOf(await get('/build/?limit=abc&offset=-5'))).toEqual([13, 12, 2, 1]);
    expect((await get('/build/?limit=0')).body.results).toHaveLength(4);
    const past = await get('/version/?offset=99999999999');
    expect([past.status, past.body.results]).toEqual([200, []]);
  });

  it('shows a successful build: error is "" and state a string', async () => {
    golden(await get('/build/1/'), 'v2-build-detail');
    const b = (await get('/build/1/')).body;
    expect(b.error).toBe('');
    expect(b.state).toBe('finished');
    expect(b.date).toBe('2019-04-29T10:00:00.000000');
  });

  it('shows a failed build with its commands', async () => {
    golden(await get('/build/12/'), 'v2-build-detail-commands');
  });

  it('shows a running build', async () => {
    const b = (await get('/build/13/')).body;
    expect(b).toMatchObject({ state: 'building', error: '', length: 0, commands: [] });
  });

  it('answers /build/<id>.txt with the log as text/plain, as readthedocs.org does (DRF format suffix)', async () => {
    const res = await t.http.get('/api/v2/build/12.txt');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.text).toBe(
      [
        'Read the Docs build information',
        'Build id: 12',
        'Project: project',
        'Version: latest',
        'Commit: d4e5f6',
        'Date: 2019-04-29T10:40:00.000000',
        'State: finished',
        'Success: False',
        '',
        '',
        '[rtd-command-info] start-time: 2019-04-29T10:40:00.000000, end-time: 2019-04-29T10:40:02.500000, duration: 3, exit-code: 0',
        'git clone --depth 50 https://github.com/rtfd/project .',
        'Cloning into .',
        '',
        '',
        '[rtd-command-info] start-time: 2019-04-29T10:40:03.123000, end-time: 2019-04-29T10:40:12.000000, duration: 9, exit-code: 2',
        'sphinx-build -b html docs _build/html',
        'error',
        '',
        '',
        '',
      ].join('\n'),
    );
    // The same with the slash, and through ?format=txt.
    expect((await t.http.get('/api/v2/build/12.txt/')).text).toBe(res.text);
    expect((await t.http.get('/api/v2/build/12/?format=txt')).text).toBe(res.text);
  });

  it('answers the log of a running build with the commands so far and an unknown outcome', async () => {
    const res = await t.http.get('/api/v2/build/13.txt');
    expect(res.status).toBe(200);
    expect(res.text).toContain('State: building\nSuccess: Unknown\n');
  });

  it('keeps answering JSON for .json and ?format=json', async () => {
    const json = (await get('/build/12/')).body;
    for (const path of ['/api/v2/build/12.json', '/api/v2/build/12.json/', '/api/v2/build/12/?format=json']) {
      const res = await t.http.get(path);
      expect([path, res.status, res.headers['content-type']]).toEqual([path, 200, 'application/json; charset=utf-8']);
      expect(res.body).toEqual(json);
    }
  });

  it('answers a missing or hidden build, and a format a route has no renderer for, 404 in that format', async () => {
    for (const path of ['/api/v2/build/999.txt', '/api/v2/build/11.txt']) {
      const res = await t.http.get(path);
      expect([path, res.status, res.headers['content-type'], res.text]).toEqual([path, 404, 'text/plain; charset=utf-8', 'Not found.']);
    }
    expect((await t.http.get('/api/v2/project/1.txt')).status).toBe(404);
    expect((await t.http.get('/api/v2/build/12/?format=xml')).status).toBe(404);
  });

  it('answers 404 for a missing build, or one of a private version or project', async () => {
    expect404(await get('/build/999/'));
    expect404(await get('/build/10/', 'me'));
    expect404(await get('/build/11/', 'me'));
  });
});
