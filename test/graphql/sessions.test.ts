// Signing in and out through /graphql (issue 12): the session cookie, who it speaks for and where.
// A cookie authenticates only a POST of JSON whose Origin is Lectern's own (what the dashboard
// sends, and what a project's page on its own docs origin, a sandboxed docs page on Lectern's
// origin or another site cannot send; test/security/docs-sandbox.test.ts tries it in Chromium). Sign-in is throttled per
// account and per address and answers the same for an unknown user and a wrong password; signing
// out, idling past the limit and a disabled user each end a session.
import { randomBytes, scryptSync } from 'node:crypto';
import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, SIGN_IN_REFUSED } from '../../src/domain/users.ts';
import { hashToken } from '../../src/secrets.ts';
import { type TestApp, testApp } from '../helpers/app.ts';

const ORIGIN = 'http://lectern.test';
const ERRORS = `... on Error { __typename code status message } ... on ThrottledError { retryAfter }`;
const SIGN_IN = `mutation($u: String!, $p: String!) { signIn(username: $u, password: $p) { __typename ... on MutationSignInSuccess { data { username } } ${ERRORS} } }`;

let t: TestApp;

interface Call {
  origin?: string | null;
  cookie?: string;
  contentType?: string;
}

/** A GraphQL request as a browser page at `origin` makes it (Lectern's own by default), with no jar: cookies are passed by hand. */
async function gql(query: string, variables: Record<string, unknown> = {}, call: Call = {}) {
  const req = supertest(t.handler).post('/graphql').set('accept', 'application/json');
  const origin = call.origin === undefined ? ORIGIN : call.origin;
  if (origin !== null) req.set('origin', origin);
  if (call.cookie) req.set('cookie', call.cookie);
  const contentType = call.contentType ?? 'application/json';
  req.set('content-type', contentType);
  const res = await req.send(contentType === 'application/json' ? { query, variables } : `query=${encodeURIComponent(query)}`);
  return { res, body: res.body as { data?: Record<string, any>; errors?: { extensions?: { code?: string } }[] } };
}

/** The session cookie a response set (name=value), or undefined. */
function sessionCookie(res: supertest.Response): string | undefined {
  const set = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  return set.find((c) => c.startsWith('lectern_session='))?.split(';')[0];
}

async function signIn(username: string, password: string, call: Call = {}) {
  const { res, body } = await gql(SIGN_IN, { u: username, p: password }, call);
  return { res, answer: body.data?.signIn, cookie: sessionCookie(res) };
}

const viewer = async (cookie: string, call: Call = {}) => (await gql('{ viewer { username } }', {}, { cookie, ...call })).body.data?.viewer ?? null;

beforeAll(async () => {
  t = await testApp({ LECTERN_DOCS_DOMAIN: 'docs.lectern.test', LECTERN_SIGNIN_THROTTLE: '5/hour' });
  for (const name of ['alice', 'bob', 'carol', 'dave', 'erin']) await createUser(t.db.prisma, name, { password: `${name}-password-1` });
});
afterAll(() => t.close());

describe('signing in', () => {
  it('sets an HttpOnly, SameSite=Lax session cookie that speaks for the user on /graphql; the database keeps only its hash', async () => {
    const { res, answer, cookie } = await signIn('alice', 'alice-password-1');
    expect(answer).toEqual({ __typename: 'MutationSignInSuccess', data: { username: 'alice' } });
    const header = ([] as string[]).concat(res.headers['set-cookie']).find((c) => c.startsWith('lectern_session='))!;
    expect(header).toMatch(/; HttpOnly/);
    expect(header).toMatch(/; SameSite=Lax/);
    expect(header).toMatch(/; Path=\//);
    expect(header).not.toMatch(/; Secure/); // http://lectern.test; under https it is Secure
    expect(await viewer(cookie!)).toEqual({ username: 'alice' });
    const id = cookie!.split('=')[1]!;
    const rows = await t.db.prisma.session.findMany({ where: { user: { username: 'alice' } } });
    expect(rows.map((r) => r.idHash)).toContain(hashToken(id));
    expect(JSON.stringify(rows)).not.toContain(id);
  });

  it('takes a password stored by an earlier version (scrypt) and stores it again as Argon2id', async () => {
    // The format Lectern stored passwords in before Argon2id: scrypt$<log2 N>$<r>$<p>$<salt>$<hash>.
    const salt = randomBytes(16);
    const key = scryptSync('grace-password-1', salt, 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
    const old = `scrypt$15$8$1$${salt.toString('base64')}$${key.toString('base64')}`;
    const grace = await createUser(t.db.prisma, 'grace');
    await t.db.prisma.user.update({ where: { id: grace.user.id }, data: { passwordHash: old } });
    const stored = async () => (await t.db.prisma.user.findUniqueOrThrow({ where: { id: grace.user.id } })).passwordHash;

    expect((await signIn('grace', 'not-graces-password')).answer.__typename).toBe('UnauthenticatedError');
    expect(await stored()).toBe(old);
    const { answer, cookie } = await signIn('grace', 'grace-password-1');
    expect(answer).toEqual({ __typename: 'MutationSignInSuccess', data: { username: 'grace' } });
    expect(await viewer(cookie!)).toEqual({ username: 'grace' });
    expect(await stored()).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect((await signIn('grace', 'grace-password-1')).answer.__typename).toBe('MutationSignInSuccess');
    expect((await signIn('grace', 'not-graces-password')).answer.__typename).toBe('UnauthenticatedError');
  });

  it('answers the same for an unknown user, a wrong password and a disabled user, and sets no cookie', async () => {
    await createUser(t.db.prisma, 'frank', { password: 'frank-password-1' });
    await t.db.prisma.user.update({ where: { username: 'frank' }, data: { disabledAt: new Date() } });
    const answers = [await signIn('nobody', 'whatever-1'), await signIn('bob', 'not-bobs-password'), await signIn('frank', 'frank-password-1')];
    for (const a of answers) {
      expect(a.answer).toEqual({ __typename: 'UnauthenticatedError', code: 'UNAUTHENTICATED', status: 401, message: SIGN_IN_REFUSED });
      expect(a.cookie).toBeUndefined();
    }
  });

  it("is refused from any page but Lectern's own: no session for another origin, a form post or a page with no origin (login CSRF)", async () => {
    for (const call of [
      { origin: 'http://evil.docs.lectern.test' },
      { origin: 'null' },
      { origin: null },
      { contentType: 'application/x-www-form-urlencoded' },
    ]) {
      const { answer, cookie, res } = await signIn('carol', 'carol-password-1', call);
      expect(cookie, JSON.stringify(call)).toBeUndefined();
      if (answer) expect(answer).toMatchObject({ __typename: 'ForbiddenError' });
      else expect(res.status).not.toBe(200);
    }
  });

  it('is throttled per account (the rate set) and per address (ten times it)', async () => {
    for (let i = 0; i < 5; i++) expect((await signIn('dave', `wrong-${i}-password`)).answer.__typename).toBe('UnauthenticatedError');
    const sixth = await signIn('dave', 'dave-password-1');
    expect(sixth.answer).toMatchObject({ __typename: 'ThrottledError', code: 'THROTTLED', status: 429 });
    expect(sixth.answer.retryAfter).toBeGreaterThan(0);
    expect(sixth.cookie).toBeUndefined();
    // Another account from the same address still gets in, until the address has made 50 attempts.
    expect((await signIn('bob', 'bob-password-1')).cookie).toBeDefined();
  });
});

describe('from one address', () => {
  it('at most ten times the rate of attempts are let through, whichever accounts they name', async () => {
    const one = await testApp({ LECTERN_DOCS_DOMAIN: 'docs.lectern.test', LECTERN_SIGNIN_THROTTLE: '2/hour' });
    try {
      await createUser(one.db.prisma, 'target', { password: 'target-password-1' });
      const attempt = async (u: string) =>
        (
          await supertest(one.handler)
            .post('/graphql')
            .set('origin', ORIGIN)
            .set('content-type', 'application/json')
            .send({ query: SIGN_IN, variables: { u, p: 'guess-password' } })
        ).body.data.signIn.__typename;
      // 20 attempts over 10 accounts (2 each, the rate per account) are answered; the 21st is not.
      for (let i = 0; i < 20; i++) expect(await attempt(`user${i % 10}`)).toBe('UnauthenticatedError');
      expect(await attempt('target')).toBe('ThrottledError');
    } finally {
      await one.close();
    }
  });
});

describe('a session cookie', () => {
  it("is ignored unless the request is a POST of JSON from Lectern's own origin: a docs page or another site gets nothing", async () => {
    const { cookie } = await signIn('bob', 'bob-password-1', { origin: ORIGIN });
    expect(await viewer(cookie!)).toEqual({ username: 'bob' });
    for (const call of [{ origin: 'http://bob-docs.docs.lectern.test' }, { origin: 'null' }, { origin: null }]) {
      expect(await viewer(cookie!, call), JSON.stringify(call)).toBeNull();
      const write = await gql(`mutation { createToken(name: "stolen") { __typename } }`, {}, { cookie, ...call });
      expect(write.body.data?.createToken.__typename).toBe('UnauthenticatedError');
    }
    const get = await supertest(t.handler).get('/graphql').query({ query: '{ viewer { username } }' }).set('cookie', cookie!).set('accept', 'application/json');
    expect(get.body).toEqual({ data: { viewer: null } });
    expect(await t.db.prisma.apiToken.count({ where: { name: 'stolen' } })).toBe(0);
  });

  it('ends when its user signs out, in every process: the cookie is cleared and no longer signs anyone in', async () => {
    const { cookie } = await signIn('carol', 'carol-password-1');
    const out = await gql('mutation { signOut }', {}, { cookie });
    expect(out.body.data).toEqual({ signOut: true });
    const cleared = ([] as string[]).concat(out.res.headers['set-cookie'] ?? []).find((c) => c.startsWith('lectern_session='));
    expect(cleared).toMatch(/Expires=Thu, 01 Jan 1970/);
    expect(await viewer(cookie!)).toBeNull();
    expect(await t.db.prisma.session.count({ where: { user: { username: 'carol' } } })).toBe(0);
  });

  it('ends after LECTERN_SESSION_IDLE_SECONDS unused, and at once when its user is disabled', async () => {
    const idle = await signIn('erin', 'erin-password-1');
    await t.db.prisma.session.updateMany({ where: { user: { username: 'erin' } }, data: { lastSeenAt: new Date(Date.now() - 8 * 86_400_000) } });
    expect(await viewer(idle.cookie!)).toBeNull();
    expect(await t.db.prisma.session.count({ where: { user: { username: 'erin' } } })).toBe(0);

    const fresh = await signIn('erin', 'erin-password-1');
    expect(await viewer(fresh.cookie!)).toEqual({ username: 'erin' });
    await t.db.prisma.user.update({ where: { username: 'erin' }, data: { disabledAt: new Date() } });
    expect(await viewer(fresh.cookie!)).toBeNull();
  });

  it('leaves token clients as they were: a token needs no Origin, and wins over a cookie', async () => {
    const { token } = await createUser(t.db.prisma, 'gina');
    const res = await supertest(t.handler)
      .post('/graphql')
      .set('authorization', `Token ${token}`)
      .set('content-type', 'application/json')
      .send({ query: '{ viewer { username } }' });
    expect(res.body).toEqual({ data: { viewer: { username: 'gina' } } });
  });
});

describe('without LECTERN_DOCS_DOMAIN', () => {
  it("signs in as well: a project's pages share the host, but are served sandboxed in an opaque origin", async () => {
    const plain = await testApp();
    try {
      await createUser(plain.db.prisma, 'alice', { password: 'alice-password-1' });
      const res = await supertest(plain.handler)
        .post('/graphql')
        .set('origin', ORIGIN)
        .set('content-type', 'application/json')
        .send({ query: SIGN_IN, variables: { u: 'alice', p: 'alice-password-1' } });
      expect(res.body.data.signIn).toEqual({ __typename: 'MutationSignInSuccess', data: { username: 'alice' } });
      expect(sessionCookie(res)).toBeDefined();
      expect((await supertest(plain.handler).get('/docs/anything/')).headers['content-security-policy']).toMatch(/^sandbox allow-scripts/);
    } finally {
      await plain.close();
    }
  });
});
