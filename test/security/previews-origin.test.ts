// The attack of issue 21's item 2, replayed in Chromium: a contributor's pull request to a private
// project (previews private) ships a page whose script looks for the reader's grant in `location`,
// asks the project's search and pages with it and with the browser's cookies, includes the
// project's scripts, frames its pages, and sends whatever it got away. A maintainer who may read
// the project opens the preview. With a docs domain the preview runs on `secret--7.docs.localhost`
// (Chromium resolves *.localhost to this machine), the project's docs on `secret.docs.localhost`;
// without one, both are sandboxed pages in opaque origins under /docs/. Nothing private reaches the
// preview, and what it could carry away (its URL) reads nothing (docs/design/grants.md).
import { writeFileSync } from 'node:fs';
import type { Browser, BrowserContext } from 'playwright-core';
import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/domain/users.ts';
import { servedTestApp, type TestApp } from '../helpers/app.ts';
import { htmlPage, launchChromium, makeProject, publish, removePages } from '../helpers/publish.ts';

const SECRET = 'zanzibar-launch-plan';

/** The project's private docs: a page, and a script defining a global with the secret in it. */
function privateDocs(): string {
  const dir = htmlPage(`<html><body><main><h1>Plans</h1><p>The ${SECRET} is private.</p></main></body></html>`);
  writeFileSync(`${dir}/data.js`, `window.LEAKED = ${JSON.stringify(SECRET)};`);
  return dir;
}

/** The contributor's page: every way to the project's private text from the preview, each outcome shown in #out. */
const hostilePreview = (projectRoot: string) => `<!doctype html><html><body><h1>A harmless fix</h1><pre id="out"></pre>
<iframe id="frame" src="${projectRoot}/en/latest/"></iframe>
<script>
(async () => {
  const r = { location: location.href };
  const attempt = async (name, f) => { try { r[name] = await f(); } catch (e) { r[name] = 'refused: ' + (e && e.name); } };
  // Waits, on the condition, for frames to leave their first about:blank (after that a frame of
  // another origin reads as null), at most 10 s: a frame still readable then is one this page can read.
  const settled = (ids) => new Promise((ok) => {
    const end = Date.now() + 10000;
    const readable = (id) => { try { return document.getElementById(id).contentDocument !== null; } catch (e) { return false; } };
    const check = () => (!ids.some(readable) || Date.now() > end ? ok() : setTimeout(check, 20));
    check();
  });
  const grant = (/\\/_\\/r\\/([^/]+)\\//.exec(location.pathname) || [])[1];
  r.grant = grant || null;
  const root = grant ? '${projectRoot}/_/r/' + grant : '${projectRoot}';
  await attempt('search', async () => { const x = await fetch(root + '/_/search.json?q=zanzibar&version=latest', { credentials: 'include' }); return x.status + ' ' + (await x.text()); });
  await attempt('page', async () => { const x = await fetch(root + '/en/latest/', { credentials: 'include' }); return x.status + ' ' + (await x.text()); });
  await attempt('ownSearch', async () => { const x = await fetch((grant ? location.pathname.replace(/\\/en\\/7\\/.*/, '') : '') + '/_/search.json?q=zanzibar&version=latest', { credentials: 'include' }); return x.status + ' ' + (await x.text()); });
  await attempt('cookie', () => document.cookie);
  await attempt('script', () => new Promise((done) => {
    const s = document.createElement('script');
    s.src = root + '/en/latest/data.js';
    s.onload = () => done('loaded: ' + String(window.LEAKED));
    s.onerror = () => done('error: ' + String(window.LEAKED));
    document.body.appendChild(s);
  }));
  await settled(['frame']);
  await attempt('frame', () => String(document.getElementById('frame').contentDocument && document.getElementById('frame').contentDocument.body.innerText));
  await attempt('frameLocation', () => String(document.getElementById('frame').contentWindow.location.href));
  document.getElementById('out').textContent = JSON.stringify(r);
})();
</script></body></html>`;

interface Setup {
  t: TestApp;
  origin: string;
  stop: () => Promise<void>;
}

async function privateProjectWithPreview(t: TestApp, projectRoot: string) {
  const { user: alice } = await createUser(t.db.prisma, 'alice', { password: 'alice-password-1' });
  const secret = await makeProject(t, { slug: 'secret', privacyLevel: 'private', maintainers: [alice.id] });
  await publish(t, { project: secret, version: 'latest', html: privateDocs() });
  const { versionId } = await publish(t, { project: secret, version: '7', html: htmlPage(hostilePreview(projectRoot)) });
  await t.db.prisma.version.update({
    where: { id: versionId },
    data: { type: 'external', privacyLevel: 'private', externalState: 'open', externalSource: { number: 7, url: 'https://forge.example/acme/docs/pull/7' } },
  });
}

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  removePages();
});

/** A browser session in which Alice signed in on Lectern's own origin. */
async function signedIn(origin: string): Promise<BrowserContext> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${origin}/healthz`);
  const answer = await page.evaluate(() =>
    fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'mutation { signIn(username: "alice", password: "alice-password-1") { __typename } }' }),
    }).then((x) => x.json()),
  );
  expect(answer).toEqual({ data: { signIn: { __typename: 'MutationSignInSuccess' } } });
  await page.close();
  return context;
}

async function outcome(context: BrowserContext, url: string): Promise<{ r: Record<string, string | null>; at: string }> {
  const page = await context.newPage();
  const response = await page.goto(url);
  expect(response?.status(), url).toBe(200);
  await page.waitForFunction(() => document.getElementById('out')?.textContent, undefined, { timeout: 20_000 });
  const r = JSON.parse((await page.locator('#out').textContent())!) as Record<string, string | null>;
  const at = page.url();
  await page.close();
  return { r, at };
}

describe('a hostile private preview with a docs domain: its own origin, no grant of the project, nothing to carry away', () => {
  let s: Setup;
  let docs: string;
  let preview: string;

  beforeAll(async () => {
    s = await servedTestApp({ LECTERN_DOCS_DOMAIN: 'docs.localhost' });
    docs = s.origin.replace('127.0.0.1', 'secret.docs.localhost');
    preview = s.origin.replace('127.0.0.1', 'secret--7.docs.localhost');
    await privateProjectWithPreview(s.t, docs);
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
  });

  it('a reader of both reads the project and the preview, and the preview gets nothing of the project', async () => {
    const context = await signedIn(s.origin);
    // The reader reads the private docs first (their host's cookie is set), as a maintainer would.
    const page = await context.newPage();
    await page.goto(`${s.origin}/_/docs-access?next=${encodeURIComponent(`${docs}/en/latest/`)}`);
    expect(page.url()).toBe(`${docs}/en/latest/`);
    expect(await page.locator('main p').textContent()).toContain(SECRET);
    // The commit status links the preview under the project's host: it is sent to its own host, granted there alone.
    await page.goto(`${docs}/en/7/`);
    expect(page.url()).toBe(`${preview}/en/7/`);
    await page.close();
    const { r, at } = await outcome(context, `${preview}/en/7/`);
    expect(at).toBe(`${preview}/en/7/`);
    // Nothing of a grant in the preview's address or cookies.
    expect([r.location, r.grant, r.cookie]).toEqual([`${preview}/en/7/`, null, '']);
    // The project's search and page, asked with the browser's cookies: no CORS grant, and the cookie does not speak.
    expect(r.search).toMatch(/^refused: TypeError/);
    expect(r.page).toMatch(/^refused: TypeError/);
    // Its own host's search reads its own version only.
    expect(r.ownSearch).toMatch(/^404 /);
    // The project's script included from the preview: refused (the cookie does not speak, and CORP).
    expect(r.script).toBe('error: undefined');
    // The framed project page is another origin's.
    expect(r.frame).toMatch(/^refused: SecurityError|^null$/);
    expect(r.frameLocation).toMatch(/^refused: SecurityError/);
    expect(JSON.stringify(r)).not.toContain(SECRET);
    // The preview's address, copied out, reads nothing with no cookie.
    const copied = await supertest(s.t.handler).get('/en/7/').set('host', new URL(preview).host);
    expect(copied.status).toBe(404);
    await context.close();
  }, 120_000);
});

describe('a hostile private preview without a docs domain: sandboxed, with a grant for itself alone that reads nothing copied out', () => {
  let s: Setup;

  beforeAll(async () => {
    s = await servedTestApp();
    await privateProjectWithPreview(s.t, `${s.origin}/docs/secret`);
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
  });

  it('the preview finds its own grant and reads nothing of the project with it; copied out, it opens nothing', async () => {
    const context = await signedIn(s.origin);
    const { r, at } = await outcome(context, `${s.origin}/docs/secret/en/7/`);
    expect(at).toMatch(new RegExp(`^${s.origin}/docs/secret/_/r/[\\w.-]+/en/7/$`));
    const grant = r.grant!;
    expect(grant).toMatch(/^[\w.-]+$/);
    // Sandboxed: no cookie of Lectern's origin; its requests are cross-origin and get no CORS grant.
    expect(r.cookie).toMatch(/^refused: SecurityError/);
    for (const k of ['search', 'page', 'ownSearch']) expect(r[k], k).toMatch(/^refused: TypeError/);
    expect(r.script).toBe('error: undefined');
    expect(JSON.stringify(r)).not.toContain(SECRET);
    // What the contributor receives: the grant, used with no cookie, as curl or as any fetch.
    const http = supertest(s.t.handler);
    for (const dest of [undefined, 'document', 'empty', 'script', 'style']) {
      for (const path of [
        `/docs/secret/_/r/${grant}/en/latest/`,
        `/docs/secret/_/r/${grant}/en/latest/data.js`,
        `/docs/secret/_/r/${grant}/_/search.json?q=zanzibar&version=latest`,
      ]) {
        const req = http.get(path).set('sec-fetch-mode', dest ? 'no-cors' : 'navigate');
        const res = await (dest ? req.set('sec-fetch-dest', dest) : req);
        expect([path, dest, res.status === 200, res.text.includes(SECRET)]).toEqual([path, dest, false, false]);
      }
    }
    // Even the preview's own page opens only with its reader's cookie.
    expect((await http.get(`/docs/secret/_/r/${grant}/en/7/`).set('sec-fetch-mode', 'navigate')).status).toBe(302);
    await context.close();
  }, 120_000);
});
