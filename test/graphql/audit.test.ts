// The audit log (docs/design/audit.md), written for each action it records, through the real HTTP
// stack: sign-ins (and failures, with the method and the client's address), tokens made, revoked
// and used after, membership, team and settings changes, maintainers and variables, private
// downloads by a token. Read by site admins (all of it) and an organization's owners (theirs), never
// by anyone else; never holding a secret.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneAudit } from '../../src/domain/audit.ts';
import { hashPassword } from '../../src/domain/passwords.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { publish } from '../helpers/publish.ts';

let t: TestApp;
let admin: string; // site admin
let owner: string; // owns "acme", maintains "secret-docs"
let member: string; // in acme
const PASSWORD = 'correct horse battery staple';
const SECRET_VALUE = 'swordfish-0123456789';

beforeAll(async () => {
  t = await testApp();
  admin = await t.user('admin');
  owner = await t.user('owner');
  member = await t.user('member');
  await t.db.prisma.user.update({ where: { username: 'admin' }, data: { isAdmin: true } });
  await t.db.prisma.user.update({ where: { username: 'owner' }, data: { passwordHash: await hashPassword(PASSWORD) } });
});
afterAll(() => t?.close());

const ENTRY = 'action username organization project method ip userAgent data';
async function siteLog(filter: Record<string, unknown> = {}, token = admin) {
  const res = await t.gql(`query($f: AuditFilter) { auditLog(filter: $f, limit: 100) { totalCount nodes { ${ENTRY} } } }`, { f: filter }, token);
  return res.errors ? { errors: res.errors.map((e) => e.extensions?.code) } : res.data.auditLog;
}
const last = async (action: string) => (await siteLog({ action })).nodes[0];

function signIn(username: string, password: string) {
  return supertest(t.handler)
    .post('/graphql')
    .set('origin', 'http://lectern.test')
    .set('user-agent', 'AuditTest/1.0')
    .send({
      query: `mutation($u: String!, $p: String!) { signIn(username: $u, password: $p) { __typename } }`,
      variables: { u: username, p: password },
    });
}

const mutate = (query: string, variables: Record<string, unknown>, token: string) => t.gql(`mutation${query}`, variables, token);

describe('the audit log', () => {
  it('records sign-ins and failed ones, with the method, the address and the browser, never the password tried', async () => {
    expect((await signIn('owner', 'hunter2-guess')).body.data.signIn.__typename).toBe('UnauthenticatedError');
    expect((await signIn('nobody', PASSWORD)).body.data.signIn.__typename).toBe('UnauthenticatedError');
    expect((await signIn('owner', PASSWORD)).body.data.signIn.__typename).toBe('MutationSignInSuccess');
    const failed = await siteLog({ action: 'sign-in-failed' });
    expect(failed.nodes.map((e: { username: string; data: object }) => [e.username, e.data])).toEqual([
      ['nobody', { reason: 'no such user' }],
      ['owner', { reason: 'wrong password' }],
    ]);
    expect(await last('sign-in')).toMatchObject({
      action: 'sign-in',
      username: 'owner',
      method: 'password',
      userAgent: 'AuditTest/1.0',
      ip: expect.stringMatching(/127\.0\.0\.1|::1/),
    });
    expect(JSON.stringify(await siteLog())).not.toContain('hunter2-guess');
  });

  it('records tokens made and revoked, and a later use of the revoked token, by their first characters only', async () => {
    const made = await mutate(`{ createToken(name: "ci") { ... on MutationCreateTokenSuccess { data { key token { id prefix } } } } }`, {}, owner);
    const { key, token } = made.data.createToken.data;
    expect(await last('token-created')).toMatchObject({ username: 'owner', method: 'token', data: { prefix: token.prefix, name: 'ci', readOnly: false } });
    await mutate(`($id: Int!) { revokeToken(id: $id) { __typename } }`, { id: token.id }, owner);
    expect(await last('token-revoked')).toMatchObject({ username: 'owner', data: { prefix: token.prefix } });
    const refused = await t.http.get('/api/v3/projects/').set('authorization', `Token ${key}`).set('user-agent', 'stolen');
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ detail: 'Invalid token.' });
    expect(await last('token-refused')).toMatchObject({
      username: 'owner',
      method: 'token',
      userAgent: 'stolen',
      data: { prefix: token.prefix, reason: 'revoked' },
    });
    // Again within the minute: refused, and not written again (the log cannot be flooded with one token).
    await t.http.get('/api/v3/projects/').set('authorization', `Token ${key}`);
    expect((await siteLog({ action: 'token-refused' })).totalCount).toBe(1);
    expect(JSON.stringify(await siteLog())).not.toContain(key);
  });

  it("records an organization's changes, its members and teams, and a project's settings, maintainers and variables", async () => {
    await mutate(`{ createOrganization(input: { name: "Acme" }) { __typename } }`, {}, owner);
    await mutate(
      `{ importProject(input: { name: "secret-docs", repository: { url: "https://git.example/s.git" }, privacyLevel: private }) { __typename } }`,
      {},
      owner,
    );
    await mutate(`{ setProjectOrganization(project: "secret-docs", organization: "acme") { __typename } }`, {}, owner);
    const invited = await mutate(
      `{ inviteToOrganization(organization: "acme", input: { email: "m@acme.example" }) { ... on MutationInviteToOrganizationSuccess { data { link } } } }`,
      {},
      owner,
    );
    const link = new URL(invited.data.inviteToOrganization.data.link);
    await mutate(`($t: String!) { acceptInvitation(token: $t) { __typename } }`, { t: link.searchParams.get('token') }, member);
    await mutate(`{ createTeam(organization: "acme", input: { name: "Readers", projects: ["secret-docs"] }) { __typename } }`, {}, owner);
    await mutate(`{ addTeamMember(organization: "acme", team: "readers", username: "member") { __typename } }`, {}, owner);
    await mutate(`{ updateProject(slug: "secret-docs", input: { description: "new", analyticsCode: "UA-SECRET" }) { __typename } }`, {}, owner);
    await mutate(`{ addMaintainer(project: "secret-docs", username: "admin") { __typename } }`, {}, owner);
    const variable = await mutate(
      `($v: String!) { createEnvironmentVariable(project: "secret-docs", input: { name: "DEPLOY_KEY", value: $v }) { ... on MutationCreateEnvironmentVariableSuccess { data { id } } } }`,
      { v: SECRET_VALUE },
      owner,
    );
    await mutate(
      `($id: Int!) { deleteEnvironmentVariable(project: "secret-docs", id: $id) { __typename } }`,
      { id: variable.data.createEnvironmentVariable.data.id },
      owner,
    );

    const log = (await siteLog()).nodes as { action: string; organization: string; project: string; data: Record<string, unknown> }[];
    const actions = log.map((e) => e.action);
    for (const action of [
      'organization-created',
      'project-moved',
      'invitation-created',
      'member-added',
      'team-created',
      'team-member-added',
      'project-settings-changed',
      'maintainer-added',
      'variable-added',
      'variable-removed',
    ]) {
      expect(actions, action).toContain(action);
    }
    expect(log.find((e) => e.action === 'project-settings-changed')).toMatchObject({
      project: 'secret-docs',
      organization: 'acme',
      data: { fields: ['analyticsCode', 'description'] },
    });
    expect(log.find((e) => e.action === 'variable-removed')).toMatchObject({ project: 'secret-docs', data: { name: 'DEPLOY_KEY' } });
    expect(log.find((e) => e.action === 'member-added')).toMatchObject({ username: 'member', organization: 'acme' });
    // No value of a setting or of a variable is ever in the log.
    expect(JSON.stringify(log)).not.toContain(SECRET_VALUE);
    expect(JSON.stringify(log)).not.toContain('UA-SECRET');
  });

  it("records a private download made with a token, in the project's organization's log", async () => {
    const project = await t.db.prisma.project.findUniqueOrThrow({ where: { slug: 'secret-docs' } });
    const html = mkdtempSync(path.join(tmpdir(), 'audit-'));
    writeFileSync(path.join(html, 'index.html'), '<h1>secret</h1>');
    const downloads = path.join(html, '..', `${path.basename(html)}-pdf`);
    mkdirSync(downloads);
    writeFileSync(path.join(downloads, 'doc.pdf'), '%PDF-1.4 secret');
    await publish(t, { project, version: 'latest', html, downloads: { pdf: path.join(downloads, 'doc.pdf') } });
    const res = await t.http.get('/docs/secret-docs/_/downloads/en/latest/pdf/').set('authorization', `Token ${member}`);
    expect(res.status).toBe(200);
    expect(await last('private-download')).toMatchObject({
      username: 'member',
      method: 'token',
      project: 'secret-docs',
      organization: 'acme',
      data: { version: 'latest', format: 'pdf' },
    });
  });

  it("is read by site admins (all of it) and an organization's owners (its own and its members' sign-ins and tokens), by nobody else", async () => {
    const orgLog = async (token: string, filter: Record<string, unknown> = {}) => {
      const res = await t.gql(
        `query($f: AuditFilter) { organization(slug: "acme") { auditLog(filter: $f, limit: 100) { totalCount nodes { action username } } } }`,
        { f: filter },
        token,
      );
      return res.errors ? { errors: res.errors.map((e) => e.extensions?.code) } : res.data.organization.auditLog;
    };
    const mine = await orgLog(owner);
    const actions = new Set(mine.nodes.map((e: { action: string }) => e.action));
    expect(actions).toContain('team-created');
    expect(actions).toContain('sign-in');
    expect(actions).toContain('private-download');
    // The site admin is no member: their own entries (none personal) do not show in acme's log.
    expect(mine.nodes.some((e: { username: string; action: string }) => e.username === 'admin' && e.action.startsWith('token'))).toBe(false);
    expect(await orgLog(member)).toEqual({ errors: ['FORBIDDEN'] });
    expect(await siteLog({}, owner)).toEqual({ errors: ['FORBIDDEN'] });
    expect(await siteLog({}, member)).toEqual({ errors: ['FORBIDDEN'] });
    // Filters: by action, person, project and time; an unknown action is named.
    expect((await orgLog(owner, { action: 'sign-in', username: 'owner' })).totalCount).toBe(1);
    expect((await siteLog({ project: 'secret-docs', since: new Date(Date.now() + 60_000).toISOString() })).totalCount).toBe(0);
    const bad = await t.gql(`{ auditLog(filter: { action: "rm -rf" }) { totalCount } }`, {}, admin);
    expect(bad.errors?.[0]?.message).toContain('"rm -rf" is not a valid choice.');
  });

  it("drops entries, and revoked tokens, past the retention (the build worker's housekeeping), and keeps the rest", async () => {
    const old = new Date(Date.now() - 91 * 86_400_000);
    await t.db.prisma.auditEntry.create({ data: { action: 'sign-in', username: 'long-ago', createdAt: old } });
    const user = await t.db.prisma.user.findUniqueOrThrow({ where: { username: 'owner' } });
    await t.db.prisma.apiToken.create({ data: { userId: user.id, keyHash: 'f'.repeat(64), keyPrefix: 'old', revokedAt: old } });
    const before = await t.db.prisma.auditEntry.count();
    expect(await pruneAudit(t.db.prisma, 90)).toBe(1);
    expect(await t.db.prisma.auditEntry.count()).toBe(before - 1);
    expect(await t.db.prisma.auditEntry.count({ where: { username: 'long-ago' } })).toBe(0);
    expect(await t.db.prisma.apiToken.count({ where: { keyPrefix: 'old' } })).toBe(0);
    // The token revoked in this test, minutes ago, stays: its later use is still recorded.
    expect(await t.db.prisma.apiToken.count({ where: { revokedAt: { not: null } } })).toBe(1);
  });
});
