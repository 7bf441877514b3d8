// Real themes served without a docs domain (issue 22, its third point): each page is a sandboxed
// document in an opaque origin. Built here with Debian's MkDocs (its default theme, and Material)
// and Sphinx (Alabaster, the Read the Docs theme), read in Chromium as a reader would: the theme's
// own search finds a page (MkDocs' runs in a Worker, which an opaque origin could not start from
// the site's URL), its web fonts load (document.fonts), nothing is refused for CORS, one search
// button shows (the theme's), and a private version's 404 offers sign-in. Screenshots in test-results/.
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servedTestApp, type TestApp } from '../helpers/app.ts';
import { FIXTURES, launchChromium, makeProject, mkdocsBuild, publish, sphinxBuild } from '../helpers/publish.ts';

let t: TestApp;
let stop: () => Promise<void>;
let origin: string;
let browser: Browser;
const temps: string[] = [];

/** The MkDocs fixture built with Material, fonts from the machine (no Google Fonts offline). */
async function materialBuild(): Promise<string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lectern-material-'));
  temps.push(dir);
  cpSync(path.join(FIXTURES, 'mkdocs', 'docs'), path.join(dir, 'docs'), { recursive: true });
  writeFileSync(
    path.join(dir, 'mkdocs.yml'),
    'site_name: Child Docs\ntheme:\n  name: material\n  font: false\nnav:\n  - Home: index.md\n  - About: about.md\n',
  );
  await promisify(execFile)('/usr/bin/python3', ['-m', 'mkdocs', 'build', '-q', '-f', path.join(dir, 'mkdocs.yml'), '-d', path.join(dir, 'site')]);
  return path.join(dir, 'site');
}

beforeAll(async () => {
  ({ t, origin, stop } = await servedTestApp());
  const sites: [string, string][] = [
    ['mk', await mkdocsBuild('mkdocs')],
    ['material', await materialBuild()],
    ['alabaster', await sphinxBuild('sphinx')],
    ['rtd', await sphinxBuild('sphinx', { overrides: { html_theme: 'sphinx_rtd_theme' } })],
  ];
  for (const [slug, html] of sites) {
    const project = await makeProject(t, { slug });
    await publish(t, { project, version: 'latest', html });
    const closed = await publish(t, { project, version: 'closed', html });
    await t.db.prisma.version.update({ where: { id: closed.versionId }, data: { privacyLevel: 'private' } });
  }
  browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await stop?.();
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

/** A page whose console errors and refused answers are kept (the browser's favicon aside). */
async function open(url: string): Promise<{ page: Page; problems: () => string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const problems: string[] = [];
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('worker', (w) => w.on('console', (m) => m.type() === 'error' && problems.push(`worker: ${m.text()}`)));
  page.on('response', (r) => r.status() >= 400 && !r.url().endsWith('/favicon.ico') && problems.push(`${r.status()} ${r.url()}`));
  page.on('requestfailed', (r) => !r.url().endsWith('/favicon.ico') && problems.push(`failed ${r.url()}: ${r.failure()?.errorText}`));
  await page.goto(url, { waitUntil: 'load' });
  // This machine has no internet: MkDocs' default theme asks cdnjs for highlight.js, and then
  // calls it. What the page asks of other sites, and what follows from their absence, is not Lectern's.
  const offline = (p: string) => /ERR_NAME_NOT_RESOLVED|hljs is not defined/.test(p) || (/^failed /.test(p) && !p.startsWith(`failed ${origin}/`));
  return { page, problems: () => problems.filter((p) => !offline(p) && !/favicon/.test(p)) };
}

/** The page's fonts once loading settles: family and status of each. */
const fonts = (page: Page) =>
  page.evaluate(async () => {
    await document.fonts.ready;
    return [...document.fonts].map((f) => ({ family: f.family.replace(/["']/g, ''), status: f.status }));
  });

describe('themes in a sandboxed page', () => {
  it("MkDocs' default theme: its search runs in its Worker and finds a page", async () => {
    const { page, problems } = await open(`${origin}/docs/mk/en/latest/`);
    expect(await page.locator('#lectern-search-button').count()).toBe(0);
    await page.locator('[data-target="#mkdocs_search_modal"]').first().click();
    // The theme searches on keyup.
    await page.locator('#mkdocs-search-query').pressSequentially('writes', { delay: 20 });
    await page.locator('#mkdocs-search-results a').first().waitFor({ timeout: 20_000 });
    expect(await page.locator('#mkdocs-search-results').textContent()).toContain('About the child');
    expect((await fonts(page)).filter((f) => f.status === 'error')).toEqual([]);
    await page.screenshot({ path: 'test-results/themes-sandboxed-mkdocs.png' });
    expect(problems()).toEqual([]);
    await page.close();
  }, 120_000);

  it('MkDocs Material: its search runs in its Worker and finds a page', async () => {
    const { page, problems } = await open(`${origin}/docs/material/en/latest/`);
    expect(await page.locator('#lectern-search-button').count()).toBe(0);
    const query = page.locator('input[data-md-component="search-query"]');
    await query.click();
    await query.pressSequentially('writes', { delay: 20 });
    await page.locator('.md-search-result__item a, .md-search-result__link').first().waitFor({ timeout: 20_000 });
    expect(await page.locator('.md-search-result').textContent()).toContain('About the child');
    expect((await fonts(page)).filter((f) => f.status === 'error')).toEqual([]);
    await page.screenshot({ path: 'test-results/themes-sandboxed-material.png' });
    expect(problems()).toEqual([]);
    await page.close();
  }, 120_000);

  for (const [slug, form] of [
    ['alabaster', '#searchbox'],
    ['rtd', '#rtd-search-form'],
  ] as const) {
    it(`Sphinx ${slug}: its search box finds the page, its fonts load, one search button`, async () => {
      const { page, problems } = await open(`${origin}/docs/${slug}/en/latest/`);
      expect(await page.locator('#lectern-search-button').count()).toBe(0);
      const loaded = await fonts(page);
      expect(loaded.filter((f) => f.status === 'error')).toEqual([]);
      // The Read the Docs theme brings its own web fonts (Lato, Roboto Slab, FontAwesome).
      if (slug === 'rtd') expect(loaded.filter((f) => f.status === 'loaded').length).toBeGreaterThan(0);
      await page.screenshot({ path: `test-results/themes-sandboxed-${slug}.png` });
      const box = page.locator(`${form} input[name="q"]`);
      await box.fill('installation');
      await box.press('Enter');
      await page.waitForURL(/search\.html\?q=installation/);
      await page.locator('a', { hasText: 'Installation' }).first().waitFor();
      expect(problems()).toEqual([]);
      await page.close();
    }, 120_000);
  }

  it("offers sign-in on a private version's 404, and the link leads to sign-in and back", async () => {
    for (const slug of ['mk', 'rtd']) {
      const page = await browser.newPage();
      const answer = await page.goto(`${origin}/docs/${slug}/en/closed/`);
      expect(answer?.status()).toBe(404);
      await page.getByRole('link', { name: 'Sign in to read private documentation.' }).click();
      await page.waitForURL((u) => u.pathname === '/sign-in');
      expect(new URL(page.url()).searchParams.get('next')).toBe(`/docs/${slug}/en/closed/`);
      await page.close();
    }
  }, 120_000);
});
