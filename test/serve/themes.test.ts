// Real themes as readers get them (issue 22, its third point), in both of Lectern's ways of serving
// docs: on an origin of each project's own (`<project>.localhost:<port>`, what `npm start` does on
// localhost), and sandboxed in an opaque origin under `/docs/` (an installation without a docs
// domain, LECTERN_DOCS_DOMAIN=off or a public URL elsewhere). Built here with Debian's MkDocs (its
// default theme, and Material) and Sphinx (Alabaster, the Read the Docs theme, Furo), read in Chromium as a
// reader would: the theme's own search finds a page (MkDocs' runs in a Worker, which an opaque origin
// could not start from the site's URL), its web fonts load (document.fonts), nothing is refused for
// CORS, one search button shows (the theme's), and a private version's 404 offers sign-in, which
// leads to the page. Version selectors (issue 24): a theme's own, fed by Lectern's addons data
// (Read the Docs' readthedocs-addons-data-ready event) or by mike's versions.json (Material), in
// which case Lectern's menu steps aside; Lectern's menu where the theme has none. Screenshots in
// test-results/.
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/domain/users.ts';
import { servedTestApp } from '../helpers/app.ts';
import { FIXTURES, launchChromium, makeProject, mkdocsBuild, publish, sphinxBuild } from '../helpers/publish.ts';

const PASSWORD = 'theme reader password 7';
const temps: string[] = [];
let browser: Browser;
let sites: [string, string][];

/** The MkDocs fixture built with Material, fonts from the machine (no Google Fonts offline). */
async function materialBuild(extra = ''): Promise<string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lectern-material-'));
  temps.push(dir);
  cpSync(path.join(FIXTURES, 'mkdocs', 'docs'), path.join(dir, 'docs'), { recursive: true });
  writeFileSync(
    path.join(dir, 'mkdocs.yml'),
    `site_name: Child Docs\ntheme:\n  name: material\n  font: false\nnav:\n  - Home: index.md\n  - About: about.md\n${extra}`,
  );
  await promisify(execFile)('/usr/bin/python3', ['-m', 'mkdocs', 'build', '-q', '-f', path.join(dir, 'mkdocs.yml'), '-d', path.join(dir, 'site')]);
  return path.join(dir, 'site');
}

/**
 * A page script that draws the theme's own version selector from Read the Docs' addons data, as
 * sphinx_rtd_theme 3 does with its `version_selector` (not in Debian, whose theme is 1.2): it waits
 * for `readthedocs-addons-data-ready` and reads `event.detail.data()`.
 */
const THEME_SELECTOR_JS = `document.addEventListener('readthedocs-addons-data-ready', function (event) {
  var config = event.detail.data();
  var select = document.createElement('select');
  select.className = 'theme-version-selector';
  select.setAttribute('aria-label', 'Theme version');
  config.versions.active.forEach(function (v) {
    var option = document.createElement('option');
    option.value = v.urls.documentation;
    option.textContent = v.slug;
    option.selected = v.slug === config.versions.current.slug;
    select.appendChild(option);
  });
  select.addEventListener('change', function () { window.location.href = select.value; });
  document.querySelector('.wy-side-nav-search').appendChild(select);
});
`;

/** The Sphinx fixture in Debian's Read the Docs theme, with THEME_SELECTOR_JS among its scripts. */
async function rtdWithSelectorBuild(): Promise<string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lectern-rtd-selector-'));
  temps.push(dir);
  cpSync(path.join(FIXTURES, 'sphinx'), path.join(dir, 'src'), { recursive: true });
  mkdirSync(path.join(dir, 'src', '_static'));
  writeFileSync(path.join(dir, 'src', '_static', 'theme-versions.js'), THEME_SELECTOR_JS);
  const defines = ['html_theme=sphinx_rtd_theme', 'html_static_path=_static', 'html_js_files=theme-versions.js'].flatMap((d) => ['-D', d]);
  await promisify(execFile)('/usr/bin/sphinx-build', ['-q', '-b', 'html', ...defines, path.join(dir, 'src'), path.join(dir, 'html')]);
  return path.join(dir, 'html');
}

/** Sites published with a second public version, `v2`: their version selectors have a choice. */
const WITH_V2 = new Set(['rtd', 'rtd-selector', 'material-mike']);

beforeAll(async () => {
  sites = [
    ['mk', await mkdocsBuild('mkdocs')],
    ['material', await materialBuild()],
    ['alabaster', await sphinxBuild('sphinx')],
    ['rtd', await sphinxBuild('sphinx', { overrides: { html_theme: 'sphinx_rtd_theme' } })],
    ['furo', await sphinxBuild('sphinx', { overrides: { html_theme: 'furo' } })],
    ['rtd-selector', await rtdWithSelectorBuild()],
    ['material-mike', await materialBuild('extra:\n  version:\n    provider: mike\n')],
  ];
  browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

const MODES = [
  // `npm start`'s own setup: the public URL on localhost, no LECTERN_DOCS_DOMAIN.
  { mode: 'own origin', hostname: 'localhost', docsRoot: (origin: string, slug: string) => origin.replace('//localhost', `//${slug}.localhost`) },
  { mode: 'sandboxed', hostname: '127.0.0.1', docsRoot: (origin: string, slug: string) => `${origin}/docs/${slug}` },
] as const;

describe.each(MODES)('themes, docs served in their $mode', ({ mode, hostname, docsRoot }) => {
  let origin: string;
  let stop: () => Promise<void>;
  const shot = (name: string) => `test-results/themes-${mode.replace(' ', '-')}-${name}.png`;

  beforeAll(async () => {
    const served = await servedTestApp({}, { hostname });
    ({ origin, stop } = served);
    const { t } = served;
    const { user } = await createUser(t.db.prisma, 'reader', { password: PASSWORD });
    for (const [slug, html] of sites) {
      const project = await makeProject(t, { slug, maintainers: [user.id] });
      await publish(t, { project, version: 'latest', html });
      if (WITH_V2.has(slug)) await publish(t, { project, version: 'v2', html });
      const closed = await publish(t, { project, version: 'closed', html });
      await t.db.prisma.version.update({ where: { id: closed.versionId }, data: { privacyLevel: 'private' } });
    }
  }, 120_000);

  afterAll(async () => {
    await stop?.();
  });

  /** A page whose console errors and refused answers are kept (the browser's favicon aside). */
  async function open(url: string): Promise<{ page: Page; problems: () => string[] }> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    // A Sphinx page names no icon: the browser asks the host's /favicon.ico, which a docs host has
    // only when the project publishes one.
    page.on('console', (m) => m.type() === 'error' && !m.location().url.endsWith('/favicon.ico') && problems.push(m.text()));
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('worker', (w) => w.on('console', (m) => m.type() === 'error' && problems.push(`worker: ${m.text()}`)));
    page.on('response', (r) => r.status() >= 400 && !r.url().endsWith('/favicon.ico') && problems.push(`${r.status()} ${r.url()}`));
    page.on('requestfailed', (r) => !r.url().endsWith('/favicon.ico') && problems.push(`failed ${r.url()}: ${r.failure()?.errorText}`));
    await page.goto(url, { waitUntil: 'load' });
    const site = new URL(url).origin;
    // This machine has no internet: MkDocs' default theme asks cdnjs for highlight.js, and then
    // calls it. What the page asks of other sites, and what follows from their absence, is not Lectern's.
    const offline = (p: string) => /ERR_NAME_NOT_RESOLVED|hljs is not defined/.test(p) || (/^failed /.test(p) && !p.startsWith(`failed ${site}/`));
    return { page, problems: () => problems.filter((p) => !offline(p) && !/favicon/.test(p)) };
  }

  /** The page's fonts once loading settles: family and status of each. */
  const fonts = (page: Page) =>
    page.evaluate(async () => {
      await document.fonts.ready;
      return [...document.fonts].map((f) => ({ family: f.family.replace(/["']/g, ''), status: f.status }));
    });

  it("runs where it should: the project's own origin, or an opaque one", async () => {
    const { page } = await open(`${docsRoot(origin, 'mk')}/en/latest/`);
    const seen = await page.evaluate(() => window.origin);
    expect(seen).toBe(mode === 'own origin' ? new URL(docsRoot(origin, 'mk')).origin : 'null');
    if (mode === 'own origin') {
      // A theme's remembered choice (localStorage) outlives the page, as on readthedocs.io.
      await page.evaluate(() => localStorage.setItem('theme', 'dark'));
      await page.reload();
      expect(await page.evaluate(() => localStorage.getItem('theme'))).toBe('dark');
      // Lectern's own host sends `/docs/<project>/…` to the project's origin.
      const sent = await page.goto(`${origin}/docs/mk/en/latest/about/`);
      expect(sent?.url()).toBe(`${docsRoot(origin, 'mk')}/en/latest/about/`);
    }
    await page.close();
  }, 60_000);

  it("MkDocs' default theme: its search runs in its Worker and finds a page", async () => {
    const { page, problems } = await open(`${docsRoot(origin, 'mk')}/en/latest/`);
    expect(await page.locator('#lectern-search-button').count()).toBe(0);
    await page.locator('[data-target="#mkdocs_search_modal"]').first().click();
    // The theme searches on keyup.
    await page.locator('#mkdocs-search-query').pressSequentially('writes', { delay: 20 });
    await page.locator('#mkdocs-search-results a').first().waitFor({ timeout: 20_000 });
    expect(await page.locator('#mkdocs-search-results').textContent()).toContain('About the child');
    expect((await fonts(page)).filter((f) => f.status === 'error')).toEqual([]);
    await page.screenshot({ path: shot('mkdocs') });
    expect(problems()).toEqual([]);
    await page.close();
  }, 120_000);

  it('MkDocs Material: its search runs in its Worker and finds a page', async () => {
    const { page, problems } = await open(`${docsRoot(origin, 'material')}/en/latest/`);
    expect(await page.locator('#lectern-search-button').count()).toBe(0);
    const query = page.locator('input[data-md-component="search-query"]');
    await query.click();
    await query.pressSequentially('writes', { delay: 20 });
    await page.locator('.md-search-result__item a, .md-search-result__link').first().waitFor({ timeout: 20_000 });
    expect(await page.locator('.md-search-result').textContent()).toContain('About the child');
    expect((await fonts(page)).filter((f) => f.status === 'error')).toEqual([]);
    await page.screenshot({ path: shot('material') });
    expect(problems()).toEqual([]);
    await page.close();
  }, 120_000);

  for (const [slug, form] of [
    ['alabaster', '#searchbox'],
    ['rtd', '#rtd-search-form'],
    ['furo', 'form.sidebar-search-container'],
  ] as const) {
    it(`Sphinx ${slug}: its search box finds the page, its fonts load, one search button`, async () => {
      const { page, problems } = await open(`${docsRoot(origin, slug)}/en/latest/`);
      expect(await page.locator('#lectern-search-button').count()).toBe(0);
      const loaded = await fonts(page);
      expect(loaded.filter((f) => f.status === 'error')).toEqual([]);
      // The Read the Docs theme brings its own web fonts (Lato, Roboto Slab, FontAwesome).
      if (slug === 'rtd') expect(loaded.filter((f) => f.status === 'loaded').length).toBeGreaterThan(0);
      await page.screenshot({ path: shot(slug) });
      const box = page.locator(`${form} input[name="q"]`);
      await box.fill('installation');
      await box.press('Enter');
      await page.waitForURL(/search\.html\?q=installation/);
      await page.locator('a', { hasText: 'Installation' }).first().waitFor();
      // Debian's Furo is unbundled (2022.12.07+dfsg): its stylesheet imports normalize.css from
      // `/javascript/` at the web server's root (Debian's javascript-common alias), and furo.js is an
      // ES module its template loads as a classic script. Both fail on any other server; pip's Furo,
      // what Read the Docs builds with, has neither.
      const debian = (p: string) => slug === 'furo' && /\/javascript\/normalize\.css\/|import statement outside a module/.test(p);
      expect(problems().filter((p) => !debian(p))).toEqual([]);
      await page.close();
    }, 120_000);
  }

  it("a theme's own version selector, fed by Lectern's addons data: Lectern's menu steps aside", async () => {
    const { page, problems } = await open(`${docsRoot(origin, 'rtd-selector')}/en/latest/guide/install.html`);
    const select = page.locator('select.theme-version-selector');
    await select.waitFor();
    expect(await select.locator('option').allTextContents()).toEqual(['latest', 'v2']);
    expect(await page.locator('#lectern-switcher').count()).toBe(0);
    // Read the Docs' contract for scripts that come after the event: the same data on the window.
    expect(
      await page.evaluate(
        () =>
          (window as unknown as { ReadTheDocsEventData: { data(): { projects: { current: { slug: string } } } } }).ReadTheDocsEventData.data().projects.current
            .slug,
      ),
    ).toBe('rtd-selector');
    await page.screenshot({ path: shot('rtd-theme-selector') });
    await Promise.all([page.waitForURL((u) => u.pathname.endsWith('/en/v2/')), select.selectOption('v2')]);
    expect(problems()).toEqual([]);
    await page.close();
  }, 120_000);

  it("Lectern's menu where the theme has none (Debian's Read the Docs theme), going to the same page", async () => {
    const { page, problems } = await open(`${docsRoot(origin, 'rtd')}/en/latest/guide/install.html`);
    const versions = page.locator('#lectern-switcher select[name="version"]');
    await versions.waitFor();
    expect(await versions.locator('option').allTextContents()).toEqual(['latest', 'v2']);
    await Promise.all([page.waitForURL((u) => u.pathname.endsWith('/en/v2/guide/install.html')), versions.selectOption('v2')]);
    expect(problems()).toEqual([]);
    await page.close();
  }, 120_000);

  it("Material's own version selector reads mike's versions.json: Lectern's menu steps aside", async () => {
    const { page, problems } = await open(`${docsRoot(origin, 'material-mike')}/en/latest/about/`);
    const current = page.locator('.md-version__current');
    await current.waitFor();
    expect((await current.textContent())?.trim()).toBe('latest');
    expect(await page.locator('.md-version__link').allTextContents()).toEqual(['latest', 'v2']);
    // The addons data came, with the menu on: Lectern draws no version picker of its own beside Material's.
    await page.waitForFunction(() => 'ReadTheDocsEventData' in window);
    expect(await page.locator('#lectern-switcher select[name="version"]').count()).toBe(0);
    await page.screenshot({ path: shot('material-versions') });
    await page.locator('.md-version').hover();
    // Material looks for the same page in the version's sitemap.xml (MkDocs writes its URLs from
    // `site_url`, unset here), else goes to the version's root.
    await Promise.all([page.waitForURL((u) => /\/en\/v2\/(about\/)?$/.test(u.pathname)), page.locator('.md-version__link', { hasText: 'v2' }).click()]);
    expect(problems()).toEqual([]);
    await page.close();
  }, 120_000);

  it("offers sign-in on a private version's 404, and signing in leads to the page", async () => {
    for (const slug of ['mk', 'rtd']) {
      const context = await browser.newContext();
      const page = await context.newPage();
      const url = `${docsRoot(origin, slug)}/en/closed/`;
      const answer = await page.goto(url);
      expect(answer?.status()).toBe(404);
      await page.getByRole('link', { name: 'Sign in to read private documentation.' }).click();
      await page.waitForURL((u) => u.origin === origin && u.pathname === '/sign-in');
      await page.getByLabel('Username').fill('reader');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      // Back at the page, read as the signed-in maintainer: on its own origin under a host-only
      // cookie (the ticket in the address is gone), sandboxed under a grant.
      await page.waitForURL((u) => u.origin === new URL(url).origin && u.pathname.endsWith('/en/closed/'));
      expect(await page.locator('body').textContent()).toContain(slug === 'mk' ? 'Child Docs' : 'Installation');
      if (mode === 'own origin') expect(new URL(page.url()).pathname).toBe('/en/closed/');
      await context.close();
    }
  }, 120_000);
});
