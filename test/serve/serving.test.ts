// Serving built docs under /docs: pages, directories, content types, the project and language
// roots, translations and subprojects at their canonical paths, who may read what (hidden,
// inactive, private), and HTTP caching (ETag, Last-Modified, Cache-Control, compression, the gzip
// copies kept of stored files).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeProject, mkdocsBuild, publish, sphinxBuild } from '../helpers/publish.ts';
import { makeWorld, rawRequest, type World } from './world.ts';

let w: World;
beforeAll(async () => {
  w = await makeWorld();
});
afterAll(() => w?.t.close());

const get = (path: string, token?: string) => {
  const req = w.t.http.get(path);
  if (token) req.set('authorization', `Token ${token}`);
  return req;
};

describe('pages of a version', () => {
  it('serves the root page, a page and a directory index with their content and an HTML type', async () => {
    const root = await get('/docs/fixture/en/latest/');
    expect(root.status).toBe(200);
    expect(root.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(root.text).toContain('Fixture 1.0 documentation');

    const page = await get('/docs/fixture/en/latest/guide/install.html');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h1>Installation');

    const dir = await get('/docs/fixture/en/latest/guide/');
    expect(dir.status).toBe(200);
    expect(dir.text).toContain('<h1>User guide');
    expect(dir.text).toContain('Second section');
  });

  it('serves each version from its own published build', async () => {
    const v2 = await get('/docs/fixture/en/v2.0/guide/install.html');
    expect(v2.status).toBe(200);
    expect(v2.text).toContain('Fixture 2.0 documentation');
  });

  it('redirects a directory without its slash to the slashed path, and the version root too', async () => {
    const dir = await get('/docs/fixture/en/latest/guide?x=1');
    expect(dir.status).toBe(302);
    expect(dir.headers.location).toBe('/docs/fixture/en/latest/guide/?x=1');
    const version = await get('/docs/fixture/en/latest');
    expect(version.status).toBe(302);
    expect(version.headers.location).toBe('/docs/fixture/en/latest/');
  });

  it('gives static files the content types a browser needs', async () => {
    const css = await get('/docs/fixture/en/latest/_static/alabaster.css');
    expect(css.status).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    const js = await get('/docs/fixture/en/latest/_static/doctools.js');
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    const png = await get('/docs/fixture/en/latest/_static/file.png');
    expect(png.status).toBe(200);
    expect(png.headers['content-type']).toBe('image/png');
    expect(png.headers['x-content-type-options']).toBe('nosniff');
  });

  it('answers HEAD with the headers and no body, and refuses other methods', async () => {
    const head = await w.t.http.head('/docs/fixture/en/latest/guide/install.html');
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(head.text ?? '').toBe('');
    const post = await w.t.http.post('/docs/fixture/en/latest/').send('x');
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });
});

describe('project and language roots', () => {
  it('redirects the project root (with or without slash) and the language root to the default version', async () => {
    for (const path of ['/docs/fixture/', '/docs/fixture', '/docs/fixture/en/', '/docs/fixture/en']) {
      const res = await get(path);
      expect([path, res.status, res.headers.location]).toEqual([path, 302, '/docs/fixture/en/latest/']);
    }
  });

  it('follows the project default version', async () => {
    // Through the API, as a maintainer changes it: the docs server sees the change at once.
    const setDefault = (v: string) =>
      w.t.gql(`mutation($v: String!) { updateProject(slug: "fixture", input: { defaultVersion: $v }) { __typename } }`, { v }, w.alice);
    expect((await get('/docs/fixture/')).headers.location).toBe('/docs/fixture/en/latest/');
    expect((await setDefault('v2.0')).data.updateProject.__typename).toBe('MutationUpdateProjectSuccess');
    try {
      expect((await get('/docs/fixture/')).headers.location).toBe('/docs/fixture/en/v2.0/');
    } finally {
      await setDefault('latest');
    }
    expect((await get('/docs/fixture/')).headers.location).toBe('/docs/fixture/en/latest/');
  });

  it('answers 404 for unknown projects, languages and versions', async () => {
    expect((await get('/docs/nothing-here/en/latest/')).status).toBe(404);
    expect((await get('/docs/fixture/fr/latest/')).status).toBe(404);
    expect((await get('/docs/fixture/en/v9.9/')).status).toBe(404);
    expect((await get('/docs/')).status).toBe(404);
  });
});

describe('translations and subprojects', () => {
  it('serves a translation under its main project with its own language code', async () => {
    const res = await get('/docs/fixture/es/latest/');
    expect(res.status).toBe(200);
    expect(res.text).toContain('Documentación de Fixture');
    const page = await get('/docs/fixture/es/latest/guia/instalacion.html');
    expect(page.text).toContain('Instalación');
  });

  it("redirects a translation's own path to the canonical one under its main project", async () => {
    const res = await get('/docs/fixture-es/es/latest/guia/instalacion.html?q=1');
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('http://lectern.test/docs/fixture/es/latest/guia/instalacion.html?q=1');
    const root = await get('/docs/fixture-es/');
    expect(root.headers.location).toBe('http://lectern.test/docs/fixture/es/latest/');
  });

  it('serves a subproject under its parent, by alias (MkDocs output, directory URLs)', async () => {
    const res = await get('/docs/fixture/projects/kid/en/latest/');
    expect(res.status).toBe(200);
    expect(res.text).toContain('Child documentation');
    const about = await get('/docs/fixture/projects/kid/en/latest/about/');
    expect(about.status).toBe(200);
    expect(about.text).toContain('About the child');
    const noSlash = await get('/docs/fixture/projects/kid/en/latest/about');
    expect(noSlash.headers.location).toBe('/docs/fixture/projects/kid/en/latest/about/');
    const root = await get('/docs/fixture/projects/kid/');
    expect(root.headers.location).toBe('/docs/fixture/projects/kid/en/latest/');
  });

  it("redirects a subproject's own path to its place under the parent", async () => {
    const res = await get('/docs/child/en/latest/about/');
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('http://lectern.test/docs/fixture/projects/kid/en/latest/about/');
  });

  it('serves the subproject of a private parent at its own root: the parent lends no path', async () => {
    const aliceId = (await w.t.db.prisma.user.findUniqueOrThrow({ where: { username: 'alice' } })).id;
    const vault = await makeProject(w.t, { slug: 'vault', privacyLevel: 'private', maintainers: [aliceId] });
    const pub = await makeProject(w.t, { slug: 'pubkid', maintainers: [aliceId] });
    await publish(w.t, { project: pub, version: 'latest', html: await mkdocsBuild('mkdocs') });
    await w.t.db.prisma.subproject.create({ data: { parentId: vault.id, childId: pub.id, alias: 'pk' } });

    const own = await get('/docs/pubkid/en/latest/');
    expect(own.status).toBe(200);
    expect(own.text).toContain('Child documentation');
    // Anonymous readers cannot tell the private parent exists.
    expect((await get('/docs/vault/projects/pk/en/latest/')).status).toBe(404);
    // Its maintainer is sent to the canonical root.
    const viaParent = await get('/docs/vault/projects/pk/en/latest/', w.alice);
    expect(viaParent.status).toBe(302);
    expect(viaParent.headers.location).toBe('http://lectern.test/docs/pubkid/en/latest/');
  });
});

describe('who may read what', () => {
  it('serves hidden versions', async () => {
    const res = await get('/docs/fixture/en/old/guide/install.html');
    expect(res.status).toBe(200);
    expect(res.text).toContain('Installation');
  });

  it('does not serve inactive versions, even to maintainers', async () => {
    expect((await get('/docs/fixture/en/v0.9/')).status).toBe(404);
    expect((await get('/docs/fixture/en/v0.9/', w.alice)).status).toBe(404);
  });

  /** A 404 without the address its sign-in link comes back to. */
  const withoutNext = (html: string) => html.replace(/next=[^"]*/g, 'next=');

  it('hides a private version from anonymous readers and other users exactly like a missing one', async () => {
    for (const token of [undefined, w.bob]) {
      const missing = await get('/docs/fixture/en/no-such-version/guide/install.html', token);
      const res = await get('/docs/fixture/en/internal/guide/install.html', token);
      expect(res.status).toBe(404);
      // Both offer sign-in and back to the page asked for: the same page but for that address.
      expect(withoutNext(res.text)).toBe(withoutNext(missing.text));
    }
    const maintainer = await get('/docs/fixture/en/internal/guide/install.html', w.alice);
    expect(maintainer.status).toBe(200);
    expect(maintainer.text).toContain('Fixture 2.0 documentation');
    expect(maintainer.headers['cache-control']).toBe('private, no-cache');
  });

  it('hides a private project from anonymous readers (the same plain 404 as an unknown project)', async () => {
    const unknown = await get('/docs/unknown-project/en/latest/');
    for (const path of ['/docs/secret/en/latest/', '/docs/secret/', '/docs/secret/en/latest/404.html', '/docs/secret/_/versions/en.json']) {
      const res = await get(path);
      expect([path, res.status, withoutNext(res.text)]).toEqual([path, 404, withoutNext(unknown.text)]);
      expect(res.headers.location).toBeUndefined();
    }
    const bob = await get('/docs/secret/en/latest/', w.bob);
    expect(bob.status).toBe(404);
    const alice = await get('/docs/secret/en/latest/', w.alice);
    expect(alice.status).toBe(200);
    expect(alice.headers['cache-control']).toBe('private, no-cache');
  });

  it('answers 401 for a token that is not valid, without revealing anything', async () => {
    const res = await get('/docs/secret/en/latest/', 'not-a-token');
    expect(res.status).toBe(401);
    expect(res.text).toBe('Invalid token.');
  });
});

describe('HTTP caching', () => {
  it('answers If-None-Match with 304 and no body while the page is unchanged', async () => {
    const first = await get('/docs/fixture/en/latest/guide/install.html');
    const etag = first.headers.etag;
    expect(etag).toMatch(/^"[^"]+"$/);
    expect(first.headers['cache-control']).toBe('public, no-cache');
    const again = await get('/docs/fixture/en/latest/guide/install.html').set('if-none-match', etag);
    expect(again.status).toBe(304);
    expect(again.text ?? '').toBe('');
    expect(again.headers.etag).toBe(etag);
    const weak = await get('/docs/fixture/en/latest/guide/install.html').set('if-none-match', `"other", W/${etag}`);
    expect(weak.status).toBe(304);
    const other = await get('/docs/fixture/en/latest/guide/install.html').set('if-none-match', '"something-else"');
    expect(other.status).toBe(200);
  });

  it('answers If-Modified-Since with 304, and a static file too', async () => {
    const first = await get('/docs/fixture/en/latest/_static/alabaster.css');
    expect(first.headers['last-modified']).toBeTruthy();
    expect(first.headers['cache-control']).toBe('public, max-age=3600');
    const again = await get('/docs/fixture/en/latest/_static/alabaster.css').set('if-modified-since', first.headers['last-modified']);
    expect(again.status).toBe(304);
    const older = await get('/docs/fixture/en/latest/_static/alabaster.css').set('if-modified-since', 'Thu, 01 Jan 2004 00:00:00 GMT');
    expect(older.status).toBe(200);
    const byTag = await get('/docs/fixture/en/latest/_static/alabaster.css').set('if-none-match', first.headers.etag);
    expect(byTag.status).toBe(304);
  });

  it('changes the ETag when a new build is published', async () => {
    const before = await get('/docs/fixture/en/v2.0/glossary.html');
    await publish(w.t, {
      project: { id: w.ids.fixture, slug: 'fixture' },
      version: 'v2.0',
      html: await sphinxBuild('sphinx', { overrides: { release: '2.0' } }),
    });
    const after = await get('/docs/fixture/en/v2.0/glossary.html').set('if-none-match', before.headers.etag);
    expect(after.status).toBe(200);
    expect(after.headers.etag).not.toBe(before.headers.etag);
  });

  it('compresses text for clients that accept it, not images', async () => {
    const html = await get('/docs/fixture/en/latest/glossary.html').set('accept-encoding', 'gzip');
    expect(html.status).toBe(200);
    expect(html.headers['content-encoding']).toBe('gzip');
    expect(html.text).toContain('One built state of the documentation');
    const css = await get('/docs/fixture/en/latest/_static/basic.css').set('accept-encoding', 'gzip');
    expect(css.headers['content-encoding']).toBe('gzip');
    const png = await get('/docs/fixture/en/latest/_static/file.png').set('accept-encoding', 'gzip');
    expect(png.headers['content-encoding']).toBeUndefined();
    const identity = await get('/docs/fixture/en/latest/glossary.html').set('accept-encoding', 'identity');
    expect(identity.headers['content-encoding']).toBeUndefined();
  });
});

describe('gzip copies', () => {
  // Raw bytes need a real socket: supertest decodes gzip before a test could see it.
  let server: Server;
  let origin: string;
  beforeAll(async () => {
    server = createServer(w.t.handler).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));

  const raw = (path: string, headers: Record<string, string> = {}, method = 'GET') => rawRequest(`${origin}${path}`, headers, method);
  const GZIP = { 'accept-encoding': 'gzip, deflate, br' };
  const PAGE = '/docs/fixture/en/latest/guide/install.html';

  it('sends a page gzipped to clients that accept it: the same page (switcher included), under its own ETag', async () => {
    const plain = await raw(PAGE);
    const gz = await raw(PAGE, GZIP);
    expect([plain.status, gz.status]).toEqual([200, 200]);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(plain.headers.vary).toBe('Accept-Encoding');
    expect(gz.headers.vary).toBe('Accept-Encoding');
    expect(Number(gz.headers['content-length'])).toBe(gz.body.length);
    expect(gz.body.length).toBeLessThan(plain.body.length);
    expect(gunzipSync(gz.body).equals(plain.body)).toBe(true);
    expect(plain.body.toString()).toContain('data-page="guide/install.html"');
    expect(gz.headers.etag).not.toBe(plain.headers.etag);
    expect(gz.headers['content-type']).toBe(plain.headers['content-type']);
    // Sent again from the copy made the first time: the very same bytes.
    expect((await raw(PAGE, GZIP)).body.equals(gz.body)).toBe(true);
  });

  it('revalidates either ETag with 304, whichever encoding the client asks for now', async () => {
    const plain = await raw(PAGE);
    const gz = await raw(PAGE, GZIP);
    for (const held of [plain.headers.etag!, gz.headers.etag!, `W/${gz.headers.etag}`]) {
      for (const headers of [{}, GZIP]) {
        const res = await raw(PAGE, { ...headers, 'if-none-match': held });
        expect([held, headers, res.status, res.body.length]).toEqual([held, headers, 304, 0]);
        expect(res.headers.vary).toBe('Accept-Encoding');
      }
    }
    // The 304 names the copy the client holds, so its cache keeps using that one.
    expect((await raw(PAGE, { ...GZIP, 'if-none-match': plain.headers.etag! })).headers.etag).toBe(plain.headers.etag);
    expect((await raw(PAGE, { ...GZIP, 'if-none-match': gz.headers.etag! })).headers.etag).toBe(gz.headers.etag);
    expect((await raw(PAGE, { ...GZIP, 'if-none-match': '"something-else"' })).status).toBe(200);
    // A tag of the page without the switcher, the search box and the sandbox's storage shim (-sqb) names another representation.
    expect(plain.headers.etag).toMatch(/-sqb"$/);
    for (const other of ['"', '-s"', '-b"', '-sb"', '-qb"']) {
      const tag = plain.headers.etag!.replace(/-sqb"$/, other);
      expect([tag, (await raw(PAGE, { ...GZIP, 'if-none-match': tag })).status]).toEqual([tag, 200]);
    }
  });

  it('answers HEAD with the headers GET would send, for either encoding', async () => {
    for (const headers of [{}, GZIP]) {
      const get = await raw(PAGE, headers);
      const head = await raw(PAGE, headers, 'HEAD');
      expect(head.status).toBe(200);
      expect(head.body.length).toBe(0);
      for (const h of ['content-type', 'content-length', 'content-encoding', 'etag', 'last-modified', 'vary', 'cache-control']) {
        expect([h, head.headers[h]]).toEqual([h, get.headers[h]]);
      }
    }
  });

  it('gzips static text files too, and leaves images and clients that refuse gzip alone', async () => {
    const css = await raw('/docs/fixture/en/latest/_static/basic.css', GZIP);
    expect(css.headers['content-encoding']).toBe('gzip');
    expect(css.headers['cache-control']).toBe('public, max-age=3600');
    const cssPlain = await raw('/docs/fixture/en/latest/_static/basic.css');
    expect(gunzipSync(css.body).equals(cssPlain.body)).toBe(true);
    const png = await raw('/docs/fixture/en/latest/_static/file.png', GZIP);
    expect(png.headers['content-encoding']).toBeUndefined();
    expect(png.headers.vary).toBeUndefined();
    const refused = await raw(PAGE, { 'accept-encoding': 'gzip;q=0, identity' });
    expect(refused.headers['content-encoding']).toBeUndefined();
  });

  it("serves a new build's page right after publishing, not the copy kept of the previous one", async () => {
    const page = '/docs/fixture/en/v2.0/guide/install.html';
    const before = { plain: await raw(page), gz: await raw(page, GZIP) };
    expect(before.plain.body.toString()).toContain('Fixture 2.0 documentation');
    await publish(w.t, {
      project: { id: w.ids.fixture, slug: 'fixture' },
      version: 'v2.0',
      html: await sphinxBuild('sphinx', { overrides: { release: '2.5' } }),
    });
    const plain = await raw(page);
    const gz = await raw(page, GZIP);
    expect(plain.body.toString()).toContain('Fixture 2.5 documentation');
    expect(gunzipSync(gz.body).toString()).toContain('Fixture 2.5 documentation');
    expect(plain.headers.etag).not.toBe(before.plain.headers.etag);
    expect(gz.headers.etag).not.toBe(before.gz.headers.etag);
    expect((await raw(page, { ...GZIP, 'if-none-match': before.gz.headers.etag! })).status).toBe(200);
  });
});
