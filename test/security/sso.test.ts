// Single sign-on with OpenID Connect (docs/design/sso.md) against real providers on 127.0.0.1: the
// flow in Chromium with oidc-provider's own login and consent pages (a new account, its teams from
// the groups claim, private docs read, teams kept in step at the next sign-in, linking by verified
// email only, sign-out), every way a callback can be forged or replayed refused, and ID tokens broken
// by a hostile provider (another key, another audience, expired, tampered, another issuer) refused,
// each leaving no session and an entry in the audit log. And an organization that signs in with SSO
// only refuses its members' passwords.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/domain/passwords.ts';
import { servedTestApp, type TestApp } from '../helpers/app.ts';
import { type Breakage, type HostileProvider, type RealProvider, startHostileProvider, startProvider } from '../helpers/oidc.ts';
import { launchChromium, publish } from '../helpers/publish.ts';

let t: TestApp;
let origin: string;
let stop: () => Promise<void>;
let idp: RealProvider;
let evil: HostileProvider;
let browser: Browser;
let admin: string;

const CLIENT = { clientId: 'lectern', clientSecret: 'a-client-secret-0123456789' };

async function addProvider(slug: string, issuer: string, extra: Record<string, unknown> = {}) {
  const res = await t.gql(
    `mutation($input: IdentityProviderInput!) { createIdentityProvider(input: $input) { __typename ... on Error { message } } }`,
    { input: { slug, name: slug, issuer, clientId: CLIENT.clientId, clientSecret: CLIENT.clientSecret, ...extra } },
    admin,
  );
  expect(res.data.createIdentityProvider.__typename).toBe('MutationCreateIdentityProviderSuccess');
}

beforeAll(async () => {
  ({ t, origin, stop } = await servedTestApp());
  admin = await t.user('root');
  await t.db.prisma.user.update({ where: { username: 'root' }, data: { isAdmin: true } });
  idp = await startProvider({ ...CLIENT, redirectUri: `${origin}/auth/oidc/corp/callback` });
  evil = await startHostileProvider(CLIENT.clientId);
  await addProvider('corp', idp.issuer, { groupsClaim: 'groups', scopes: 'openid email profile groups' });
  await addProvider('evil', evil.issuer);
  // acme: a private project with docs, and a read-only team that follows the group `docs-readers`.
  await t.gql(`mutation { createOrganization(input: { name: "Acme" }) { __typename } }`, {}, admin);
  await t.gql(
    `mutation { importProject(input: { name: "handbook", repository: { url: "https://git.example/h.git" }, privacyLevel: private }) { __typename } }`,
    {},
    admin,
  );
  await t.gql(`mutation { setProjectOrganization(project: "handbook", organization: "acme") { __typename } }`, {}, admin);
  await t.gql(
    `mutation { createTeam(organization: "acme", input: { name: "Readers", projects: ["handbook"], ssoGroup: "docs-readers" }) { __typename } }`,
    {},
    admin,
  );
  const html = mkdtempSync(path.join(tmpdir(), 'sso-'));
  writeFileSync(path.join(html, 'index.html'), '<!doctype html><title>Handbook</title><h1>Private handbook</h1>');
  await publish(t, { project: await t.db.prisma.project.findUniqueOrThrow({ where: { slug: 'handbook' } }), version: 'latest', html });
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await idp?.close();
  await evil?.close();
  await stop?.();
});

/** Signs in at the real provider's development pages (any login; then consent), or at once when its session is there. */
async function ssoSignIn(page: Page, login: string, next = '/') {
  await page.goto(`${origin}/auth/oidc/corp/login?next=${encodeURIComponent(next)}`);
  for (let step = 0; step < 4 && !page.url().startsWith(origin); step++) {
    const field = page.locator('input[name="login"]');
    if (await field.count()) {
      await field.fill(login);
      await page.locator('input[name="password"]').fill('any');
    }
    await Promise.all([page.waitForNavigation(), page.locator('button[type="submit"]').click()]);
  }
  expect(page.url().startsWith(origin), page.url()).toBe(true);
}

/** The signed-in user, as Lectern's own page asks. */
const viewerOf = (page: Page) =>
  page.evaluate(async () => {
    const res = await fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ viewer { username } }' }),
    });
    return ((await res.json()) as { data: { viewer: { username: string } | null } }).data.viewer?.username ?? null;
  });

const failures = async () =>
  (await t.db.prisma.auditEntry.findMany({ where: { action: 'sign-in-failed', method: 'sso' }, orderBy: { id: 'asc' } })).map(
    (e) => (e.data as { reason: string }).reason,
  );

describe('signing in with an OpenID provider, in Chromium', () => {
  let context: BrowserContext;
  let page: Page;
  beforeAll(async () => {
    context = await browser.newContext();
    page = await context.newPage();
  });
  afterAll(() => context.close());

  it('makes an account at the first sign-in, puts it in the teams its groups name, and it reads their private docs', async () => {
    idp.accounts.set('jane', { email: 'jane@corp.example', email_verified: true, preferred_username: 'jane', groups: ['docs-readers', 'other'] });
    await ssoSignIn(page, 'jane');
    expect(await viewerOf(page)).toBe('jane');
    const jane = await t.db.prisma.user.findUniqueOrThrow({
      where: { username: 'jane' },
      include: { identities: true, memberships: { include: { teams: true } } },
    });
    expect(jane).toMatchObject({ email: 'jane@corp.example', passwordHash: null, identities: [{ subject: 'jane' }] });
    expect(jane.memberships).toHaveLength(1);
    expect(jane.memberships[0]!.teams).toHaveLength(1);
    const docs = await page.goto(`${origin}/docs/handbook/en/latest/`);
    expect(docs?.status()).toBe(200);
    expect(await page.locator('h1').textContent()).toBe('Private handbook');
    const audit = await t.db.prisma.auditEntry.findFirstOrThrow({ where: { action: 'sign-in', method: 'sso' } });
    expect(audit).toMatchObject({ username: 'jane', data: { provider: 'corp' } });
  });

  it('keeps the teams in step at the next sign-in, and signing out ends the session', async () => {
    await page.goto(`${origin}/`);
    await page.evaluate(() =>
      fetch('/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'mutation { signOut }' }) }),
    );
    expect(await viewerOf(page)).toBeNull();
    idp.accounts.set('jane', { email: 'jane@corp.example', email_verified: true, preferred_username: 'jane', groups: ['other'] });
    await ssoSignIn(page, 'jane');
    expect(await viewerOf(page)).toBe('jane');
    expect(await t.db.prisma.teamMember.count({ where: { member: { user: { username: 'jane' } } } })).toBe(0);
    expect((await page.goto(`${origin}/docs/handbook/en/latest/`))?.status()).toBe(404);
    expect(await t.db.prisma.user.count({ where: { username: { startsWith: 'jane' } } })).toBe(1);
  });

  it('links an existing account by a verified email only; an unverified one gets an account of its own', async () => {
    await t.db.prisma.user.create({ data: { username: 'bob', email: 'bob@corp.example' } });
    const fresh = await browser.newContext();
    const p = await fresh.newPage();
    idp.accounts.set('bob-unverified', { email: 'bob@corp.example', email_verified: false, preferred_username: 'bob' });
    await ssoSignIn(p, 'bob-unverified');
    expect(await viewerOf(p)).toBe('bob-2');
    await fresh.clearCookies();
    idp.accounts.set('bob-verified', { email: 'BOB@corp.example', email_verified: true, preferred_username: 'robert' });
    await ssoSignIn(p, 'bob-verified');
    expect(await viewerOf(p)).toBe('bob');
    await fresh.close();
  });

  it('refuses a replayed callback and a state nobody made', async () => {
    const ctx2 = await browser.newContext();
    const p = await ctx2.newPage();
    let callback = '';
    p.on('request', (r) => {
      if (r.url().includes('/auth/oidc/corp/callback')) callback ||= r.url();
    });
    await ssoSignIn(p, 'jane');
    expect(callback).toContain('code=');
    // The same callback again: its state was taken.
    const replay = await p.goto(callback);
    expect(replay?.status()).toBe(403);
    expect(await p.locator('h1').textContent()).toBe('Sign-in refused');
    // A state nobody made.
    expect((await p.goto(`${origin}/auth/oidc/corp/callback?code=x&state=made-up`))?.status()).toBe(403);
    expect(await viewerOf(p)).toBe('jane');
    await ctx2.close();
    expect(await failures()).toEqual(expect.arrayContaining(['unknown or used state']));
  });
});

/** A sign-in at the hostile provider, by HTTP, up to its callback (its authorize answers at once): the callback URL and the browser's cookie. */
async function hostileCallback(): Promise<{ callback: string; cookie: string }> {
  const start = await fetch(`${origin}/auth/oidc/evil/login`, { redirect: 'manual' });
  const cookie = (start.headers.get('set-cookie') ?? '').split(';')[0]!;
  const authorize = await fetch(start.headers.get('location')!, { redirect: 'manual' });
  return { callback: authorize.headers.get('location')!, cookie };
}
const complete = (callback: string, cookie: string) => fetch(callback, { redirect: 'manual', headers: { cookie } });
async function hostileSignIn(): Promise<Response> {
  const { callback, cookie } = await hostileCallback();
  return complete(callback, cookie);
}

describe('ID tokens a hostile provider breaks', () => {
  it('signs in with a sound token (the harness works)', async () => {
    evil.breakage = 'none';
    const res = await hostileSignIn();
    expect(res.status).toBe(302);
    expect(res.headers.get('set-cookie')).toMatch(/lectern_session=/);
  });

  it.each(['other-key', 'wrong-audience', 'expired', 'tampered', 'wrong-issuer'] as Breakage[])(
    'refuses a token %s: no session, and the failure logged',
    async (breakage) => {
      evil.breakage = breakage;
      const before = (await failures()).length;
      const res = await hostileSignIn();
      expect(res.status).toBe(403);
      expect(res.headers.get('set-cookie') ?? '').not.toMatch(/lectern_session=/);
      expect((await failures()).length).toBe(before + 1);
    },
  );
});

describe('callbacks forged or replayed (at a provider that signs in anyone at once)', () => {
  it('refuses a code used again with a new state, a callback from another browser, and a replay of a used one', async () => {
    evil.breakage = 'none';
    const first = await hostileCallback();
    expect((await complete(first.callback, first.cookie)).status).toBe(302);
    // The same callback again: its state was taken.
    expect((await complete(first.callback, first.cookie)).status).toBe(403);
    // The used code with a new sign-in's state, in that sign-in's browser: the provider refuses the code.
    const second = await hostileCallback();
    const forged = new URL(second.callback);
    forged.searchParams.set('code', new URL(first.callback).searchParams.get('code')!);
    const reused = await complete(forged.href, second.cookie);
    expect(reused.status).toBe(403);
    expect(reused.headers.get('set-cookie') ?? '').not.toMatch(/lectern_session=/);
    // A pending sign-in's own callback, from a browser without its cookie (or with another's).
    const third = await hostileCallback();
    const fourth = await hostileCallback();
    expect((await complete(third.callback, '')).status).toBe(403);
    expect((await complete(fourth.callback, third.cookie)).status).toBe(403);
    expect(await failures()).toEqual(expect.arrayContaining(['unknown or used state', 'another browser', expect.stringMatching(/invalid_grant/)]));
  });
});

describe('an organization that signs in with SSO only', () => {
  it("refuses its members' passwords, and tells them why; a site admin's still works", async () => {
    await t.db.prisma.user.update({ where: { username: 'jane' }, data: { passwordHash: await hashPassword('a long enough password 1') } });
    await t.db.prisma.organizationMember
      .create({
        data: {
          organizationId: (await t.db.prisma.organization.findUniqueOrThrow({ where: { slug: 'acme' } })).id,
          userId: (await t.db.prisma.user.findUniqueOrThrow({ where: { username: 'jane' } })).id,
        },
      })
      .catch(() => {});
    await t.gql(`mutation { updateOrganization(organization: "acme", input: { ssoOnly: true }) { __typename } }`, {}, admin);
    const signIn = (u: string, p: string) =>
      fetch(`${origin}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin },
        body: JSON.stringify({
          query: `mutation($u: String!, $p: String!) { signIn(username: $u, password: $p) { __typename ... on Error { message } } }`,
          variables: { u, p },
        }),
      }).then(async (r) => (await r.json()).data.signIn);
    expect(await signIn('jane', 'a long enough password 1')).toEqual({ __typename: 'ForbiddenError', message: 'Members of Acme sign in with single sign-on.' });
    await t.db.prisma.user.update({ where: { username: 'root' }, data: { passwordHash: await hashPassword('the admin password 22') } });
    expect((await signIn('root', 'the admin password 22')).__typename).toBe('MutationSignInSuccess');
  });
});
