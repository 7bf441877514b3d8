// Docs without a docs domain (served sandboxed at /docs/<project>/, an opaque origin) and the
// requests their own pages make (issue 22, its third point): a theme's preflighted fetch of its own
// `_static/*.json` (sphinx-version-warning sends a custom header) answered 204 with the CORS
// headers, web fonts and other public files readable by the page's opaque origin, private docs and
// anything under a grant never; and an anonymous reader of a private version offered sign-in on the 404.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLAIN_SESSION_COOKIE, startSession } from '../../src/domain/sessions.ts';
import { urlGrant } from '../../src/serve/grants.ts';
import { servedTestApp, type TestApp } from '../helpers/app.ts';
import { makeProject, publish } from '../helpers/publish.ts';

let t: TestApp;
let stop: () => Promise<void>;
const dirs: string[] = [];
let secretIds: { projectId: number; versionId: number };
let userId: number;

/** A built site: a page, a project 404 page, a web font of each kind and a theme's JSON. */
function site(with404: boolean): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lectern-sandbox-'));
  dirs.push(dir);
  mkdirSync(path.join(dir, '_static'));
  writeFileSync(path.join(dir, 'index.html'), '<html><body><h1>Home</h1></body></html>');
  if (with404) writeFileSync(path.join(dir, '404.html'), '<html><body><h1>Theme says: page not found</h1></body></html>');
  for (const ext of ['woff2', 'woff', 'ttf', 'otf']) writeFileSync(path.join(dir, '_static', `font.${ext}`), Buffer.from(`font ${ext}`));
  writeFileSync(path.join(dir, '_static', 'data.json'), '{"versions":["latest"]}');
  return dir;
}

beforeAll(async () => {
  ({ t, stop } = await servedTestApp());
  const pub = await makeProject(t, { slug: 'pub' });
  await publish(t, { project: pub, version: 'latest', html: site(true) });
  const hidden = await publish(t, { project: pub, version: 'hidden', html: site(true) });
  await t.db.prisma.version.update({ where: { id: hidden.versionId }, data: { privacyLevel: 'private' } });
  const plain = await makeProject(t, { slug: 'plain' });
  await publish(t, { project: plain, version: 'latest', html: site(false) });
  const closedV = await publish(t, { project: plain, version: 'closed', html: site(false) });
  await t.db.prisma.version.update({ where: { id: closedV.versionId }, data: { privacyLevel: 'private' } });
  const secret = await makeProject(t, { slug: 'secret', privacyLevel: 'private' });
  const s = await publish(t, { project: secret, version: 'latest', html: site(true) });
  secretIds = { projectId: secret.id, versionId: s.versionId };
  await t.user('reader');
  userId = (await t.db.prisma.user.findUniqueOrThrow({ where: { username: 'reader' } })).id;
  await t.db.prisma.project.update({ where: { id: secret.id }, data: { users: { connect: { id: userId } } } });
}, 120_000);

afterAll(async () => {
  await stop?.();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const preflight = (p: string, headers = 'x-requested-with') =>
  t.http.options(p).set('origin', 'null').set('access-control-request-method', 'GET').set('access-control-request-headers', headers);

describe('a sandboxed page of public docs', () => {
  it('has its preflighted fetch of its own _static JSON answered 204 with the CORS headers, then the JSON readable', async () => {
    const pre = await preflight('/docs/pub/en/latest/_static/data.json', 'x-version-warning');
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe('*');
    expect(pre.headers['access-control-allow-methods']).toMatch(/GET/);
    expect(pre.headers['access-control-allow-headers']).toBe('x-version-warning');
    const json = await t.http.get('/docs/pub/en/latest/_static/data.json').set('origin', 'null').set('sec-fetch-mode', 'cors');
    expect([json.status, json.headers['access-control-allow-origin']]).toEqual([200, '*']);
  });

  it('loads web fonts of every kind from its opaque origin (Access-Control-Allow-Origin: *), the second time too', async () => {
    for (const ext of ['woff2', 'woff', 'ttf', 'otf']) {
      for (const time of ['first', 'again']) {
        const res = await t.http
          .get(`/docs/pub/en/latest/_static/font.${ext}`)
          .set('origin', 'null')
          .set('sec-fetch-dest', 'font')
          .set('sec-fetch-mode', 'cors');
        expect([ext, time, res.status, res.headers['access-control-allow-origin']]).toEqual([ext, time, 200, '*']);
      }
    }
  });
});

describe('private docs', () => {
  it('never answer another origin: no CORS headers on preflights or files, of a private project or version, or under a grant', async () => {
    for (const p of ['/docs/secret/en/latest/_static/data.json', '/docs/secret/en/latest/_static/font.woff2']) {
      const pre = await preflight(p);
      expect([p, pre.status, pre.headers['access-control-allow-origin']]).toEqual([p, 204, undefined]);
    }
    const cookie = await startSession(t.db.prisma, userId);
    const grant = urlGrant.issue(
      t.services.cipher,
      { sessionId: (await t.db.prisma.session.findFirstOrThrow({ where: { userId } })).id, ...secretIds },
      '127.0.0.1',
    );
    const under = `/docs/secret/_/r/${grant}/en/latest/_static/font.woff2`;
    const pre = await preflight(under);
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    const font = await t.http.get(under).set('origin', 'null').set('sec-fetch-dest', 'font').set('sec-fetch-mode', 'cors');
    expect([font.status, font.headers['access-control-allow-origin']]).toEqual([200, undefined]);
    const hidden = await t.http.get('/docs/pub/en/hidden/_static/font.woff2').set('cookie', `${PLAIN_SESSION_COOKIE}=${cookie}`);
    expect(hidden.headers['access-control-allow-origin']).toBeUndefined();
  });

  it("offer an anonymous reader sign-in on the 404, and back to the page: Lectern's own 404 and the project's", async () => {
    const own = await t.http.get('/docs/plain/en/closed/').set('sec-fetch-mode', 'navigate').set('sec-fetch-dest', 'document');
    expect(own.status).toBe(404);
    expect(own.text).toContain(`href="${t.config.publicUrl}/sign-in?next=%2Fdocs%2Fplain%2Fen%2Fclosed%2F"`);
    const themed = await t.http.get('/docs/pub/en/hidden/index.html').set('sec-fetch-mode', 'navigate').set('sec-fetch-dest', 'document');
    expect(themed.status).toBe(404);
    expect(themed.text).toContain('Theme says: page not found');
    expect(themed.text).toContain(`href="${t.config.publicUrl}/sign-in?next=%2Fdocs%2Fpub%2Fen%2Fhidden%2Findex.html"`);
    const project = await t.http.get('/docs/secret/en/latest/').set('sec-fetch-mode', 'navigate');
    expect(project.status).toBe(404);
    expect(project.text).toContain('/sign-in?next=%2Fdocs%2Fsecret%2Fen%2Flatest%2F');
    // A page's own request (not a navigation) gets the plain 404.
    const fetched = await t.http.get('/docs/plain/en/closed/').set('sec-fetch-mode', 'cors');
    expect(fetched.text).not.toContain('sign-in');
  });
});
