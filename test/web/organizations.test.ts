// The organizations' pages in a real Chromium (docs/design/organizations.md), on this run's
// database: an owner creates an organization from the navigation, moves a private project with
// built docs into it from the project's settings, makes a read-only team granted that project and
// an invitation link with that team (shown once). A second person, in a browser of their own and
// signed out, opens the link, is sent to sign in and back, joins, reads the private docs, sees the
// project as read-only with no settings form and the organization without forms they cannot use,
// and a write sent as them is refused; signed out, the docs are 404; leaving takes them away. Then
// the owner edits and deletes the team, is kept an owner as the last one, revokes an invitation,
// moves the project out and deletes the organization. Every page is scanned with axe-core and
// photographed under test-results/screenshots/<db>/, the busiest again at a phone's 375 px.
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
import { htmlPage, launchChromium, makeProject, publish, removePages } from '../helpers/publish.ts';

const SHOTS = path.resolve(import.meta.dirname, '../../test-results/screenshots', dbKind());
const PASSWORD = 'correct horse battery';
const DOCS = '/docs/ledger/en/latest/';

let t: TestApp;
let stop: () => Promise<void>;
let browser: Browser;
let origin: string;
/** The owner, olive, at a desk; the person invited, milo, in a browser of their own. */
let owner: Page;
let memberContext: BrowserContext;
let member: Page;
let link: string;

beforeAll(async () => {
  if (!existsSync(path.join(DASHBOARD_DIR, 'index.html'))) throw new Error('the dashboard is not built: run `npm run web:build` (npm test runs it first)');
  ({ t, origin, stop } = await servedTestApp());
  const { user: olive } = await createUser(t.db.prisma, 'olive', { password: PASSWORD });
  await createUser(t.db.prisma, 'milo', { password: PASSWORD });
  // A private project of olive's with built docs: what the team is to give milo.
  const project = await makeProject(t, { slug: 'ledger', privacyLevel: 'private', maintainers: [olive.id] });
  await publish(t, { project, version: 'latest', html: htmlPage('<h1>Ledger handbook</h1>') });
  browser = await launchChromium();
  owner = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  memberContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  member = await memberContext.newPage();
  mkdirSync(SHOTS, { recursive: true });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await stop?.();
  removePages();
});

/** No page wider than the window, no serious or critical axe-core violation; and its picture. */
async function look(p: Page, name: string) {
  await p.locator('.loading').waitFor({ state: 'detached' });
  const { scroll, inner } = await p.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
  expect(scroll, `${name} is ${scroll} px wide in ${inner} px`).toBeLessThanOrEqual(inner);
  expect(await seriousViolations(p), name).toEqual([]);
  await p.screenshot({ path: path.join(SHOTS, `organizations-${p.viewportSize()!.width}-${name}.png`), fullPage: true });
}

/** A direct load, as a bookmark, a reload or a link from an email makes it: the server answers the dashboard's page. */
async function visit(p: Page, route: string) {
  const answer = await p.goto(`${origin}${route}`);
  expect(answer?.status(), `${route} is served as a dashboard route (src/dashboard.ts ROUTES)`).toBe(200);
}

async function signIn(p: Page, username: string) {
  await p.getByLabel('Username').fill(username);
  await p.getByLabel('Password').fill(PASSWORD);
  await p.getByRole('button', { name: 'Sign in' }).click();
}

/** The GraphQL operations `p` sends while `act` runs and until `shown` holds (test/helpers/graphql-requests.ts). */
const operationsOf = (p: Page, act: () => Promise<unknown>, shown: () => Promise<unknown>) => sentOperations(p, origin, act, shown);

const ledger = () => t.db.prisma.project.findUniqueOrThrow({ where: { slug: 'ledger' }, select: { name: true, organization: { select: { slug: true } } } });

// A loaded machine (two cores shared) takes minutes for what takes seconds alone.
describe('organizations in the dashboard', { timeout: 120_000 }, () => {
  it('an owner reaches the organizations in one click from the navigation, and creates one', async () => {
    await owner.goto(`${origin}/`);
    await owner.waitForURL(/\/sign-in/);
    await signIn(owner, 'olive');
    await owner.waitForURL(`${origin}/`);
    await owner.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Organizations' }).click();
    await owner.waitForURL(`${origin}/organizations`);
    await owner.getByText('You are in no organization yet.').waitFor();
    await look(owner, 'list-empty');
    await owner.getByLabel('Name').fill('Acme Docs');
    await owner.getByLabel('Description (optional)').fill('The handbooks of Acme.');
    await owner.getByRole('button', { name: 'Create organization' }).click();
    await owner.waitForURL(`${origin}/organizations/acme-docs`);
    await owner.getByRole('heading', { name: 'Acme Docs', level: 1 }).waitFor();
    expect(await owner.locator('main').textContent()).toContain('Your role: Owner');
    await owner.getByText('No projects that you can see.').waitFor();
    // And the list has it, by its name and the reader's role.
    await owner.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Organizations' }).click();
    await owner.getByRole('link', { name: 'Acme Docs' }).waitFor();
    expect(
      await owner
        .getByRole('row', { name: /Acme Docs/ })
        .locator('td[data-label="Your role"]')
        .textContent(),
    ).toBe('Owner');
    await look(owner, 'list');
  });

  it("moves the private project into it from the project's settings", async () => {
    await visit(owner, `/projects/ledger/settings`);
    const choice = owner.getByLabel('Organization', { exact: true });
    await choice.waitFor();
    expect(await choice.locator('option').allTextContents()).toEqual(['None', 'Acme Docs']);
    await choice.selectOption('acme-docs');
    await owner.getByRole('button', { name: 'Move', exact: true }).click();
    await owner.getByText('Moved.').waitFor();
    expect((await ledger()).organization?.slug).toBe('acme-docs');
    // The page says so at once, linked, with the reader's access.
    const access = owner.locator('main > section > p').filter({ hasText: 'In the organization' });
    await access.getByRole('link', { name: 'Acme Docs' }).waitFor();
    expect(await access.textContent()).toContain('You maintain this project.');
    await look(owner, 'project-settings');
    await visit(owner, `/organizations/acme-docs`);
    await owner.getByRole('link', { name: 'ledger' }).waitFor();
    expect(await owner.getByRole('row', { name: /ledger/ }).textContent()).toContain('private');
    await look(owner, 'projects');
  });

  it('creates a read-only team granted that project', async () => {
    await visit(owner, `/organizations/acme-docs/teams`);
    await owner.getByText('No teams.').waitFor();
    const form = owner.locator('form', { has: owner.getByRole('button', { name: 'Create team' }) });
    await form.getByLabel('Name').fill('Readers');
    expect(await form.getByLabel('Access').inputValue()).toBe('readonly');
    await form.getByLabel('Only the projects ticked below').check();
    await form.getByRole('group', { name: 'Projects' }).getByLabel('ledger').check();
    const card = owner.locator('section.team', { has: owner.getByRole('heading', { name: /Readers/ }) });
    const created = await operationsOf(
      owner,
      () => form.getByRole('button', { name: 'Create team' }).click(),
      () => card.waitFor(),
    );
    expect(created).toEqual(['CreateTeam']);
    expect(await card.textContent()).toContain('Read-only');
    expect(await card.textContent()).toContain('Projects: ledger');
    const team = await t.db.prisma.team.findFirstOrThrow({ where: { slug: 'readers' }, include: { projects: { select: { slug: true } } } });
    expect([team.access, team.allProjects, team.projects.map((p) => p.slug)]).toEqual(['readonly', false, ['ledger']]);
    await card.locator('summary', { hasText: 'Edit' }).click();
    await look(owner, 'teams');
  });

  it('makes an invitation link with that team, shown once, and lists it as pending', async () => {
    await owner.getByRole('navigation', { name: 'Organization' }).getByRole('link', { name: 'Invitations' }).click();
    await owner.waitForURL(`${origin}/organizations/acme-docs/invitations`);
    await owner.getByText('Pending invitations').waitFor();
    await owner.getByLabel('Team (optional)').selectOption('readers');
    const row = owner.getByRole('row', { name: /A link copied by hand/ });
    const made = await operationsOf(
      owner,
      () => owner.getByRole('button', { name: 'Make an invitation link' }).click(),
      () => row.waitFor(),
    );
    expect(made).toEqual(['InviteToOrganization']);
    link = (await owner.getByTestId('invitation-link').textContent())!;
    expect(link).toMatch(new RegExp(`^${origin}/invitations/accept\\?token=[\\w-]+$`));
    expect(await owner.locator('main').textContent()).toContain('It was not emailed (no address was given): send it yourself.');
    await owner.getByRole('button', { name: 'Copy the link' }).waitFor();
    expect(await row.locator('td[data-label="Team"]').textContent()).toBe('Readers');
    await look(owner, 'invitations');
    // Only its hash is kept: once the page is left, the link is gone from it.
    await owner.reload();
    await row.waitFor();
    expect(await owner.getByTestId('invitation-link').count()).toBe(0);
  });

  it("changes the organization's settings, and offers no delete while it owns a project", async () => {
    await visit(owner, `/organizations/acme-docs/settings`);
    await owner.getByLabel('URL').fill('https://acme.example.com/');
    await owner.getByRole('button', { name: 'Save settings' }).click();
    await owner.getByText('Saved.').waitFor();
    expect((await t.db.prisma.organization.findUniqueOrThrow({ where: { slug: 'acme-docs' } })).url).toBe('https://acme.example.com/');
    await owner.getByText('It owns a project: move the project out').waitFor();
    expect(await owner.getByRole('button', { name: 'Delete acme-docs' }).count()).toBe(0);
    await look(owner, 'settings');
  });

  it('a second person opens the link signed out, signs in, comes back to it, and joins', async () => {
    const opened = await member.goto(link);
    expect(opened?.status(), 'the server serves the dashboard at /invitations/accept (src/dashboard.ts ROUTES)').toBe(200);
    await member.waitForURL(/\/sign-in\?next=/);
    expect(new URL(member.url()).searchParams.get('next')).toBe(link.slice(origin.length));
    await signIn(member, 'milo');
    await member.waitForURL(link);
    const join = member.getByRole('button', { name: 'Join the organization' });
    await join.waitFor();
    await look(member, 'accept');
    await join.click();
    await member.waitForURL(`${origin}/organizations/acme-docs`);
    await member.getByRole('link', { name: 'ledger' }).waitFor();
    expect(await member.locator('main').textContent()).toContain('Your role: Member');
    expect(
      await member
        .getByRole('row', { name: /ledger/ })
        .locator('td[data-label="Your access"]')
        .textContent(),
    ).toBe('Read-only');
    await look(member, 'member-projects');
    // The link worked once.
    await member.goto(link);
    await member.getByText('This invitation is used, expired or wrong').waitFor();
  });

  it('the member reads the private docs, and sees the project read-only with no settings form', async () => {
    const docs = await member.goto(`${origin}${DOCS}`);
    expect(docs?.status()).toBe(200);
    expect(await member.locator('h1').textContent()).toBe('Ledger handbook');
    await visit(member, `/projects/ledger`);
    await member.getByText('Read-only access through a team').waitFor();
    expect(await member.locator('main .badge', { hasText: 'read-only' }).count()).toBe(1);
    const tabs = member.getByRole('navigation', { name: 'Project' });
    expect(await tabs.getByRole('link').allTextContents()).toEqual(['Versions', 'Builds', 'Maintainers', 'Subprojects and translations']);
    await look(member, 'project-read-only');
    await visit(member, `/projects/ledger/settings`);
    await member.getByText("Only the project's maintainers see and change its settings.").waitFor();
    expect(await member.locator('main form').count()).toBe(0);
    await visit(member, `/projects/ledger/builds`);
    await member.getByText('No builds yet.').or(member.locator('table.list')).first().waitFor();
    expect(await member.locator('main form').count()).toBe(0);
  });

  it('refuses a write sent as the member, from their signed-in page', async () => {
    const answer = await member.evaluate(async () => {
      const r = await fetch('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'mutation { updateProject(slug: "ledger", input: { name: "Taken over" }) { __typename ... on Error { message } } }' }),
      });
      return { status: r.status, body: await r.json() };
    });
    expect(answer.body.data.updateProject.__typename).toBe('ForbiddenError');
    expect((await ledger()).name).toBe('ledger');
  });

  it('shows the organization to the member without forms they cannot use', async () => {
    await visit(member, `/organizations/acme-docs/members`);
    const me = member.getByRole('row', { name: /milo/ });
    await me.waitFor();
    expect(await me.locator('td[data-label="Role"]').textContent()).toBe('Member');
    expect(await me.locator('td[data-label="Teams"]').textContent()).toBe('Readers');
    expect(await member.getByRole('combobox').count()).toBe(0);
    expect(await member.getByRole('button', { name: /^Remove/ }).count()).toBe(0);
    await member.getByRole('button', { name: 'Leave Acme Docs' }).waitFor();
    expect(await member.getByRole('navigation', { name: 'Organization' }).getByRole('link').allTextContents()).toEqual([
      'Projects',
      'Members',
      'Teams',
      'Settings',
    ]);
    await look(member, 'member-members');
    for (const tab of ['teams', 'settings', 'invitations']) {
      await visit(member, `/organizations/acme-docs/${tab}`);
      await member.locator('nav.tabs').waitFor();
      await member.locator('.loading').waitFor({ state: 'detached' });
      expect(await member.locator('main form').count(), tab).toBe(0);
      expect(await member.locator('main details').count(), tab).toBe(0);
      await look(member, `member-${tab}`);
    }
    await member.getByText("Only the organization's owners invite people.").waitFor();
  });

  it("fits a phone's 375 px: the owner's members, teams and invitations, the member's project", async () => {
    const phone = await memberContext.newPage();
    await phone.setViewportSize({ width: 375, height: 812 });
    await visit(phone, `/projects/ledger`);
    await phone.getByText('Read-only access through a team').waitFor();
    await look(phone, 'project-read-only');
    await phone.close();
    await owner.setViewportSize({ width: 375, height: 812 });
    await visit(owner, `/organizations/acme-docs/members`);
    await owner.getByLabel("milo's role").waitFor();
    await look(owner, 'members');
    await visit(owner, `/organizations/acme-docs/teams`);
    await owner.getByRole('heading', { name: /Readers/ }).waitFor();
    await owner.locator('section.team summary', { hasText: 'Edit' }).click();
    await look(owner, 'teams');
    // The one taken is no longer pending: another, for an address, with its link as long as they come.
    await visit(owner, `/organizations/acme-docs/invitations`);
    await owner.getByText('Pending invitations').waitFor();
    await owner.getByLabel('Email (optional)').fill('nadia@example.com');
    await owner.getByRole('button', { name: 'Make an invitation link' }).click();
    await owner.getByTestId('invitation-link').waitFor();
    expect(await owner.locator('main').textContent()).toContain(
      'It was not emailed (this installation sends no email): send it to nadia@example.com yourself.',
    );
    await owner.getByRole('row', { name: /nadia@example\.com/ }).waitFor();
    await look(owner, 'invitations');
    await owner.setViewportSize({ width: 1280, height: 900 });
  });

  it("changes a member's role from its answer alone: their row, the owners in the header, and back", async () => {
    await visit(owner, `/organizations/acme-docs/members`);
    const role = owner.getByLabel("milo's role");
    await role.waitFor();
    const header = owner.locator('main p.muted', { hasText: 'Owners:' });
    const promoted = await operationsOf(
      owner,
      () => role.selectOption('owner'),
      () => expect.poll(() => header.textContent()).toContain('Owners: milo, olive'),
    );
    expect(promoted).toEqual(['SetOrganizationMemberRole']);
    await expect.poll(() => role.isDisabled()).toBe(false);
    expect(await role.inputValue()).toBe('owner');
    const demoted = await operationsOf(
      owner,
      () => role.selectOption('member'),
      () => expect.poll(() => header.textContent()).toContain('Owners: olive'),
    );
    expect(demoted).toEqual(['SetOrganizationMemberRole']);
    await expect.poll(() => role.isDisabled()).toBe(false);
    expect(await role.inputValue()).toBe('member');
    const milo = await t.db.prisma.organizationMember.findFirstOrThrow({ where: { user: { username: 'milo' } }, select: { role: true } });
    expect(milo.role).toBe('member');
  });

  it('keeps the docs from a reader signed out, and from the member once they leave', async () => {
    expect((await t.http.get(DOCS)).status).toBe(404);
    const anonymous = await browser.newPage();
    expect((await anonymous.goto(`${origin}${DOCS}`))?.status()).toBe(404);
    await anonymous.close();
    await visit(member, `/organizations/acme-docs/members`);
    await member.getByRole('button', { name: 'Leave Acme Docs' }).click();
    await member.waitForURL(`${origin}/organizations`);
    await member.getByText('You are in no organization yet.').waitFor();
    expect((await member.goto(`${origin}${DOCS}`))?.status()).toBe(404);
  });

  it('lets the owner edit a team, revoke an invitation, move the project out, and then delete the organization', async () => {
    await visit(owner, `/organizations/acme-docs/teams`);
    const card = owner.locator('section.team', { has: owner.getByRole('heading', { name: /Readers/ }) });
    await card.locator('summary', { hasText: 'Edit' }).click();
    await card.getByLabel('Every project of the organization, present and future').check();
    await card.getByLabel('Access').selectOption('admin');
    await card.getByRole('group', { name: 'Members' }).getByLabel('olive').check();
    await card.getByRole('button', { name: 'Save team' }).click();
    await card.getByText('Saved.').waitFor();
    await expect
      .poll(() => card.locator(':scope > p').allTextContents())
      .toEqual(['Projects: every project of the organization, present and future', 'Members: olive']);
    const team = await t.db.prisma.team.findFirstOrThrow({ where: { slug: 'readers' }, select: { access: true, allProjects: true } });
    expect(team).toEqual({ access: 'admin', allProjects: true });
    const deleted = await operationsOf(
      owner,
      () => card.getByRole('button', { name: 'Delete the team Readers' }).click(),
      () => owner.getByText('No teams.').waitFor(),
    );
    expect(deleted).toEqual(['DeleteTeam']);

    // The last owner stays one: the refusal is said in words, and the role shown goes back.
    await visit(owner, `/organizations/acme-docs/members`);
    await owner.getByLabel("olive's role").selectOption('member');
    await expect.poll(() => owner.getByRole('alert').textContent()).toContain('An organization keeps at least one owner');
    await expect.poll(() => owner.getByLabel("olive's role").inputValue()).toBe('owner');

    await visit(owner, `/organizations/acme-docs/invitations`);
    const revoke = owner.getByRole('button', { name: 'Revoke the invitation for nadia@example.com' });
    await revoke.waitFor();
    const revoked = await operationsOf(
      owner,
      () => revoke.click(),
      () => owner.getByText('None.').waitFor(),
    );
    expect(revoked).toEqual(['RevokeInvitation']);

    await visit(owner, `/projects/ledger/settings`);
    await owner.getByLabel('Organization', { exact: true }).selectOption('');
    await owner.getByRole('button', { name: 'Move', exact: true }).click();
    await owner.getByText('It belongs to no organization').waitFor();
    expect((await ledger()).organization).toBeNull();

    await visit(owner, `/organizations/acme-docs/settings`);
    const confirm = owner.getByLabel('Type "acme-docs" to confirm');
    await confirm.fill('acme');
    await owner.getByRole('button', { name: 'Delete acme-docs' }).click();
    await expect.poll(() => owner.getByRole('alert').textContent()).toContain('Type "acme-docs" to confirm.');
    expect(await confirm.getAttribute('aria-invalid')).toBe('true');
    await confirm.fill('acme-docs');
    await owner.getByRole('button', { name: 'Delete acme-docs' }).click();
    await owner.waitForURL(`${origin}/organizations`);
    await owner.getByText('You are in no organization yet.').waitFor();
    expect(await t.db.prisma.organization.count()).toBe(0);
  });
});
