// Sessions against a hostile user (issue 21; docs/design/sessions.md). The session cookie is
// host-bound: `__Host-` prefixed, Secure, Path=/ and without Domain over TLS (https itself, a TLS
// proxy LECTERN_TRUSTED_PROXIES names, or an https public URL), a plain host-only name over http;
// a cookie of the same name planted for the parent domain or another path never speaks as the
// session. A password change by any path (changePassword, an admin's changeUser, the command line)
// ends every other session of the user; disabling deletes them for good. Sign-in throttling slows
// a guesser without locking the owner out, and common or blank passwords are refused on every path.
import { rmSync } from 'node:fs';
import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { FRESH_CLIENT_TRIES } from '../../src/db/throttle.ts';
import { createUser, firstRunSetupCode } from '../../src/domain/users.ts';
import { createLogger } from '../../src/log.ts';
import { TEST_SECRET_KEY, type TestApp, testApp } from '../helpers/app.ts';
import { cliEnv, killChildren, runCli, show } from '../helpers/cli-process.ts';

const ORIGIN = 'http://lectern.test';
const SIGN_IN = `mutation($u: String!, $p: String!) { signIn(username: $u, password: $p) {
  __typename ... on Error { message } ... on ThrottledError { retryAfter } } }`;

interface Call {
  cookie?: string;
  /** The client's address, as the trusted proxy (127.0.0.1) says in X-Forwarded-For. */
  from?: string;
  proto?: 'http' | 'https';
  origin?: string;
}

/** A GraphQL request as Lectern's own page makes it, with no cookie jar: cookies are passed by hand. */
async function gql(t: TestApp, query: string, variables: Record<string, unknown> = {}, call: Call = {}) {
  const req = supertest(t.handler)
    .post('/graphql')
    .set('origin', call.origin ?? ORIGIN)
    .set('content-type', 'application/json')
    .set('accept', 'application/json');
  if (call.cookie) req.set('cookie', call.cookie);
  if (call.from) req.set('x-forwarded-for', call.from);
  if (call.proto) req.set('x-forwarded-proto', call.proto);
  const res = await req.send({ query, variables });
  return { res, data: res.body.data as Record<string, any> | undefined, errors: res.body.errors };
}

const setCookies = (res: supertest.Response) => ([] as string[]).concat(res.headers['set-cookie'] ?? []);

async function signIn(t: TestApp, u: string, p: string, call: Call = {}) {
  const { res, data } = await gql(t, SIGN_IN, { u, p }, call);
  const header = setCookies(res).find((c) => /^(__Host-)?lectern_session=/.test(c));
  return { answer: data?.signIn, header, cookie: header?.split(';')[0] };
}

const viewer = async (t: TestApp, cookie: string, call: Call = {}) => (await gql(t, '{ viewer { username } }', {}, { cookie, ...call })).data?.viewer ?? null;

describe('the session cookie', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ LECTERN_TRUSTED_PROXIES: '127.0.0.1,::1', LECTERN_DOCS_DOMAIN: 'docs.lectern.test' });
    for (const name of ['alice', 'mallory']) await createUser(t.db.prisma, name, { password: `${name}-password-1` });
  });
  afterAll(() => t?.close());

  it('over TLS (a trusted proxy saying https) is __Host- prefixed, Secure, Path=/, HttpOnly, with no Domain', async () => {
    const { header, cookie } = await signIn(t, 'alice', 'alice-password-1', { proto: 'https' });
    expect(header).toMatch(/^__Host-lectern_session=[\w-]{43}; /);
    const attributes = header!.split(';').map((a) => a.trim().toLowerCase().split('=')[0]);
    expect(attributes).toEqual(expect.arrayContaining(['path', 'httponly', 'secure', 'samesite']));
    expect(attributes).not.toContain('domain');
    expect(header).toMatch(/; Path=\/(;|$)/);
    expect(await viewer(t, cookie!, { proto: 'https' })).toEqual({ username: 'alice' });
    // The same id under the plain name is not read over TLS: any host of the parent domain could have set that one.
    expect(await viewer(t, cookie!.replace('__Host-', ''), { proto: 'https' })).toBeNull();
    // Signing out clears the __Host- cookie with the attributes it was set with.
    const out = await gql(t, 'mutation { signOut }', {}, { cookie, proto: 'https' });
    expect(setCookies(out.res).find((c) => c.startsWith('__Host-lectern_session=;'))).toMatch(/; Path=\/; .*Secure/);
    expect(await viewer(t, cookie!, { proto: 'https' })).toBeNull();
  });

  it('over http is host-only (no Domain, Path=/) with a plain name, and not Secure', async () => {
    const { header } = await signIn(t, 'alice', 'alice-password-1', { proto: 'http' });
    expect(header).toMatch(/^lectern_session=[\w-]{43}; /);
    expect(header).not.toMatch(/Domain=/i);
    expect(header).not.toMatch(/Secure/i);
    expect(header).toMatch(/; Path=\/(;|$)/);
  });

  it('is never taken from a cookie planted for the parent domain or another path, whichever comes first', async () => {
    const victim = (await signIn(t, 'alice', 'alice-password-1')).cookie!;
    const planted = (await signIn(t, 'mallory', 'mallory-password-1')).cookie!;
    // A docs host page set lectern_session=<mallory's> for Domain=lectern.test; Path=/graphql: the
    // browser sends both, the longer path first. Neither counts, so the victim never acts as mallory.
    for (const cookie of [`${planted}; ${victim}`, `${victim}; ${planted}`, `${planted}; other=1; ${planted}`, `${victim};${victim}`]) {
      expect(await viewer(t, cookie), cookie).toBeNull();
      const write = await gql(t, 'mutation { createToken(name: "planted") { __typename } }', {}, { cookie });
      expect(write.data?.createToken.__typename).toBe('UnauthenticatedError');
    }
    // Signing in again does not help the attacker either: it is refused, saying why.
    const again = await signIn(t, 'alice', 'alice-password-1', { cookie: `${planted}; ${victim}` });
    expect(again.answer).toMatchObject({ __typename: 'ForbiddenError', message: expect.stringMatching(/more than one Lectern session cookie/) });
    expect(again.cookie).toBeUndefined();
    // Over TLS only the __Host- cookie is read, whatever else comes with it.
    const secure = (await signIn(t, 'alice', 'alice-password-1', { proto: 'https' })).cookie!;
    expect(await viewer(t, `${planted}; ${secure}`, { proto: 'https' })).toEqual({ username: 'alice' });
    expect(await viewer(t, planted, { proto: 'https' })).toBeNull();
    expect(await t.db.prisma.apiToken.count({ where: { name: 'planted' } })).toBe(0);
  });

  it('is __Host- prefixed with an https public URL even when the proxy in front is not named', async () => {
    const behind = await testApp({ LECTERN_PUBLIC_URL: 'https://lectern.example.org' });
    try {
      await createUser(behind.db.prisma, 'alice', { password: 'alice-password-1' });
      const { header, cookie } = await signIn(behind, 'alice', 'alice-password-1', { origin: 'https://lectern.example.org', proto: 'https' });
      expect(header).toMatch(/^__Host-lectern_session=.*; Secure/);
      expect(await viewer(behind, cookie!, { origin: 'https://lectern.example.org' })).toEqual({ username: 'alice' });
      expect(await viewer(behind, cookie!.replace('__Host-', ''), { origin: 'https://lectern.example.org' })).toBeNull();
    } finally {
      await behind.close();
    }
  });

  it('X-Forwarded-Proto from a client that is not a trusted proxy does not count as TLS', async () => {
    const direct = await testApp();
    try {
      await createUser(direct.db.prisma, 'alice', { password: 'alice-password-1' });
      const { header } = await signIn(direct, 'alice', 'alice-password-1', { proto: 'https' });
      expect(header).toMatch(/^lectern_session=/);
    } finally {
      await direct.close();
    }
  });
});

describe('a password change', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
    await createUser(t.db.prisma, 'root', { password: 'root-password-1', isAdmin: true });
    for (const name of ['bob', 'carol', 'dave']) await createUser(t.db.prisma, name, { password: `${name}-password-1` });
  });
  afterAll(() => t?.close());

  const sessions = async (u: string, n: number) => {
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push((await signIn(t, u, `${u}-password-1`)).cookie!);
    return out;
  };

  it("by changePassword ends every other session of the user; the one that changed it stays, and other users' stay", async () => {
    const [here, laptop, stolen] = await sessions('bob', 3);
    const [carol] = await sessions('carol', 1);
    const change = await gql(
      t,
      'mutation($i: ChangePasswordInput!) { changePassword(input: $i) { __typename } }',
      { i: { currentPassword: 'bob-password-1', newPassword: 'bob-new-passphrase-2' } },
      { cookie: here },
    );
    expect(change.data?.changePassword.__typename).toBe('MutationChangePasswordSuccess');
    expect(await viewer(t, here!)).toEqual({ username: 'bob' });
    expect(await viewer(t, laptop!)).toBeNull();
    expect(await viewer(t, stolen!)).toBeNull();
    expect(await viewer(t, carol!)).toEqual({ username: 'carol' });
    expect(await t.db.prisma.session.count({ where: { user: { username: 'bob' } } })).toBe(1);
  });

  it('by an API token (no session) ends every session of the user', async () => {
    const { token } = await createUser(t.db.prisma, 'erin', { password: 'erin-password-1' });
    const [a, b] = await sessions('erin', 2);
    const change = await t.gql(
      'mutation($i: ChangePasswordInput!) { changePassword(input: $i) { __typename } }',
      { i: { currentPassword: 'erin-password-1', newPassword: 'erin-new-passphrase-2' } },
      token,
    );
    expect(change.data.changePassword.__typename).toBe('MutationChangePasswordSuccess');
    expect([await viewer(t, a!), await viewer(t, b!)]).toEqual([null, null]);
  });

  it("by an admin (changeUser's password) ends every session of that user, and not the admin's", async () => {
    const [admin] = await sessions('root', 1);
    const [c1, c2] = await sessions('carol', 2);
    const set = await gql(
      t,
      'mutation($i: ChangeUserInput!) { changeUser(username: "carol", input: $i) { __typename ... on ValidationError { fieldErrors { field messages } } } }',
      { i: { password: 'carol-reset-passphrase-3' } },
      { cookie: admin },
    );
    expect(set.data?.changeUser.__typename).toBe('MutationChangeUserSuccess');
    expect([await viewer(t, c1!), await viewer(t, c2!)]).toEqual([null, null]);
    expect(await viewer(t, admin!)).toEqual({ username: 'root' });
    // Carol signs in with the new one.
    expect((await signIn(t, 'carol', 'carol-reset-passphrase-3')).answer.__typename).toBe('MutationSignInSuccess');
  });

  it('disabling deletes the sessions: enabling the user again brings none back', async () => {
    const [admin] = await sessions('root', 1);
    const [d1, d2] = await sessions('dave', 2);
    const change = (disabled: boolean) =>
      gql(t, 'mutation($d: Boolean) { changeUser(username: "dave", input: { disabled: $d }) { __typename } }', { d: disabled }, { cookie: admin });
    expect((await change(true)).data?.changeUser.__typename).toBe('MutationChangeUserSuccess');
    expect(await t.db.prisma.session.count({ where: { user: { username: 'dave' } } })).toBe(0);
    expect((await change(false)).data?.changeUser.__typename).toBe('MutationChangeUserSuccess');
    expect([await viewer(t, d1!), await viewer(t, d2!)]).toEqual([null, null]);
    // Dave himself signs in again as before.
    expect((await signIn(t, 'dave', 'dave-password-1')).answer.__typename).toBe('MutationSignInSuccess');
  });
});

describe('`lectern user set-password`', () => {
  afterAll(() => killChildren());

  it('ends every session of the user, on the same database the server uses', async () => {
    const t = await testApp();
    let reopened: Awaited<ReturnType<typeof openDatabase>> | undefined;
    try {
      await createUser(t.db.prisma, 'frank', { password: 'frank-password-1' });
      await createUser(t.db.prisma, 'gina', { password: 'gina-password-1' });
      const frank = [(await signIn(t, 'frank', 'frank-password-1')).cookie!, (await signIn(t, 'frank', 'frank-password-1')).cookie!];
      const gina = (await signIn(t, 'gina', 'gina-password-1')).cookie!;
      // The embedded database is one process's: the server stops while the command runs, as an operator would.
      await t.db.close();
      const env = cliEnv({ LECTERN_DATA_DIR: t.dataDir, DATABASE_URL: t.databaseUrl });
      const args = ['user', 'set-password', 'frank'];
      const weak = await runCli(args, env, 60_000, '12345678\n');
      expect(weak.code, show(args, weak)).toBe(1);
      expect(weak.stderr).toMatch(/^lectern: password: This password is too common/m);
      const set = await runCli(args, env, 60_000, 'frank-new-passphrase-2\n');
      expect(set.code, show(args, set)).toBe(0);
      expect(set.stdout + set.stderr).not.toContain('frank-new-passphrase-2');
      reopened = await openDatabase({ dataDir: t.dataDir, databaseUrl: t.databaseUrl });
      const config = loadConfig({ LECTERN_DATA_DIR: t.dataDir, LECTERN_PUBLIC_URL: ORIGIN, LECTERN_LOG_LEVEL: 'silent' });
      const again = { ...t, handler: buildApp({ config, db: reopened, log: createLogger('silent'), secretKey: TEST_SECRET_KEY }).handler };
      expect(await viewer(again, frank[0]!)).toBeNull();
      expect(await viewer(again, frank[1]!)).toBeNull();
      expect(await viewer(again, gina)).toEqual({ username: 'gina' });
      expect((await signIn(again, 'frank', 'frank-new-passphrase-2')).answer.__typename).toBe('MutationSignInSuccess');
    } finally {
      await reopened?.close();
      // The test database's own connection was closed above; drop() closes it again and removes the data.
      await t.close().catch(() => rmSync(t.dataDir, { recursive: true, force: true }));
    }
  }, 120_000);
});

describe('sign-in throttling', () => {
  it('slows a guesser from one address without locking the owner out of a client that has not failed', async () => {
    const t = await testApp({ LECTERN_TRUSTED_PROXIES: '127.0.0.1,::1', LECTERN_SIGNIN_THROTTLE: '30/hour' });
    try {
      await createUser(t.db.prisma, 'owner', { password: 'owner-password-1' });
      const attacker = '203.0.113.7';
      // 30 wrong passwords are answered; from then on the attacker's client waits, even with the right one.
      for (let i = 0; i < 30; i++)
        expect((await signIn(t, 'owner', `guess-${i}-password`, { from: attacker })).answer.__typename, `${i}`).toBe('UnauthenticatedError');
      for (let i = 0; i < 3; i++) {
        const refused = await signIn(t, 'owner', i === 2 ? 'owner-password-1' : `guess-more-${i}`, { from: attacker });
        expect(refused.answer).toMatchObject({ __typename: 'ThrottledError', retryAfter: expect.any(Number) });
        expect(refused.cookie).toBeUndefined();
      }
      // The owner, from a client that has not failed, signs in at once, and can do so again and again.
      for (let i = 0; i < 3; i++) {
        const owner = await signIn(t, 'owner', 'owner-password-1', { from: '198.51.100.20' });
        expect(owner.answer.__typename).toBe('MutationSignInSuccess');
        expect(await viewer(t, owner.cookie!)).toEqual({ username: 'owner' });
      }
      // Even after a typo of their own.
      expect((await signIn(t, 'owner', 'owner-pasword-1', { from: '198.51.100.21' })).answer.__typename).toBe('UnauthenticatedError');
      expect((await signIn(t, 'owner', 'owner-password-1', { from: '198.51.100.21' })).answer.__typename).toBe('MutationSignInSuccess');
      // An IPv6 client is a client of its own too.
      expect((await signIn(t, 'owner', 'owner-password-1', { from: '2001:db8::5' })).answer.__typename).toBe('MutationSignInSuccess');
    } finally {
      await t.close();
    }
  }, 120_000);

  it('slows a guesser spread over many addresses: once the account has failed the rate, each new address gets a few tries', async () => {
    const t = await testApp({ LECTERN_TRUSTED_PROXIES: '127.0.0.1,::1', LECTERN_SIGNIN_THROTTLE: '4/hour' });
    try {
      await createUser(t.db.prisma, 'owner', { password: 'owner-password-1' });
      // Four failures from four addresses: the account's rate is used up.
      for (let i = 0; i < 4; i++)
        expect((await signIn(t, 'owner', `guess-${i}`, { from: `203.0.113.${i + 1}` })).answer.__typename).toBe('UnauthenticatedError');
      // A fifth address gets FRESH_CLIENT_TRIES tries at the account, then waits.
      const next = '203.0.113.99';
      for (let i = 0; i < FRESH_CLIENT_TRIES; i++)
        expect((await signIn(t, 'owner', `more-${i}`, { from: next })).answer.__typename).toBe('UnauthenticatedError');
      expect((await signIn(t, 'owner', 'more-x', { from: next })).answer.__typename).toBe('ThrottledError');
      // A successful sign-in counts against nothing: the owner signs in more often than the rate.
      for (let i = 0; i < 6; i++)
        expect((await signIn(t, 'owner', 'owner-password-1', { from: '198.51.100.7' })).answer.__typename).toBe('MutationSignInSuccess');
      // Another account is not slowed by this one's attack.
      await createUser(t.db.prisma, 'other', { password: 'other-password-1' });
      expect((await signIn(t, 'other', 'other-password-1', { from: next })).answer.__typename).toBe('MutationSignInSuccess');
    } finally {
      await t.close();
    }
  }, 120_000);
});

describe('new passwords', () => {
  let t: TestApp;
  let adminToken: string;
  beforeAll(async () => {
    t = await testApp();
    adminToken = (await createUser(t.db.prisma, 'root', { password: 'root-password-1', isAdmin: true })).token;
  });
  afterAll(() => t?.close());

  const COMMON = ['12345678', 'password', 'PASSWORD', 'password1', 'iloveyou', 'qwertyuiop', 'sunshine', '  12345678  '];
  const BLANK = ['        ', '\t\t\t\t\t\t\t\t', ' \u00a0 \u00a0 \u00a0 \u00a0', ''];

  const reason = (p: string) => (p.trim() === '' ? /blank/ : /too common/);

  it('common or blank ones are refused by createUser, changePassword and changeUser, naming the field and why', async () => {
    const { token } = await createUser(t.db.prisma, 'hank', { password: 'hank-password-1' });
    for (const p of [...COMMON, ...BLANK]) {
      const create = await t.gql(
        'mutation($i: CreateUserInput!) { createUser(input: $i) { __typename ... on ValidationError { fieldErrors { field messages } } } }',
        { i: { username: 'newcomer', password: p } },
        adminToken,
      );
      expect(create.data.createUser.fieldErrors, JSON.stringify(p)).toEqual([{ field: 'password', messages: [expect.stringMatching(reason(p))] }]);
      const change = await t.gql(
        'mutation($i: ChangePasswordInput!) { changePassword(input: $i) { __typename ... on ValidationError { fieldErrors { field messages } } } }',
        { i: { currentPassword: 'hank-password-1', newPassword: p } },
        token,
      );
      expect(change.data.changePassword.fieldErrors, JSON.stringify(p)).toEqual([{ field: 'newPassword', messages: [expect.stringMatching(reason(p))] }]);
      const reset = await t.gql(
        'mutation($i: ChangeUserInput!) { changeUser(username: "hank", input: $i) { __typename ... on ValidationError { fieldErrors { field messages } } } }',
        { i: { password: p } },
        adminToken,
      );
      expect(reset.data.changeUser.fieldErrors, JSON.stringify(p)).toEqual([{ field: 'password', messages: [expect.stringMatching(reason(p))] }]);
    }
    expect(await t.db.prisma.user.count({ where: { username: 'newcomer' } })).toBe(0);
    expect((await signIn(t, 'hank', 'hank-password-1')).answer.__typename).toBe('MutationSignInSuccess');
    // The messages say what was wrong, never the password.
    const shown = await t.gql(
      'mutation { createUser(input: { username: "x1", password: "12345678" }) { ... on ValidationError { message } } }',
      {},
      adminToken,
    );
    expect(JSON.stringify(shown)).not.toContain('12345678');
  });

  it('the first run setup refuses them too', async () => {
    const fresh = await testApp();
    try {
      const code = (await firstRunSetupCode(fresh.db.prisma))!;
      for (const p of ['12345678', 'password', '        ']) {
        const r = await gql(
          fresh,
          'mutation($i: SetUpInput!) { setUpFirstAdmin(input: $i) { __typename ... on ValidationError { fieldErrors { field messages } } } }',
          { i: { code, username: 'admin', password: p } },
        );
        expect(r.data?.setUpFirstAdmin.fieldErrors, JSON.stringify(p)).toEqual([{ field: 'password', messages: [expect.stringMatching(reason(p))] }]);
      }
      expect(await fresh.db.prisma.user.count()).toBe(0);
    } finally {
      await fresh.close();
    }
  });
});
