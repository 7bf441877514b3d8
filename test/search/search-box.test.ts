// Search in the served docs (issue 13): the search box Lectern puts into HTML pages (opened with
// "/", queried as the reader types, keyboard navigable, results linked to the section's anchor), in
// a real Chromium on a sandboxed page; `<docs root>/_/search.json` answering as the page's reader
// (a grant reads private docs); Sphinx's search.html answered with the server's results; hostile
// page text shown as text; and a project that turns it off.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLAIN_SESSION_COOKIE, startSession } from '../../src/domain/sessions.ts';
import { urlGrant } from '../../src/serve/grants.ts';
import { servedTestApp, type TestApp } from '../helpers/app.ts';
import { launchChromium, makeProject, htmlPage as page, publish, removePages, sphinxBuild } from '../helpers/publish.ts';

let t: TestApp;
let stop: () => Promise<void>;
let browser: Browser;
let origin: string;

beforeAll(async () => {
  ({ t, origin, stop } = await servedTestApp());
  const fixture = await makeProject(t, { slug: 'fixture' });
  await publish(t, { project: fixture, version: 'latest', html: await sphinxBuild('sphinx') });
  const hostile = await makeProject(t, { slug: 'hostile' });
  await publish(t, {
    project: hostile,
    version: 'latest',
    html: page(
      '<html><body><main><h1>Trap &lt;img src=x onerror=alert(1)&gt;</h1><p>The trapdoor &lt;script&gt;steal()&lt;/script&gt; opens.</p></main></body></html>',
    ),
  });
  const secret = await makeProject(t, { slug: 'secret', privacyLevel: 'private' });
  await publish(t, { project: secret, version: 'latest', html: page('<html><body><main><h1>Plans</h1><p>The zanzibar launch.</p></main></body></html>') });
  browser = await launchChromium();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await stop?.();
  removePages();
});

describe('the search box', () => {
  it('opens with "/", finds as the reader types, and goes to the section chosen with the keyboard', async () => {
    const p = await browser.newPage();
    const errors: string[] = [];
    p.on('pageerror', (e) => errors.push(e.message));
    await p.goto(`${origin}/docs/fixture/en/latest/`);
    await p.locator('#lectern-search').waitFor({ state: 'attached' });
    // Alabaster has its own search box: Lectern adds no second button beside it.
    expect(await p.locator('#lectern-search-button').count()).toBe(0);
    await p.keyboard.press('/');
    const input = p.getByRole('dialog', { name: 'Search the documentation' }).getByRole('searchbox');
    await input.pressSequentially('instal', { delay: 30 });
    const first = p.locator('#lectern-search-results a').first();
    await first.waitFor({ timeout: 10_000 });
    expect(await first.textContent()).toContain('Installation');
    expect(await p.locator('#lectern-search-results mark').first().textContent()).toMatch(/^instal/i);
    await input.press('ArrowDown');
    await input.press('Enter');
    await p.waitForURL(/\/docs\/fixture\/en\/latest\/guide\/install\.html#installation$/);
    expect(errors).toEqual([]);
    await p.close();
  });

  it('shows hostile page text as text', async () => {
    const p = await browser.newPage();
    let dialogs = 0;
    p.on('dialog', async (d) => {
      dialogs++;
      await d.dismiss();
    });
    await p.goto(`${origin}/docs/hostile/en/latest/`);
    await p.locator('#lectern-search-button').click();
    await p.getByRole('searchbox').fill('trapdoor');
    const text = p.locator('#lectern-search-results li').first();
    await text.waitFor({ timeout: 10_000 });
    expect(await text.textContent()).toContain('<script>steal()</script>');
    expect(await p.locator('#lectern-search-results img, #lectern-search-results script').count()).toBe(0);
    expect(dialogs).toBe(0);
    await p.close();
  });
});

describe('search.json and search.html on the docs site', () => {
  it('search.html?q= is answered with the server’s results, without the client-side search', async () => {
    const res = await t.http.get('/docs/fixture/en/latest/search.html?q=installing');
    expect(res.status).toBe(200);
    expect(res.text).toContain('<ul class="search">');
    expect(res.text).toMatch(/href="http:\/\/127\.0\.0\.1:\d+\/docs\/fixture\/en\/latest\/guide\/install\.html"/);
    expect(res.text).not.toMatch(/<script[^>]+searchtools/);
    expect(res.text).not.toMatch(/<script[^>]+searchindex/);
    // Without a question it is the page as built.
    expect((await t.http.get('/docs/fixture/en/latest/search.html')).text).toMatch(/<script[^>]+searchtools/);
    const hostile = await t.http.get('/docs/hostile/en/latest/search.html?q=trapdoor');
    expect(hostile.status).toBe(404); // a page without search.html has none to answer with
  });

  it('search.json answers as the page’s reader: private docs under a grant only', async () => {
    const json = await t.http.get('/docs/fixture/_/search.json').query({ q: 'instal', version: 'latest' });
    expect(json.status).toBe(200);
    expect(json.headers['content-security-policy']).toMatch(/^sandbox/);
    expect(json.body.results[0]).toMatchObject({ title: 'Installation', url: `${origin}/docs/fixture/en/latest/guide/install.html` });
    expect((await t.http.get('/docs/secret/_/search.json').query({ q: 'zanzibar' })).status).toBe(404);
    // A signed-in owner's grant (as the docs server hands it over) reads it, and its links keep the grant.
    const { user } = await import('../../src/domain/users.ts').then((m) => m.createUser(t.db.prisma, 'owner', { password: 'owner-password-1' }));
    const secret = await t.db.prisma.project.update({ where: { slug: 'secret' }, data: { users: { connect: { id: user.id } } } });
    const cookie = await startSession(t.db.prisma, user.id);
    const session = await t.db.prisma.session.findFirstOrThrow({ where: { userId: user.id } });
    const latest = await t.db.prisma.version.findFirstOrThrow({ where: { projectId: secret.id, slug: 'latest' } });
    const grant = urlGrant.issue(t.services.cipher, { sessionId: session.id, projectId: secret.id, versionId: latest.id }, '127.0.0.1');
    // Search reads the version's text: under a URL grant, only with the grant's own session cookie
    // (docs/design/grants.md), and never for another origin (no Access-Control-Allow-Origin).
    const bare = await t.http.get(`/docs/secret/_/r/${grant}/_/search.json`).query({ q: 'zanzibar', version: 'latest' }).set('sec-fetch-mode', 'cors');
    expect(bare.status).toBe(404);
    const granted = await t.http
      .get(`/docs/secret/_/r/${grant}/_/search.json`)
      .query({ q: 'zanzibar', version: 'latest' })
      .set('cookie', `${PLAIN_SESSION_COOKIE}=${cookie}`);
    expect(granted.status).toBe(200);
    expect(granted.headers['access-control-allow-origin']).toBeUndefined();
    expect(granted.body.results[0].url).toBe(`${origin}/docs/secret/_/r/${grant}/en/latest/index.html`);
  });

  it('is off for a project that turns it off', async () => {
    const before = await t.http.get('/docs/fixture/en/latest/');
    expect(before.text).toContain('/_/search.js');
    const token = await t.user('maintainer');
    await t.db.prisma.project.update({ where: { slug: 'fixture' }, data: { users: { connect: { username: 'maintainer' } } } });
    const off = await t.gql('mutation { updateProject(slug: "fixture", input: { docsSearch: false }) { __typename } }', {}, token);
    expect(off.data.updateProject.__typename).toBe('MutationUpdateProjectSuccess');
    const after = await t.http.get('/docs/fixture/en/latest/');
    expect(after.text).not.toContain('/_/search.js');
    expect(after.headers.etag).not.toBe(before.headers.etag);
    expect((await t.http.get('/docs/fixture/en/latest/search.html?q=installing')).text).toMatch(/<script[^>]+searchtools/);
  });
});
