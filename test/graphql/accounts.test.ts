// Accounts through /graphql (issue 12, the part the dashboard stands on): a user's own API tokens
// (made with a name and shown once, listed with when each was last used, revoked so that the API
// refuses them at once), their password (stored as an Argon2id hash, changed only with the current
// one), and site admins managing users (create, make admin, disable: a disabled user's tokens are
// refused at once; the last admin stays one). Who may read what: a user's account is theirs and
// admins', their tokens theirs alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyPassword } from '../../src/domain/passwords.ts';
import { createUser } from '../../src/domain/users.ts';
import { type TestApp, testApp } from '../helpers/app.ts';

let t: TestApp;
let alice: string;
let bob: string;
let root: string;

const ERRORS = `... on Error { code status message } ... on ValidationError { fieldErrors { field messages } } ... on NotFoundError { model }`;
const CREATE_TOKEN = `mutation($name: String!) { createToken(name: $name) { __typename ... on MutationCreateTokenSuccess { data { key token { id name prefix lastUsedAt } } } ${ERRORS} } }`;
const REVOKE_TOKEN = `mutation($id: Int!) { revokeToken(id: $id) { __typename ... on MutationRevokeTokenSuccess { data { id name } } ${ERRORS} } }`;
const TOKENS = `{ viewer { username tokens { id name prefix createdAt lastUsedAt } } }`;
const CHANGE_PASSWORD = `mutation($input: ChangePasswordInput!) { changePassword(input: $input) { __typename ... on MutationChangePasswordSuccess { data } ${ERRORS} } }`;
const CREATE_USER = `mutation($input: CreateUserInput!) { createUser(input: $input) { __typename ... on MutationCreateUserSuccess { data { username isAdmin hasPassword disabled email } } ${ERRORS} } }`;
const CHANGE_USER = `mutation($username: String!, $input: ChangeUserInput!) { changeUser(username: $username, input: $input) { __typename ... on MutationChangeUserSuccess { data { username isAdmin disabled } } ${ERRORS} } }`;

/** What the REST API answers a token: 200 for a good one. */
const restStatus = async (token: string) => (await t.http.get('/api/v3/projects/').set('authorization', `Token ${token}`)).status;

async function newToken(token: string, name: string) {
  const res = await t.gql(CREATE_TOKEN, { name }, token);
  expect(res.data.createToken.__typename, JSON.stringify(res.data.createToken)).toBe('MutationCreateTokenSuccess');
  return res.data.createToken.data as { key: string; token: { id: number; name: string; prefix: string; lastUsedAt: string | null } };
}

beforeAll(async () => {
  t = await testApp();
  alice = await t.user('alice');
  bob = await t.user('bob');
  root = (await createUser(t.db.prisma, 'root', { isAdmin: true, password: 'root-password-1' })).token;
});
afterAll(() => t.close());

describe('API tokens', () => {
  it('are made with a name, their key shown once and working on both APIs at once', async () => {
    const made = await newToken(alice, 'CI pipeline');
    expect(made.key).toMatch(/^\w{40,}$/);
    expect(made.token).toMatchObject({ name: 'CI pipeline', prefix: made.key.slice(0, 8), lastUsedAt: null });
    expect(await restStatus(made.key)).toBe(200);
    expect((await t.gql('{ viewer { username } }', {}, made.key)).data.viewer).toEqual({ username: 'alice' });
    // Only the hash is stored.
    const stored = await t.db.prisma.apiToken.findUniqueOrThrow({ where: { id: made.token.id } });
    expect(JSON.stringify(stored)).not.toContain(made.key);
  });

  it('are listed to their user only, newest first, with when each was last used and never their key', async () => {
    const used = await newToken(alice, 'used');
    const unused = await newToken(alice, 'unused');
    expect(await restStatus(used.key)).toBe(200);
    const res = await t.gql(TOKENS, {}, alice);
    const tokens = res.data.viewer.tokens as { id: number; name: string; lastUsedAt: string | null }[];
    expect(tokens.map((x) => x.id)).toEqual([...tokens.map((x) => x.id)].sort((a, b) => b - a));
    expect(tokens.find((x) => x.id === unused.token.id)?.lastUsedAt).toBeNull();
    const usedAt = Date.parse(tokens.find((x) => x.id === used.token.id)!.lastUsedAt!);
    expect(Math.abs(Date.now() - usedAt)).toBeLessThan(60_000);
    expect(JSON.stringify(res)).not.toContain(used.key);
    // Another user, even a site admin, does not see them.
    const other = await t.gql(`query($u: String!) { users(search: $u) { nodes { username tokens { id } } } }`, { u: 'alice' }, root);
    expect(other.data).toBeNull();
    expect(other.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('once revoked are refused by REST and GraphQL at once; another user cannot revoke them', async () => {
    const made = await newToken(alice, 'to revoke');
    expect(await restStatus(made.key)).toBe(200);
    const byBob = await t.gql(REVOKE_TOKEN, { id: made.token.id }, bob);
    expect(byBob.data.revokeToken).toMatchObject({ __typename: 'NotFoundError', model: 'ApiToken' });
    expect(await restStatus(made.key)).toBe(200);

    const res = await t.gql(REVOKE_TOKEN, { id: made.token.id }, alice);
    expect(res.data.revokeToken).toEqual({ __typename: 'MutationRevokeTokenSuccess', data: { id: made.token.id, name: 'to revoke' } });
    expect(await restStatus(made.key)).toBe(401);
    const gql = await t.gql('{ viewer { username } }', {}, made.key);
    expect(gql.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(await restStatus(alice)).toBe(200);
  });

  it('need a signed-in caller, and a name of at most 100 characters', async () => {
    const anonymous = await t.gql(CREATE_TOKEN, { name: 'x' });
    expect(anonymous.data.createToken).toMatchObject({ __typename: 'UnauthenticatedError', status: 401 });
    const before = await t.db.prisma.apiToken.count();
    const long = await t.gql(CREATE_TOKEN, { name: 'x'.repeat(101) }, alice);
    expect(long.data.createToken).toMatchObject({ __typename: 'ValidationError', fieldErrors: [{ field: 'name' }] });
    expect(await t.db.prisma.apiToken.count()).toBe(before);
  });
});

describe('passwords', () => {
  it('are stored as Argon2id hashes and changed only with the current one', async () => {
    const { token } = await createUser(t.db.prisma, 'carol', { password: 'first-password' });
    const hashOf = async () => (await t.db.prisma.user.findUniqueOrThrow({ where: { username: 'carol' } })).passwordHash!;
    const first = await hashOf();
    expect(first).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(first).not.toContain('first-password');

    const wrong = await t.gql(CHANGE_PASSWORD, { input: { currentPassword: 'not-it', newPassword: 'second-password' } }, token);
    expect(wrong.data.changePassword).toMatchObject({ __typename: 'ValidationError', fieldErrors: [{ field: 'currentPassword' }] });
    const short = await t.gql(CHANGE_PASSWORD, { input: { currentPassword: 'first-password', newPassword: 'short' } }, token);
    expect(short.data.changePassword).toMatchObject({ __typename: 'ValidationError', fieldErrors: [{ field: 'newPassword' }] });
    expect(await hashOf()).toBe(first);

    const ok = await t.gql(CHANGE_PASSWORD, { input: { currentPassword: 'first-password', newPassword: 'second-password' } }, token);
    expect(ok.data.changePassword).toEqual({ __typename: 'MutationChangePasswordSuccess', data: true });
    expect(await verifyPassword(await hashOf(), 'second-password')).toBe(true);
    expect(await verifyPassword(await hashOf(), 'first-password')).toBe(false);
  });

  it('can be set by a user who had none, without a current one', async () => {
    const res = await t.gql(CHANGE_PASSWORD, { input: { newPassword: 'bobs-new-password' } }, bob);
    expect(res.data.changePassword).toEqual({ __typename: 'MutationChangePasswordSuccess', data: true });
    expect((await t.gql('{ viewer { hasPassword } }', {}, bob)).data.viewer).toEqual({ hasPassword: true });
  });
});

describe('site admins', () => {
  it('alone list users and read their accounts; a user reads their own, not another one', async () => {
    const listed = await t.gql(`{ users(limit: 100) { totalCount nodes { username isAdmin disabled } } }`, {}, root);
    expect(listed.data.users.nodes).toEqual(
      expect.arrayContaining([
        { username: 'alice', isAdmin: false, disabled: false },
        { username: 'root', isAdmin: true, disabled: false },
      ]),
    );
    for (const token of [alice, undefined]) {
      const res = await t.gql(`{ users { totalCount } }`, {}, token);
      expect(res.data).toBeNull();
      expect(res.errors?.[0]?.extensions?.code).toBe(token ? 'FORBIDDEN' : 'UNAUTHENTICATED');
    }
    expect((await t.gql('{ viewer { username isAdmin email } }', {}, alice)).data.viewer).toEqual({ username: 'alice', isAdmin: false, email: null });
    // Another user's account, through a project's maintainers: the username only.
    await t.db.prisma.project.create({
      data: { name: 'Shared', slug: 'shared', repositoryUrl: 'https://example.invalid/s.git', users: { connect: [{ username: 'root' }] } },
    });
    const peek = await t.gql(`{ project(slug: "shared") { users { username isAdmin } } }`, {}, alice);
    expect(peek.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await t.gql(`{ project(slug: "shared") { users { username } } }`, {}, alice)).data.project.users).toEqual([{ username: 'root' }]);
  });

  it('create users, with a password they can change, and no one else can', async () => {
    const refused = await t.gql(CREATE_USER, { input: { username: 'mallory', isAdmin: true } }, alice);
    expect(refused.data.createUser).toMatchObject({ __typename: 'ForbiddenError', status: 403 });
    expect(await t.db.prisma.user.findUnique({ where: { username: 'mallory' } })).toBeNull();

    const bad = await t.gql(CREATE_USER, { input: { username: 'dave', password: 'dave' } }, root);
    expect(bad.data.createUser).toMatchObject({ __typename: 'ValidationError', fieldErrors: [{ field: 'password' }] });
    expect(await t.db.prisma.user.findUnique({ where: { username: 'dave' } })).toBeNull();

    const res = await t.gql(CREATE_USER, { input: { username: 'dave', email: 'dave@example.com', password: 'daves-password' } }, root);
    expect(res.data.createUser).toEqual({
      __typename: 'MutationCreateUserSuccess',
      data: { username: 'dave', isAdmin: false, hasPassword: true, disabled: false, email: 'dave@example.com' },
    });
    const dave = await t.db.prisma.user.findUniqueOrThrow({ where: { username: 'dave' }, include: { tokens: true } });
    expect(await verifyPassword(dave.passwordHash, 'daves-password')).toBe(true);
    expect(dave.tokens).toEqual([]);
  });

  it('disable a user: their tokens are refused at once, and work again once they are enabled', async () => {
    const { token } = await createUser(t.db.prisma, 'erin');
    expect(await restStatus(token)).toBe(200);
    const off = await t.gql(CHANGE_USER, { username: 'erin', input: { disabled: true } }, root);
    expect(off.data.changeUser).toEqual({ __typename: 'MutationChangeUserSuccess', data: { username: 'erin', isAdmin: false, disabled: true } });
    expect(await restStatus(token)).toBe(401);
    expect((await t.gql('{ viewer { username } }', {}, token)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    await t.gql(CHANGE_USER, { username: 'erin', input: { disabled: false } }, root);
    expect(await restStatus(token)).toBe(200);

    const byUser = await t.gql(CHANGE_USER, { username: 'alice', input: { isAdmin: true } }, bob);
    expect(byUser.data.changeUser).toMatchObject({ __typename: 'ForbiddenError' });
    const nobody = await t.gql(CHANGE_USER, { username: 'nobody', input: { disabled: true } }, root);
    expect(nobody.data.changeUser).toMatchObject({ __typename: 'NotFoundError', model: 'User' });
  });

  it('keep one admin: the last cannot stop being one, until another is made', async () => {
    for (const input of [{ isAdmin: false }, { disabled: true }]) {
      const res = await t.gql(CHANGE_USER, { username: 'root', input }, root);
      expect(res.data.changeUser).toMatchObject({ __typename: 'ConflictError', status: 409 });
    }
    expect(await t.db.prisma.user.findUniqueOrThrow({ where: { username: 'root' } })).toMatchObject({ isAdmin: true, disabledAt: null });

    const made = await t.gql(CHANGE_USER, { username: 'alice', input: { isAdmin: true } }, root);
    expect(made.data.changeUser.data).toEqual({ username: 'alice', isAdmin: true, disabled: false });
    const stepDown = await t.gql(CHANGE_USER, { username: 'root', input: { isAdmin: false } }, root);
    expect(stepDown.data.changeUser.data).toEqual({ username: 'root', isAdmin: false, disabled: false });
    // root is no longer an admin: the next request is refused.
    expect((await t.gql('{ users { totalCount } }', {}, root)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await t.gql('{ users { totalCount } }', {}, alice)).data.users.totalCount).toBeGreaterThan(3);
  });
});
