// GET /api/v2/embed/ (docs/design/rest-api.md "v2 routes", docs/design/read-the-docs.md §5.2) on real Sphinx
// output: the fixture project in test/fixtures/embed-sphinx/ is built once with sphinx-build and
// published as builds of several versions, then embedded by project+doc, by path, by url; section
// lookup by id, title, label, heading text, glossary term and option; 400/404 bodies; privacy;
// path traversal in every parameter (each a 4xx, never a 500, never another file); symlinks in the
// build output; and the parsed-page cache.
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Response } from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pageCache } from '../../src/embed/cache.ts';
import { OutputRefused } from '../../src/storage/output.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { type Published, publishHtml, sphinxHtml } from '../helpers/publish-embed.ts';
import { expectGolden } from './golden.ts';

const FIXTURE = path.resolve(import.meta.dirname, '../fixtures/embed-sphinx');
const DOCS = 'http://lectern.test/docs/embed/en/latest';

let t: TestApp;
let html: string;
let token: string;
let linkedRefusal: unknown;
let hush: Published;
const temps: string[] = [];

beforeAll(async () => {
  html = await sphinxHtml(FIXTURE);
  temps.push(html);
  t = await testApp();
  token = await t.user('maint');
  const db = t.db.prisma;
  const maint = await db.user.findUniqueOrThrow({ where: { username: 'maint' } });
  const project = (slug: string, data: Record<string, unknown> = {}) =>
    db.project.create({ data: { name: slug, slug, repositoryUrl: `https://github.com/acme/${slug}`, users: { connect: { id: maint.id } }, ...data } });
  const version = (projectId: number, slug: string, data: Record<string, unknown> = {}) =>
    db.version.create({ data: { projectId, slug, verboseName: slug, type: 'branch', identifier: 'main', ...data } });

  const embed = await project('embed');
  const secret = await project('hush', { privacyLevel: 'private' });
  const es = await project('embed-es', { language: 'es', mainLanguageProjectId: embed.id });
  const child = await project('child');
  await db.subproject.create({ data: { parentId: embed.id, childId: child.id, alias: 'kid' } });
  for (const v of ['latest', 'old', 'mk', 'linked']) await version(embed.id, v);
  await version(embed.id, 'private', { privacyLevel: 'private' });
  await version(embed.id, 'unbuilt', { active: true });
  await version(secret.id, 'latest');
  await version(es.id, 'latest');
  await version(child.id, 'latest');

  const publish = (projectSlug: string, versionSlug: string, dir = html, documentationType?: string) =>
    publishHtml(t.services, { project: projectSlug, version: versionSlug, htmlDir: dir, documentationType });
  await publish('embed', 'latest');
  await publish('embed', 'old');
  await db.version.update({ where: { projectId_slug: { projectId: embed.id, slug: 'old' } }, data: { active: false } });
  await publish('embed', 'mk', html, 'mkdocs');
  await publish('embed', 'private');
  hush = await publish('hush', 'latest');
  await publish('embed-es', 'latest');
  await publish('child', 'latest');

  // A hostile build: symlinks to a file outside its output, to a directory, and a dangling one.
  const outside = mkdtempSync(path.join(os.tmpdir(), 'lectern-embed-outside-'));
  writeFileSync(path.join(outside, 'secret.html'), '<html><body><div class="body" role="main"><section id="s"><h1>Leaked</h1></section></div></body></html>');
  const hostile = mkdtempSync(path.join(os.tmpdir(), 'lectern-embed-hostile-'));
  temps.push(outside, hostile);
  cpSync(html, hostile, { recursive: true });
  symlinkSync(path.join(outside, 'secret.html'), path.join(hostile, 'leak.html'));
  symlinkSync(outside, path.join(hostile, 'outdir'));
  symlinkSync(path.join(hostile, 'page.html'), path.join(hostile, 'alias.html'));
  linkedRefusal = await publish('embed', 'linked', hostile).then(
    () => null,
    (e: unknown) => e,
  );
}, 120_000);

afterAll(async () => {
  await t?.close();
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

/** GET /api/v2/embed/ with a raw query string (sent as written, so encodings are the test's own). */
async function embedRaw(query: string, authorization?: string): Promise<Response> {
  let req = t.http.get(`/api/v2/embed/${query ? `?${query}` : ''}`);
  if (authorization) req = req.set('Authorization', authorization);
  const res = await req;
  expect(res.headers['content-type'], `${query}: JSON`).toMatch(/^application\/json(;|$)/);
  expect(res.status, `${query}: never a server error (${res.text})`).toBeLessThan(500);
  return res;
}

const q = (params: Record<string, string>) =>
  Object.entries(params)
    .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
    .join('&');
const embed = (params: Record<string, string>, authorization?: string) => embedRaw(q(params), authorization);

function ok(res: Response) {
  expect(res.status, res.text).toBe(200);
  return res.body as { content: string[]; headers: Record<string, string>[]; url: string; meta: Record<string, string | null> };
}

const PAGE_HEADERS = [
  { 'Page Title': '#' },
  { Installation: '#installation' },
  { Requirements: '#requirements' },
  { 'Deeply nested': '#deeply-nested' },
  { Configuration: '#configuration' },
  { 'Special “Chars” & Things': '#special-chars-things' },
];

describe('embed by project and doc', () => {
  it('without a section: the whole page, under its lowercased title; headers from its table of contents', async () => {
    const body = ok(await embed({ project: 'embed', doc: 'page' }));
    expect(Object.keys(body)).toEqual(['content', 'headers', 'url', 'meta']);
    expect(body.headers).toEqual(PAGE_HEADERS);
    expect(body.url).toBe(`${DOCS}/page.html`);
    expect(body.meta).toEqual({ project: 'embed', version: 'latest', doc: 'page', section: 'page title' });
    expect(body.content).toHaveLength(1);
    expect(body.content[0]).toMatch(/^<section id="page-title">/);
    expect(body.content[0]).toContain('Special “Chars” &amp; Things');
    // Nothing of the theme around the body.
    expect(body.content[0]).not.toContain('sphinxsidebar');
  });

  it('a section by id, with its nested sections, links and images made absolute', async () => {
    const body = ok(await embed({ project: 'embed', doc: 'page', section: 'installation' }));
    expect(body.meta.section).toBe('installation');
    const [content] = body.content;
    expect(content).toMatch(/^<section id="installation">/);
    expect(content).toContain('id="deeply-nested"');
    expect(content).not.toContain('id="configuration"');
    expect(content).toContain(`href="${DOCS}/guide/index.html"`);
    expect(content).toContain(`href="${DOCS}/glossary.html#term-Widget"`);
    expect(content).toContain(`src="${DOCS}/_images/diagram.svg"`);
    expect(content).toContain(`href="${DOCS}/page.html#installation"`);
    expect(content).not.toMatch(/(href|src)="(?!http)/);
  });

  it('a nested section by its title (slugified) and by its docutils id', async () => {
    expect(ok(await embed({ project: 'embed', doc: 'page', section: 'Requirements' })).content[0]).toMatch(/^<section id="requirements">/);
    const deep = ok(await embed({ project: 'embed', doc: 'page', section: 'Deeply Nested' }));
    expect(deep.content).toHaveLength(1);
    expect(deep.content[0]).toMatch(/^<section id="deeply-nested">\s*<h4>Deeply nested/);
  });

  it('a label (a span before the heading) gives its section', async () => {
    expect(ok(await embed({ project: 'embed', doc: 'page', section: 'install-label' })).content[0]).toMatch(/^<section id="installation">/);
  });

  it('falls back to the headings containing the text, taking their parent', async () => {
    const body = ok(await embed({ project: 'embed', doc: 'page', section: 'Chars' }));
    expect(body.content).toHaveLength(1);
    expect(body.content[0]).toMatch(/^<section id="special-chars-things">/);
  });

  it('a glossary term gives its definition', async () => {
    const body = ok(await embed({ project: 'embed', doc: 'glossary', section: 'term-Widget' }));
    expect(body.content).toHaveLength(1);
    expect(body.content[0]).toMatch(/^<dd>/);
    expect(body.content[0]).toContain('A small thing that does one job.');
    expect(body.content[0]).not.toContain('larger');
    expect(body.headers).toEqual([{ Glossary: '#' }]);
  });

  it('another definition term (an option) gives its whole list', async () => {
    const body = ok(await embed({ project: 'embed', doc: 'page', section: 'cmdoption-verbose' }));
    expect(body.content[0]).toMatch(/^<dl class="std option">/);
    expect(body.content[0]).toContain('Print more about what happens.');
  });

  it('an unknown section is 200 with content []', async () => {
    const body = ok(await embed({ project: 'embed', doc: 'page', section: 'no-such-section' }));
    expect(body.content).toEqual([]);
    expect(body.headers).toEqual(PAGE_HEADERS);
    expect(body.meta.section).toBe('no-such-section');
  });

  it('a directory document is its index.html; its relative links are made absolute from there', async () => {
    for (const doc of ['guide', 'guide/', 'guide/index']) {
      const body = ok(await embed({ project: 'embed', doc, section: 'user-guide' }));
      expect(body.url).toBe(`${DOCS}/guide/index.html`);
      expect(body.content[0]).toContain(`href="${DOCS}/page.html"`);
      expect(body.content[0]).toContain(`href="${DOCS}/page.html#install-label"`);
      expect(body.content[0]).toContain(`src="${DOCS}/_images/diagram.svg"`);
      expect(body.content[0]).toContain('href="https://example.com/x"');
    }
  });

  it('the root document; an explicit version', async () => {
    const body = ok(await embed({ project: 'embed', doc: 'index', version: 'latest' }));
    expect(body.headers).toEqual([{ 'Embed Fixture': '#' }, { Overview: '#overview' }]);
    expect(body.meta).toEqual({ project: 'embed', version: 'latest', doc: 'index', section: 'embed fixture' });
  });

  it('takes the last of repeated parameters', async () => {
    expect(ok(await embedRaw('project=embed&doc=nope&doc=page&section=x&section=requirements')).content[0]).toMatch(/^<section id="requirements">/);
  });
});

describe('embed by path and by url', () => {
  it('path is the file: its .html and slashes are dropped for the doc name', async () => {
    for (const [p, doc] of [
      ['/page.html', 'page'],
      ['page.html', 'page'],
      ['/guide/', 'guide'],
      ['guide/index.html', 'guide/index'],
      ['/', ''],
    ]) {
      const body = ok(await embed({ project: 'embed', path: p! }));
      expect(body.meta.doc, p).toBe(doc);
    }
  });

  it('url names project, version, page and section (the fragment)', async () => {
    const url = `${DOCS}/page.html#requirements`;
    const body = ok(await embed({ url }));
    expect(body.url).toBe(url);
    expect(body.meta).toEqual({ project: 'embed', version: 'latest', doc: 'page', section: 'requirements' });
    expect(body.content[0]).toMatch(/^<section id="requirements">/);
  });

  it('a directory url is its index.html; no fragment is the page', async () => {
    const body = ok(await embed({ url: `${DOCS}/guide/` }));
    expect(body.meta).toEqual({ project: 'embed', version: 'latest', doc: 'guide/index', section: 'user guide' });
    expect(ok(await embed({ url: `${DOCS}/` })).meta.doc).toBe('index');
  });

  it('url wins over the other parameters', async () => {
    const body = ok(await embed({ url: `${DOCS}/glossary.html#term-Gadget`, project: 'hush', doc: 'page', section: 'installation' }));
    expect(body.meta).toEqual({ project: 'embed', version: 'latest', doc: 'glossary', section: 'term-Gadget' });
  });

  it('a translation and a subproject are found below their main project', async () => {
    expect(ok(await embed({ url: 'http://lectern.test/docs/embed/es/latest/page.html#installation' })).meta.project).toBe('embed-es');
    expect(ok(await embed({ url: 'http://lectern.test/docs/embed/projects/kid/en/latest/page.html' })).meta.project).toBe('child');
  });

  it('a url that is not a docs url of this host is 404', async () => {
    for (const url of [
      'https://elsewhere.example/docs/embed/en/latest/page.html',
      'http://lectern.test/api/v2/',
      'not a url',
      'javascript:alert(1)',
      'http://lectern.test/docs/embed/',
    ]) {
      const res = await embed({ url });
      expect(res.status, url).toBe(404);
    }
  });
});

describe('errors', () => {
  const INVALID = { error: 'Invalid Arguments. Please provide "url" or "section" and "path" GET arguments.' };

  it('400 without project and doc, or url', async () => {
    for (const query of ['', 'project=embed', 'doc=page', 'section=installation', 'project=&doc=', 'url=']) {
      const res = await embedRaw(query);
      expect(res.status, query).toBe(400);
      expect(res.body).toEqual(INVALID);
    }
  });

  it('404 with a JSON body for a page that is not there', async () => {
    const res = await embed({ project: 'embed', doc: 'nope', section: 'x' });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: "Can't find content for section: doc=nope path= section=x" });
  });

  it('404 for an unknown project or version', async () => {
    const p = await embed({ project: 'nope', doc: 'page' });
    expect([p.status, p.body]).toEqual([404, { detail: 'No Project matches the given query.' }]);
    const v = await embed({ project: 'embed', doc: 'page', version: 'nope' });
    expect([v.status, v.body]).toEqual([404, { detail: 'No Version matches the given query.' }]);
  });

  it('404 for a version that is inactive, not built, or not built by Sphinx', async () => {
    for (const version of ['old', 'unbuilt', 'mk']) expect((await embed({ project: 'embed', doc: 'page', version })).status, version).toBe(404);
  });
});

describe('privacy', () => {
  it("a private project or version is never embedded through v2, even with its maintainer's token", async () => {
    for (const auth of [undefined, `Token ${token}`]) {
      expect((await embed({ project: 'hush', doc: 'page' }, auth)).status).toBe(404);
      expect((await embed({ project: 'embed', doc: 'page', version: 'private' }, auth)).status).toBe(404);
      expect((await embed({ url: 'http://lectern.test/docs/hush/en/latest/page.html' }, auth)).status).toBe(404);
    }
  });

  it('through GraphQL, only its maintainer embeds it', async () => {
    const query =
      'query($p: String, $v: String) { embed(project: $p, doc: "page", version: $v, section: "requirements") { meta { project version } content } }';
    const anon = await t.gql(query, { p: 'hush' });
    expect(anon.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const mine = await t.gql(query, { p: 'hush' }, token);
    expect(mine.errors).toBeUndefined();
    expect(mine.data.embed.meta).toEqual({ project: 'hush', version: 'latest' });
    expect((await t.gql(query, { p: 'embed', v: 'private' })).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await t.gql(query, { p: 'embed', v: 'private' }, token)).data.embed.content[0]).toMatch(/^<section id="requirements">/);
  });
});

describe("no parameter reads outside the version's output", () => {
  // From the embed project's latest output (projects/embed/latest/<build>/html/) up to the private
  // project's stored page: the file these attempts would reach if names were not checked.
  const up = (n: number) => Array.from({ length: n }, () => '..').join('/');
  const hushPage = () => `${up(4)}/hush/latest/${hush.buildId}/html/page`;

  function refused(res: Response, what: string) {
    expect(res.status, `${what}: ${res.text}`).toBeGreaterThanOrEqual(400);
    expect(res.status, what).toBeLessThan(500);
    expect(res.text, what).not.toContain('Requirements');
    expect(res.text, what).not.toContain('Leaked');
  }

  it('doc with .., encoded .., absolute paths, backslashes and NUL', async () => {
    const docs = [
      hushPage(),
      `guide/${up(1)}/page`,
      `${up(8)}/etc/passwd`,
      '/etc/passwd',
      '//etc/passwd',
      '..',
      '.',
      './page',
      'guide/./index',
      'guide//index',
      `${up(4)}\\hush\\latest\\${hush.buildId}\\html\\page`,
      '..\\page',
      'page\u0000',
      'page\u0000.html',
      '\u0000',
      'x'.repeat(5000),
    ];
    for (const doc of docs) refused(await embed({ project: 'embed', doc }), `doc=${JSON.stringify(doc)}`);
    // Encoded once more: the server decodes a query once, so these are names with % in them.
    for (const raw of [
      `%252e%252e%252f%252e%252e%252fpage`,
      `%2e%2e%2f%2e%2e%2fhush%2flatest%2f${hush.buildId}%2fhtml%2fpage`,
      `${encodeURIComponent(hushPage())}`,
      '%2e%2e%5cpage',
      'page%00',
    ]) {
      refused(await embedRaw(`project=embed&doc=${raw}&section=requirements`), `doc=${raw}`);
    }
  });

  it('path with the same', async () => {
    for (const p of [
      `${hushPage()}.html`,
      `/${up(6)}/etc/passwd`,
      '/../page.html',
      '..%2fpage.html',
      '..\\page.html',
      'page.html\u0000',
      `guide/${up(1)}/page.html`,
    ]) {
      refused(await embed({ project: 'embed', path: p, section: 'requirements' }), `path=${JSON.stringify(p)}`);
    }
  });

  it('url with .., encoded .. and encoded slashes', async () => {
    const urls = [
      `${DOCS}/..%2f..%2f..%2fhush%2flatest%2f${hush.buildId}%2fhtml%2fpage.html#requirements`,
      `${DOCS}/%2e%2e%2f%2e%2e%2fpage.html`,
      `${DOCS}/guide%2f..%2fpage.html`,
      `${DOCS}/..%5c..%5cpage.html`,
      `${DOCS}/page%00.html`,
      `${DOCS}/%E0%A4%A.html`,
      `${DOCS}/../../hush/en/latest/page.html#requirements`,
      `${DOCS}/%2e%2e/%2e%2e/%2e%2e/hush/en/latest/page.html#requirements`,
      'http://lectern.test/docs/%2e%2e/hush/en/latest/page.html#requirements',
      'http://lectern.test/docs/hush%00/en/latest/page.html',
      'http://lectern.test/docs/embed/en/lat%00est/page.html',
    ];
    for (const url of urls) refused(await embed({ url }), `url=${url}`);
  });

  it('project and version with NUL or path characters are not found', async () => {
    for (const [project, version] of [
      ['em\u0000bed', 'latest'],
      ['embed', 'lat\u0000est'],
      ['embed', '../hush/latest'],
      ['embed/../hush', 'latest'],
    ]) {
      refused(await embed({ project: project!, version: version!, doc: 'page' }), `${project} ${version}`);
    }
  });

  it('a build output holding symlinks is refused whole, so nothing of it can be embedded', async () => {
    expect(linkedRefusal).toBeInstanceOf(OutputRefused);
    expect((linkedRefusal as Error).message).toMatch(/is a symbolic link: Lectern publishes only regular files inside the build's output$/);
    const version = await t.db.prisma.version.findFirstOrThrow({ where: { slug: 'linked', project: { slug: 'embed' } } });
    expect(version.publishedBuildId).toBeNull();
    refused(await embed({ project: 'embed', version: 'linked', doc: 'leak', section: 's' }), 'doc=leak');
    refused(await embed({ project: 'embed', version: 'linked', doc: 'outdir/secret', section: 's' }), 'doc=outdir/secret');
    // Even a link to a page inside the output is refused: the output holds only regular files.
    refused(await embed({ project: 'embed', version: 'linked', doc: 'alias', section: 'requirements' }), 'doc=alias');
  });
});

describe('embed API v3 (GET /api/v3/embed/?url=..., readthedocs/embed/v3)', () => {
  const v3 = (query: string, host?: string) => {
    const req = t.http.get(`/api/v3/embed/?${query}`);
    return host ? req.set('host', host) : req;
  };
  const url = (u: string) => `url=${encodeURIComponent(u)}`;

  it('answers the element a fragment names, with links made absolute, without a token', async () => {
    const res = await v3(url(`${DOCS}/page.html#installation`));
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['content', 'external', 'fragment', 'url']);
    expect(res.body).toMatchObject({ url: `${DOCS}/page.html#installation`, fragment: 'installation', external: false });
    expect(res.body.content).toMatch(/^<section id="installation">/);
    expect(res.body.content).toContain('Install it');
    // Relative links and images now point at the docs, fragments at the page.
    expect(res.body.content).toContain(`href="${DOCS}/guide/index.html"`);
    expect(res.body.content).toContain(`src="${DOCS}/_images/diagram.svg"`);
    expect(res.body.content).not.toMatch(/href="(?!https?:)[^"]*"/);
  });

  it('answers the exact bodies sphinx-hoverxref reads: a glossary term, and the errors', async () => {
    const term = await v3(`${url(`${DOCS}/glossary.html#term-Widget`)}&doctool=sphinx&doctoolversion=5.3.0`);
    expect(term.status).toBe(200);
    expectGolden('embed-v3-glossary-term', term.body);
    const missing = await v3(url(`${DOCS}/glossary.html#term-Nothing`));
    expect(missing.status).toBe(404);
    expectGolden('embed-v3-404', missing.body);
    const outside = await v3(url('https://docs.python.org/3/library/os.html#os.walk'));
    expect(outside.status).toBe(400);
    expectGolden('embed-v3-400-external', outside.body);
  });

  it('answers the main content without a fragment, or what `maincontent` selects', async () => {
    const main = await v3(url(`${DOCS}/page.html`));
    expect(main.status).toBe(200);
    expect(main.body.fragment).toBeNull();
    expect(main.body.content).toContain('Page Title');
    expect(main.body.content).toContain('Print more about what happens.');
    const picked = await v3(`${url(`${DOCS}/page.html`)}&maincontent=${encodeURIComponent('#requirements')}`);
    expect(picked.status).toBe(200);
    expect(picked.body.content).toMatch(/^<section id="requirements">/);
  });

  it("applies Sphinx's cases with doctool=sphinx: a label's section, a glossary term with only its definition, an option's whole entry", async () => {
    const label = await v3(`${url(`${DOCS}/page.html#install-label`)}&doctool=sphinx`);
    expect(label.body.content).toMatch(/^<section id="installation">/);
    const term = await v3(`${url(`${DOCS}/glossary.html#term-Widget`)}&doctool=sphinx`);
    expect(term.body.content).toMatch(/^<dl class="[^"]*glossary/);
    expect(term.body.content).toContain('A small thing that does one job.');
    expect(term.body.content).not.toContain('Gadget');
    const option = await v3(`${url(`${DOCS}/page.html#cmdoption-verbose`)}&doctool=sphinx`);
    expect(option.body.content).toMatch(/^<dl /);
    expect(option.body.content).toContain('Print more about what happens.');
    // Without doctool the element itself.
    const plain = await v3(url(`${DOCS}/glossary.html#term-Widget`));
    expect(plain.body.content).toMatch(/^<dt /);
  });

  it("answers Read the Docs' errors: 400 for a missing, malformed or outside URL, 404 for what is not there", async () => {
    const cases: [string, number, string][] = [
      ['', 400, 'Invalid arguments. Please provide "url".'],
      ['url=not-a-url', 400, 'The URL requested is malformed. url=not-a-url'],
      [url('https://evil.example/page.html'), 400, 'External domain not allowed. domain=evil.example'],
      [url(`${DOCS}/page.html#nowhere`), 404, `Can't find content for section: url=${DOCS}/page.html#nowhere fragment=nowhere maincontent=None`],
      [url(`${DOCS}/missing.html`), 404, `Can't find content for section: url=${DOCS}/missing.html fragment= maincontent=None`],
    ];
    for (const [query, status, error] of cases) {
      const res = await v3(query);
      expect([query, res.status, res.body]).toEqual([query, status, { error }]);
    }
  });

  it("never shows a private project or version, or another version's file, to anyone who may not read it", async () => {
    for (const u of [
      'http://lectern.test/docs/hush/en/latest/page.html#installation',
      `http://lectern.test/docs/embed/en/private/page.html#installation`,
      `${DOCS}/../../hush/en/latest/page.html#installation`,
      `${DOCS}/%2e%2e/private/page.html`,
    ]) {
      const res = await v3(url(u));
      expect([u, res.status]).toEqual([u, 404]);
      expect(JSON.stringify(res.body)).not.toContain('Install it');
    }
  });

  it('is served on the docs host too, at /_/api/v3/embed/', async () => {
    const res = await t.http.get(`/_/api/v3/embed/?${url(`${DOCS}/page.html#requirements`)}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.content).toMatch(/^<section id="requirements">/);
  });
});

describe('the parsed-page cache', () => {
  it('parses a page once for repeated embeds, and again when storage holds a new body', async () => {
    const cache = pageCache(t.storage);
    const project = await t.db.prisma.project.findUniqueOrThrow({ where: { slug: 'embed' }, include: { versions: true } });
    const latest = project.versions.find((v) => v.slug === 'latest')!;
    const key = `projects/embed/latest/${latest.publishedBuildId}/html/glossary.html`;
    cache.delete(key);
    const before = { hits: cache.hits, misses: cache.misses };
    await embed({ project: 'embed', doc: 'glossary', section: 'term-Widget' });
    const page = cache.peek(key)?.page;
    expect(page).toBeDefined();
    await embed({ project: 'embed', doc: 'glossary', section: 'term-Gadget' });
    await embed({ project: 'embed', doc: 'glossary' });
    expect(cache.peek(key)?.page).toBe(page);
    expect(cache.hits - before.hits).toBe(2);

    // A new body under the same key (a new ETag) is read and parsed again.
    await t.storage.put(
      key,
      Buffer.from('<html><body><div class="body" role="main"><section id="fresh"><h1>Fresh</h1><p>New.</p></section></div></body></html>'),
    );
    const body = ok(await embed({ project: 'embed', doc: 'glossary' }));
    expect(body.headers).toEqual([{ Fresh: '#' }]);
    expect(body.content[0]).toContain('New.');
    expect(cache.peek(key)?.page).not.toBe(page);
  });
});

// A second app in the same process, whose config names a docs domain.
describe('docs served by host name (LECTERN_DOCS_DOMAIN)', () => {
  let d: TestApp;
  beforeAll(async () => {
    d = await testApp({ LECTERN_DOCS_DOMAIN: 'docs.test' });
    const p = await d.db.prisma.project.create({ data: { name: 'Under Score', slug: 'under_score', repositoryUrl: 'https://github.com/acme/u' } });
    await d.db.prisma.version.create({ data: { projectId: p.id, slug: 'latest', verboseName: 'latest', type: 'branch' } });
    await publishHtml(d.services, { project: 'under_score', version: 'latest', htmlDir: html });
  });
  afterAll(async () => {
    await d?.close();
  });

  it('finds the project from the host, and writes links on the docs domain', async () => {
    const res = await d.http.get(`/api/v2/embed/?${q({ url: 'http://under-score.docs.test/en/latest/page.html#installation' })}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.meta).toEqual({ project: 'under_score', version: 'latest', doc: 'page', section: 'installation' });
    expect(res.body.content[0]).toContain('href="http://under-score.docs.test/en/latest/guide/index.html"');
    const other = await d.http.get(`/api/v2/embed/?${q({ url: 'http://under-score.elsewhere.test/en/latest/page.html' })}`);
    expect(other.status).toBe(404);
  });
});
