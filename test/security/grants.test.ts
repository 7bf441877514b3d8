// Docs-reading grants moved where they do not belong (issue 21, item 2; docs/design/grants.md),
// at the HTTP level: a reader's grant taken to another version, a pull request's preview, a
// subproject, a translation, another project and another host; a copied URL without the reader's
// cookie; a grant cookie in a request another origin of the same site makes; search asked from
// elsewhere; a one-time ticket used twice or on another host. Each answers nothing private.

import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLAIN_SESSION_COOKIE, startSession } from '../../src/domain/sessions.ts';
import { createUser } from '../../src/domain/users.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { htmlPage, makeProject, publish, removePages } from '../helpers/publish.ts';

/**
 * Private docs: `secret` (en) with latest, v2 and the preview 7; `other`; and under the public
 * `hub` (so that they are served under its root) the private subproject `inner` (alias inner, with
 * the preview 3) and the private translation `hub-fr` (with the preview 5).
 */
async function privateTree(t: TestApp) {
  const { user: alice } = await createUser(t.db.prisma, 'alice', { password: 'alice-password-1' });
  const { user: bob } = await createUser(t.db.prisma, 'bob', { password: 'bob-password-1' });
  const maintainers = [alice.id];
  const secret = await makeProject(t, { slug: 'secret', privacyLevel: 'private', maintainers });
  const hub = await makeProject(t, { slug: 'hub', privacyLevel: 'public', maintainers });
  const child = await makeProject(t, { slug: 'inner', privacyLevel: 'private', maintainers });
  const fr = await makeProject(t, { slug: 'hub-fr', language: 'fr', privacyLevel: 'private', maintainers, mainLanguageProjectId: hub.id });
  const other = await makeProject(t, { slug: 'other', privacyLevel: 'private', maintainers });
  await t.db.prisma.subproject.create({ data: { parentId: hub.id, childId: child.id, alias: 'inner' } });
  const page = (text: string) => {
    const dir = htmlPage(`<html><body><main><h1>${text}</h1><p>${text} zanzibar</p></main></body></html>`);
    return dir;
  };
  const versions: Record<string, number> = {};
  for (const [project, slug] of [
    [secret, 'latest'],
    [secret, 'v2'],
    [hub, 'latest'],
    [child, 'latest'],
    [fr, 'latest'],
    [other, 'latest'],
  ] as const) {
    const dir = page(`${project.slug} ${slug}`);
    await import('node:fs').then((fs) => fs.writeFileSync(`${dir}/style.css`, 'h1 { color: rgb(1, 2, 3); }'));
    versions[`${project.slug}/${slug}`] = (await publish(t, { project, version: slug, html: dir })).versionId;
  }
  // Pull requests' previews: the contributor's pages, private as the projects are.
  for (const [project, n] of [
    [secret, '7'],
    [child, '3'],
    [fr, '5'],
  ] as const) {
    const dir = page(`${project.slug} preview ${n}`);
    await import('node:fs').then((fs) => fs.writeFileSync(`${dir}/style.css`, 'h1 { color: rgb(4, 5, 6); }'));
    const { versionId } = await publish(t, { project, version: n, html: dir });
    await t.db.prisma.version.update({
      where: { id: versionId },
      data: { type: 'external', privacyLevel: 'private', externalState: 'open', externalSource: { number: Number(n), url: `https://forge.example/pull/${n}` } },
    });
    versions[`${project.slug}/${n}`] = versionId;
  }
  // A public project's public preview, served to anyone.
  const { versionId: hub9 } = await publish(t, { project: hub, version: '9', html: page('hub public preview 9') });
  await t.db.prisma.version.update({
    where: { id: hub9 },
    data: { type: 'external', privacyLevel: 'public', externalState: 'open', externalSource: { number: 9, url: 'https://forge.example/pull/9' } },
  });
  return { alice, bob, secret, versions };
}

/** Requests without the test agent's cookie jar: each sends the cookies it is given, no more. */
const http = (t: TestApp) => supertest(t.handler);

const cookieOf = (res: { headers: Record<string, unknown> }) =>
  ([] as string[])
    .concat((res.headers['set-cookie'] as string[] | undefined) ?? [])
    .map((c) => c.split(';')[0]!)
    .join('; ');

describe("URL grants, docs on Lectern's origin (no docs domain)", () => {
  let t: TestApp;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    // Behind a proxy on this machine, as the README's nginx setup: X-Forwarded-For names the reader.
    t = await testApp({ LECTERN_TRUSTED_PROXIES: '127.0.0.1,::1' });
    const tree = await privateTree(t);
    alice = `${PLAIN_SESSION_COOKIE}=${await startSession(t.db.prisma, tree.alice.id)}`;
    bob = `${PLAIN_SESSION_COOKIE}=${await startSession(t.db.prisma, tree.bob.id)}`;
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    removePages();
  });

  /** The grant a navigation of Alice's to `path` is sent to. */
  async function grantFor(path: string): Promise<string> {
    const res = await http(t).get(path).set('cookie', alice).set('sec-fetch-mode', 'navigate').set('sec-fetch-dest', 'document');
    expect(res.status, path).toBe(302);
    return /\/_\/r\/([^/]+)\//.exec(res.headers.location!)![1]!;
  }
  const asStyle = (path: string) => http(t).get(path).set('sec-fetch-mode', 'no-cors').set('sec-fetch-dest', 'style').set('sec-fetch-site', 'same-origin');

  it('a grant reads the version it was given for, and no other version, preview, subproject, translation or project', async () => {
    const g = await grantFor('/docs/secret/en/latest/');
    expect((await asStyle(`/docs/secret/_/r/${g}/en/latest/style.css`)).status).toBe(200);
    for (const elsewhere of [
      '/docs/secret/_/r/G/en/v2/',
      '/docs/secret/_/r/G/en/7/',
      '/docs/hub/_/r/G/projects/inner/en/latest/',
      '/docs/hub/_/r/G/projects/inner/en/3/',
      '/docs/hub/_/r/G/fr/latest/',
      '/docs/hub/_/r/G/fr/5/',
      '/docs/other/_/r/G/en/latest/',
      '/docs/inner/_/r/G/en/latest/',
    ]) {
      const path = elsewhere.replace('G', g);
      const css = await asStyle(`${path}style.css`);
      // Not read; a redirect (to a project's own root) never carries the grant along.
      expect([elsewhere, css.status === 404 || (css.status === 302 && !css.headers.location!.includes(g))]).toEqual([elsewhere, true]);
      // A navigation goes where its reader's cookie decides, without the grant.
      const nav = await http(t).get(path).set('cookie', alice).set('sec-fetch-mode', 'navigate');
      expect([elsewhere, nav.status, nav.headers.location!.includes(g)]).toEqual([elsewhere, 302, false]);
    }
  });

  it("a preview's reader gets a grant for that preview alone, and the project's grant never reads it", async () => {
    const g7 = await grantFor('/docs/secret/en/7/');
    const page = await http(t).get(`/docs/secret/_/r/${g7}/en/7/`).set('cookie', alice).set('sec-fetch-mode', 'navigate');
    expect(page.status).toBe(200);
    expect(page.text).toContain('secret preview 7');
    // Still a sandboxed page in an opaque origin, never Lectern's.
    expect(page.headers['content-security-policy']).toMatch(/^sandbox allow-scripts /);
    expect(page.headers['content-security-policy']).not.toContain('allow-same-origin');
    for (const path of [
      '/docs/secret/_/r/G/en/latest/',
      '/docs/secret/_/r/G/en/v2/',
      '/docs/hub/_/r/G/projects/inner/en/latest/',
      '/docs/hub/_/r/G/fr/latest/',
    ]) {
      expect([path, (await asStyle(`${path.replace('G', g7)}style.css`)).status]).toEqual([path, 404]);
    }
    // Its search: of its own version only, and for its reader's own request only.
    const own = http(t).get(`/docs/secret/_/r/${g7}/_/search.json`).query({ q: 'zanzibar', version: 'latest' });
    expect((await own.set('cookie', alice)).status).toBe(404);
    // Subprojects' and translations' previews: each its own grant.
    const g3 = await grantFor('/docs/hub/projects/inner/en/3/');
    expect((await asStyle(`/docs/hub/_/r/${g3}/projects/inner/en/3/style.css`)).status).toBe(200);
    expect((await asStyle(`/docs/hub/_/r/${g3}/projects/inner/en/latest/style.css`)).status).toBe(404);
    expect((await asStyle(`/docs/hub/_/r/${g3}/en/latest/style.css`)).status).toBe(404);
    const g5 = await grantFor('/docs/hub/fr/5/');
    expect((await asStyle(`/docs/hub/_/r/${g5}/fr/5/style.css`)).status).toBe(200);
    expect((await asStyle(`/docs/hub/_/r/${g5}/fr/latest/style.css`)).status).toBe(404);
    const g = await grantFor('/docs/secret/en/latest/');
    expect((await asStyle(`/docs/secret/_/r/${g}/en/7/style.css`)).status).toBe(404);
  });

  it("a copied URL opens no page, download or search without its reader's cookie", async () => {
    const g = await grantFor('/docs/secret/en/latest/');
    const path = `/docs/secret/_/r/${g}/en/latest/`;
    // Opened elsewhere (no cookie, or another reader's): to the page itself, which is not found there.
    for (const cookie of [undefined, bob]) {
      const nav = http(t).get(path).set('sec-fetch-mode', 'navigate');
      const res = await (cookie ? nav.set('cookie', cookie) : nav);
      expect([res.status, res.headers.location]).toEqual([302, '/docs/secret/en/latest/']);
      const plain = http(t).get('/docs/secret/en/latest/').set('sec-fetch-mode', 'navigate');
      expect((await (cookie ? plain.set('cookie', cookie) : plain)).status).toBe(404);
    }
    // Fetched as anything, the page's HTML and search answer nothing; curl (no Fetch Metadata) neither.
    for (const dest of ['style', 'script', 'image', 'empty', 'iframe', 'document']) {
      const res = await http(t).get(path).set('sec-fetch-mode', 'no-cors').set('sec-fetch-dest', dest);
      expect([dest, res.status]).toEqual([dest, 404]);
    }
    expect((await http(t).get(`${path}index.html`)).status).toBe(302);
    const search = await http(t).get(`/docs/secret/_/r/${g}/_/search.json`).query({ q: 'zanzibar', version: 'latest' }).set('sec-fetch-mode', 'cors');
    expect(search.status).toBe(404);
    expect(search.headers['access-control-allow-origin']).toBeUndefined();
    // Its reader's own navigation reads it, with no-referrer, and no answer under it carries a CORS grant.
    const own = await http(t).get(path).set('cookie', alice).set('sec-fetch-mode', 'navigate');
    expect([own.status, own.headers['referrer-policy'], own.headers['access-control-allow-origin']]).toEqual([200, 'no-referrer', undefined]);
    const ownSearch = await http(t).get(`/docs/secret/_/r/${g}/_/search.json`).query({ q: 'zanzibar', version: 'latest' }).set('cookie', alice);
    expect(ownSearch.status).toBe(200);
    expect(ownSearch.headers['access-control-allow-origin']).toBeUndefined();
    expect(ownSearch.body.results.map((r: { url: string }) => new URL(r.url).pathname)).toEqual([`/docs/secret/_/r/${g}/en/latest/index.html`]);
    // The same search for another version, or the whole project with its subproject: nothing.
    const v2 = await http(t).get(`/docs/secret/_/r/${g}/_/search.json`).query({ q: 'zanzibar', version: 'v2' }).set('cookie', alice);
    expect(v2.status).toBe(404);
  });

  it("a copied URL reads no file from another network, and its reader's moved address is granted anew", async () => {
    const from = (address: string) => (path: string) => asStyle(path).set('x-forwarded-for', address);
    for (const [reader, same, other] of [
      ['198.51.100.7', '198.51.100.7', '198.51.100.8'],
      ['2001:db8:1:2::5', '2001:db8:1:2:abcd::9', '2001:db8:1:3::5'],
      ['::ffff:203.0.113.4', '203.0.113.4', '203.0.113.5'],
    ]) {
      const nav = await http(t)
        .get('/docs/secret/en/latest/')
        .set('cookie', alice)
        .set('sec-fetch-mode', 'navigate')
        .set('sec-fetch-dest', 'document')
        .set('x-forwarded-for', reader!);
      const g = /\/_\/r\/([^/]+)\//.exec(nav.headers.location!)![1]!;
      const css = `/docs/secret/_/r/${g}/en/latest/style.css`;
      // The reader's page loads its stylesheet (an IPv6 reader's privacy address may change within its /64).
      expect([reader, (await from(same!)(css)).status]).toEqual([reader, 200]);
      // The URL copied to another network reads nothing there, not even a stylesheet.
      expect([reader, (await from(other!)(css)).status]).toEqual([reader, 404]);
      // The reader, moved to that network, follows a link: sent to the page, granted there anew.
      const moved = await http(t).get(`/docs/secret/_/r/${g}/en/latest/`).set('cookie', alice).set('sec-fetch-mode', 'navigate').set('x-forwarded-for', other!);
      expect([moved.status, moved.headers.location]).toEqual([302, '/docs/secret/en/latest/']);
    }
  });

  it('public docs keep answering any origin; private ones answer none', async () => {
    const pub = await makeProject(t, { slug: 'open', privacyLevel: 'public' });
    await publish(t, { project: pub, version: 'latest', html: htmlPage('<main><h1>Open</h1><p>zanzibar in public</p></main>') });
    const open = await http(t).get('/docs/open/_/search.json').query({ q: 'zanzibar', version: 'latest' });
    expect([open.status, open.headers['access-control-allow-origin']]).toEqual([200, '*']);
    const closed = await http(t).get('/docs/secret/_/search.json').query({ q: 'zanzibar', version: 'latest' }).set('authorization', 'Token nothing');
    expect(closed.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('docs hosts (LECTERN_DOCS_DOMAIN): tickets and grant cookies', () => {
  let t: TestApp;
  let alice: string;

  beforeAll(async () => {
    t = await testApp({ LECTERN_DOCS_DOMAIN: 'docs.test' });
    const tree = await privateTree(t);
    alice = `${PLAIN_SESSION_COOKIE}=${await startSession(t.db.prisma, tree.alice.id)}`;
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    removePages();
  });

  /** The ticket /_/docs-access hands Alice for `next`: the docs host's path with it. */
  async function ticketFor(next: string): Promise<string> {
    const res = await http(t).get('/_/docs-access').query({ next }).set('cookie', alice);
    expect(res.status, next).toBe(302);
    const to = new URL(res.headers.location!);
    expect(to.origin).toBe(new URL(next).origin);
    return to.pathname;
  }
  /** Takes a ticket on `host` as a navigation: the grant cookie it sets. */
  async function exchange(host: string, path: string, cookie = ''): Promise<string> {
    const res = await http(t).get(path).set('host', host).set('sec-fetch-mode', 'navigate').set('cookie', cookie);
    expect([res.status, res.headers.location]).toEqual([302, path.replace(/^\/_\/r\/[\w-]+/, '')]);
    return cookieOf(res);
  }
  const get = (host: string, path: string, cookie: string, site = 'same-origin', dest = 'empty') =>
    http(t).get(path).set('host', host).set('cookie', cookie).set('sec-fetch-site', site).set('sec-fetch-mode', 'cors').set('sec-fetch-dest', dest);

  it('a ticket is taken once, on its own host only, and leaves no grant in any URL', async () => {
    const path = await ticketFor('http://secret.docs.test/en/latest/');
    expect(path).toMatch(/^\/_\/r\/[\w-]{43}\/en\/latest\/$/);
    // On another docs host it reads nothing and is not taken.
    for (const host of ['other.docs.test', 'secret--7.docs.test', 'child.docs.test']) {
      const res = await http(t).get(path).set('host', host).set('sec-fetch-mode', 'navigate');
      expect([host, res.status, res.headers['set-cookie']]).toEqual([host, 302, undefined]);
    }
    const cookie = await exchange('secret.docs.test', path);
    expect(cookie).toMatch(/^lectern_docs_grant=/);
    const again = await http(t).get(path).set('host', 'secret.docs.test').set('sec-fetch-mode', 'navigate');
    expect([again.status, again.headers.location, again.headers['set-cookie']]).toEqual([302, '/en/latest/', undefined]);
    const page = await http(t).get('/en/latest/').set('host', 'secret.docs.test').set('cookie', cookie);
    expect([page.status, page.headers['cross-origin-resource-policy']]).toEqual([200, 'same-origin']);
    expect(page.text).toContain('secret latest');
  });

  it('the cookie reads its version only: another version is granted by way of Lectern, anything else is refused', async () => {
    const cookie = await exchange('secret.docs.test', await ticketFor('http://secret.docs.test/en/latest/'));
    const nav = await t.http
      .get('/en/v2/')
      .set('host', 'secret.docs.test')
      .set('cookie', cookie)
      .set('sec-fetch-mode', 'navigate')
      .set('sec-fetch-dest', 'document');
    expect([nav.status, nav.headers.location]).toEqual([
      302,
      `${t.config.publicUrl}/_/docs-access?next=${encodeURIComponent('http://secret.docs.test/en/v2/')}`,
    ]);
    expect((await get('secret.docs.test', '/en/v2/style.css', cookie, 'same-origin', 'style')).status).toBe(404);
    // Moved to another host: signed for this one, it reads nothing there.
    for (const host of ['other.docs.test', 'inner.docs.test', 'hub-fr.docs.test', 'secret--7.docs.test']) {
      const res = await get(host, '/en/latest/style.css', cookie, 'same-origin', 'style');
      expect([host, res.status]).toEqual([host, 404]);
    }
    // Granted v2 too: the cookie holds both.
    const both = await exchange('secret.docs.test', await ticketFor('http://secret.docs.test/en/v2/'), cookie);
    for (const path of ['/en/latest/style.css', '/en/v2/style.css'])
      expect((await get('secret.docs.test', path, both, 'same-origin', 'style')).status).toBe(200);
  });

  it('the cookie never speaks in a request another origin of the same site makes, and search answers its own origin only', async () => {
    const cookie = await exchange('secret.docs.test', await ticketFor('http://secret.docs.test/en/latest/'));
    const search = (site: string) => get('secret.docs.test', '/_/search.json?q=zanzibar&version=latest', cookie, site);
    const own = await search('same-origin');
    expect(own.status).toBe(200);
    expect(own.body.count).toBe(1);
    expect(own.headers['access-control-allow-origin']).toBeUndefined();
    for (const site of ['same-site', 'cross-site']) {
      const res = await search(site);
      expect([site, res.status, res.headers['access-control-allow-origin']]).toEqual([site, 404, undefined]);
      // A script or stylesheet included by a preview's page (XSSI): refused too.
      expect((await get('secret.docs.test', '/en/latest/style.css', cookie, site, 'script')).status).toBe(404);
    }
    // A reader following a link from elsewhere is the reader: the page opens.
    const followed = await t.http
      .get('/en/latest/')
      .set('host', 'secret.docs.test')
      .set('cookie', cookie)
      .set('sec-fetch-site', 'same-site')
      .set('sec-fetch-mode', 'navigate')
      .set('sec-fetch-dest', 'document');
    expect(followed.status).toBe(200);
  });

  it('a preview is served on its own host only, which serves nothing else, and its grant is for it alone', async () => {
    const cookie = await exchange('secret.docs.test', await ticketFor('http://secret.docs.test/en/latest/'));
    // Under the project's host: never served; a granted reader goes to its own host by way of Lectern.
    // The subproject's and the translation's, under the public hub's host.
    const hubCookie = await exchange('hub.docs.test', await ticketFor('http://hub.docs.test/projects/inner/en/latest/'));
    const both = await exchange('hub.docs.test', await ticketFor('http://hub.docs.test/fr/latest/'), hubCookie);
    for (const [host, path, previewUrl, held] of [
      ['secret.docs.test', '/en/7/', 'http://secret--7.docs.test/en/7/', cookie],
      ['hub.docs.test', '/projects/inner/en/3/', 'http://inner--3.docs.test/en/3/', both],
      ['hub.docs.test', '/fr/5/', 'http://hub-fr--5.docs.test/fr/5/', both],
    ] as const) {
      const res = await http(t).get(path).set('host', host).set('cookie', held).set('sec-fetch-mode', 'navigate');
      expect([path, res.status, res.headers.location]).toEqual([path, 302, `${t.config.publicUrl}/_/docs-access?next=${encodeURIComponent(previewUrl)}`]);
      // Its files are not served there either; an anonymous reader finds nothing.
      const css = await get(host, `${path}style.css`, held, 'same-origin', 'style');
      expect([path, css.status, css.text]).toEqual([path, 302, expect.not.stringContaining('rgb(4, 5, 6)')]);
      expect((await http(t).get(path).set('host', host)).status).toBe(404);
    }
    // Its own host, by its own ticket: the preview alone.
    const previewCookie = await exchange('secret--7.docs.test', await ticketFor('http://secret--7.docs.test/en/7/'));
    const page = await http(t).get('/en/7/').set('host', 'secret--7.docs.test').set('cookie', previewCookie);
    expect(page.status).toBe(200);
    expect(page.text).toContain('secret preview 7');
    for (const path of ['/en/latest/', '/en/v2/', '/projects/inner/en/latest/', '/projects/inner/en/3/', '/fr/latest/', '/fr/5/', '/_/versions/en.json']) {
      const res = await get('secret--7.docs.test', path, `${previewCookie}; ${cookie}`);
      expect([path, res.status]).toEqual([path, 404]);
    }
    expect((await get('secret--7.docs.test', '/_/search.json?q=zanzibar&version=latest', previewCookie)).status).toBe(404);
    const ownSearch = await get('secret--7.docs.test', '/_/search.json?q=zanzibar&version=7', previewCookie);
    expect([ownSearch.status, ownSearch.body.count, ownSearch.headers['access-control-allow-origin']]).toEqual([200, 1, undefined]);
    // The project's cookie on the preview's host, the preview's on the project's: nothing.
    expect((await get('secret--7.docs.test', '/en/7/style.css', cookie, 'same-origin', 'style')).status).toBe(404);
    expect((await get('secret.docs.test', '/en/latest/style.css', previewCookie, 'same-origin', 'style')).status).toBe(404);
    // Old URL-grant shapes on a docs host read nothing either.
    expect(
      (await http(t).get('/_/r/1.1.1.9999999999.AAAAAAAAAAAAAAAAAAAAAA/en/7/').set('host', 'secret--7.docs.test').set('sec-fetch-mode', 'no-cors')).status,
    ).toBe(404);
  });

  it("a public preview and its project's pages never answer for each other, the fast path included", async () => {
    for (let i = 0; i < 2; i++) {
      // The second time from the fast path, which keeps public pages per host.
      const project = await http(t).get('/en/latest/').set('host', 'hub.docs.test');
      expect([i, project.status, project.text.includes('hub latest')]).toEqual([i, 200, true]);
      const own = await http(t).get('/en/9/').set('host', 'hub--9.docs.test');
      expect([i, own.status, own.text.includes('hub public preview 9')]).toEqual([i, 200, true]);
      expect((await http(t).get('/en/latest/').set('host', 'hub--9.docs.test')).status).toBe(404);
      const under = await http(t).get('/en/9/').set('host', 'hub.docs.test');
      expect([i, under.status, under.headers.location]).toEqual([i, 302, 'http://hub--9.docs.test/en/9/']);
      // The `/docs/` path on Lectern's host goes to the project's host, which sends it on.
      expect((await http(t).get('/docs/hub/en/9/')).headers.location).toBe('http://hub.docs.test/en/9/');
    }
  });
});
