// Offline formats under /_/downloads/ (at the address downloadUrl() gives), docs served by host
// name with LECTERN_DOCS_DOMAIN, and LECTERN_SERVE_X_ACCEL handing files to nginx.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SWITCHER_REVISION } from '../../src/serve/switcher.ts';
import { downloadUrl } from '../../src/urls.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { htmlZip, makeProject, printPdf, publish, sphinxBuild } from '../helpers/publish.ts';
import { makeWorld, type World } from './world.ts';

const binary = (res: { on: (e: string, f: (c?: Buffer) => void) => void }, done: (e: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  res.on('data', (c) => chunks.push(c!));
  res.on('end', () => done(null, Buffer.concat(chunks)));
};

describe('downloads and host names (LECTERN_DOCS_DOMAIN=docs.test)', () => {
  let w: World;
  let t: TestApp;
  beforeAll(async () => {
    w = await makeWorld({ LECTERN_DOCS_DOMAIN: 'docs.test' });
    t = w.t;
    const v2 = await sphinxBuild('sphinx', { overrides: { release: '2.0' } });
    const epub = await sphinxBuild('sphinx', { builder: 'epub', overrides: { release: '2.0' } });
    const downloads = { htmlzip: await htmlZip(v2, 'fixture'), epub: path.join(epub, 'Fixture.epub'), pdf: await printPdf(path.join(v2, 'index.html')) };
    await publish(t, { project: { id: w.ids.fixture, slug: 'fixture' }, version: 'v2.0', html: v2, downloads });
    await publish(t, { project: { id: w.ids.fixture, slug: 'fixture' }, version: 'internal', html: v2, downloads, versionData: { privacyLevel: 'private' } });
    await publish(t, {
      project: { id: w.ids.es, slug: 'fixture-es' },
      version: 'latest',
      html: await sphinxBuild('sphinx-es'),
      downloads: { htmlzip: await htmlZip(await sphinxBuild('sphinx-es'), 'fixture-es') },
    });
  });
  afterAll(() => t?.close());

  const host = (name: string, p: string) => t.http.get(p).set('host', name);

  describe('downloads', () => {
    it('serves each format as an attachment named <project>-<version>.<ext>, with its type', async () => {
      const cases = [
        ['pdf', 'application/pdf', 'fixture-v2.0.pdf', '%PDF'],
        ['htmlzip', 'application/zip', 'fixture-v2.0.zip', 'PK'],
        ['epub', 'application/epub+zip', 'fixture-v2.0.epub', 'PK'],
      ] as const;
      for (const [format, type, name, magic] of cases) {
        const res = await host('fixture.docs.test', `/_/downloads/en/v2.0/${format}/`).buffer(true).parse(binary);
        expect([format, res.status, res.headers['content-type'], res.headers['content-disposition']]).toEqual([
          format,
          200,
          type,
          `attachment; filename="${name}"`,
        ]);
        expect((res.body as Buffer).subarray(0, magic.length).toString('latin1')).toBe(magic);
      }
    });

    it('is where downloadUrl() points (through the docs host), for a main project and for a translation', async () => {
      const cases = [
        [downloadUrl(t.config, 'fixture', 'en', 'v2.0', 'pdf'), 'http://fixture.docs.test/_/downloads/en/v2.0/pdf/'],
        [downloadUrl(t.config, 'fixture-es', 'es', 'latest', 'htmlzip'), 'http://fixture-es.docs.test/_/downloads/es/latest/htmlzip/'],
      ] as const;
      for (const [url, onDocsHost] of cases) {
        // downloadUrl() names the main host, which serves no docs with a docs domain set: it sends the reader on.
        const path = url.startsWith('http://lectern.test/docs/') ? url.slice('http://lectern.test'.length) : null;
        const there = path ? await t.http.get(path) : null;
        expect([url, there?.status ?? 302, there?.headers.location ?? url]).toEqual([url, 302, onDocsHost]);
        const target = new URL(onDocsHost);
        const res = await host(target.host, target.pathname).buffer(true).parse(binary);
        expect([url, res.status]).toEqual([url, 200]);
      }
      // The translation's download is also found under its main project.
      const viaMain = await host('fixture.docs.test', '/_/downloads/es/latest/htmlzip/').buffer(true).parse(binary);
      expect(viaMain.headers['content-disposition']).toBe('attachment; filename="fixture-es-latest.zip"');
    });

    it('answers 404 for a format the version lacks, an unknown format, or a version the reader cannot see', async () => {
      const fixture = (p: string) => host('fixture.docs.test', p);
      expect((await fixture('/_/downloads/en/latest/pdf/')).status).toBe(404);
      expect((await fixture('/_/downloads/en/v2.0/exe/')).status).toBe(404);
      expect((await fixture('/_/downloads/en/internal/pdf/')).status).toBe(404);
      const maintainer = await fixture('/_/downloads/en/internal/pdf/').set('authorization', `Token ${w.alice}`).buffer(true).parse(binary);
      expect(maintainer.status).toBe(200);
      expect(maintainer.headers['cache-control']).toBe('private, no-cache');
      expect((await host('secret.docs.test', '/_/downloads/en/latest/pdf/')).status).toBe(404);
    });
  });

  describe('host-based serving', () => {
    it('serves <project>.<domain>/<lang>/<version>/ and redirects its root', async () => {
      const page = await host('fixture.docs.test', '/en/latest/guide/install.html');
      expect(page.status).toBe(200);
      expect(page.text).toContain('Installation');
      expect(page.text).toContain(`src="/_/switcher.js?v=${SWITCHER_REVISION}"`);
      const root = await host('fixture.docs.test', '/');
      expect([root.status, root.headers.location]).toEqual([302, '/en/latest/']);
      const dir = await host('fixture.docs.test', '/en/latest/guide');
      expect(dir.headers.location).toBe('/en/latest/guide/');
    });

    it('serves translations and subprojects on the main project host, and sends their own hosts there', async () => {
      expect((await host('fixture.docs.test', '/es/latest/')).text).toContain('Documentación de Fixture');
      expect((await host('fixture.docs.test', '/projects/kid/en/latest/about/')).text).toContain('About the child');
      const es = await host('fixture-es.docs.test', '/es/latest/');
      expect([es.status, es.headers.location]).toEqual([302, 'http://fixture.docs.test/es/latest/']);
      const child = await host('child.docs.test', '/en/latest/about/');
      expect([child.status, child.headers.location]).toEqual([302, 'http://fixture.docs.test/projects/kid/en/latest/about/']);
    });

    it('finds a slug with underscores under its hyphenated host name', async () => {
      const p = await makeProject(t, { slug: 'under_score' });
      await publish(t, { project: p, version: 'latest', html: await sphinxBuild('sphinx', { overrides: { release: '1.0' } }) });
      expect((await host('under-score.docs.test', '/en/latest/')).status).toBe(200);
    });

    it('answers 404 for an unknown or private project host; the main host serves the API, and sends /docs paths to the docs host', async () => {
      expect((await host('nothing.docs.test', '/en/latest/')).status).toBe(404);
      expect((await host('secret.docs.test', '/en/latest/')).status).toBe(404);
      expect((await host('secret.docs.test', '/en/latest/').set('authorization', `Token ${w.alice}`)).status).toBe(200);
      const moved = await t.http.get('/docs/fixture/en/latest/');
      expect([moved.status, moved.headers.location]).toEqual([302, 'http://fixture.docs.test/en/latest/']);
      expect(moved.text).not.toContain('Fixture');
      expect((await t.http.get('/healthz')).status).toBe(200);
      expect((await host('fixture.docs.test', '/_/switcher.js')).headers['content-type']).toBe('text/javascript; charset=utf-8');
    });

    it('applies redirects below the host root', async () => {
      // Made through the API, as a maintainer would: seen at once, however recently the project was looked up.
      expect((await host('fixture.docs.test', '/en/latest/old.html')).status).toBe(404);
      const made = await t.gql(
        `mutation($input: RedirectInput!) { createRedirect(project: "fixture", input: $input) { __typename } }`,
        { input: { type: 'page', fromUrl: '/old.html', toUrl: '/glossary.html' } },
        w.alice,
      );
      expect(made.data.createRedirect.__typename).toBe('MutationCreateRedirectSuccess');
      const res = await host('fixture.docs.test', '/en/latest/old.html?x=1');
      expect([res.status, res.headers.location]).toEqual([302, '/en/latest/glossary.html?x=1']);
    });
  });
});

describe('LECTERN_SERVE_X_ACCEL', () => {
  let t: TestApp;
  let token: string;
  let buildId: number;
  beforeAll(async () => {
    const v1 = await sphinxBuild('sphinx', { overrides: { release: '1.0' } });
    t = await testApp({ LECTERN_SERVE_X_ACCEL: '/_lectern_files/' });
    token = await t.user('maintainer');
    const maintainer = await t.db.prisma.user.findUniqueOrThrow({ where: { username: 'maintainer' } });
    const p = await makeProject(t, { slug: 'accel', maintainers: [maintainer.id] });
    ({ buildId } = await publish(t, { project: p, version: 'latest', html: v1, downloads: { htmlzip: await htmlZip(v1, 'accel') } }));
  });
  afterAll(() => t?.close());

  it('answers with X-Accel-Redirect to the stored file, which is where the storage keeps it', async () => {
    const res = await t.http.get('/docs/accel/en/latest/_static/alabaster.css');
    expect(res.status).toBe(200);
    expect(res.text ?? '').toBe('');
    const target = res.headers['x-accel-redirect'];
    expect(target).toBe(`/_lectern_files/projects/accel/latest/${buildId}/html/_static/alabaster.css`);
    expect(res.headers['content-type']).toBe('text/css; charset=utf-8');
    // What nginx would read: <storage root>/objects/<key>.
    const onDisk = await readFile(path.join(t.config.storage.slice('file:'.length), 'objects', target.slice('/_lectern_files/'.length)), 'utf8');
    expect(onDisk).toContain('@import url("basic.css")');
  });

  it('hands downloads over with their file name, and keeps access checks, redirects and 404s in Lectern', async () => {
    const zip = await t.http.get('/docs/accel/_/downloads/en/latest/htmlzip/');
    expect(zip.headers['x-accel-redirect']).toBe(`/_lectern_files/projects/accel/latest/${buildId}/htmlzip/accel.zip`);
    expect(zip.headers['content-disposition']).toBe('attachment; filename="accel-latest.zip"');
    const missing = await t.http.get('/docs/accel/en/latest/nope.html');
    expect(missing.status).toBe(404);
    expect(missing.headers['x-accel-redirect']).toBeUndefined();
    expect((await t.http.get('/docs/accel/en/latest/guide')).headers.location).toBe('/docs/accel/en/latest/guide/');
  });

  it("names the new build's file right after a publish, though the previous answer came from what it kept", async () => {
    const css = '/docs/accel/en/latest/_static/basic.css';
    const before = await t.http.get(css);
    expect((await t.http.get(css)).headers['x-accel-redirect']).toBe(before.headers['x-accel-redirect']);
    const p = await t.db.prisma.project.findUniqueOrThrow({ where: { slug: 'accel' } });
    ({ buildId } = await publish(t, { project: p, version: 'latest', html: await sphinxBuild('sphinx', { overrides: { release: '1.1' } }) }));
    const after = await t.http.get(css);
    const target = after.headers['x-accel-redirect'];
    expect(target).toBe(`/_lectern_files/projects/accel/latest/${buildId}/html/_static/basic.css`);
    expect(target).not.toBe(before.headers['x-accel-redirect']);
    expect(after.headers['content-type']).toBe('text/css; charset=utf-8');
    const objects = path.join(t.config.storage.slice('file:'.length), 'objects');
    expect(await readFile(path.join(objects, target.slice('/_lectern_files/'.length)), 'utf8')).toContain('Sphinx stylesheet');
    // The previous build's files are gone: nginx would find nothing at the old name.
    await expect(readFile(path.join(objects, before.headers['x-accel-redirect'].slice('/_lectern_files/'.length)))).rejects.toThrow();
  });

  it("sends pages that get the switcher or the sandbox's storage shim itself; other files are handed over", async () => {
    const page = await t.http.get('/docs/accel/en/latest/glossary.html');
    expect(page.headers['x-accel-redirect']).toBeUndefined();
    expect(page.text).toContain('/_/switcher.js');
    // The addons data off: the page gets no script (the menu alone off keeps the data script).
    const off = await t.gql('mutation { updateProject(slug: "accel", input: { addonsEnabled: false }) { __typename } }', {}, token);
    expect(off.data.updateProject.__typename).toBe('MutationUpdateProjectSuccess');
    // Docs share the dashboard's origin here (no docs domain): the page is sandboxed and gets the shim.
    const shimmed = await t.http.get('/docs/accel/en/latest/glossary.html');
    expect(shimmed.headers['x-accel-redirect']).toBeUndefined();
    expect(shimmed.text).not.toContain('/_/switcher.js');
    expect(shimmed.text).toContain("['localStorage','sessionStorage']");
    expect(shimmed.headers.etag).not.toBe(page.headers.etag);
  });

  it('hands pages over when they get nothing put in: docs on their own hosts, addons and search box off', async () => {
    const hosted = await testApp({ LECTERN_SERVE_X_ACCEL: '/_lectern_files/', LECTERN_DOCS_DOMAIN: 'docs.test' });
    try {
      const p = await makeProject(hosted, { slug: 'accel', addonsEnabled: false });
      await hosted.db.prisma.project.update({ where: { id: p.id }, data: { docsSearch: false } });
      const built = await publish(hosted, { project: p, version: 'latest', html: await sphinxBuild('sphinx', { overrides: { release: '1.0' } }) });
      const plain = await hosted.http.get('/en/latest/glossary.html').set('host', 'accel.docs.test');
      expect(plain.headers['x-accel-redirect']).toBe(`/_lectern_files/projects/accel/latest/${built.buildId}/html/glossary.html`);
      expect(plain.headers['content-security-policy']).toBeUndefined();
    } finally {
      await hosted.close();
    }
  });
});
