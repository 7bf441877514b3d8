// The dashboard's security settings in a real Chromium, on this run's database: a site admin adds
// an identity provider (docs/design/sso.md) and sees its callback URL, and the sign-in page, signed
// out, offers its button with the same `next` as the password form; an owner makes a read-only
// API token limited to one project with an expiry (docs/design/tokens.md), which reads that project
// and nothing else and writes nothing; an owner who is a site admin (SSO rules are a site admin's)
// makes the organization sign in with SSO only and gives a team an SSO group; the owner reads the organization's audit log (docs/design/audit.md), filtered, which a
// member who is not an owner never sees; the site admin's audit log lists a failed sign-in; the
// invitation page says what a link offers; a site admin raises a project's build limits, which its
// maintainer reads and cannot change (docs/design/builds.md "Per-project limits"). Every page is scanned with axe-core and photographed
// under test-results/screenshots/<db>/, some again at a phone's 375 px (the build-limits form at 390 px).
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_DIR } from '../../src/dashboard.ts';
import { createUser } from '../../src/domain/users.ts';
import { servedTestApp, type TestApp } from '../helpers/app.ts';
import { seriousViolations } from '../helpers/axe.ts';
import { dbKind } from '../helpers/db.ts';
import { operationsOf as sentOperations } from '../helpers/graphql-requests.ts';
import { launchChromium, makeProject } from '../helpers/publish.ts';

const SHOTS = path.resolve(import.meta.dirname, '../../test-results/screenshots', dbKind());
const PASSWORD = 'correct horse battery';

let t: TestApp;
let stop: () => Promise<void>;
let browser: Browser;
let origin: string;
/** ada, a site admin; olive, the owner of Acme; milo, a member of Acme who is not an owner. */
let admin: Page;
let owner: Page;
let member: Page;
let signedOut: BrowserContext;
let oliveKey: string;

beforeAll(async () => {
  if (!existsSync(path.join(DASHBOARD_DIR, 'index.html'))) throw new Error('the dashboard is not built: run `npm run web:build` (npm test runs it first)');
  ({ t, origin, stop } = await servedTestApp());
  const { user: ada } = await createUser(t.db.prisma, 'ada', { password: PASSWORD, isAdmin: true });
  const { user: olive, token } = await createUser(t.db.prisma, 'olive', { password: PASSWORD });
  oliveKey = token;
  const { user: milo } = await createUser(t.db.prisma, 'milo', { password: PASSWORD });
  // Two private projects of olive's: the token is to reach the first only.
  await makeProject(t, { slug: 'ledger', privacyLevel: 'private', maintainers: [olive.id] });
  await makeProject(t, { slug: 'vault', privacyLevel: 'private', maintainers: [olive.id] });
  const made = await t.gql(`mutation { createOrganization(input: { name: "Acme", slug: "acme" }) { __typename } }`, {}, oliveKey);
  expect(made.data?.createOrganization.__typename).toBe('MutationCreateOrganizationSuccess');
  const team = await t.gql(`mutation { createTeam(organization: "acme", input: { name: "Writers" }) { __typename } }`, {}, oliveKey);
  expect(team.data?.createTeam.__typename).toBe('MutationCreateTeamSuccess');
  const org = await t.db.prisma.organization.findUniqueOrThrow({ where: { slug: 'acme' } });
  await t.db.prisma.organizationMember.create({ data: { organizationId: org.id, userId: milo.id, role: 'member' } });
  // SSO rules are a site admin's who owns the organization (docs/design/sso.md): ada owns it too.
  await t.db.prisma.organizationMember.create({ data: { organizationId: org.id, userId: ada.id, role: 'owner' } });
  browser = await launchChromium();
  admin = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  owner = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  member = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  signedOut = await browser.newContext({ viewport: { width: 375, height: 812 } });
  mkdirSync(SHOTS, { recursive: true });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await stop?.();
});

/** No page wider than the window, no serious or critical axe-core violation; and its picture. */
async function look(p: Page, name: string) {
  await p.locator('.loading').waitFor({ state: 'detached' });
  const { scroll, inner } = await p.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
  expect(scroll, `${name} is ${scroll} px wide in ${inner} px`).toBeLessThanOrEqual(inner);
  expect(await seriousViolations(p), name).toEqual([]);
  await p.screenshot({ path: path.join(SHOTS, `admin-security-${p.viewportSize()!.width}-${name}.png`), fullPage: true });
}

/** A direct load: the server answers the dashboard's page (src/dashboard.ts ROUTES). */
async function visit(p: Page, route: string) {
  const answer = await p.goto(`${origin}${route}`);
  expect(answer?.status(), `${route} is served as a dashboard route`).toBe(200);
}

async function signIn(p: Page, username: string, password = PASSWORD) {
  await p.getByLabel('Username').fill(username);
  await p.getByLabel('Password').fill(password);
  await p.getByRole('button', { name: 'Sign in', exact: true }).click();
}

/** Opens `route` signed in as `username`, through the sign-in page and back. */
async function enter(p: Page, route: string, username: string) {
  await visit(p, route);
  await p.waitForURL(/\/sign-in\?next=/);
  await signIn(p, username);
  await p.waitForURL(`${origin}${route}`);
}

/** The GraphQL operations `p` sends while `act` runs and until `shown` holds (test/helpers/graphql-requests.ts). */
const operationsOf = (p: Page, act: () => Promise<unknown>, shown: () => Promise<unknown>) => sentOperations(p, origin, act, shown);

const rest = (method: 'get' | 'patch', url: string, key: string) => t.http[method](url).set('authorization', `Token ${key}`);

// A loaded machine (two cores shared) takes minutes for what takes seconds alone.
describe('security settings in the dashboard', { timeout: 120_000 }, () => {
  it('a site admin adds an identity provider and sees the callback URL to register', async () => {
    await enter(admin, '/admin/sso', 'ada');
    await admin.getByText('No identity providers.').waitFor();
    const form = admin.locator('form', { has: admin.getByRole('button', { name: 'Add provider' }) });
    await form.getByLabel('Slug').fill('corp');
    await form.getByLabel('Name').fill('Corp ID');
    await form.getByLabel('Issuer URL').fill('https://idp.example.com');
    await form.getByLabel('Client ID').fill('lectern');
    await form.getByLabel('Client secret').fill('s3cret-of-the-client');
    await form.getByLabel('Groups claim (optional)').fill('groups');
    const added = await operationsOf(
      admin,
      () => form.getByRole('button', { name: 'Add provider' }).click(),
      () => admin.getByRole('heading', { name: /Corp ID/ }).waitFor(),
    );
    expect(added).toEqual(['CreateIdentityProvider']);
    expect(await admin.getByTestId('callback-corp').textContent()).toBe(`${origin}/auth/oidc/corp/callback`);
    const row = await t.db.prisma.identityProvider.findUniqueOrThrow({ where: { slug: 'corp' } });
    expect([row.issuer, row.clientId, row.groupsClaim, row.enabled, row.allowSignUp]).toEqual(['https://idp.example.com', 'lectern', 'groups', true, true]);
    expect(row.clientSecretEncrypted).not.toContain('s3cret');
    // Edited with the secret left empty: the one stored is kept.
    const card = admin.locator('section.provider');
    await card.locator('summary', { hasText: 'Edit' }).click();
    await card.getByLabel('Name').fill('Corp Login');
    const saved = await operationsOf(
      admin,
      () => card.getByRole('button', { name: 'Save provider' }).click(),
      () => card.getByRole('heading', { name: /Corp Login/ }).waitFor(),
    );
    expect(saved).toEqual(['UpdateIdentityProvider']);
    const edited = await t.db.prisma.identityProvider.findUniqueOrThrow({ where: { slug: 'corp' } });
    expect([edited.name, edited.clientSecretEncrypted]).toEqual(['Corp Login', row.clientSecretEncrypted]);
    await look(admin, 'sso');
  });

  it('the sign-in page, signed out, offers its button with the same next as the password form, and none once it is disabled', async () => {
    const p = await signedOut.newPage();
    await visit(p, '/projects/ledger');
    await p.waitForURL(/\/sign-in\?next=%2Fprojects%2Fledger$/);
    const button = p.getByRole('link', { name: 'Sign in with Corp Login' });
    expect(await button.getAttribute('href')).toBe('/auth/oidc/corp/login?next=%2Fprojects%2Fledger');
    await look(p, 'sign-in');
    // A failed sign-in, for the site's audit log to show.
    await signIn(p, 'mallory', 'not the password');
    await p.getByRole('alert').waitFor();
    await admin.getByRole('button', { name: 'Disable Corp Login' }).click();
    await admin.getByRole('button', { name: 'Enable Corp Login' }).waitFor();
    await p.reload();
    await p.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
    await p.locator('.loading').waitFor({ state: 'detached' });
    expect(await p.getByRole('link', { name: /Sign in with/ }).count()).toBe(0);
    await admin.getByRole('button', { name: 'Enable Corp Login' }).click();
    await admin.getByRole('button', { name: 'Disable Corp Login' }).waitFor();
    await p.reload();
    await p.getByRole('link', { name: 'Sign in with Corp Login' }).waitFor();
    await p.close();
  });

  it('makes a read-only token limited to one project with an expiry, which reads that project only and writes nothing', async () => {
    await enter(owner, '/account', 'olive');
    const expiry = new Date(Date.now() + 30 * 24 * 3600 * 1000);
    const day = `${expiry.getFullYear()}-${String(expiry.getMonth() + 1).padStart(2, '0')}-${String(expiry.getDate()).padStart(2, '0')}`;
    await owner.getByLabel('Token name').fill('ci-ledger');
    await owner.getByLabel('Expires (optional)').fill(day);
    await owner.getByLabel('Read-only').check();
    await owner.getByRole('group', { name: 'Projects (optional)' }).getByLabel('ledger').check();
    await owner.getByRole('button', { name: 'Create token' }).click();
    const key = (await owner.getByTestId('new-token').textContent())!;
    const row = owner.getByRole('row', { name: /ci-ledger/ });
    await row.waitFor();
    expect(await row.locator('td[data-label="Reaches"]').textContent()).toBe('read-only ledger');
    expect(await row.locator('td[data-label="Expires"] time').getAttribute('datetime')).toBe(new Date(`${day}T23:59:59.999`).toISOString());
    const stored = await t.db.prisma.apiToken.findFirstOrThrow({ where: { name: 'ci-ledger' }, include: { projects: { include: { project: true } } } });
    expect(stored.readOnly).toBe(true);
    expect(stored.expiresAt?.toISOString().slice(0, 10)).toBe(new Date(`${day}T23:59:59.999`).toISOString().slice(0, 10));
    // Outside the browser: it reads its project, is refused a write, and finds no other private project.
    expect((await rest('get', '/api/v3/projects/ledger/', key)).status).toBe(200);
    expect((await rest('patch', '/api/v3/projects/ledger/', key).send({ description: 'changed' })).status).toBe(403);
    expect((await rest('get', '/api/v3/projects/vault/', key)).status).toBe(404);
    expect((await rest('get', '/api/v3/projects/vault/', oliveKey)).status).toBe(200);
    await look(owner, 'account');
  });

  it('an owner who is a site admin makes the organization sign in with SSO only and gives a team an SSO group, kept across a reload', async () => {
    // The member signs in first: once the organization is SSO-only, their password is refused.
    await enter(member, '/organizations/acme', 'milo');
    // An owner who is not a site admin reads the rule, and has no control to change it.
    await visit(owner, '/organizations/acme/settings');
    await owner.getByText('Only a site administrator changes this.').waitFor();
    expect(await owner.getByLabel('Members sign in with single sign-on only').count()).toBe(0);

    await visit(admin, '/organizations/acme/settings');
    const ssoOnly = admin.getByLabel('Members sign in with single sign-on only');
    expect(await ssoOnly.isChecked()).toBe(false);
    await ssoOnly.check();
    await admin.getByRole('button', { name: 'Save settings' }).click();
    await admin.getByText('Saved.').waitFor();
    await admin.reload();
    await expect.poll(() => admin.getByLabel('Members sign in with single sign-on only').isChecked()).toBe(true);
    expect((await t.db.prisma.organization.findUniqueOrThrow({ where: { slug: 'acme' } })).ssoOnly).toBe(true);
    await look(admin, 'organization-settings');
    // The other owner saves the other settings: the rule is kept, not sent.
    await visit(owner, '/organizations/acme/settings');
    await owner.getByText('Members sign in with single sign-on only. Only a site administrator changes this.').waitFor();
    await owner.getByLabel('URL').fill('https://acme.example.com/');
    await owner.getByRole('button', { name: 'Save settings' }).click();
    await owner.getByText('Saved.').waitFor();
    expect(await t.db.prisma.organization.findUniqueOrThrow({ where: { slug: 'acme' }, select: { ssoOnly: true, url: true } })).toEqual({
      ssoOnly: true,
      url: 'https://acme.example.com/',
    });

    await visit(admin, '/organizations/acme/teams');
    const card = admin.locator('section.team', { has: admin.getByRole('heading', { name: /Writers/ }) });
    await card.locator('summary', { hasText: 'Edit' }).click();
    await card.getByLabel('SSO group (optional)').fill('docs-writers');
    await card.getByRole('button', { name: 'Save team' }).click();
    await card.getByText('Saved.').waitFor();
    await admin.reload();
    await card.getByText('SSO group: docs-writers').waitFor();
    await card.locator('summary', { hasText: 'Edit' }).click();
    expect(await card.getByLabel('SSO group (optional)').inputValue()).toBe('docs-writers');
    expect((await t.db.prisma.team.findFirstOrThrow({ where: { slug: 'writers' } })).ssoGroup).toBe('docs-writers');
    await look(admin, 'teams');

    // A member's password is now refused, saying why.
    const fresh = await browser.newPage();
    await visit(fresh, '/sign-in');
    await signIn(fresh, 'milo');
    await expect.poll(() => fresh.getByRole('alert').textContent()).toContain('Members of Acme sign in with single sign-on.');
    await fresh.close();
  });

  it("the owner reads the organization's audit log, filters it by action; a member has no such tab", async () => {
    await visit(owner, '/organizations/acme');
    await owner.getByRole('navigation', { name: 'Organization' }).getByRole('link', { name: 'Audit log' }).click();
    await owner.waitForURL(`${origin}/organizations/acme/audit`);
    const table = owner.locator('table.audit');
    await table.waitFor();
    const actions = () => table.locator('td[data-label="Action"]').allTextContents();
    await expect.poll(actions).toEqual(expect.arrayContaining(['team-changed', 'token-created', 'organization-changed']));
    const rowOf = (action: string) => table.locator('tr', { has: owner.locator('td[data-label="Action"]', { hasText: action }) }).first();
    expect(await rowOf('token-created').locator('td[data-label="Who"]').textContent()).toContain('olive');
    expect(await rowOf('team-changed').locator('td[data-label="Who"]').textContent()).toContain('ada');
    // Newest first: the team's change came after the token.
    const all = await actions();
    expect(all.indexOf('team-changed')).toBeLessThan(all.indexOf('token-created'));
    await look(owner, 'organization-audit');
    await owner.getByLabel('Action').selectOption('team-changed');
    await owner.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(actions).toEqual(['team-changed']);
    expect(await table.locator('td[data-label="Details"]').textContent()).toContain('ssoGroup');

    await visit(member, '/organizations/acme');
    const tabs = member.getByRole('navigation', { name: 'Organization' });
    await tabs.waitFor();
    expect(await tabs.getByRole('link').allTextContents()).toEqual(['Projects', 'Members', 'Teams', 'Settings']);
    await visit(member, '/organizations/acme/audit');
    await member.getByText("Only the organization's owners read its audit log.").waitFor();
    expect(await member.locator('table.audit').count()).toBe(0);
  });

  it("the site admin's audit log lists the failed sign-in, at 1280 and 375 px", async () => {
    await visit(admin, '/admin/audit');
    const table = admin.locator('table.audit');
    await table.waitFor();
    await admin.getByLabel('Action').selectOption('sign-in-failed');
    await admin.getByRole('button', { name: 'Filter' }).click();
    const row = table.locator('tr', { has: admin.locator('td[data-label="Who"]', { hasText: 'mallory' }) });
    await row.waitFor();
    expect(await row.locator('td[data-label="Action"]').textContent()).toBe('sign-in-failed');
    expect(await row.locator('td[data-label="Details"]').textContent()).toBe('reason: no such user');
    await expect.poll(() => table.locator('td[data-label="Action"]').allTextContents()).toEqual(['sign-in-failed', 'sign-in-failed']);
    await look(admin, 'audit');
    await admin.setViewportSize({ width: 375, height: 812 });
    await visit(admin, '/admin/audit');
    await admin.locator('table.audit').waitFor();
    await look(admin, 'audit');
    await visit(admin, '/admin/sso');
    await admin.getByRole('heading', { name: /Corp Login/ }).waitFor();
    await look(admin, 'sso');
    await admin.setViewportSize({ width: 1280, height: 900 });
  });

  it('the invitation page says what a link offers before joining, and that a wrong one offers nothing', async () => {
    const made = await t.gql(
      `mutation { inviteToOrganization(organization: "acme", input: { team: "writers" }) { __typename ... on MutationInviteToOrganizationSuccess { data { link } } } }`,
      {},
      oliveKey,
    );
    const link: string = made.data?.inviteToOrganization.data.link;
    expect(link).toMatch(/\/invitations\/accept\?token=/);
    await visit(admin, new URL(link).pathname + new URL(link).search);
    const main = admin.locator('main');
    await admin.getByRole('button', { name: 'Join the organization' }).waitFor();
    expect(await main.textContent()).toContain('This invitation link makes you (ada) a member of Acme, in its team Writers. It works once, until ');
    await look(admin, 'invitation');
    await visit(admin, '/invitations/accept?token=not-a-token');
    await admin.getByText('This invitation is used, expired or wrong.').waitFor();
    expect(await admin.getByRole('button', { name: 'Join the organization' }).count()).toBe(0);
  });

  it("a site admin raises a project's build limits, a value above a ceiling is refused naming it, and its maintainer reads them", async () => {
    const olive = await t.db.prisma.user.findUniqueOrThrow({ where: { username: 'olive' } });
    await makeProject(t, { slug: 'atlas', maintainers: [olive.id] });
    // ada maintains nothing of it: the settings tab is offered for its build limits alone.
    await visit(admin, '/projects/atlas/settings');
    await admin.getByText("Only the project's maintainers change its settings.").waitFor();
    const form = admin.locator('form', { has: admin.getByRole('button', { name: 'Save build limits' }) });
    expect(await form.getByLabel('Processes').getAttribute('placeholder')).toBe('512');
    await form.getByLabel('Processes').fill('99999');
    await form.getByRole('button', { name: 'Save build limits' }).click();
    await expect.poll(() => form.getByRole('alert').textContent()).toContain('LECTERN_BUILD_PROJECT_MAX_PROCESSES');
    await form.getByLabel('Processes').fill('1024');
    await form.getByLabel('Time (seconds)').fill('1800');
    await form.getByRole('button', { name: 'Save build limits' }).click();
    await form.getByText('Saved: the next build gets these limits.').waitFor();
    expect(
      await t.db.prisma.project.findUniqueOrThrow({
        where: { slug: 'atlas' },
        select: { buildTimeLimit: true, buildMemoryLimit: true, buildProcessesLimit: true },
      }),
    ).toEqual({ buildTimeLimit: 1800, buildMemoryLimit: null, buildProcessesLimit: 1024 });
    await admin.reload();
    await expect.poll(() => admin.getByLabel('Processes').inputValue()).toBe('1024');
    await look(admin, 'build-limits');
    // And on a phone: the form and its labels fit 390 px.
    const desk = admin.viewportSize()!;
    await admin.setViewportSize({ width: 390, height: 844 });
    try {
      await look(admin, 'build-limits');
    } finally {
      await admin.setViewportSize(desk);
    }

    await visit(owner, '/projects/atlas/settings');
    await owner.getByText('A build may run 30 min, with 4 GiB of memory and 1024 processes at once.', { exact: false }).waitFor();
    expect(await owner.getByRole('button', { name: 'Save build limits' }).count()).toBe(0);
  });
});
