// A hostile project's page, opened by a signed-in reader, in both setups: the default single
// origin (no LECTERN_DOCS_DOMAIN: docs under /docs/ on the dashboard's own host and port), and docs
// on hosts of their own (`<project>.docs.localhost`, which Chromium resolves to this machine). In a
// real Chromium the victim signs in from a page of Lectern's origin, which proves the session works
// there; then opens the hostile project's public page, whose script tries everything a page could to
// act as its reader: read the cookie and storage, call /graphql (read the viewer, create a token,
// change a project) and the REST API with the browser's credentials, post a form, frame Lectern's
// pages and read them, register a service worker. Nothing of it works: on Lectern's origin every
// docs answer is served sandboxed (an opaque origin of its own); on a docs host the page is another
// site; and the cookie speaks only in a POST of JSON from Lectern's origin.
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/domain/users.ts';
import { servedTestApp, type TestApp } from '../helpers/app.ts';
import { htmlPage, launchChromium, makeProject, publish, removePages } from '../helpers/publish.ts';

let t: TestApp;
let stop: () => Promise<void>;
let browser: Browser;
let origin: string;
let victimProject: number;

// What the hostile page tries against Lectern at `api` ('' when it shares the page's host), each
// answer recorded as what the page could see.
const attack = (api: string) => `
<!doctype html><html><head><title>Totally harmless docs</title></head><body>
<h1>Welcome</h1><pre id="out"></pre>
<form id="f" method="POST" action="${api}/graphql" enctype="text/plain" target="sink">
  <input name='{"query":"mutation { createToken(name: \\"form\\") { __typename } }","x":"' value='"}'>
</form>
<iframe name="sink" id="sink"></iframe><iframe id="dash" src="${api}/"></iframe>
<script>
(async () => {
  const r = {};
  const attempt = async (name, f) => { try { r[name] = await f(); } catch (e) { r[name] = 'refused: ' + (e && e.name); } };
  // Waits, on the condition, for frames to leave their first about:blank (after that a frame of
  // another origin reads as null), at most 10 s: a frame still readable then is one this page can read.
  const settled = (ids) => new Promise((ok) => {
    const end = Date.now() + 10000;
    const readable = (id) => { try { return document.getElementById(id).contentDocument !== null; } catch (e) { return false; } };
    const check = () => (!ids.some(readable) || Date.now() > end ? ok() : setTimeout(check, 20));
    check();
  });
  const gql = (query) => fetch('${api}/graphql', { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) }).then((x) => x.text());
  await attempt('cookie', () => document.cookie);
  await attempt('localStorage', () => localStorage.getItem('secret'));
  await attempt('viewer', () => gql('{ viewer { username } }'));
  await attempt('createToken', () => gql('mutation { createToken(name: "stolen") { __typename ... on MutationCreateTokenSuccess { data { token } } } }'));
  await attempt('updateProject', () => gql('mutation { updateProject(slug: "victim-docs", input: { name: "Owned" }) { __typename } }'));
  await attempt('rest', () => fetch('${api}/api/v3/projects/', { credentials: 'include' }).then((x) => x.status + ' ' + x.type));
  await attempt('serviceWorker', () => navigator.serviceWorker.register('/docs/evil/en/latest/sw.js').then(() => 'registered'));
  // A session cookie planted for every parent domain of the page's host, to shadow the reader's.
  await attempt('plant', () => { const h = location.hostname.split('.'); for (let i = 1; i < h.length; i++) document.cookie = 'lectern_session=planted; path=/; domain=' + h.slice(i).join('.'); return 'tried'; });
  document.getElementById('f').submit();
  await settled(['dash', 'sink']);
  await attempt('frame', () => String(document.getElementById('dash').contentDocument && document.getElementById('dash').contentDocument.body.innerText));
  await attempt('sink', () => String(document.getElementById('sink').contentDocument && document.getElementById('sink').contentDocument.body.innerText));
  document.getElementById('out').textContent = JSON.stringify(r);
})();
</script></body></html>`;

beforeAll(async () => {
  ({ t, origin, stop } = await servedTestApp());
  const { user: victim } = await createUser(t.db.prisma, 'victim', { password: 'victim-password-1' });
  const { user: attacker } = await createUser(t.db.prisma, 'attacker', { password: 'attacker-password-1' });
  victimProject = (await makeProject(t, { slug: 'victim-docs', maintainers: [victim.id] })).id;
  const evil = await makeProject(t, { slug: 'evil', maintainers: [attacker.id] });
  await publish(t, { project: evil, version: 'latest', html: htmlPage(attack('')) });
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await stop?.();
  removePages();
});

/** A browser session in which the victim signed in from a page of Lectern's origin. */
async function signedIn(at = origin): Promise<BrowserContext> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${at}/healthz`);
  const signIn = await page.evaluate(async () => {
    localStorage.setItem('secret', 'kept by a page of Lectern');
    const post = (query: string) =>
      fetch('/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) }).then((x) => x.json());
    await post('mutation { signIn(username: "victim", password: "victim-password-1") { __typename } }');
    return post('{ viewer { username } }');
  });
  // The control: from Lectern's own page, the cookie does speak for the victim.
  expect(signIn).toEqual({ data: { viewer: { username: 'victim' } } });
  await page.close();
  return context;
}

describe("a hostile project's page, opened by a signed-in reader, on the dashboard's origin", () => {
  it('is served sandboxed, and none of its attempts act as the reader', async () => {
    const context = await signedIn();
    const page = await context.newPage();
    const response = await page.goto(`${origin}/docs/evil/en/latest/`);
    expect(response?.headers()['content-security-policy']).toMatch(/^sandbox allow-scripts\b/);
    expect(response?.headers()['content-security-policy']).not.toMatch(/allow-same-origin/);
    await page.waitForFunction(() => document.getElementById('out')?.textContent, undefined, { timeout: 20_000 });
    const r = JSON.parse((await page.locator('#out').textContent())!) as Record<string, string>;
    // The sandboxed page has an opaque origin: no cookie, no storage of Lectern's origin (it gets
    // storage of its own, in memory, so themes' scripts keep working).
    expect(r.cookie).toMatch(/^refused: SecurityError/);
    expect(r.localStorage).toBeNull();
    // Its requests are cross-origin (Origin: null): the browser gets no CORS grant and the server
    // lets no cookie speak for anyone.
    for (const k of ['viewer', 'createToken', 'updateProject', 'rest']) expect(r[k], k).toMatch(/^refused: TypeError/);
    expect(r.serviceWorker).toMatch(/^refused: /);
    // Framed pages of Lectern's origin inherit the sandbox: their contents cannot be read.
    expect(r.frame).toMatch(/^(refused: SecurityError|null)$/);
    expect(r.sink).toMatch(/^(refused: SecurityError|null)$/);
    // And nothing happened on the server: no token, the project untouched, the session intact.
    const victim = await t.db.prisma.user.findUniqueOrThrow({ where: { username: 'victim' }, include: { tokens: true } });
    expect(victim.tokens.map((k) => k.name)).toEqual(['']); // the one createUser made
    expect((await t.db.prisma.project.findUniqueOrThrow({ where: { id: victimProject } })).name).not.toBe('Owned');
    const after = await context.newPage();
    await after.goto(`${origin}/healthz`);
    const still = await after.evaluate(() =>
      fetch('/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ viewer { username } }' }) }).then(
        (x) => x.json(),
      ),
    );
    expect(still).toEqual({ data: { viewer: { username: 'victim' } } });
    await context.close();
  });

  it('every docs answer carries the sandbox, the fast path and 404 pages included; service worker scripts are refused', async () => {
    for (let i = 0; i < 2; i++) {
      // The second time from the fast path.
      const page = await t.http.get('/docs/evil/en/latest/');
      expect(page.status).toBe(200);
      expect(page.headers['content-security-policy']).toMatch(/^sandbox /);
    }
    for (const path of ['/docs/evil/en/latest/nothing-here.html', '/docs/evil/', '/docs/no-such-project/en/latest/']) {
      expect((await t.http.get(path)).headers['content-security-policy'], path).toMatch(/^sandbox /);
    }
    const sw = await t.http.get('/docs/evil/en/latest/index.html').set('service-worker', 'script');
    expect(sw.status).toBe(403);
    // The version menu's data is public: a sandboxed page may read it.
    const versions = await t.http.get('/docs/evil/_/versions/en.json');
    expect(versions.headers['access-control-allow-origin']).toBe('*');
  });
});

describe.each([
  { setup: 'LECTERN_DOCS_DOMAIN=docs.localhost', env: { LECTERN_DOCS_DOMAIN: 'docs.localhost' }, hostname: '127.0.0.1', evilHost: 'evil.docs.localhost' },
  // `npm start`'s own: the public URL on localhost, docs on <project>.localhost:<port>.
  { setup: 'the default on localhost', env: {}, hostname: 'localhost', evilHost: 'evil.localhost' },
] as const)("a hostile project's page on its own docs host ($setup), opened by a signed-in reader", ({ env, hostname, evilHost }) => {
  let hosted: TestApp;
  let stopHosted: () => Promise<void>;
  let api: string;
  let docs: string;

  beforeAll(async () => {
    ({ t: hosted, origin: api, stop: stopHosted } = await servedTestApp(env, { hostname }));
    // Chromium resolves every *.localhost name to this machine: each project a site of its own.
    docs = api.replace(hostname, evilHost);
    const { user: victim } = await createUser(hosted.db.prisma, 'victim', { password: 'victim-password-1' });
    const { user: attacker } = await createUser(hosted.db.prisma, 'attacker', { password: 'attacker-password-1' });
    await makeProject(hosted, { slug: 'victim-docs', maintainers: [victim.id] });
    const evil = await makeProject(hosted, { slug: 'evil', maintainers: [attacker.id] });
    await publish(hosted, { project: evil, version: 'latest', html: htmlPage(attack(api)) });
  }, 60_000);
  afterAll(async () => {
    await stopHosted?.();
  });

  it("runs on its own origin, and none of its attempts on Lectern's act as the reader", async () => {
    const context = await signedIn(api);
    const page = await context.newPage();
    const response = await page.goto(`${docs}/en/latest/`);
    expect(response?.status()).toBe(200);
    await page.waitForFunction(() => document.getElementById('out')?.textContent, undefined, { timeout: 20_000 });
    const r = JSON.parse((await page.locator('#out').textContent())!) as Record<string, string>;
    // Its own origin's cookie jar and storage hold nothing of Lectern's.
    expect(r.cookie).toBe('');
    expect(r.localStorage).toBeNull();
    // Cross-site requests to Lectern: no CORS grant, and no cookie speaks in them.
    for (const k of ['viewer', 'createToken', 'updateProject', 'rest']) expect(r[k], k).toMatch(/^refused: TypeError/);
    // The dashboard refuses to be framed; the form's answer is another origin's.
    expect(r.frame).toMatch(/^(refused: SecurityError|null)$/);
    expect(r.sink).toMatch(/^(refused: SecurityError|null)$/);
    const victim = await hosted.db.prisma.user.findUniqueOrThrow({ where: { username: 'victim' }, include: { tokens: true } });
    expect(victim.tokens.map((k) => k.name)).toEqual(['']);
    expect((await hosted.db.prisma.project.findUniqueOrThrow({ where: { slug: 'victim-docs' } })).name).not.toBe('Owned');
    // No cookie it set reaches Lectern's host: the reader's session still speaks for the reader.
    expect(r.plant).toBe('tried');
    expect((await context.cookies(api)).map((c) => `${c.name}=${c.value}`)).not.toContain('lectern_session=planted');
    const home = await context.newPage();
    await home.goto(`${api}/healthz`);
    const viewer = await home.evaluate(() =>
      fetch('/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ viewer { username } }"}' }).then((x) => x.json()),
    );
    expect(viewer).toEqual({ data: { viewer: { username: 'victim' } } });
    await context.close();
  });
});
