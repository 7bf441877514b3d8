// The dashboard's journeys in a real Chromium, on this run's database (embedded or PostgreSQL): from
// the first-run setup URL, create the admin; import a repository served over git and watch its
// build log arrive live; open the built docs; make the version private and read it signed in but
// not signed out; add a redirect and see the docs server follow it; add an automation rule and see
// a tag pushed later activated by it; create a token, use it on
// the REST API, revoke it and see it refused; add a user as admin. Every page is scanned with
// axe-core (no serious or critical violation) and photographed under test-results/screenshots/.
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '../../src/builds/worker.ts';
import { DASHBOARD_DIR } from '../../src/dashboard.ts';
import { firstRunSetupCode } from '../../src/domain/users.ts';
import { syncProjectVersions } from '../../src/domain/version-sync.ts';
import { servedTestApp, type TestApp } from '../helpers/app.ts';
import { seriousViolations } from '../helpers/axe.ts';
import { startTestWorker } from '../helpers/builds.ts';
import { dbKind } from '../helpers/db.ts';
import { type GitServer, git as runGit, startGitServer } from '../helpers/git.ts';
import { operationsOf as sentOperations } from '../helpers/graphql-requests.ts';
import { launchChromium, makeProject } from '../helpers/publish.ts';

const SHOTS = path.resolve(import.meta.dirname, '../../test-results/screenshots', dbKind());

let t: TestApp;
let stop: () => Promise<void>;
let git: GitServer;
let worker: Worker;
let browser: Browser;
let page: Page;
let origin: string;
let repoUrl: string;
let repoWork: string;

/** A project whose build prints, waits, then writes one page: slow enough to watch live. */
const REPO = {
  '.readthedocs.yaml': [
    'version: 2',
    'build:',
    '  commands:',
    '    - echo "first step of the build"',
    '    - sleep 5',
    '    - mkdir -p $READTHEDOCS_OUTPUT/html',
    '    - echo "<html><body><h1>Dashboard docs</h1></body></html>" > $READTHEDOCS_OUTPUT/html/index.html',
    '',
  ].join('\n'),
};

beforeAll(async () => {
  if (!existsSync(path.join(DASHBOARD_DIR, 'index.html'))) throw new Error('the dashboard is not built: run `npm run web:build` (npm test runs it first)');
  ({ t, origin, stop } = await servedTestApp());
  git = await startGitServer();
  const repo = git.repo('handbook', REPO);
  repoUrl = repo.url;
  repoWork = repo.work;
  worker = await startTestWorker(t);
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  mkdirSync(SHOTS, { recursive: true });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await worker?.stop(1000);
  await git?.close();
  await stop?.();
});

/** No serious or critical axe-core violation on the page as it is now; and its picture. */
async function check(name: string, p: Page = page) {
  expect(await seriousViolations(p), name).toEqual([]);
  await p.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

const rest = (key: string) => t.http.get('/api/v3/projects/').set('authorization', `Token ${key}`);

describe('the dashboard, from the first run', () => {
  it('sends a visitor of an empty installation to the setup URL in the log', async () => {
    await page.goto(`${origin}/`);
    await expect.poll(() => page.locator('h1').textContent()).toBe('Welcome to Lectern');
    expect(await page.textContent('main')).toContain('setupUrl');
  });

  it('creates the first admin from the setup URL, signed in at once', async () => {
    const code = await firstRunSetupCode(t.db.prisma);
    await page.goto(`${origin}/setup?code=${code}`);
    await check('01-setup');
    await page.getByLabel('Username').fill('ada');
    await page.getByLabel('Password', { exact: true }).fill('correct horse battery');
    await page.getByLabel('Password, again').fill('correct horse battery');
    await page.getByRole('button', { name: 'Create the administrator' }).click();
    await page.waitForURL(`${origin}/`);
    await expect.poll(() => page.locator('h1').textContent()).toBe('Projects');
    await page.getByRole('button', { name: /Sign out \(ada\)/ }).waitFor();
    await check('02-projects-empty');
  });

  it('imports a repository and shows its build log arriving live', async () => {
    await page.getByRole('link', { name: 'Import a project' }).click();
    await check('03-import');
    await page.getByLabel('Name').fill('Handbook');
    await page.getByLabel('Repository URL').fill(repoUrl);
    await page.getByRole('button', { name: 'Import' }).click();
    await page.waitForURL(`${origin}/projects/handbook/builds`);
    await page
      .getByRole('link', { name: /^#\d+$/ })
      .first()
      .click();
    await page.waitForURL(/\/projects\/handbook\/builds\/\d+$/);
    const id = Number(page.url().split('/').pop());
    // The first command's output shows while the build is still running (a 5 s sleep follows it).
    await page
      .locator('pre.output')
      .filter({ hasText: /^first step of the build\s*$/ })
      .waitFor({ timeout: 60_000 });
    const meanwhile = await t.db.prisma.build.findUniqueOrThrow({ where: { id } });
    expect(meanwhile.state).not.toBe('finished');
    await check('04-build-running');
    // And its end arrives without a reload.
    await page.locator('h1 .badge-passed').waitFor({ timeout: 60_000 });
    expect(await page.locator('h1').textContent()).toContain('passed');
    await check('05-build-passed');
  }, 120_000);

  it('lists the versions with their last build in one GraphQL request, and opens the built docs', async () => {
    const operations: string[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/graphql')) operations.push(JSON.parse(r.postData() ?? '{}').operationName ?? '?');
    });
    await page.goto(`${origin}/projects/handbook`);
    await page
      .getByRole('cell', { name: /latest/ })
      .first()
      .waitFor();
    expect(await page.getByText('passed').count()).toBeGreaterThan(0);
    // One operation for the page, the signed-in user's name and rights included.
    expect(operations).toEqual(['ProjectPage']);
    await page.getByRole('button', { name: /Sign out \(ada\)/ }).waitFor();
    await check('06-project-versions');
    await page.getByRole('link', { name: 'View docs' }).click();
    await page.waitForURL(`${origin}/docs/handbook/en/latest/`);
    expect(await page.locator('h1').textContent()).toBe('Dashboard docs');
  });

  it('makes a version private: read signed in, not signed out', async () => {
    expect((await t.http.get('/docs/handbook/en/latest/')).status).toBe(200);
    await page.goto(`${origin}/projects/handbook/versions`);
    await page.getByLabel('latest privacy').selectOption('private');
    await expect
      .poll(async () => (await t.db.prisma.version.findFirstOrThrow({ where: { slug: 'latest', project: { slug: 'handbook' } } })).privacyLevel)
      .toBe('private');
    expect((await t.http.get('/docs/handbook/en/latest/')).status).toBe(404);
    const signedIn = await page.goto(`${origin}/docs/handbook/en/latest/`);
    expect(signedIn?.status()).toBe(200);
    expect(page.url()).toMatch(/\/docs\/handbook\/_\/r\/[\w.-]+\/en\/latest\/$/);
    expect(await page.locator('h1').textContent()).toBe('Dashboard docs');
    await page.goto(`${origin}/projects/handbook/versions`);
    await page.getByLabel('latest privacy').selectOption('public');
    await expect.poll(async () => (await t.http.get('/docs/handbook/en/latest/')).status).toBe(200);
  });

  it('adds a redirect that the docs server follows', async () => {
    await page.goto(`${origin}/projects/handbook/redirects`);
    await page.getByLabel('From').fill('/old.html');
    await page.getByLabel('To').fill('/index.html');
    await page.getByRole('button', { name: 'Add redirect' }).click();
    await page.getByText('/old.html → /index.html').waitFor();
    await check('07-redirects');
    const moved = await t.http.get('/docs/handbook/en/latest/old.html');
    expect([moved.status, moved.headers.location]).toEqual([302, '/docs/handbook/en/latest/index.html']);
  });

  it('adds an automation rule that activates the next tag pushed, and shows what it did', async () => {
    await page.goto(`${origin}/projects/handbook/automation`);
    await page.getByText('No automation rules.').waitFor();
    await page.getByLabel('Versions', { exact: true }).selectOption('tag');
    await page.getByLabel('Match', { exact: true }).selectOption('custom-match');
    await page.getByLabel('Regular expression (custom match)').fill('^v1\\.');
    await page.getByLabel('Action', { exact: true }).selectOption('activate-version');
    await page.getByRole('button', { name: 'Add rule' }).click();
    await page.getByText('Custom match ^v1\\. → Activate version').waitFor();
    // A bad expression is refused, naming the field and why.
    await page.getByText('Add a rule').click();
    await page.getByLabel('Match', { exact: true }).selectOption('custom-match');
    await page.getByLabel('Regular expression (custom match)').fill('(?<=v)1');
    await page.getByRole('button', { name: 'Add rule' }).click();
    await page
      .getByText(/Enter a valid regular expression/)
      .first()
      .waitFor();

    runGit(repoWork, 'tag', 'v1.0');
    runGit(repoWork, 'push', '--quiet', 'origin', '--tags');
    const project = await t.db.prisma.project.findUniqueOrThrow({ where: { slug: 'handbook' } });
    await syncProjectVersions(t.services, project.id, repoUrl);
    expect((await t.db.prisma.version.findFirstOrThrow({ where: { projectId: project.id, slug: 'v1.0' } })).active).toBe(true);
    await page.reload();
    await page.getByText(/v1\.0 activated/).waitFor();
    await check('07b-automation-rules');
  });

  it('shows the analytics of the pages read so far, as a chart and tables, with a CSV of them', async () => {
    await t.services.analytics!.flush();
    await page.goto(`${origin}/projects/handbook/analytics`);
    const summary = page.getByText(/page views, \d+ not found/);
    await summary.waitFor();
    const views = Number(/(\d+) page views/.exec((await summary.textContent())!)![1]);
    expect(views).toBeGreaterThan(0);
    expect(await page.getByRole('img', { name: /^Page views per day/ }).count()).toBe(1);
    await page.getByRole('table', { name: 'Pages most read' }).getByRole('cell', { name: '/', exact: true }).first().waitFor();
    const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download top pages (CSV)' }).click()]);
    const text = await (await import('node:fs/promises')).readFile((await file.path())!, 'utf8');
    expect(text.split('\r\n')[0]).toBe('version,path,views');
    expect(text).toMatch(/\r\nlatest,\/,\d+/);
    await check('07c-analytics');
  });

  it('creates a token the REST API accepts, and revokes it', async () => {
    await page.goto(`${origin}/account`);
    await page.getByLabel('Token name').fill('ci');
    await page.getByRole('button', { name: 'Create token' }).click();
    const key = (await page.getByTestId('new-token').textContent())!;
    expect((await rest(key)).status).toBe(200);
    await check('08-account');
    await page.getByRole('button', { name: 'Revoke ci' }).click();
    await expect.poll(async () => (await rest(key)).status).toBe(401);
  });

  it('lets the admin add a user', async () => {
    await page.goto(`${origin}/admin`);
    await page.getByLabel('Username', { exact: true }).last().fill('grace');
    await page.getByLabel('Password').fill('grace password 1');
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.getByRole('cell', { name: 'grace', exact: true }).waitFor();
    await check('09-users');
  });

  it('adds a webhook: its secret is shown once, and it is listed with its events', async () => {
    await page.goto(`${origin}/projects/handbook/notifications`);
    await page.getByLabel('URL').fill('https://hooks.example.com/lectern');
    await page.getByRole('button', { name: 'Add webhook' }).click();
    expect(await page.getByTestId('secret').textContent()).toMatch(/^[0-9a-f]{48}$/);
    await page.getByRole('heading', { name: 'https://hooks.example.com/lectern' }).waitFor();
    expect(await page.getByText('Build passed, Build failed, default JSON payload').count()).toBe(1);
    await check('11-webhooks');
    await page.reload();
    await page.getByRole('heading', { name: 'https://hooks.example.com/lectern' }).waitFor();
    expect(await page.getByTestId('secret').count()).toBe(0);
  });

  it('shows the badge of the default version in the settings, with snippets whose URL answers it', async () => {
    await page.goto(`${origin}/projects/handbook/settings`);
    const markdown = page.getByLabel('Markdown');
    await markdown.waitFor();
    const text = await markdown.inputValue();
    const m = /^\[!\[Documentation Status\]\((http[^)]+)\)\]\((http[^)]+)\)$/.exec(text);
    expect(m, text).not.toBeNull();
    const badgeUrl = new URL(m![1]!);
    expect(badgeUrl.pathname + badgeUrl.search).toBe('/projects/handbook/badge/?version=latest');
    expect(m![2]).toMatch(/\/en\/latest\/$/);
    const img = page.getByRole('img', { name: 'Build status of latest' });
    await expect.poll(() => img.evaluate((i: HTMLImageElement) => i.complete && i.naturalWidth)).toBeGreaterThan(0);
    const res = await t.http.get(badgeUrl.pathname + badgeUrl.search).buffer(true);
    expect([res.status, res.headers['content-type']]).toEqual([200, 'image/svg+xml; charset=utf-8']);
    expect(String(res.body)).toContain('docs: passing');
    expect(await page.getByLabel('reStructuredText').inputValue()).toContain(`.. image:: ${m![1]}\n    :target: ${m![2]}`);
  });

  it("passes axe on every other page: the project's tabs, a user's sign-in", async () => {
    for (const tab of ['builds', 'automation', 'analytics', 'variables', 'integrations', 'notifications', 'maintainers', 'related']) {
      await page.goto(`${origin}/projects/handbook/${tab}`);
      await page.locator('nav.tabs a[aria-current="page"]').waitFor();
      await page.locator('.loading').waitFor({ state: 'detached' });
      await check(`12-project-${tab}`);
    }
    const fresh = await browser.newPage();
    await fresh.goto(`${origin}/sign-in`);
    await fresh.getByRole('button', { name: 'Sign in' }).waitFor();
    await check('13-sign-in', fresh);
    await fresh.close();
  }, 120_000);

  it('keeps its routes across a reload, reads on a phone, and sends a signed-out reader to sign in and back', async () => {
    await page.goto(`${origin}/projects/handbook/settings`);
    await page.reload();
    await page.getByLabel('Name', { exact: true }).waitFor();
    await check('10-settings');
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 } });
    await phone.goto(`${origin}/projects/handbook`);
    await phone.waitForURL(/\/sign-in\?next=%2Fprojects%2Fhandbook$/);
    await phone.getByLabel('Username').fill('ada');
    await phone.getByLabel('Password').fill('correct horse battery');
    await phone.getByRole('button', { name: 'Sign in' }).click();
    await phone.waitForURL(`${origin}/projects/handbook`);
    await phone.getByRole('link', { name: 'View docs' }).waitFor();
    const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await check('11-project-phone', phone);
    await phone.close();
  });
});

// A change is shown from its own answer (and the cache's updates of the lists it is in): the only
// request it makes is the mutation itself, never the page's query again (docs/design/dashboard-data.md).
describe('changes shown without asking again', () => {
  /** The GraphQL operations sent while `act` runs and until `shown` is seen (test/helpers/graphql-requests.ts). */
  const operationsOf = (act: () => Promise<void>, shown: () => Promise<void>) => sentOperations(page, origin, act, shown);

  it('toggles a version: its row shows the change, and only the mutation is sent', async () => {
    await page.goto(`${origin}/projects/handbook/versions`);
    const row = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: /^latest/ }) });
    const hidden = page.getByLabel('latest hidden');
    await hidden.waitFor();
    expect(await hidden.isChecked()).toBe(false);
    const hide = await operationsOf(
      () => hidden.click(),
      () => row.locator('.badge', { hasText: 'hidden' }).waitFor(),
    );
    expect(hide).toEqual(['SetVersionHidden']);
    await expect.poll(() => hidden.isDisabled()).toBe(false);
    expect(await hidden.isChecked()).toBe(true);
    const show = await operationsOf(
      () => hidden.click(),
      () => row.locator('.badge', { hasText: 'hidden' }).waitFor({ state: 'detached' }),
    );
    expect(show).toEqual(['SetVersionHidden']);
    expect((await t.db.prisma.version.findFirstOrThrow({ where: { slug: 'latest', project: { slug: 'handbook' } } })).hidden).toBe(false);
  });

  it('adds, moves and deletes a redirect: the list shows each change in Lectern’s order, from the mutation alone', async () => {
    await page.goto(`${origin}/projects/handbook/redirects`);
    const heads = () => page.locator('.cards li .card-head').allInnerTexts();
    await page.getByText('/old.html → /index.html').waitFor();
    await page.locator('summary', { hasText: 'Add a redirect' }).click();
    const add = page.locator('form', { has: page.getByRole('button', { name: 'Add redirect' }) });
    await add.getByLabel('From').fill('/new.html');
    await add.getByLabel('To').fill('/index.html');
    const created = await operationsOf(
      () => add.getByRole('button', { name: 'Add redirect' }).click(),
      () => page.getByText('/new.html → /index.html').waitFor(),
    );
    expect(created).toEqual(['CreateRedirect']);
    // A new redirect is tried first, as Lectern puts it.
    expect((await heads()).map((h) => h.split(' ')[1])).toEqual(['/new.html', '/old.html']);
    const moved = await operationsOf(
      () => page.getByRole('button', { name: 'Move redirect /new.html down' }).click(),
      () => expect.poll(async () => (await heads()).map((h) => h.split(' ')[1])).toEqual(['/old.html', '/new.html']),
    );
    expect(moved).toEqual(['UpdateRedirect']);
    const stored = await t.db.prisma.redirect.findMany({ where: { project: { slug: 'handbook' } }, orderBy: { position: 'asc' } });
    expect(stored.map((r) => [r.fromUrl, r.position])).toEqual([
      ['/old.html', 0],
      ['/new.html', 1],
    ]);
    const card = page.locator('.cards li', { hasText: '/new.html → /index.html' });
    const deleted = await operationsOf(
      () => card.getByRole('button', { name: 'Delete' }).click(),
      () => card.waitFor({ state: 'detached' }),
    );
    expect(deleted).toEqual(['DeleteRedirect']);
    expect((await heads()).map((h) => h.split(' ')[1])).toEqual(['/old.html']);
    expect(await page.getByRole('button', { name: 'Move redirect /old.html down' }).isDisabled()).toBe(true);
  });

  it('adds and deletes an environment variable from the mutation alone', async () => {
    await page.goto(`${origin}/projects/handbook/variables`);
    await page.getByText('No variables.').waitFor();
    await page.getByLabel('Name').fill('DEPLOY_KEY');
    await page.getByLabel('Value').fill('s3cret');
    const created = await operationsOf(
      () => page.getByRole('button', { name: 'Add variable' }).click(),
      () => page.getByRole('button', { name: 'Delete DEPLOY_KEY' }).waitFor(),
    );
    expect(created).toEqual(['CreateVariable']);
    expect(await page.getByText('No variables.').count()).toBe(0);
    const deleted = await operationsOf(
      () => page.getByRole('button', { name: 'Delete DEPLOY_KEY' }).click(),
      () => page.getByText('No variables.').waitFor(),
    );
    expect(deleted).toEqual(['DeleteVariable']);
    expect(await t.db.prisma.environmentVariable.count({ where: { project: { slug: 'handbook' } } })).toBe(0);
  });

  it('adds and deletes an integration, and sets its token, from the mutation alone', async () => {
    await page.goto(`${origin}/projects/handbook/integrations`);
    await page.getByText('No integrations.').waitFor();
    await page.getByLabel('Provider').selectOption('github');
    const created = await operationsOf(
      () => page.getByRole('button', { name: 'Add integration' }).click(),
      () => page.locator('.cards li strong', { hasText: 'GitHub' }).waitFor(),
    );
    expect(created).toEqual(['CreateIntegration']);
    await page.getByText('Commit statuses on pull requests: set a token').click();
    await page.getByLabel('Token (empty removes it)').fill('ghp_example');
    const token = await operationsOf(
      () => page.getByRole('button', { name: 'Save token' }).click(),
      () => page.getByText('Commit statuses: token set').waitFor(),
    );
    expect(token).toEqual(['SetIntegrationToken']);
    const deleted = await operationsOf(
      () => page.locator('.cards li', { hasText: 'GitHub' }).getByRole('button', { name: 'Delete' }).click(),
      () => page.getByText('No integrations.').waitFor(),
    );
    expect(deleted).toEqual(['DeleteIntegration']);
  });

  it('adds, moves and deletes an automation rule in Lectern’s order, from the mutation alone', async () => {
    await page.goto(`${origin}/projects/handbook/automation`);
    const heads = () => page.locator('.cards li .card-head').allInnerTexts();
    await page.getByText('Custom match ^v1\\. → Activate version').waitFor();
    await page.getByText('Add a rule').click();
    await page.getByLabel('Action', { exact: true }).selectOption('hide-version');
    const semver = page.getByText('SemVer versions → Hide version');
    const added = await operationsOf(
      () => page.getByRole('button', { name: 'Add rule' }).click(),
      () => semver.waitFor(),
    );
    expect(added).toEqual(['CreateAutomationRule']);
    // A new rule applies last.
    expect((await heads()).map((h) => h.includes('SemVer'))).toEqual([false, true]);
    const moved = await operationsOf(
      () => page.getByRole('button', { name: 'Move rule 2 up' }).click(),
      () => expect.poll(async () => (await heads()).map((h) => h.includes('SemVer'))).toEqual([true, false]),
    );
    expect(moved).toEqual(['MoveAutomationRule']);
    const stored = await t.db.prisma.automationRule.findMany({ where: { project: { slug: 'handbook' } }, orderBy: { priority: 'asc' } });
    expect(stored.map((r) => [r.action, r.priority])).toEqual([
      ['hide-version', 0],
      ['activate-version', 1],
    ]);
    const deleted = await operationsOf(
      () => page.getByRole('button', { name: 'Delete rule 1' }).click(),
      () => semver.waitFor({ state: 'detached' }),
    );
    expect(deleted).toEqual(['DeleteAutomationRule']);
    expect(await page.getByRole('button', { name: 'Move rule 1 up' }).isDisabled()).toBe(true);
  });

  it('adds and deletes a webhook from the mutation alone', async () => {
    await page.goto(`${origin}/projects/handbook/notifications`);
    await page.getByRole('heading', { name: 'https://hooks.example.com/lectern' }).waitFor();
    await page.getByLabel('URL').fill('https://hooks.example.com/second');
    const second = page.getByRole('heading', { name: 'https://hooks.example.com/second' });
    const added = await operationsOf(
      () => page.getByRole('button', { name: 'Add webhook' }).click(),
      () => second.waitFor(),
    );
    expect(added).toEqual(['CreateWebhook']);
    expect(await page.getByTestId('secret').textContent()).toMatch(/^[0-9a-f]{48}$/);
    const deleted = await operationsOf(
      () => page.getByRole('button', { name: 'Delete the webhook to https://hooks.example.com/second' }).click(),
      () => second.waitFor({ state: 'detached' }),
    );
    expect(deleted).toEqual(['DeleteWebhook']);
    expect(await page.getByRole('heading', { name: 'https://hooks.example.com/lectern' }).count()).toBe(1);
  });

  it('adds and removes a subproject and a translation from the mutation alone', async () => {
    const ada = await t.db.prisma.user.findUniqueOrThrow({ where: { username: 'ada' } });
    await makeProject(t, { slug: 'appendix', maintainers: [ada.id] });
    await makeProject(t, { slug: 'handbuch', language: 'de', maintainers: [ada.id] });
    await page.goto(`${origin}/projects/handbook/related`);
    await page.getByText('No subprojects.').waitFor();
    const sub = page.locator('form', { has: page.getByRole('button', { name: 'Add subproject' }) });
    await sub.getByLabel('Project (slug)').fill('appendix');
    const addedSub = await operationsOf(
      () => sub.getByRole('button', { name: 'Add subproject' }).click(),
      () => page.getByRole('button', { name: 'Remove appendix' }).waitFor(),
    );
    expect(addedSub).toEqual(['CreateSubproject']);
    const removedSub = await operationsOf(
      () => page.getByRole('button', { name: 'Remove appendix' }).click(),
      () => page.getByText('No subprojects.').waitFor(),
    );
    expect(removedSub).toEqual(['DeleteSubproject']);
    const translation = page.locator('form', { has: page.getByRole('button', { name: 'Add translation' }) });
    await translation.getByLabel('Project (slug)').fill('handbuch');
    const addedTranslation = await operationsOf(
      () => translation.getByRole('button', { name: 'Add translation' }).click(),
      () => page.getByRole('button', { name: 'Remove handbuch' }).waitFor(),
    );
    expect(addedTranslation).toEqual(['AddTranslation']);
    const removedTranslation = await operationsOf(
      () => page.getByRole('button', { name: 'Remove handbuch' }).click(),
      () => page.getByText('No translations.').waitFor(),
    );
    expect(removedTranslation).toEqual(['RemoveTranslation']);
  });

  it('creates and revokes a token, and adds a user, from the mutation alone', async () => {
    await page.goto(`${origin}/account`);
    await page.getByRole('heading', { name: 'API tokens' }).waitFor();
    await page.locator('.loading').waitFor({ state: 'detached' });
    await page.getByLabel('Token name').fill('deploy');
    const revoke = page.getByRole('button', { name: 'Revoke deploy' });
    const made = await operationsOf(
      () => page.getByRole('button', { name: 'Create token' }).click(),
      () => revoke.waitFor(),
    );
    expect(made).toEqual(['CreateToken']);
    await page.getByTestId('new-token').waitFor();
    const revoked = await operationsOf(
      () => revoke.click(),
      () => revoke.waitFor({ state: 'detached' }),
    );
    expect(revoked).toEqual(['RevokeToken']);

    await page.goto(`${origin}/admin`);
    await page.getByRole('cell', { name: 'grace', exact: true }).waitFor();
    await page.getByLabel('Username', { exact: true }).last().fill('hopper');
    await page.getByLabel('Password').fill('hopper password 1');
    const added = await operationsOf(
      () => page.getByRole('button', { name: 'Create user' }).click(),
      () => page.getByRole('cell', { name: 'hopper', exact: true }).waitFor(),
    );
    expect(added).toEqual(['CreateUser']);
    // In Lectern's order, by username.
    expect(await page.locator('table.list td.row-head').allTextContents()).toEqual(['ada', 'grace', 'hopper']);
  });
});
