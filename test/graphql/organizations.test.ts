// Organizations, members, teams and invitations through GraphQL (docs/design/organizations.md): an
// owner builds a company's organization, people join by one-time links, teams give read-only or
// admin access to chosen projects or all of them, and every write is refused to those who may not
// make it, with nothing changed. Hostile members try to reach past their organization.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GqlResult, type TestApp, testApp } from '../helpers/app.ts';

let t: TestApp;
let owner: string; // owns "acme"
let reader: string; // in acme's read-only team
let admin: string; // in acme's admin team
let outsider: string; // in no organization
let rival: string; // owns "rival"
let site: string; // a site admin, in no organization

beforeAll(async () => {
  t = await testApp();
  owner = await t.user('owner');
  reader = await t.user('reader');
  admin = await t.user('admin');
  outsider = await t.user('outsider');
  rival = await t.user('rival');
  site = await t.user('site');
  await t.db.prisma.user.update({ where: { username: 'site' }, data: { isAdmin: true } });
});
afterAll(() => t?.close());

const TYPES: Record<string, string> = { a: 'String!', b: 'String!', input: '', role: 'OrganizationRole!' };
const INPUTS: Record<string, string> = { createOrganization: 'OrganizationInput!', updateOrganization: 'OrganizationInput!' };

/** A mutation's answer: its data, or its error's typename, message and fields; GraphQL errors as their codes. */
async function write(mutation: string, variables: Record<string, unknown>, token: string, select = '{ __typename }') {
  const name = mutation.split('(')[0]!;
  const used = Object.keys(variables).map((v) => `$${v}: ${v === 'input' ? INPUTS[name] : TYPES[v]}`);
  const res = await t.gql(
    `mutation(${used.join(', ')}) { ${mutation} {
      __typename ... on Mutation${name[0]!.toUpperCase()}${name.slice(1)}Success { data ${select} }
      ... on ValidationError { fieldErrors { field messages } } ... on Error { message } } }`,
    variables,
    token,
  );
  return answer(res, name);
}
const CODES: Record<string, string> = { ForbiddenError: 'FORBIDDEN', NotFoundError: 'NOT_FOUND', UnauthenticatedError: 'UNAUTHENTICATED' };

/** A refusal as its code, however it came (a GraphQL error, or the write's error union); anything else as answered. */
function answer(res: GqlResult, field: string) {
  if (res.errors)
    return { errors: res.errors.map((e) => (e.extensions?.code === 'GRAPHQL_VALIDATION_FAILED' ? e.message : (e.extensions?.code ?? e.message))) };
  const data = res.data[field];
  return data && CODES[data.__typename] ? { errors: [CODES[data.__typename]] } : data;
}

const success = (m: string) => `Mutation${m[0]!.toUpperCase()}${m.slice(1)}Success`;

const gql = (q: string, token?: string, v: Record<string, unknown> = {}): Promise<GqlResult> => t.gql(q, v, token);

async function importProject(name: string, token: string, privacyLevel: 'public' | 'private' = 'private') {
  const res = await t.gql(
    `mutation($input: ImportProjectInput!) { importProject(input: $input) { ... on MutationImportProjectSuccess { data { slug } } ... on Error { message } } }`,
    { input: { name, repository: { url: `https://git.example/${name}.git` }, privacyLevel } },
    token,
  );
  return res.data.importProject.data.slug as string;
}

async function invite(org: string, input: Record<string, unknown>, token = owner) {
  const res = await t.gql(
    `mutation($org: String!, $input: OrganizationInvitationInput!) { inviteToOrganization(organization: $org, input: $input) {
      __typename ... on MutationInviteToOrganizationSuccess { data { link emailed invitation { id role email team { slug } } } }
      ... on ValidationError { fieldErrors { field messages } } ... on Error { message } } }`,
    { org, input },
    token,
  );
  return answer(res, 'inviteToOrganization');
}

async function accept(token: string, link: string) {
  const res = await t.gql(
    `mutation($token: String!) { acceptInvitation(token: $token) { __typename ... on MutationAcceptInvitationSuccess { data { slug viewerRole } }
      ... on ValidationError { fieldErrors { field messages } } ... on Error { message } } }`,
    { token: new URL(link).searchParams.get('token') },
    token,
  );
  return res.data.acceptInvitation;
}

async function team(token: string, mutation: 'createTeam' | 'updateTeam', org: string, input: Record<string, unknown>, slug?: string) {
  const res = await t.gql(
    `mutation($org: String!, $input: TeamInput!${slug ? ', $team: String!' : ''}) { ${mutation}(organization: $org, input: $input${slug ? ', team: $team' : ''}) {
      __typename ... on ${success(mutation)} { data { slug access allProjects projects { slug } members { username } } }
      ... on ValidationError { fieldErrors { field messages } } ... on Error { message } } }`,
    { org, input, team: slug },
    token,
  );
  return answer(res, mutation);
}

async function member(token: string, mutation: 'addTeamMember' | 'removeTeamMember', org: string, teamSlug: string, username: string) {
  const res = await t.gql(
    `mutation($org: String!, $team: String!, $u: String!) { ${mutation}(organization: $org, team: $team, username: $u) {
      __typename ... on ValidationError { fieldErrors { field messages } } ... on Error { message } } }`,
    { org, team: teamSlug, u: username },
    token,
  );
  return answer(res, mutation);
}

async function move(token: string, project: string, organization: string | null) {
  const res = await t.gql(
    `mutation($p: String!, $o: String) { setProjectOrganization(project: $p, organization: $o) {
      __typename ... on MutationSetProjectOrganizationSuccess { data { organization { slug } } }
      ... on ValidationError { fieldErrors { field messages } } ... on Error { message } } }`,
    { p: project, o: organization },
    token,
  );
  return answer(res, 'setProjectOrganization');
}

async function access(token: string | undefined, project: string) {
  const res = await gql(`query($s: String!) { project(slug: $s) { slug viewerAccess } }`, token, { s: project });
  return res.data.project ? (res.data.project.viewerAccess ?? 'none') : 'hidden';
}

async function rename(token: string, project: string) {
  const res = await t.gql(`mutation($s: String!) { updateProject(slug: $s, input: { description: "changed" }) { __typename } }`, { s: project }, token);
  const a = answer(res, 'updateProject');
  return a.errors ? a.errors[0] : a.__typename;
}

let docs: string; // a private project of acme
let site2: string; // a private project moved in later
let links: Record<string, string>;

describe('an organization, as its owner builds it', () => {
  it('is made with its creator as its only owner, its slug from the name; a taken or malformed slug is refused with nothing made', async () => {
    const made = await write(
      'createOrganization(input: $input)',
      { input: { name: 'Acme', email: 'docs@acme.example' } },
      owner,
      '{ slug name email viewerRole owners { username } }',
    );
    expect(made).toEqual({
      __typename: 'MutationCreateOrganizationSuccess',
      data: { slug: 'acme', name: 'Acme', email: 'docs@acme.example', viewerRole: 'owner', owners: [{ username: 'owner' }] },
    });
    const before = await t.db.prisma.organization.count();
    expect(await write('createOrganization(input: $input)', { input: { name: 'Acme' } }, rival)).toMatchObject({
      __typename: 'ValidationError',
      fieldErrors: [{ field: 'slug', messages: ['An organization with slug "acme" already exists.'] }],
    });
    expect(
      await write('createOrganization(input: $input)', { input: { name: 'X', slug: '../etc', url: 'javascript:alert(1)', email: 'no' } }, rival),
    ).toMatchObject({
      __typename: 'ValidationError',
      fieldErrors: [
        { field: 'slug', messages: [expect.stringContaining('valid "slug"')] },
        { field: 'url', messages: ['Enter a valid URL.'] },
        { field: 'email', messages: ['Enter a valid email address.'] },
      ],
    });
    expect(await write('createOrganization(input: $input)', { input: { name: 'Anon' } }, '')).toEqual({ errors: ['UNAUTHENTICATED'] });
    expect(await t.db.prisma.organization.count()).toBe(before);
    expect((await write('createOrganization(input: $input)', { input: { name: 'Rival' } }, rival)).__typename).toBe('MutationCreateOrganizationSuccess');
  });

  it('is read by its members and site admins only: to anyone else it does not exist', async () => {
    const q = `query { organizations { totalCount nodes { slug } } organization(slug: "acme") { slug description } }`;
    expect((await gql(q, owner)).data).toEqual({
      organizations: { totalCount: 1, nodes: [{ slug: 'acme' }] },
      organization: { slug: 'acme', description: '' },
    });
    expect((await gql(q, outsider)).data).toEqual({ organizations: { totalCount: 0, nodes: [] }, organization: null });
    expect((await gql(q, rival)).data).toEqual({ organizations: { totalCount: 1, nodes: [{ slug: 'rival' }] }, organization: null });
    expect((await gql(q)).data).toEqual({ organizations: { totalCount: 0, nodes: [] }, organization: null });
    expect((await gql(q, site)).data.organizations.totalCount).toBe(2);
    // Writes: 404 to an outsider (its existence is not told), 403 to a site admin who reads it.
    expect(await write('updateOrganization(organization: "acme", input: $input)', { input: { description: 'x' } }, outsider)).toEqual({
      errors: ['NOT_FOUND'],
    });
    expect(await write('updateOrganization(organization: "acme", input: $input)', { input: { description: 'x' } }, site)).toEqual({ errors: ['FORBIDDEN'] });
    expect(await write('updateOrganization(organization: "acme", input: $input)', { input: { description: 'Docs' } }, owner, '{ description }')).toMatchObject({
      data: { description: 'Docs' },
    });
    expect(await write('updateOrganization(organization: "acme", input: $input)', { input: { slug: 'other' } }, owner)).toMatchObject({
      fieldErrors: [{ field: 'slug', messages: ['The slug of an organization cannot be changed.'] }],
    });
  });

  it('takes in projects its owner maintains; a maintainer who does not own it cannot put a project in it', async () => {
    docs = await importProject('acme-docs', owner);
    site2 = await importProject('acme-site', owner);
    const theirs = await importProject('outsider-docs', outsider);
    expect(await move(owner, docs, 'acme')).toMatchObject({ data: { organization: { slug: 'acme' } } });
    expect(await move(outsider, theirs, 'acme')).toMatchObject({
      __typename: 'ValidationError',
      fieldErrors: [{ field: 'organization', messages: ['You are in no organization "acme".'] }],
    });
    // Not a maintainer of the project: refused before anything is read of the organization.
    expect(await move(rival, docs, 'rival')).toEqual({ errors: ['NOT_FOUND'] });
    expect(await t.db.prisma.project.findUnique({ where: { slug: theirs }, select: { organizationId: true } })).toEqual({ organizationId: null });
  });
});

describe('invitations', () => {
  it('are one-time links, shown once (no email without SMTP), that make the taker a member and put them in a team', async () => {
    const readers = await team(owner, 'createTeam', 'acme', { name: 'Readers', projects: [docs] });
    expect(readers).toMatchObject({ data: { slug: 'readers', access: 'readonly', allProjects: false, projects: [{ slug: docs }], members: [] } });
    await team(owner, 'createTeam', 'acme', { name: 'Writers', access: 'admin', allProjects: true });
    links = {};
    for (const [who, teamSlug] of [
      ['reader', 'readers'],
      ['admin', 'writers'],
    ] as const) {
      const made = await invite('acme', { team: teamSlug, email: `${who}@acme.example` });
      expect(made).toMatchObject({ data: { emailed: false, invitation: { role: 'member', email: `${who}@acme.example`, team: { slug: teamSlug } } } });
      expect(made.data.link).toMatch(/\/invitations\/accept\?token=[\w-]{40,}$/);
      links[who] = made.data.link;
    }
    // Only the hash is kept: the link's token is nowhere in the database.
    const token = new URL(links.reader!).searchParams.get('token')!;
    const rows = JSON.stringify(await t.db.prisma.organizationInvitation.findMany());
    expect(rows).not.toContain(token);

    expect(await accept(reader, links.reader!)).toMatchObject({ data: { slug: 'acme', viewerRole: 'member' } });
    expect(await accept(admin, links.admin!)).toMatchObject({ data: { slug: 'acme', viewerRole: 'member' } });
    const teams = await gql(`{ organization(slug: "acme") { members { user { username } role teams { slug } } } }`, owner);
    expect(teams.data.organization.members).toEqual([
      { user: { username: 'admin' }, role: 'member', teams: [{ slug: 'writers' }] },
      { user: { username: 'owner' }, role: 'owner', teams: [] },
      { user: { username: 'reader' }, role: 'member', teams: [{ slug: 'readers' }] },
    ]);
  });

  it('are refused used, wrong, expired, or to anyone but owners; the list of pending ones is the owners’', async () => {
    const refused = { __typename: 'ValidationError', fieldErrors: [{ field: 'token', messages: [expect.stringContaining('used, expired or wrong')] }] };
    expect(await accept(outsider, links.reader!)).toMatchObject(refused);
    expect(await accept(outsider, `${links.reader!.slice(0, -4)}AAAA`)).toMatchObject(refused);
    const late = await invite('acme', {});
    await t.db.prisma.organizationInvitation.update({ where: { id: late.data.invitation.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect(await accept(outsider, late.data.link)).toMatchObject(refused);
    expect(await gql(`{ organization(slug: "acme") { slug } }`, outsider)).toMatchObject({ data: { organization: null } });

    expect(await invite('acme', {}, reader)).toEqual({ errors: ['FORBIDDEN'] });
    expect(await invite('acme', {}, outsider)).toEqual({ errors: ['NOT_FOUND'] });
    expect(await invite('acme', { team: 'nope', email: 'a b' })).toMatchObject({ __typename: 'ValidationError' });
    // A team of another organization is not one of this one's.
    await team(rival, 'createTeam', 'rival', { name: 'Spies', access: 'admin', allProjects: true });
    expect(await invite('acme', { team: 'spies' })).toMatchObject({ fieldErrors: [{ field: 'team', messages: ['This organization has no team "spies".'] }] });

    const pending = `{ organization(slug: "acme") { invitations { id } } }`;
    expect((await gql(pending, owner)).data.organization.invitations.length).toBe(1);
    expect((await gql(pending, reader)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });
});

describe('teams give access to private projects', () => {
  it('read-only: the private docs are read, nothing is changed; admin: maintained; an outsider sees nothing', async () => {
    expect(await access(reader, docs)).toBe('readonly');
    expect(await rename(reader, docs)).toBe('FORBIDDEN');
    expect(await access(admin, docs)).toBe('admin');
    expect(await rename(admin, docs)).toBe('MutationUpdateProjectSuccess');
    expect(await access(owner, docs)).toBe('admin');
    expect(await access(outsider, docs)).toBe('hidden');
    expect(await access(rival, docs)).toBe('hidden');
    expect(await access(undefined, docs)).toBe('hidden');
    // The read-only team covers only what it was granted.
    expect(await access(reader, site2)).toBe('hidden');
  });

  it('a team with all projects covers one moved in later; a project leaving takes its grants with it', async () => {
    expect(await access(admin, site2)).toBe('hidden');
    await move(owner, site2, 'acme');
    expect(await access(admin, site2)).toBe('admin');
    await team(owner, 'updateTeam', 'acme', { projects: [docs, site2] }, 'readers');
    expect(await access(reader, site2)).toBe('readonly');
    // An admin-team member maintains it, but cannot take it out of the company.
    expect(await move(admin, site2, null)).toEqual({ errors: ['FORBIDDEN'] });
    expect(await move(owner, site2, null)).toMatchObject({ data: { organization: null } });
    expect(await access(reader, site2)).toBe('hidden');
    expect(await access(admin, site2)).toBe('hidden');
    const grants = await gql(`{ organization(slug: "acme") { teams { slug projects { slug } } } }`, owner);
    expect(grants.data.organization.teams).toEqual([
      { slug: 'readers', projects: [{ slug: docs }] },
      { slug: 'writers', projects: [] },
    ]);
  });

  it("a team is granted its organization's projects only, holds its members only, and is changed by owners only", async () => {
    const outsiders = await importProject('elsewhere', outsider);
    expect(await team(owner, 'updateTeam', 'acme', { projects: [outsiders] }, 'readers')).toMatchObject({
      fieldErrors: [{ field: 'projects', messages: [`This organization owns no project "${outsiders}".`] }],
    });
    // Another organization's owner cannot grant their team acme's project.
    expect(await team(rival, 'updateTeam', 'rival', { projects: [docs] }, 'spies')).toMatchObject({
      fieldErrors: [{ field: 'projects', messages: [`This organization owns no project "${docs}".`] }],
    });
    expect(await member(owner, 'addTeamMember', 'acme', 'readers', 'outsider')).toMatchObject({
      fieldErrors: [{ field: 'username', messages: ['"outsider" is not a member of this organization.'] }],
    });
    expect(await member(rival, 'addTeamMember', 'rival', 'spies', 'reader')).toMatchObject({ __typename: 'ValidationError' });
    expect(await team(admin, 'updateTeam', 'acme', { access: 'admin' }, 'readers')).toEqual({ errors: ['FORBIDDEN'] });
    expect(await member(reader, 'addTeamMember', 'acme', 'writers', 'reader')).toEqual({ errors: ['FORBIDDEN'] });
    expect(await team(owner, 'createTeam', 'acme', { name: 'Readers' })).toMatchObject({
      fieldErrors: [{ field: 'slug', messages: ['A team with slug "readers" already exists.'] }],
    });
    expect(await access(reader, docs)).toBe('readonly');
    expect(await access(outsider, docs)).toBe('hidden');
  });
});

describe('single sign-on rules', () => {
  it("are a site admin's to set: an owner cannot make the organization SSO-only or tie a team to a group", async () => {
    // (The refusal's words say who may: "Only a site admin sets single sign-on rules …".)
    expect(await write('updateOrganization(organization: "acme", input: $input)', { input: { ssoOnly: true } }, owner)).toEqual({ errors: ['FORBIDDEN'] });
    expect(await team(owner, 'updateTeam', 'acme', { ssoGroup: 'everyone' }, 'readers')).toEqual({ errors: ['FORBIDDEN'] });
    const org = await t.db.prisma.organization.findUniqueOrThrow({ where: { slug: 'acme' }, include: { teams: true } });
    expect([org.ssoOnly, ...org.teams.map((x) => x.ssoGroup)]).toEqual([false, '', '']);
  });
});

describe('members leaving', () => {
  it('the last owner cannot step down or leave; a member removed loses their teams and their access at once', async () => {
    const role = (who: string, r: string, token = owner) =>
      write('setOrganizationMemberRole(organization: $a, username: $b, role: $role)', { a: 'acme', b: who, role: r }, token, '{ role }');
    expect(await role('owner', 'member')).toMatchObject({ message: expect.stringContaining('at least one owner') });
    expect(await role('reader', 'owner', admin)).toEqual({ errors: ['FORBIDDEN'] });
    const remove = (who: string, token = owner) => write('removeOrganizationMember(organization: $a, username: $b)', { a: 'acme', b: who }, token, '');
    expect(await remove('owner')).toMatchObject({ message: expect.stringContaining('at least one owner') });
    expect(await remove('admin', reader)).toEqual({ errors: ['FORBIDDEN'] });
    expect(await access(admin, docs)).toBe('admin');
    expect(await remove('admin')).toMatchObject({ data: true });
    expect(await access(admin, docs)).toBe('hidden');
    expect(await t.db.prisma.teamMember.count({ where: { member: { user: { username: 'admin' } } } })).toBe(0);
    // A member may leave by themself.
    expect(await remove('reader', reader)).toMatchObject({ data: true });
    expect(await access(reader, docs)).toBe('hidden');
  });

  it('an organization that owns projects is not deleted (its docs would go with it); an empty one is', async () => {
    const del = (org: string, token = owner) => write('deleteOrganization(organization: $a)', { a: org }, token, '{ slug }');
    expect(await del('acme')).toMatchObject({ message: expect.stringContaining('owns 1 project') });
    expect(await del('rival')).toEqual({ errors: ['NOT_FOUND'] });
    expect(await del('rival', rival)).toMatchObject({ data: { slug: 'rival' } });
    expect(await t.db.prisma.organization.findUnique({ where: { slug: 'rival' } })).toBeNull();
  });
});
