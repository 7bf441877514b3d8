// A new user's first hour as the README's "First steps" and "Building a repository on this machine"
// tell it, in a real Chromium at a phone's width (390 px) and a desk's (1280 px): the real command
// as `npm start` runs it (`node src/bin.js serve`, a child process) on a new, empty data dir (run
// on the embedded database, vitest.config.ts oneDatabaseTests; on PostgreSQL it would take an empty
// database) with a person's defaults: no LECTERN_PUBLIC_URL, so
// Lectern is at http://localhost:<PORT> and each project's docs at http://<project>.localhost:<PORT>,
// and LECTERN_BUILD_LOCAL_REPOSITORIES naming a directory with a repository made exactly as the
// README shows. Then, as a person: the setup address from the log, the administrator, signing in,
// importing the repository by its path in the dashboard, the build followed on its page, the docs
// opened through the dashboard's link on their own origin, and the `latest` version toggled off and
// on in the versions table, its docs served again once the build this queues has run.
// Every page fits its width; the dashboard's pages have no serious axe-core violation; no request
// of a page fails and no page logs an error. Pictures go to test-results/first-hour/<db>/.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_DIR } from '../../src/dashboard.ts';
import { seriousViolations } from '../helpers/axe.ts';
import { emptyPostgresDatabase, tempDirs } from '../helpers/cli-databases.ts';
import { cliEnv, killChildren, type Served, startServe } from '../helpers/cli-process.ts';
import { dbKind } from '../helpers/db.ts';
import { launchChromium } from '../helpers/publish.ts';
import { until } from '../helpers/wait.ts';

const kind = dbKind();
const SHOTS = path.resolve(import.meta.dirname, '../../test-results/first-hour', kind);
const PASSWORD = 'correct horse battery';
const dirs = tempDirs();

let server: Served;
let dropDatabase: (() => Promise<void>) | undefined;
let browser: Browser;
/** Lectern as the person types it: `http://localhost:<port>`. */
let lectern: string;
/** Where the README says the docs are: `http://hello.localhost:<port>`. */
let docsOrigin: string;
/** The repository as the README makes it, `<dir>/docs-repos/hello`. */
let repo: string;
/** The same person on a phone and at a desk. */
let phone: Page;
let desk: Page;
/** Every answer of 400 or more and every console error of any page, with the page's address. */
const failures: string[] = [];
/** What pages asked of hosts other than Lectern's: refused, as on a machine offline (this one is). */
const offsite = new Set<string>();
/**
 * MkDocs' own theme (`mkdocs.yml` names none) loads highlight.js from cdnjs, which this machine
 * cannot reach: the page then logs the two failed loads and its inline `hljs.initHighlightingOnLoad()`
 * throws. Online, a person sees none of it; it is the theme's doing, not Lectern's. Only these are
 * let pass, and only on the docs' host; any other host asked for fails the last test.
 */
const THEME_CDN = [
  'https://cdnjs.cloudflare.com/ajax/libs/highlight.js/10.5.0/styles/github.min.css',
  'https://cdnjs.cloudflare.com/ajax/libs/highlight.js/10.5.0/highlight.min.js',
];

/** The README's commands, as written (`$HOME/docs-repos` is a directory of this test's). */
function makeHelloRepository(home: string): string {
  const hello = path.join(home, 'docs-repos/hello');
  mkdirSync(path.join(hello, 'docs'), { recursive: true });
  writeFileSync(path.join(hello, 'mkdocs.yml'), 'site_name: Hello\n');
  writeFileSync(path.join(hello, 'docs/index.md'), '# Hello\n\nBuilt from this machine.\n');
  const git = (...args: string[]) => execFileSync('git', ['-C', hello, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('-c', 'user.name=me', '-c', 'user.email=me@example.com', 'commit', '-qm', 'First docs');
  return hello;
}

beforeAll(async () => {
  if (!existsSync(path.join(DASHBOARD_DIR, 'index.html')))
    throw new Error('the dashboard is not built: run `npm run web:build` (npm start and npm test run it first)');
  const home = dirs.make('lectern-first-hour-');
  repo = makeHelloRepository(home);
  const dataDir = path.join(home, 'lectern-data');
  let databaseUrl: string | undefined;
  if (kind === 'postgres') ({ url: databaseUrl, drop: dropDatabase } = await emptyPostgresDatabase());
  // A person's environment: no Lectern setting but the README's one (and the data dir, the
  // database and a free port, so that this test shares nothing with others running beside it).
  // cliEnv gives the build users ids of their own (LECTERN_BUILD_UID_BASE) for the same reason;
  // the test network it allows builds is no default, so it goes.
  const env = cliEnv({
    LECTERN_DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    LECTERN_BUILD_LOCAL_REPOSITORIES: path.dirname(repo),
    LECTERN_BUILD_NETWORK_ALLOW: undefined,
  });
  // startServe sets PORT to a port nobody listens on (listening on 0, then closing).
  server = await startServe(env, 120_000);
  const port = new URL(server.url).port;
  lectern = `http://localhost:${port}`;
  docsOrigin = `http://hello.localhost:${port}`;

  browser = await launchChromium();
  const page = async (width: number, height: number) => {
    const context = await browser.newContext({ viewport: { width, height } });
    // Lectern is `localhost:<port>`, each project's docs `<project>.localhost:<port>`: nothing else is reached.
    const lecterns = (u: URL) => u.port === port && (u.hostname === 'localhost' || u.hostname.endsWith('.localhost'));
    await context.route(
      (u) => !lecterns(u),
      (route) => {
        offsite.add(route.request().url());
        return route.abort('internetdisconnected');
      },
    );
    const p = await context.newPage();
    const onDocs = () => p.url().startsWith(`${docsOrigin}/`);
    p.on('response', (r) => {
      if (r.status() < 400) return;
      // A docs host has no favicon unless the docs bring one: the docs' own business, not Lectern's.
      if (r.url() === `${docsOrigin}/favicon.ico`) return;
      failures.push(`${r.status()} ${r.request().method()} ${r.url()} (on ${p.url()})`);
    });
    p.on('console', (m) => {
      if (m.type() !== 'error') return;
      // Chromium's console line for that same favicon 404, and for the theme's files from its CDN.
      if (m.location().url === `${docsOrigin}/favicon.ico`) return;
      if (onDocs() && THEME_CDN.includes(m.location().url)) return;
      failures.push(`console error on ${p.url()}: ${m.text()} (${m.location().url})`);
    });
    p.on('pageerror', (e) => {
      if (onDocs() && e.message === 'hljs is not defined' && offsite.has(THEME_CDN[1]!)) return;
      failures.push(`uncaught on ${p.url()}: ${e.message}`);
    });
    return p;
  };
  phone = await page(390, 844);
  desk = await page(1280, 900);
  mkdirSync(SHOTS, { recursive: true });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop('SIGTERM').catch(() => {});
  await killChildren();
  await dropDatabase?.().catch(() => {});
  dirs.cleanup();
});

const width = (p: Page) => p.viewportSize()!.width;

/** What a person sees first: the page is no wider than the window. And its picture. */
async function look(p: Page, name: string, { axe = true } = {}) {
  const { scroll, inner } = await p.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
  expect(scroll, `${name} at ${width(p)} px is ${scroll} px wide`).toBeLessThanOrEqual(inner);
  if (axe) expect(await seriousViolations(p), `${name} at ${width(p)} px`).toEqual([]);
  await p.screenshot({ path: path.join(SHOTS, `${width(p)}-${name}.png`), fullPage: true });
}

/** The project's page, its "View docs" link followed: the docs' first page, on their own origin. */
async function openDocs(p: Page, name: string) {
  await p.goto(`${lectern}/projects/hello/versions`);
  const link = p.getByRole('link', { name: 'View docs' });
  expect(await link.getAttribute('href')).toBe(`${docsOrigin}/en/latest/`);
  await link.click();
  await p.waitForURL(`${docsOrigin}/en/latest/`);
  await p.getByText('Built from this machine.').waitFor();
  expect(new URL(p.url()).host).toBe(new URL(docsOrigin).host);
  expect(await p.locator('h1').first().textContent()).toBe('Hello');
  // The docs' theme is the docs' own: it is not held to the dashboard's accessibility rules.
  await look(p, name, { axe: false });
}

/** Follows a build on its page (the dashboard follows it live) until it has passed. */
async function buildPassed(p: Page, name: string) {
  await p.waitForURL(/\/projects\/hello\/builds\/\d+$/);
  // Real MkDocs in a sandbox, on a busy machine.
  await p.locator('h1 .badge-passed').waitFor({ timeout: 150_000 });
  expect(await p.locator('.log summary').allInnerTexts()).not.toEqual([]);
  await look(p, name);
}

describe(`the README's first hour on ${kind}, at 390 px and 1280 px`, () => {
  it('logs a one-time setup address on localhost; opened, it makes the administrator, who is signed in', { timeout: 60_000 }, async () => {
    const setupUrl = await until('the setup address in the log', () => /"setupUrl":"([^"]+)"/.exec(server.stdout())?.[1], 20_000);
    const line = server
      .stdout()
      .split('\n')
      .find((l) => l.includes('setupUrl'))!;
    expect(JSON.parse(line).level, line).toBe(40); // pino's warn
    expect(setupUrl).toMatch(new RegExp(`^${lectern}/setup\\?code=[\\w-]+$`));
    // The line that says it listens names the address to open and where docs will be, not 0.0.0.0.
    const listening = JSON.parse(
      server
        .stdout()
        .split('\n')
        .find((l) => l.includes('Lectern listening'))!,
    );
    expect([listening.url, listening.docs]).toEqual([`${lectern}/`, `${lectern.replace('//localhost', '//<project>.localhost')}/`]);

    await desk.goto(setupUrl);
    await desk.getByRole('heading', { name: 'Set up Lectern' }).waitFor();
    expect(await desk.getByLabel('Setup code').inputValue()).toBe(new URL(setupUrl).searchParams.get('code'));
    await look(desk, 'setup');
    await desk.getByLabel('Username').fill('ada');
    await desk.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await desk.getByLabel('Password, again').fill(PASSWORD);
    await desk.getByRole('button', { name: 'Create the administrator' }).click();
    await desk.waitForURL(`${lectern}/`);
    await desk.getByRole('link', { name: 'Import a project' }).waitFor();
    await look(desk, 'projects-empty');
  });

  it('signs in on the phone at http://localhost:<port>/', { timeout: 60_000 }, async () => {
    await phone.goto(`${lectern}/`);
    await phone.getByRole('heading', { name: 'Sign in' }).waitFor();
    await look(phone, 'sign-in');
    await phone.getByLabel('Username').fill('ada');
    await phone.getByLabel('Password').fill(PASSWORD);
    await phone.getByRole('button', { name: 'Sign in' }).click();
    await phone.waitForURL(`${lectern}/`);
    await phone.getByRole('link', { name: 'Import a project' }).waitFor();
    await look(phone, 'projects-empty');
  });

  it('imports the repository by its path on the phone and follows its first build to the end', { timeout: 240_000 }, async () => {
    await phone.getByRole('link', { name: 'Import a project' }).click();
    await phone.getByRole('heading', { name: 'Import a project' }).waitFor();
    await phone.getByLabel('Name').fill('Hello');
    const url = phone.getByLabel('Repository URL');
    // The field's hint says a path is an answer too (it named network addresses alone).
    const hint = await url.evaluate((e) => document.getElementById(e.getAttribute('aria-describedby')!.split(' ')[0]!)?.textContent);
    expect(hint).toContain('path on this machine');
    await url.fill(repo);
    await look(phone, 'import');
    await phone.getByRole('button', { name: 'Import' }).click();
    await phone.waitForURL(`${lectern}/projects/hello/builds`);
    // "The build starts at once": it is listed; a person opens it.
    const first = phone.locator('table.list tbody a', { hasText: /^#\d+$/ });
    await first.first().waitFor();
    expect(await first.count()).toBe(1);
    await look(phone, 'builds');
    await first.first().click();
    await buildPassed(phone, 'build-passed');
    await desk.goto(phone.url());
    await desk.locator('h1 .badge-passed').waitFor();
    await look(desk, 'build-passed');
  });

  it('opens the docs through the dashboard, on http://hello.localhost:<port>/en/latest/, at both widths', { timeout: 60_000 }, async () => {
    await openDocs(desk, 'docs');
    await openDocs(phone, 'docs');
  });

  it('toggles latest off and on in the versions table; its docs are served again once the build it queues has run', { timeout: 240_000 }, async () => {
    await desk.goto(`${lectern}/projects/hello/versions`);
    const active = desk.getByLabel('latest active');
    await active.waitFor();
    expect(await active.isChecked()).toBe(true);
    await look(desk, 'versions');
    const lastBuild = desk.locator('tbody tr', { has: active }).locator('td[data-label="Last build"] a');
    const before = await lastBuild.textContent();

    await active.click();
    await expect.poll(() => active.isDisabled()).toBe(false);
    expect(await active.isChecked()).toBe(false);
    expect(await desk.getByRole('alert').count()).toBe(0);
    await look(desk, 'versions-latest-off');

    await active.click();
    await expect.poll(() => active.isDisabled()).toBe(false);
    expect(await active.isChecked()).toBe(true);
    expect(await desk.getByRole('alert').count()).toBe(0);
    // Turned on, the version is built again: its row links the new build, which a person follows.
    await expect.poll(() => lastBuild.textContent()).not.toBe(before);
    await look(desk, 'versions-latest-on');
    await lastBuild.click();
    await buildPassed(desk, 'rebuild-passed');

    await openDocs(phone, 'docs-after-toggle');
    await openDocs(desk, 'docs-after-toggle');
  });

  it("met no failed request and no console error on any page, and asked no host but Lectern's (save the docs theme's CDN)", () => {
    expect(failures).toEqual([]);
    expect([...offsite].sort()).toEqual([...THEME_CDN].sort());
  });
});
