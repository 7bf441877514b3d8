// robots.txt and sitemap.xml at a project's docs root (docs/design/crawlers.md), as Read the Docs
// answers them, on the shared scenario (test/serve/world.ts: versions latest and v2.0, `old`
// hidden, `v0.9` inactive, `internal` private, a Spanish translation, an MkDocs subproject, a
// private project) and on projects whose own output carries the files.
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as cheerio from 'cheerio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { makeProject, publish } from '../helpers/publish.ts';
import { makeWorld, type World } from './world.ts';

let w: World;
let publicUrl: string;
beforeAll(async () => {
  w = await makeWorld();
  publicUrl = w.t.config.publicUrl;
});
afterAll(() => w?.t.close());

const get = (p: string) => w.t.http.get(p).buffer(true);

/** A built HTML directory holding `files`. */
function htmlDir(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lectern-crawlers-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

describe('robots.txt', () => {
  it('disallows the hidden public versions by their path and names the sitemap, as plain text', async () => {
    const res = await get('/docs/fixture/robots.txt');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    const lines = res.text.split('\n').filter((l) => l && !l.startsWith('#'));
    expect(lines).toEqual(['User-agent: *', 'Disallow: /docs/fixture/en/old/ # Hidden version', `Sitemap: ${publicUrl}/docs/fixture/sitemap.xml`]);
    // Neither the private version's name nor the inactive one's.
    expect(res.text).not.toMatch(/internal|v0\.9/);
  });

  it('allows everything when no version is hidden', async () => {
    const p = await makeProject(w.t, { slug: 'open-book' });
    await publish(w.t, { project: p, version: 'latest', html: htmlDir({ 'index.html': '<h1>open</h1>' }) });
    const res = await get('/docs/open-book/robots.txt');
    expect(res.text.split('\n').filter((l) => l && !l.startsWith('#'))).toEqual([
      'User-agent: *',
      'Disallow: # Allow everything',
      `Sitemap: ${publicUrl}/docs/open-book/sitemap.xml`,
    ]);
  });

  it("is the project's own when its default version's output has one", async () => {
    const p = await makeProject(w.t, { slug: 'own-robots' });
    const own = 'User-agent: *\nDisallow: /docs/own-robots/en/latest/drafts/\n';
    await publish(w.t, { project: p, version: 'latest', html: htmlDir({ 'index.html': '<h1>own</h1>', 'robots.txt': own }) });
    const res = await get('/docs/own-robots/robots.txt');
    expect(res.status).toBe(200);
    expect(res.text).toBe(own);
  });

  it('answers 404 where no one but its readers may read the default version, and names nothing', async () => {
    const p = await makeProject(w.t, { slug: 'closed-default' });
    await publish(w.t, { project: p, version: 'latest', html: htmlDir({ 'index.html': '<h1>x</h1>' }), versionData: { privacyLevel: 'private' } });
    expect((await get('/docs/closed-default/robots.txt')).status).toBe(404);
    const secret = await get('/docs/secret/robots.txt');
    expect(secret.status).toBe(404);
    expect(secret.text).not.toContain('secret/en');
  });

  it('is answered at a docs root only: not below a subproject, nor at a translation’s own slug, nor inside a version', async () => {
    expect((await get('/docs/fixture/projects/kid/robots.txt')).status).toBe(404);
    expect((await get('/docs/fixture-es/robots.txt')).status).toBe(404);
    expect((await get('/docs/fixture/robots.txt/')).status).not.toBe(200);
  });
});

describe('sitemap.xml', () => {
  it('lists the public, active, listed versions in menu order, with their translations as hreflang alternates', async () => {
    const res = await get('/docs/fixture/sitemap.xml');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/xml; charset=utf-8');
    const $ = cheerio.load(res.text, { xml: true });
    const urls = $('url')
      .toArray()
      .map((u) => ({
        loc: $(u).children('loc').text(),
        alternates: $(u)
          .children('xhtml\\:link')
          .toArray()
          .map((l) => [$(l).attr('hreflang'), $(l).attr('href')]),
        lastmod: $(u).children('lastmod').text(),
      }));
    expect(urls.map((u) => u.loc)).toEqual([`${publicUrl}/docs/fixture/en/latest/`, `${publicUrl}/docs/fixture/en/v2.0/`]);
    // The translation has `latest` only; the project names itself last, as the protocol asks.
    expect(urls[0]!.alternates).toEqual([
      ['es', `${publicUrl}/docs/fixture/es/latest/`],
      ['en', `${publicUrl}/docs/fixture/en/latest/`],
    ]);
    expect(urls[1]!.alternates).toEqual([['en', `${publicUrl}/docs/fixture/en/v2.0/`]]);
    for (const u of urls) expect(new Date(u.lastmod).getTime()).toBeGreaterThan(Date.now() - 3600_000);
    expect(res.text).not.toMatch(/\/old\/|v0\.9|internal/);
  });

  it("is the project's own when its default version's output has one", async () => {
    const p = await makeProject(w.t, { slug: 'own-sitemap' });
    const own =
      '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://example.org/</loc></url></urlset>\n';
    await publish(w.t, { project: p, version: 'latest', html: htmlDir({ 'index.html': '<h1>own</h1>', 'sitemap.xml': own }) });
    const res = await get('/docs/own-sitemap/sitemap.xml');
    expect(res.status).toBe(200);
    expect(res.text).toBe(own);
  });

  it('answers 404 when no version is listed, and for a private project', async () => {
    const p = await makeProject(w.t, { slug: 'all-hidden' });
    await publish(w.t, { project: p, version: 'latest', html: htmlDir({ 'index.html': '<h1>x</h1>' }), versionData: { hidden: true } });
    expect((await get('/docs/all-hidden/sitemap.xml')).status).toBe(404);
    expect((await get('/docs/secret/sitemap.xml')).status).toBe(404);
  });
});

describe('on a docs host', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ LECTERN_PUBLIC_URL: 'http://lectern.test', LECTERN_DOCS_DOMAIN: 'docs.test' });
    const p = await makeProject(t, { slug: 'crawl_me' });
    await publish(t, { project: p, version: 'latest', html: htmlDir({ 'index.html': '<h1>x</h1>' }) });
    await publish(t, { project: p, version: 'draft', html: htmlDir({ 'index.html': '<h1>d</h1>' }), versionData: { hidden: true } });
  });
  afterAll(() => t?.close());
  const onHost = (file: string) => t.http.get(`/${file}`).set('Host', 'crawl-me.docs.test').buffer(true);

  it('robots.txt is at the host root, its paths the host’s, its sitemap the host’s', async () => {
    const res = await onHost('robots.txt');
    expect(res.status).toBe(200);
    expect(res.text.split('\n').filter((l) => l && !l.startsWith('#'))).toEqual([
      'User-agent: *',
      'Disallow: /en/draft/ # Hidden version',
      'Sitemap: http://crawl-me.docs.test/sitemap.xml',
    ]);
  });

  it('sitemap.xml names the host’s URLs', async () => {
    const res = await onHost('sitemap.xml');
    expect(res.status).toBe(200);
    const $ = cheerio.load(res.text, { xml: true });
    expect(
      $('url > loc')
        .toArray()
        .map((l) => $(l).text()),
    ).toEqual(['http://crawl-me.docs.test/en/latest/']);
  });
});
