// A new user's first hour with the dashboard, in a real Chromium at a phone's width (390 px) and a
// desktop's (1280 px), on this run's database: set up, sign in, import, the versions table and its
// toggles, a build's log, settings, redirects and notifications. What a person checks: messages in
// words that say which field and why (never "Refused." or an API path), cleared on the next try;
// no page wider than the screen; every control labelled where it is seen; buttons disabled while
// their request runs, with a progress indicator; relative times with the exact time on hover; a
// build log in colour with each command's duration, exit status and the raw log a link away.
// Every page is scanned with axe-core and photographed under test-results/screenshots/<db>/.
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '../../src/builds/worker.ts';
import { DASHBOARD_DIR } from '../../src/dashboard.ts';
import { createUser, firstRunSetupCode } from '../../src/domain/users.ts';
import { servedTestApp, type TestApp } from '../helpers/app.ts';
import { seriousViolations } from '../helpers/axe.ts';
import { startTestWorker, waitForBuild } from '../helpers/builds.ts';
import { dbKind } from '../helpers/db.ts';
import { type GitServer, git, startGitServer } from '../helpers/git.ts';
import { launchChromium } from '../helpers/publish.ts';
import { until } from '../helpers/wait.ts';

const SHOTS = path.resolve(import.meta.dirname, '../../test-results/screenshots', dbKind());
const PASSWORD = 'correct horse battery';

let t: TestApp;
let stop: () => Promise<void>;
let gitServer: GitServer;
let worker: Worker;
let browser: Browser;
let origin: string;
let repoUrl: string;
/** The same person on a phone and at a desk. */
let phone: Page;
let desk: Page;
/** Every answer of 400 or more any page got (a missing favicon was a 404 on every page). */
const failures: string[] = [];

/** A build that prints in colour (bold green, red), quotes as people do, and publishes a page. */
const CONFIG = [
  'version: 2',
  'build:',
  '  commands:',
  `    - printf '\\033[1;32mgreen bold\\033[0m plain \\033[31mred\\033[0m\\n'`,
  `    - echo "it's quoted"`,
  '    - mkdir -p $READTHEDOCS_OUTPUT/html',
  '    - echo "<h1>Journey docs</h1>" > $READTHEDOCS_OUTPUT/html/index.html',
  '',
].join('\n');
/** A branch whose build asks not to be built (exit code 183, as on Read the Docs). */
const QUIET = ['version: 2', 'build:', '  commands:', '    - exit 183', ''].join('\n');

beforeAll(async () => {
  if (!existsSync(path.join(DASHBOARD_DIR, 'index.html'))) throw new Error('the dashboard is not built: run `npm run web:build` (npm test runs it first)');
  ({ t, origin, stop } = await servedTestApp());
  gitServer = await startGitServer();
  const repo = gitServer.repo('journey', { '.readthedocs.yaml': CONFIG });
  for (const tag of ['1.0', '1.9', '1.10', '2.0rc1', '2.0']) git(repo.work, 'tag', tag);
  git(repo.work, 'checkout', '--quiet', '-b', 'quiet');
  repo.commit({ '.readthedocs.yaml': QUIET }, 'nothing to build');
  git(repo.work, 'push', '--quiet', 'origin', 'quiet', '--tags');
  git(repo.work, 'checkout', '--quiet', 'main');
  repoUrl = repo.url;
  worker = await startTestWorker(t);
  browser = await launchChromium();
  const context = (width: number, height: number) => browser.newContext({ viewport: { width, height } });
  // Two sessions of one user: each page signs in on its own.
  phone = await (await context(390, 844)).newPage();
  desk = await (await context(1280, 900)).newPage();
  for (const p of [phone, desk]) {
    p.on('response', (r) => {
      if (r.status() >= 400 && r.url().startsWith(origin)) failures.push(`${r.status()} ${r.url()}`);
    });
  }
  mkdirSync(SHOTS, { recursive: true });
}, 240_000);
afterAll(async () => {
  await browser?.close();
  await worker?.stop(1000);
  await gitServer?.close();
  await stop?.();
});

const width = (p: Page) => p.viewportSize()!.width;

/** What a person sees first: the page is no wider than the window, at this width. */
async function noOverflow(p: Page, name: string) {
  const { scroll, inner } = await p.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
  expect(scroll, `${name} at ${width(p)} px is ${scroll} px wide`).toBeLessThanOrEqual(inner);
}

/** No overflow, no serious or critical axe-core violation, every label naming a visible control; and its picture. */
async function look(p: Page, name: string) {
  await noOverflow(p, name);
  expect(await seriousViolations(p), name).toEqual([]);
  // Ids are unique, and a label seen on the page points at a control seen with it (not one in a closed form).
  const labels = await p.evaluate(() => {
    const ids = [...document.querySelectorAll('[id]')].map((e) => e.id);
    const dupes = ids.filter((id, i) => ids.indexOf(id) !== i);
    const seen = (e: Element) => (e as HTMLElement).getClientRects().length > 0;
    const astray = [...document.querySelectorAll('label[for]')]
      .filter((l) => seen(l))
      .filter((l) => {
        const target = document.getElementById(l.getAttribute('for')!);
        return !target || !seen(target);
      })
      .map((l) => l.textContent);
    return { dupes, astray };
  });
  expect(labels, name).toEqual({ dupes: [], astray: [] });
  await p.screenshot({ path: path.join(SHOTS, `journey-${width(p)}-${name}.png`), fullPage: true });
}

/** Holds Lectern's answers to the next `count` GraphQL operations named `operation` until `release()`; the requests go through at once. */
async function holdAnswers(p: Page, operation: string, count = 1) {
  let held = 0;
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const answered: Promise<void>[] = [];
  const handler = async (route: Route) => {
    const op = JSON.parse(route.request().postData() ?? '{}').operationName;
    if (op !== operation || held >= count) return route.continue();
    held++;
    const done = (async () => {
      const answer = await route.fetch();
      await released;
      await route.fulfill({ response: answer });
    })();
    answered.push(done);
    await done;
  };
  await p.route(`${origin}/graphql`, handler);
  return {
    release: async () => {
      release();
      await Promise.all(answered);
      await p.unroute(`${origin}/graphql`, handler);
    },
  };
}

const versionRow = (slug: string) =>
  t.db.prisma.version.findFirstOrThrow({ where: { slug, project: { slug: 'journey' } }, select: { active: true, hidden: true, built: true } });

// A loaded machine (two cores shared) takes minutes for what takes seconds alone.
describe("a new user's first hour, at 390 px and 1280 px", { timeout: 240_000 }, () => {
  it('says what is wrong with a setup code, and a used setup URL links to sign-in instead of the form', async () => {
    const code = (await firstRunSetupCode(t.db.prisma))!;
    await desk.goto(`${origin}/setup?code=not-the-code`);
    await desk.getByLabel('Username').fill('ada');
    await desk.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await desk.getByLabel('Password, again').fill(PASSWORD);
    await desk.getByRole('button', { name: 'Create the administrator' }).click();
    const alert = desk.getByRole('alert');
    await expect.poll(() => alert.textContent()).toContain('This setup code is not valid');
    expect(await alert.textContent()).not.toContain('Refused');
    await look(desk, 'setup-wrong-code');
    await desk.getByLabel('Setup code').fill(code);
    await desk.getByRole('button', { name: 'Create the administrator' }).click();
    await desk.waitForURL(`${origin}/`);

    await phone.goto(`${origin}/setup?code=${code}`);
    await phone.getByRole('heading', { name: 'Lectern is set up' }).waitFor();
    expect(await phone.getByText('This setup address has been used').count()).toBe(1);
    expect(await phone.getByLabel('Setup code').count()).toBe(0);
    await look(phone, 'setup-used');
    await phone.getByRole('link', { name: 'Sign in' }).click();
    await phone.waitForURL(`${origin}/sign-in`);
  });

  it('answers a wrong password with a sentence, gone on the next try', async () => {
    await phone.getByLabel('Username').fill('ada');
    await phone.getByLabel('Password').fill('not my password');
    await phone.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => phone.getByRole('alert').textContent()).toBe('Unable to sign in with the username and password given.');
    await look(phone, 'sign-in-wrong-password');
    await phone.getByLabel('Password').fill(PASSWORD);
    const answered = phone.waitForResponse((r) => r.url().endsWith('/graphql'));
    await phone.getByRole('button', { name: 'Sign in' }).click();
    // The old message goes when the new try starts.
    expect(await phone.getByRole('alert').count()).toBe(0);
    await answered;
    await phone.waitForURL(`${origin}/`);
    await look(phone, 'projects-empty');
  });

  it('names the import form field at fault in words, then imports and builds', async () => {
    await phone.getByRole('link', { name: 'Import a project' }).click();
    await phone.getByLabel('Name').fill('Journey');
    await phone.getByLabel('Repository URL').fill('ftp://example.com/journey.git');
    await phone.getByRole('button', { name: 'Import' }).click();
    const alert = phone.getByRole('alert');
    await alert.waitFor();
    const text = (await alert.textContent())!;
    expect(text).toContain('Repository URL');
    expect(text).not.toMatch(/repository\.url|Refused/);
    // The field says it too, beside it, and is marked invalid.
    expect(await phone.getByLabel('Repository URL').getAttribute('aria-invalid')).toBe('true');
    // The language is a list of languages, as in settings.
    expect(await phone.getByLabel('Language').evaluate((e) => e.tagName)).toBe('SELECT');
    expect(await phone.getByLabel('Language').locator('option', { hasText: 'English (en)' }).count()).toBe(1);
    await look(phone, 'import-refused');
    await phone.getByLabel('Repository URL').fill(repoUrl);
    await phone.getByRole('button', { name: 'Import' }).click();
    await phone.waitForURL(`${origin}/projects/journey/builds`);
    const first = await until('the first build', () => t.db.prisma.build.findFirst({ where: { project: { slug: 'journey' } } }));
    await waitForBuild(t, first.id);
  }, 180_000);

  it('lists versions as Read the Docs does, each cell labelled on a phone', async () => {
    await until('versions read from the repository', async () => (await t.db.prisma.version.count({ where: { project: { slug: 'journey' } } })) >= 9);
    for (const p of [phone, desk]) {
      await p.goto(`${origin}/projects/journey/versions`);
      await p.getByLabel('latest active').waitFor();
      const order = await p.locator('table.list tbody th[scope="row"]').evaluateAll((cells) => cells.map((c) => c.firstChild?.textContent));
      expect(order).toEqual(['latest', 'stable', '2.0', '2.0rc1', '1.10', '1.9', '1.0', 'main', 'quiet']);
      // Relative times, the exact one on hover.
      const time = p.locator('table.list time').first();
      expect(await time.textContent()).toMatch(/ago|just now/);
      expect(await time.getAttribute('title')).toMatch(/\d{4}/);
      expect(await time.getAttribute('datetime')).toMatch(/^\d{4}-\d\d-\d\dT/);
      await look(p, 'versions');
    }
    // On the phone each checkbox carries its own visible words: Active and Hidden are told apart.
    const row = phone.locator('table.list tbody tr').filter({ has: phone.getByLabel('1.0 active') });
    expect(await row.locator('label.toggle').allInnerTexts()).toEqual([
      'Active (built and served)',
      'Hidden (served, not in version menus)',
      'Privacy\nPublic\nPrivate',
    ]);
    expect(await row.locator('td[data-label="Type"]').evaluate((e) => getComputedStyle(e, '::before').content)).toBe('"Type: "');
    // At a desk the columns say it once, in their headers.
    expect(await desk.locator('table.list thead th').allInnerTexts()).toEqual([
      'Version',
      'Type',
      'Built',
      'Active',
      'Hidden',
      'Privacy',
      'Last build',
      'Actions',
    ]);
    expect(await desk.getByText('Active (built and served)').first().isVisible()).toBe(false);
  });

  it('keeps two quick toggles as clicked, each pending until its answer, even when the first answer comes last', async () => {
    await desk.goto(`${origin}/projects/journey/versions`);
    await desk.getByLabel('1.0 active').waitFor();
    // The first of each pair of changes is answered late: the second's answer comes first.
    const held = await holdAnswers(desk, 'SetVersionActive', 2);
    await desk.getByLabel('1.0 active').click();
    await desk.getByLabel('2.0 active').click();
    // Shown as asked before any answer (both are held), disabled (a third click sends nothing) and
    // said to be saving. Polled: a busy machine may render the click a moment after it returns.
    for (const v of ['1.0', '2.0']) {
      await expect.poll(() => desk.getByLabel(`${v} active`).isChecked()).toBe(true);
      await expect.poll(() => desk.getByLabel(`${v} active`).isDisabled()).toBe(true);
    }
    await desk.getByRole('status').filter({ hasText: 'Saving…' }).first().waitFor();
    await desk.getByLabel('1.9 hidden').click();
    await expect.poll(async () => (await versionRow('1.9')).hidden).toBe(true);
    expect(await desk.getByLabel('1.9 hidden').isChecked()).toBe(true);
    await expect.poll(async () => [(await versionRow('1.0')).active, (await versionRow('2.0')).active]).toEqual([true, true]);
    await held.release();
    await expect.poll(() => desk.getByLabel('1.0 active').isDisabled()).toBe(false);
    await expect.poll(() => desk.getByLabel('2.0 active').isDisabled()).toBe(false);
    expect([await desk.getByLabel('1.0 active').isChecked(), await desk.getByLabel('2.0 active').isChecked()]).toEqual([true, true]);

    // One row, two fields: active's late answer must not put hidden back (it did: each answer carried the whole row).
    const late = await holdAnswers(desk, 'SetVersionActive');
    await desk.getByLabel('1.9 active').click();
    await desk.getByLabel('1.9 hidden').click();
    await expect.poll(async () => (await versionRow('1.9')).hidden).toBe(false);
    await expect.poll(async () => (await versionRow('1.9')).active).toBe(true);
    await late.release();
    await expect.poll(() => desk.getByLabel('1.9 active').isDisabled()).toBe(false);
    expect([await desk.getByLabel('1.9 active').isChecked(), await desk.getByLabel('1.9 hidden').isChecked()]).toEqual([true, false]);
    await desk.reload();
    await desk.getByLabel('1.9 active').waitFor();
    expect([await desk.getByLabel('1.9 active').isChecked(), await desk.getByLabel('1.9 hidden').isChecked()]).toEqual([true, false]);
    expect([await desk.getByLabel('1.0 active').isChecked(), await desk.getByLabel('2.0 active').isChecked()]).toEqual([true, true]);
  });

  it('starts one build for a double click, and shows its log in colour with durations, exit statuses and the raw log', async () => {
    const before = await t.db.prisma.build.count();
    await phone.goto(`${origin}/projects/journey/versions`);
    await phone.getByRole('button', { name: 'Build latest' }).dblclick();
    await phone.waitForURL(/\/projects\/journey\/builds\/\d+$/);
    const id = Number(phone.url().split('/').pop());
    // The versions toggled on above are built first (one worker): this waits its turn.
    await phone.locator('h1 .badge-passed').waitFor({ timeout: 240_000 });
    // Two clicks, one build.
    expect(await t.db.prisma.build.count({ where: { id: { gt: before }, versionSlug: 'latest' } })).toBe(1);
    // A finished command's output is folded away: a person opens it.
    await phone.locator('.log summary', { hasText: 'printf' }).click();
    const green = phone.locator('pre.output span.ansi-green.ansi-bold');
    await green.first().waitFor();
    expect(await green.first().textContent()).toBe('green bold');
    expect(await phone.locator('pre.output span.ansi-red').first().textContent()).toBe('red');
    expect(await green.first().locator('xpath=..').textContent()).toMatch(/^green bold plain red\s*$/);
    // Commands as they were written, each with its status and time; none left "running".
    const summaries = await phone.locator('.log summary').allInnerTexts();
    expect(summaries.some((s) => s.startsWith(`echo "it's quoted"`))).toBe(true);
    expect(summaries.join('\n')).not.toContain(`'"'"'`);
    for (const s of summaries) expect(s).toMatch(/exit \d+ \d+ (s|min)/);
    expect(await phone.locator('.log .badge-running').count()).toBe(0);
    expect(await phone.locator('.facts time').getAttribute('title')).toMatch(/\d{4}/);
    const raw = phone.getByRole('link', { name: `Build #${id} as text` });
    expect(await raw.getAttribute('href')).toBe(`/api/v2/build/${id}.txt`);
    const log = await t.http.get(`/api/v2/build/${id}.txt`);
    expect([log.status, log.text.includes("it's quoted")]).toEqual([200, true]);
    // The raw log names each command as written too.
    expect(log.text).toContain(`echo "it's quoted"`);
    expect(log.text).not.toContain(`'"'"'`);
    await look(phone, 'build-passed');
    await desk.goto(phone.url());
    await desk.locator('h1 .badge-passed').waitFor();
    await look(desk, 'build-passed');
  }, 300_000);

  it('shows a build with nothing to build as skipped, not passed', async () => {
    await desk.goto(`${origin}/projects/journey/versions`);
    await desk.getByLabel('quiet active').click();
    await expect.poll(async () => (await versionRow('quiet')).active).toBe(true);
    const build = await until('the build of quiet', () => t.db.prisma.build.findFirst({ where: { versionSlug: 'quiet' } }));
    await waitForBuild(t, build.id, 180_000);
    for (const p of [desk, phone]) {
      await p.goto(`${origin}/projects/journey/builds/${build.id}`);
      await p.locator('h1 .badge-skipped').waitFor();
      expect(await p.locator('h1').textContent()).not.toContain('passed');
      expect(
        await p
          .getByRole('status')
          .filter({ hasText: /^Skipped/ })
          .count(),
      ).toBe(1);
      expect(await p.locator('.facts').textContent()).toContain('nothing was built');
      await look(p, 'build-skipped');
    }
    await desk.goto(`${origin}/projects/journey/builds`);
    await desk.locator('table.list .badge-skipped').first().waitFor();
    await look(desk, 'builds');
  }, 240_000);

  it("settings show the repository's default branch, a language list and what each choice means; saving is disabled while it runs", async () => {
    for (const p of [phone, desk]) {
      await p.goto(`${origin}/projects/journey/settings`);
      const branch = p.getByLabel('Default branch');
      await branch.waitFor();
      expect(await branch.getAttribute('placeholder')).toBe('main');
      expect(await p.locator('main').textContent()).toContain("the repository's own default branch, main");
      expect(await p.locator('main').textContent()).not.toContain('master');
      expect(await p.getByLabel('Language', { exact: true }).evaluate((e) => e.tagName)).toBe('SELECT');
      await expect.poll(() => p.getByLabel('Language', { exact: true }).locator('option').count()).toBeGreaterThan(50);
      const scheme = p.getByLabel('Versions and translations');
      expect(await scheme.locator('option:checked').textContent()).toBe('Several versions, with translations');
      expect(await p.locator('main').textContent()).not.toContain('multiple_versions_with_translations');
      await look(p, 'settings');
    }
    await desk.getByLabel('Versions and translations').selectOption('single_version_without_translations');
    expect(await desk.locator('main').textContent()).toContain('The default version is served at the top of the project');
    await desk.getByLabel('Versions and translations').selectOption('multiple_versions_with_translations');
    await desk.getByLabel('Default version').selectOption('stable');
    const held = await holdAnswers(desk, 'UpdateProject');
    await desk.getByRole('button', { name: 'Save settings' }).click();
    expect(await desk.getByRole('button', { name: 'Save settings' }).isDisabled()).toBe(true);
    await desk.getByRole('status').filter({ hasText: 'Working…' }).waitFor();
    await held.release();
    await desk.getByText('Saved.').waitFor();
    expect(await desk.getByRole('button', { name: 'Save settings' }).isDisabled()).toBe(false);
    expect((await t.db.prisma.project.findUniqueOrThrow({ where: { slug: 'journey' } })).defaultVersion).toBe('stable');
    // The Builds tab offers the project's default version first.
    await desk.getByRole('link', { name: 'Builds' }).click();
    expect(await desk.getByLabel('Version', { exact: true }).inputValue()).toBe('stable');
  });

  it('gives each redirect form its own ids, and says why the last maintainer stays; the old message goes on the next try', async () => {
    await desk.goto(`${origin}/projects/journey/redirects`);
    await desk.getByLabel('From').fill('/old.html');
    await desk.getByLabel('To').fill('/index.html');
    await desk.getByRole('button', { name: 'Add redirect' }).click();
    await desk.getByText('/old.html → /index.html').waitFor();
    await desk.getByText('Edit').click();
    await look(desk, 'redirects');
    await phone.goto(`${origin}/projects/journey/redirects`);
    await phone.getByText('/old.html → /index.html').waitFor();
    await look(phone, 'redirects');
    await phone.goto(`${origin}/projects/journey/automation`);
    await phone.getByText('No automation rules.').waitFor();
    await look(phone, 'automation');

    await desk.goto(`${origin}/projects/journey/maintainers`);
    await desk.getByRole('button', { name: 'Remove ada' }).click();
    await expect.poll(() => desk.getByRole('alert').textContent()).toBe('A project keeps at least one maintainer: add another before removing this one.');
    await desk.getByLabel('Username').fill('nobody');
    await desk.getByRole('button', { name: 'Add maintainer' }).click();
    // One message, the new one: the field by its label, and why.
    await expect
      .poll(() => desk.getByRole('alert').allTextContents())
      .toEqual(['Username needs a change: see why below, then try again.Username: No user named "nobody".']);
    expect(await desk.getByLabel('Username').getAttribute('aria-invalid')).toBe('true');
    await look(desk, 'maintainers');
  });

  it("moves a redirect and changes a user with the control pending until Lectern answers, the others' too", async () => {
    await desk.goto(`${origin}/projects/journey/redirects`);
    await desk.locator('summary', { hasText: 'Add a redirect' }).click();
    const add = desk.locator('form', { has: desk.getByRole('button', { name: 'Add redirect' }) });
    await add.getByLabel('From').fill('/second.html');
    await add.getByLabel('To').fill('/index.html');
    await add.getByRole('button', { name: 'Add redirect' }).click();
    await desk.getByText('/second.html → /index.html').waitFor();
    const order = () => desk.locator('.cards li .card-head').allInnerTexts();
    const [first, second] = (await order()).map((h) => (h.includes('/second.html') ? '/second.html' : '/old.html'));
    const moving = await holdAnswers(desk, 'UpdateRedirect');
    await desk.getByRole('button', { name: `Move redirect ${second} up` }).click();
    // While it moves, no other move is sent (each is computed from the order Lectern holds).
    await desk.getByRole('status').filter({ hasText: 'Moving…' }).waitFor();
    for (const name of [`Move redirect ${second} up`, `Move redirect ${first} down`]) expect(await desk.getByRole('button', { name }).isDisabled()).toBe(true);
    await moving.release();
    await expect.poll(async () => (await order()).map((h) => h.includes(second!))).toEqual([true, false]);
    expect(await desk.getByRole('button', { name: `Move redirect ${second} down` }).isDisabled()).toBe(false);

    await createUser(t.db.prisma, 'grace', { password: PASSWORD });
    await desk.goto(`${origin}/admin`);
    const admin = desk.getByLabel('grace is an administrator');
    await admin.waitFor();
    const changing = await holdAnswers(desk, 'ChangeUser');
    await admin.click();
    // Shown as asked at once, disabled until the answer, and said to be saving.
    expect([await admin.isChecked(), await admin.isDisabled()]).toEqual([true, true]);
    await desk.getByRole('status').filter({ hasText: 'Saving…' }).waitFor();
    await changing.release();
    await expect.poll(() => admin.isDisabled()).toBe(false);
    expect(await admin.isChecked()).toBe(true);
    expect((await t.db.prisma.user.findUniqueOrThrow({ where: { username: 'grace' } })).isAdmin).toBe(true);
    await look(desk, 'admin-users');
  });

  it('fits the Notifications tab and its deliveries on a phone', async () => {
    await phone.goto(`${origin}/projects/journey/notifications`);
    await phone.getByLabel('URL').fill('https://hooks.example.com/lectern/a-rather-long-path/for-the-build-notifications-of-journey');
    await phone.getByRole('button', { name: 'Add webhook' }).click();
    await phone.getByTestId('secret').waitFor();
    await look(phone, 'notifications');
    await desk.goto(`${origin}/projects/journey/notifications`);
    await desk.getByRole('heading', { name: /hooks\.example\.com/ }).waitFor();
    await look(desk, 'notifications');
  });

  it('fits every other page at both widths, with a favicon and no failed request', async () => {
    for (const p of [phone, desk]) {
      for (const route of ['/', '/account', '/admin', '/projects/journey/variables', '/projects/journey/integrations', '/projects/journey/related']) {
        await p.goto(`${origin}${route}`);
        await p.locator('h1').first().waitFor();
        await p.locator('.loading').waitFor({ state: 'detached' });
        await look(p, route === '/' ? 'projects' : route.split('/').pop()!);
      }
      const icon = await p.locator('link[rel="icon"]').getAttribute('href');
      const answer = await p.request.get(`${origin}${icon}`);
      expect([answer.status(), answer.headers()['content-type']]).toEqual([200, 'image/svg+xml']);
      // And where browsers look for one on pages that name none (GraphiQL, error pages).
      const ico = await p.request.get(`${origin}/favicon.ico`);
      expect([ico.status(), ico.headers()['content-type']]).toEqual([200, 'image/svg+xml']);
    }
    // Only the refusals this journey asked for: none of the pages' own requests failed.
    expect(failures).toEqual([]);
  });
});
