// Private docs in a browser, through the reader's session (issue 12). On Lectern's origin (no docs
// domain) a signed-in reader's navigation to a private page is redirected to the same page under a
// docs-reading grant (`/_/r/<grant>/`, src/serve/grants.ts), so the sandboxed page's stylesheet,
// sent without the cookie, loads too. With a docs domain, Lectern's host hands the grant over
// (`/_/docs-access?next=`) as a one-time ticket, exchanged on the docs host for a host-only
// HttpOnly cookie. A grant reads one version as its session's user while the session lasts: not
// another project, not after signing out, not when forged or altered; a URL grant's pages only
// with its session's cookie (docs/design/grants.md; test/security/grants.test.ts tries the rest).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/domain/users.ts';
import { servedTestApp, type TestApp, testApp } from '../helpers/app.ts';
import { launchChromium, makeProject, publish } from '../helpers/publish.ts';

const dirs: string[] = [];
/** A built page whose heading's colour comes from its own stylesheet. */
function styledBuild(title: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lectern-private-'));
  dirs.push(dir);
  writeFileSync(
    path.join(dir, 'index.html'),
    `<!doctype html><html><head><link rel="stylesheet" href="_static/style.css"></head><body><h1>${title}</h1><a href="page.html">next</a></body></html>`,
  );
  writeFileSync(path.join(dir, 'page.html'), `<!doctype html><html><body><h1>${title}, page two</h1></body></html>`);
  return dir;
}
async function withStyle(dir: string): Promise<string> {
  await mkdir(path.join(dir, '_static'), { recursive: true });
  writeFileSync(path.join(dir, '_static', 'style.css'), 'h1 { color: rgb(1, 2, 3); }');
  return dir;
}

const SIGN_IN = 'mutation($u: String!, $p: String!) { signIn(username: $u, password: $p) { __typename } }';

describe("on Lectern's origin", () => {
  let t: TestApp;
  let stop: () => Promise<void>;
  let browser: Browser;
  let origin: string;

  beforeAll(async () => {
    ({ t, origin, stop } = await servedTestApp());
    const { user: alice } = await createUser(t.db.prisma, 'alice', { password: 'alice-password-1' });
    await createUser(t.db.prisma, 'bob', { password: 'bob-password-1' });
    const secret = await makeProject(t, { slug: 'secret', privacyLevel: 'private', maintainers: [alice.id] });
    await publish(t, { project: secret, version: 'latest', html: await withStyle(styledBuild('Secret docs')) });
    const other = await makeProject(t, { slug: 'other', privacyLevel: 'private', maintainers: [alice.id] });
    await publish(t, { project: other, version: 'latest', html: styledBuild('Other docs') });
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await stop?.();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  async function signedIn(username: string): Promise<BrowserContext> {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${origin}/healthz`);
    const answer = await page.evaluate(
      async ([query, u]) =>
        (
          await fetch('/graphql', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ query, variables: { u, p: `${u}-password-1` } }),
          })
        ).json(),
      [SIGN_IN, username] as const,
    );
    expect(answer).toEqual({ data: { signIn: { __typename: 'MutationSignInSuccess' } } });
    await page.close();
    return context;
  }

  let grantUrl: string;

  it("a signed-in reader who may read it reads a private project's page, stylesheet included", async () => {
    const context = await signedIn('alice');
    const page = await context.newPage();
    const response = await page.goto(`${origin}/docs/secret/en/latest/`);
    expect(response?.status()).toBe(200);
    grantUrl = page.url();
    expect(grantUrl).toMatch(new RegExp(`^${origin}/docs/secret/_/r/[\\w.-]+/en/latest/$`));
    expect(await page.locator('h1').textContent()).toBe('Secret docs');
    // The stylesheet came without the cookie (the page is sandboxed), through the grant in its URL.
    expect(await page.locator('h1').evaluate((h) => getComputedStyle(h).color)).toBe('rgb(1, 2, 3)');
    expect(response?.headers()['referrer-policy']).toBe('no-referrer');
    expect(response?.headers()['cache-control']).toBe('private, no-cache');
    // A relative link keeps the grant.
    await page.getByRole('link', { name: 'next' }).click();
    await page.waitForURL(/\/_\/r\/[\w.-]+\/en\/latest\/page\.html$/);
    expect(await page.locator('h1').textContent()).toBe('Secret docs, page two');
    await context.close();
  });

  it('the search box of a page under a grant sends its reader to a page of results (search.json answers no other origin)', async () => {
    const context = await signedIn('alice');
    const page = await context.newPage();
    await page.goto(`${origin}/docs/secret/en/latest/`);
    await page.keyboard.press('/');
    await page.getByRole('searchbox', { name: 'Search the documentation' }).fill('secret');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/_\/search\/\?q=secret&version=latest$/);
    expect(page.url()).toMatch(new RegExp(`^${origin}/docs/secret/_/r/[\\w.-]+/_/search/\\?q=secret&version=latest$`));
    await expect.poll(() => page.getByRole('status').textContent(), { timeout: 15_000 }).toBe('2 pages found for "secret".');
    await page.getByRole('link', { name: 'Secret docs', exact: true }).click();
    await page.waitForURL(/\/_\/r\/[\w.-]+\/en\/latest\/(index\.html)?$/);
    expect(await page.locator('h1').textContent()).toBe('Secret docs');
    // The results page, copied out, opens nothing.
    const copied = await t.http
      .get(new URL(page.url()).pathname.replace(/en\/latest\/.*$/, '_/search/?q=secret&version=latest'))
      .set('sec-fetch-mode', 'navigate');
    expect([copied.status, copied.headers.location]).toEqual([302, '/docs/secret/_/search/?q=secret&version=latest']);
    await context.close();
  });

  it('is not found for a reader signed out, or signed in without the right to read it', async () => {
    const anonymous = await browser.newContext();
    const page = await anonymous.newPage();
    expect((await page.goto(`${origin}/docs/secret/en/latest/`))?.status()).toBe(404);
    await anonymous.close();
    const bob = await signedIn('bob');
    const bobs = await bob.newPage();
    expect((await bobs.goto(`${origin}/docs/secret/en/latest/`))?.status()).toBe(404);
    expect(bobs.url()).toBe(`${origin}/docs/secret/en/latest/`);
    await bob.close();
  });

  // What a page's stylesheet request says: a URL grant reads a version's files for it without the
  // cookie (the sandboxed page sends none), its HTML only with the session's cookie.
  const asStyle = (path: string) => t.http.get(path).set('sec-fetch-mode', 'no-cors').set('sec-fetch-dest', 'style');

  it('a grant reads its own project only, and nothing when altered', async () => {
    const grantPath = new URL(grantUrl).pathname;
    const grant = /\/_\/r\/([^/]+)\//.exec(grantPath)![1]!;
    const css = `${grantPath}_static/style.css`;
    expect((await asStyle(css)).status).toBe(200);
    // The page itself: not to a request without the session's cookie, whatever it says it loads.
    expect((await t.http.get(grantPath).set('sec-fetch-mode', 'no-cors')).status).toBe(404);
    expect((await asStyle(grantPath)).status).toBe(404);
    expect((await asStyle(`/docs/other/_/r/${grant}/en/latest/_static/style.css`)).status).toBe(404);
    const [sid, pid, vid, exp, mac] = grant.split('.') as [string, string, string, string, string];
    const altered = [
      `${sid}.${Number(pid) + 1}.${vid}.${exp}.${mac}`,
      `${sid}.${pid}.${Number(vid) + 1}.${exp}.${mac}`,
      `${sid}.${pid}.${vid}.${Number(exp) + 3600}.${mac}`,
      `${Number(sid) + 1}.${pid}.${vid}.${exp}.${mac}`,
      `${sid}.${pid}.${vid}.${exp}.${'A'.repeat(22)}`,
    ];
    for (const g of altered) {
      expect([g, (await asStyle(`/docs/secret/_/r/${g}/en/latest/_static/style.css`)).status]).toEqual([g, 404]);
      // A reader following a link with it goes to the page itself, where a session would grant it again.
      const nav = await t.http.get(`/docs/secret/_/r/${g}/en/latest/page.html`).set('sec-fetch-mode', 'navigate');
      expect([nav.status, nav.headers.location]).toEqual([302, '/docs/secret/en/latest/page.html']);
    }
  });

  it('ends with the session: after signing out, the grant reads nothing', async () => {
    const css = `${new URL(grantUrl).pathname}_static/style.css`;
    expect((await asStyle(css)).status).toBe(200);
    await t.db.prisma.session.deleteMany({ where: { user: { username: 'alice' } } });
    expect((await asStyle(css)).status).toBe(404);
  });
});

describe('with docs on their own hosts (LECTERN_DOCS_DOMAIN)', () => {
  let t: TestApp;
  const ORIGIN = 'http://lectern.test';
  let cookie: string;

  beforeAll(async () => {
    t = await testApp({ LECTERN_DOCS_DOMAIN: 'docs.test' });
    const { user: alice } = await createUser(t.db.prisma, 'alice', { password: 'alice-password-1' });
    const secret = await makeProject(t, { slug: 'secret', privacyLevel: 'private', maintainers: [alice.id] });
    await publish(t, { project: secret, version: 'latest', html: await withStyle(styledBuild('Secret docs')) });
    const res = await supertest(t.handler)
      .post('/graphql')
      .set('origin', ORIGIN)
      .set('content-type', 'application/json')
      .send({ query: SIGN_IN, variables: { u: 'alice', p: 'alice-password-1' } });
    cookie = ([] as string[])
      .concat(res.headers['set-cookie'])
      .find((c) => c.startsWith('lectern_session='))!
      .split(';')[0]!;
  });
  afterAll(async () => {
    await t?.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  const access = (next: string, withCookie = true) => {
    const req = t.http.get('/_/docs-access').query({ next });
    return withCookie ? req.set('cookie', cookie) : req;
  };

  it("offers a reader who meets a 404 on a docs host to sign in; Lectern's host hands the signed-in reader a ticket the docs host takes once for its cookie", async () => {
    const miss = await t.http.get('/en/latest/').set('host', 'secret.docs.test');
    expect(miss.status).toBe(404);
    expect(miss.text).toContain(`href="${ORIGIN}/_/docs-access?next=http%3A%2F%2Fsecret.docs.test%2Fen%2Flatest%2F"`);
    const handed = await access('http://secret.docs.test/en/latest/?q=1');
    expect(handed.status).toBe(302);
    const to = new URL(handed.headers.location!);
    expect(`${to.origin}${to.search}`).toBe('http://secret.docs.test?q=1');
    expect(to.pathname).toMatch(/^\/_\/r\/[\w-]{43}\/en\/latest\/$/);
    // The docs host takes the ticket: its cookie (host-only, HttpOnly), and the page without the ticket.
    const taken = await t.http.get(`${to.pathname}?q=1`).set('host', 'secret.docs.test');
    expect([taken.status, taken.headers.location]).toEqual([302, '/en/latest/?q=1']);
    const setCookie = ([] as string[]).concat(taken.headers['set-cookie'] ?? []);
    expect(setCookie).toHaveLength(1);
    expect(setCookie[0]).toMatch(/^lectern_docs_grant=[\w.~-]+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax$/);
    const grantCookie = setCookie[0]!.split(';')[0]!;
    const page = await t.http.get('/en/latest/').set('host', 'secret.docs.test').set('cookie', grantCookie);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Secret docs');
    const css = await t.http.get('/en/latest/_static/style.css').set('host', 'secret.docs.test').set('sec-fetch-mode', 'no-cors').set('cookie', grantCookie);
    expect(css.status).toBe(200);
    // Taken once: the same URL again reads nothing.
    const again = await t.http.get(to.pathname).set('host', 'secret.docs.test');
    expect([again.status, again.headers.location]).toEqual([302, '/en/latest/']);
    expect((await t.http.get(to.pathname).set('host', 'secret.docs.test').set('sec-fetch-mode', 'no-cors')).status).toBe(404);
  });

  it('sends a reader without a session to sign in and back, and refuses addresses that are not docs pages', async () => {
    const out = await access('http://secret.docs.test/en/latest/', false);
    expect([out.status, out.headers.location]).toEqual([
      302,
      `/sign-in?next=${encodeURIComponent('/_/docs-access?next=http%3A%2F%2Fsecret.docs.test%2Fen%2Flatest%2F')}`,
    ]);
    for (const next of ['https://evil.example/', 'javascript:alert(1)', '/docs/secret/', 'http://user:pw@secret.docs.test/', 'not a url']) {
      expect([next, (await access(next)).status]).toEqual([next, 400]);
    }
    expect((await access('http://no-such-project.docs.test/en/latest/')).status).toBe(404);
  });
});
