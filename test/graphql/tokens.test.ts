// API tokens as people ask for them (docs/design/tokens.md): several per user, each with a name, an
// expiry, read-only or limited to chosen projects, shown once and revocable. A limited token is
// tried on GraphQL, the REST API and the docs server: it reads and changes nothing beyond its limits.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READ_ONLY_TOKEN } from '../../src/graphql/schema.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { publish } from '../helpers/publish.ts';

let t: TestApp;
let alice: string; // a site admin, maintains "mine", "other" and "open"
let bob: string;

beforeAll(async () => {
  t = await testApp();
  alice = await t.user('alice');
  bob = await t.user('bob');
  await t.db.prisma.user.update({ where: { username: 'alice' }, data: { isAdmin: true } });
  for (const [name, privacyLevel] of [
    ['mine', 'private'],
    ['other', 'private'],
    ['open', 'public'],
  ] as const) {
    const res = await t.gql(
      `mutation($input: ImportProjectInput!) { importProject(input: $input) { __typename } }`,
      { input: { name, repository: { url: `https://git.example/${name}.git` }, privacyLevel } },
      alice,
    );
    expect(res.data.importProject.__typename).toBe('MutationImportProjectSuccess');
    const html = mkdtempSync(path.join(tmpdir(), 'tokens-'));
    writeFileSync(path.join(html, 'index.html'), `<h1>${name} docs</h1>`);
    const project = await t.db.prisma.project.findUniqueOrThrow({ where: { slug: name } });
    await publish(t, { project, version: 'latest', html });
  }
});
afterAll(() => t?.close());

async function makeToken(token: string, args: Record<string, unknown>) {
  const res = await t.gql(
    `mutation($name: String!, $expiresAt: DateTime, $readOnly: Boolean, $projects: [String!]) {
      createToken(name: $name, expiresAt: $expiresAt, readOnly: $readOnly, projects: $projects) {
        __typename ... on MutationCreateTokenSuccess { data { key token { id name expiresAt readOnly projects } } }
        ... on ValidationError { fieldErrors { field messages } } ... on Error { message } } }`,
    { name: 'ci', ...args },
    token,
  );
  return res.errors ? { errors: res.errors.map((e) => [e.extensions?.code, e.message]) } : res.data.createToken;
}

const see = async (token: string, slug: string) =>
  (await t.gql(`query($s: String!) { project(slug: $s) { slug } }`, { s: slug }, token)).data?.project?.slug ?? null;

async function change(token: string, slug: string) {
  const res = await t.gql(
    `mutation($s: String!) { updateProject(slug: $s, input: { description: "x" }) { __typename ... on Error { message } } }`,
    { s: slug },
    token,
  );
  return res.errors ? res.errors[0]!.extensions?.code : res.data.updateProject.__typename;
}

describe('making tokens', () => {
  it('are refused with every bad field named, and nothing made: a past expiry, a project the user has none of, an empty list', async () => {
    const before = await t.db.prisma.apiToken.count();
    expect(await makeToken(bob, { expiresAt: new Date(Date.now() - 1000).toISOString(), projects: ['mine', 'nope'] })).toMatchObject({
      __typename: 'ValidationError',
      fieldErrors: [{ field: 'expiresAt', messages: ['The expiry must be in the future.'] }],
    });
    // bob cannot see alice's private project: it is named as one he has none of, as a missing one is.
    expect(await makeToken(bob, { projects: ['mine', 'nope'] })).toMatchObject({
      fieldErrors: [{ field: 'projects', messages: ['You have no project "mine", "nope".'] }],
    });
    expect(await makeToken(bob, { projects: [] })).toMatchObject({ fieldErrors: [{ field: 'projects' }] });
    expect(await makeToken(bob, { expiresAt: new Date(Date.now() + 20 * 366 * 86_400_000).toISOString() })).toMatchObject({
      fieldErrors: [{ field: 'expiresAt' }],
    });
    expect(await t.db.prisma.apiToken.count()).toBe(before);
  });

  it('shows its limits, and its key once (only a hash is kept)', async () => {
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const made = await makeToken(alice, { name: 'docs CI', expiresAt, readOnly: true, projects: ['mine'] });
    expect(made.data.token).toMatchObject({ name: 'docs CI', expiresAt, readOnly: true, projects: ['mine'] });
    const listed = await t.gql(`{ viewer { tokens { id readOnly projects expiresAt } } }`, {}, alice);
    expect(listed.data.viewer.tokens[0]).toEqual({ id: made.data.token.id, readOnly: true, projects: ['mine'], expiresAt });
    expect(JSON.stringify(await t.db.prisma.apiToken.findMany())).not.toContain(made.data.key);
  });
});

describe('an expired token', () => {
  it('is refused on GraphQL and REST with a message that says so', async () => {
    const made = await makeToken(alice, { expiresAt: new Date(Date.now() + 60_000).toISOString() });
    const key = made.data.key as string;
    expect(await see(key, 'mine')).toBe('mine');
    await t.db.prisma.apiToken.update({ where: { id: made.data.token.id }, data: { expiresAt: new Date(Date.now() - 1) } });
    const gql = await t.gql('{ viewer { username } }', {}, key);
    expect(gql.errors?.[0]).toMatchObject({ message: 'This token has expired.', extensions: { code: 'UNAUTHENTICATED' } });
    const rest = await t.http.get('/api/v3/projects/').set('authorization', `Token ${key}`);
    expect(rest.status).toBe(401);
    expect(rest.body).toEqual({ detail: 'This token has expired.' });
  });
});

describe('a read-only token', () => {
  let key: string;
  beforeAll(async () => {
    key = (await makeToken(alice, { readOnly: true })).data.key;
  });

  it("reads the user's private projects and their docs", async () => {
    expect(await see(key, 'mine')).toBe('mine');
    expect(await see(key, 'other')).toBe('other');
    const docs = await t.http.get('/docs/mine/en/latest/').set('authorization', `Token ${key}`);
    expect(docs.status).toBe(200);
    expect(docs.text).toContain('mine docs');
  });

  it('writes nothing, on GraphQL or REST: project settings, builds, the account, organizations, new tokens, new projects', async () => {
    expect(await change(key, 'mine')).toBe('FORBIDDEN');
    for (const mutation of [
      'createToken(name: "more") { __typename }',
      'createOrganization(input: { name: "Ro" }) { __typename }',
      'changePassword(input: { currentPassword: "x", newPassword: "y" }) { __typename }',
      'importProject(input: { name: "ro", repository: { url: "https://git.example/ro.git" } }) { __typename }',
    ]) {
      const res = await t.gql(`mutation { ${mutation} }`, {}, key);
      expect(res.errors?.[0], mutation).toMatchObject({ message: READ_ONLY_TOKEN, extensions: { code: 'FORBIDDEN' } });
    }
    const rest = await t.http.patch('/api/v3/projects/mine/').set('authorization', `Token ${key}`).send({ description: 'x' });
    expect(rest.status).toBe(403);
    const trigger = await t.http.post('/api/v3/projects/mine/versions/latest/builds/').set('authorization', `Token ${key}`);
    expect(trigger.status).toBe(403);
    // Maintainers' settings are read by tokens that may write (docs/design/tokens.md).
    expect((await t.http.get('/api/v3/projects/mine/redirects/').set('authorization', `Token ${key}`)).status).toBe(403);
    expect(await t.db.prisma.project.findUniqueOrThrow({ where: { slug: 'mine' }, select: { description: true } })).toEqual({ description: '' });
  });
});

describe('a token limited to a project', () => {
  let key: string;
  beforeAll(async () => {
    key = (await makeToken(alice, { projects: ['mine'] })).data.key;
  });

  it('reads and changes its project, and reads public data as anyone may', async () => {
    expect(await see(key, 'mine')).toBe('mine');
    expect(await change(key, 'mine')).toBe('MutationUpdateProjectSuccess');
    expect(await see(key, 'open')).toBe('open');
    expect((await t.http.get('/docs/mine/en/latest/').set('authorization', `Token ${key}`)).status).toBe(200);
  });

  it("reaches nothing else of its user's: other private projects, public ones' settings, the account, users, organizations, new projects", async () => {
    expect(await see(key, 'other')).toBeNull();
    expect(await change(key, 'other')).toBe('NotFoundError');
    expect(await change(key, 'open')).toBe('ForbiddenError');
    expect((await t.http.get('/docs/other/en/latest/').set('authorization', `Token ${key}`)).status).toBe(404);
    const list = await t.http.get('/api/v3/projects/').set('authorization', `Token ${key}`);
    expect(list.body.results.map((p: { slug: string }) => p.slug)).toEqual(['mine']);
    // alice is a site admin: the token has none of her powers.
    expect((await t.gql('{ users { totalCount } }', {}, key)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await t.gql('{ viewer { tokens { id } } }', {}, key)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    for (const mutation of [
      'createToken(name: "wider") { __typename }',
      'createOrganization(input: { name: "Scoped" }) { __typename }',
      'importProject(input: { name: "scoped", repository: { url: "https://git.example/s.git" } }) { __typename }',
    ]) {
      const res = await t.gql(`mutation { ${mutation} }`, {}, key);
      expect(res.errors?.[0]?.extensions?.code ?? res.data?.[mutation.split('(')[0]!]?.__typename, mutation).toMatch(/FORBIDDEN|ForbiddenError/);
    }
    expect(await t.db.prisma.project.findUnique({ where: { slug: 'scoped' } })).toBeNull();
    expect(await t.db.prisma.organization.count()).toBe(0);
  });

  it('reaches nothing once its project is deleted: it never becomes unlimited', async () => {
    const only = (await makeToken(alice, { projects: ['other'] })).data;
    await t.db.prisma.project.delete({ where: { slug: 'other' } });
    const listed = await t.gql(`{ viewer { tokens { id projects } } }`, {}, alice);
    expect(listed.data.viewer.tokens.find((x: { id: number }) => x.id === only.token.id)).toEqual({ id: only.token.id, projects: [] });
    expect(await see(only.key, 'mine')).toBeNull();
    expect(await change(only.key, 'mine')).toBe('NotFoundError');
  });
});
