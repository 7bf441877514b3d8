// Read the Docs for Business's organization routes of REST v3 (docs/design/rest-api.md,
// "Organizations"), through the real HTTP stack, on an organization made with GraphQL's own
// mutations: its owner, a member in a read-only team, one in an admin team, one in no team, and an
// outsider. Each body is checked against Read the Docs' serializers (OrganizationSerializer,
// TeamSerializer, RelatedOrganizationSerializer, ProjectSerializer) key by key.
import type { Response } from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';

const API = 'http://lectern.test/api/v3';
const ORG = 'acme-docs';
const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{6})?Z$/;

/** Read the Docs' serializers' fields, sorted as v3 writes keys. */
const ORGANIZATION_KEYS = ['_links', 'created', 'description', 'disabled', 'email', 'modified', 'name', 'owners', 'slug', 'url'];
const TEAM_KEYS = ['access', 'created', 'modified', 'name', 'slug'];
const RELATED_ORGANIZATION_KEYS = ['_links', 'slug'];
const ORGANIZATION_LINKS = {
  _self: `${API}/organizations/${ORG}/`,
  projects: `${API}/organizations/${ORG}/projects/`,
  notifications: `${API}/organizations/${ORG}/notifications/`,
};

let t: TestApp;
/** Tokens: the owner, a member of the read-only team, a member of the admin team, a member of no team, and someone not in it. */
const as: Record<'owner' | 'reader' | 'admin' | 'member' | 'outsider', string> = { owner: '', reader: '', admin: '', member: '', outsider: '' };

/** A mutation (`field` with its arguments, `args` declaring its variables) that must succeed: its `data`. */
async function mutate(field: string, args: string, variables: Record<string, unknown>, token: string, select = '__typename'): Promise<any> {
  const res = await t.gql(
    `mutation${args} { r: ${field} { __typename ... on Error { message } ... on ${successOf(field)} { data { ${select} } } } }`,
    variables,
    token,
  );
  expect(res.errors, `${field}: ${JSON.stringify(res.errors)}`).toBeUndefined();
  expect(res.data.r.__typename, `${field}: ${JSON.stringify(res.data.r)}`).toMatch(/Success$/);
  return res.data.r.data;
}
const successOf = (field: string) => {
  const name = field.slice(0, field.indexOf('('));
  return `Mutation${name[0]!.toUpperCase()}${name.slice(1)}Success`;
};

async function importProject(token: string, name: string, privacyLevel: 'public' | 'private') {
  await mutate('importProject(input: $input)', '($input: ImportProjectInput!)', { input: { name, uploadOnly: true, privacyLevel } }, token, 'slug');
}

/** The owner invites someone, to a team or to none, and they take the link. */
async function join(token: string, team: string | null) {
  const created = await mutate(
    'inviteToOrganization(organization: $org, input: $input)',
    '($org: String!, $input: OrganizationInvitationInput!)',
    { org: ORG, input: team ? { team } : {} },
    as.owner,
    'link',
  );
  const invitation = new URL(created.link).searchParams.get('token')!;
  await mutate('acceptInvitation(token: $token)', '($token: String!)', { token: invitation }, token, 'slug');
}

beforeAll(async () => {
  t = await testApp();
  for (const who of Object.keys(as) as (keyof typeof as)[]) as[who] = await t.user(who);
  const input = { name: 'Acme Docs', description: 'The docs of Acme.', url: 'https://acme.example.com/', email: 'docs@acme.example.com' };
  await mutate('createOrganization(input: $input)', '($input: OrganizationInput!)', { input }, as.owner, 'slug');
  await importProject(as.owner, 'acme-public', 'public');
  await importProject(as.owner, 'acme-private', 'private');
  await importProject(as.owner, 'loose', 'public');
  for (const project of ['acme-public', 'acme-private']) {
    await mutate('setProjectOrganization(project: $project, organization: $org)', '($project: String!, $org: String)', { project, org: ORG }, as.owner, 'slug');
  }
  const team = (input: Record<string, unknown>) =>
    mutate('createTeam(organization: $org, input: $input)', '($org: String!, $input: TeamInput!)', { org: ORG, input }, as.owner, 'slug');
  await team({ name: 'Readers', access: 'readonly', projects: ['acme-private'] });
  await team({ name: 'Admins', access: 'admin', allProjects: true });
  await join(as.reader, 'readers');
  await join(as.admin, 'admins');
  await join(as.member, null);
});
afterAll(() => t?.close());

function isSorted(value: unknown): boolean {
  if (Array.isArray(value)) return value.every(isSorted);
  if (value && typeof value === 'object') {
    const keys = Object.keys(value);
    return keys.every((k, i) => i === 0 || keys[i - 1]! < k) && Object.values(value).every(isSorted);
  }
  return true;
}

async function call(method: 'GET' | 'PATCH', path: string, token: string | null, body?: unknown): Promise<Response> {
  let req = method === 'GET' ? t.http.get(`/api/v3${path}`) : t.http.patch(`/api/v3${path}`);
  if (token !== null) req = req.set('Authorization', `Token ${token}`);
  if (body !== undefined) req = req.set('Content-Type', 'application/json').send(JSON.stringify(body));
  const res = await req;
  if (res.text) {
    expect(res.headers['content-type'], path).toMatch(/^application\/json/);
    expect(isSorted(res.body), `${path}: keys sorted at every level`).toBe(true);
  }
  return res;
}
const get = (path: string, token: string | null) => call('GET', path, token);

/** A page's slugs, after checking it is one. */
function slugsOf(res: Response): string[] {
  expect(res.status, res.text).toBe(200);
  expect(Object.keys(res.body)).toEqual(['count', 'next', 'previous', 'results']);
  expect(res.body.count).toBe(res.body.results.length);
  return res.body.results.map((r: { slug: string }) => r.slug);
}

const NOT_FOUND = { detail: 'No Organization matches the given query.' };

describe('GET /organizations/ and /organizations/{organization}/', () => {
  it("answer Read the Docs' OrganizationSerializer, field by field", async () => {
    const list = await get('/organizations/', as.owner);
    expect(slugsOf(list)).toEqual([ORG]);
    expect(list.body).toMatchObject({ next: null, previous: null });
    const org = list.body.results[0];
    expect(Object.keys(org)).toEqual(ORGANIZATION_KEYS);
    expect(org).toMatchObject({
      name: 'Acme Docs',
      slug: ORG,
      description: 'The docs of Acme.',
      url: 'https://acme.example.com/',
      email: 'docs@acme.example.com',
      disabled: false,
      owners: [{ username: 'owner' }],
      _links: ORGANIZATION_LINKS,
    });
    expect(Object.keys(org._links).sort()).toEqual(Object.keys(ORGANIZATION_LINKS).sort());
    expect(org.created).toMatch(DATETIME);
    expect(org.modified).toMatch(DATETIME);
    const detail = await get(`/organizations/${ORG}/`, as.owner);
    expect(detail.status).toBe(200);
    expect(detail.body).toEqual(org);
  });

  it('show it to every member, whatever their teams', async () => {
    for (const token of [as.reader, as.admin, as.member]) {
      expect(slugsOf(await get('/organizations/', token))).toEqual([ORG]);
      const detail = await get(`/organizations/${ORG}/`, token);
      expect(detail.status).toBe(200);
      expect(detail.body.owners).toEqual([{ username: 'owner' }]);
    }
  });

  it('show nothing of it to an outsider: not listed, and its detail 404 as one that does not exist', async () => {
    expect(slugsOf(await get('/organizations/', as.outsider))).toEqual([]);
    for (const slug of [ORG, 'no-such-organization']) {
      const res = await get(`/organizations/${slug}/`, as.outsider);
      expect(res.status).toBe(404);
      expect(res.body).toEqual(NOT_FOUND);
    }
    expect((await get('/organizations/no-such-organization/', as.owner)).body).toEqual(NOT_FOUND);
  });

  it('need a token, as every v3 route', async () => {
    for (const path of ['/organizations/', `/organizations/${ORG}/`, `/organizations/${ORG}/projects/`, `/organizations/${ORG}/teams/`]) {
      const res = await get(path, null);
      expect(res.status, path).toBe(401);
      expect(res.body).toEqual({ detail: 'Authentication credentials were not provided.' });
    }
  });
});

describe('GET /organizations/{organization}/projects/', () => {
  it('lists its projects in the Project representation of /projects/, without the organization expansion', async () => {
    const res = await get(`/organizations/${ORG}/projects/?expand=organization,active_versions,permissions`, as.owner);
    expect(slugsOf(res)).toEqual(['acme-private', 'acme-public']);
    for (const p of res.body.results) {
      const detail = await get(`/projects/${p.slug}/`, as.owner);
      expect(p).toEqual(detail.body);
    }
  });

  it('shows each member the projects they can read: a private one to its read-only team, not to a member of no team', async () => {
    expect(slugsOf(await get(`/organizations/${ORG}/projects/`, as.reader))).toEqual(['acme-private', 'acme-public']);
    expect(slugsOf(await get(`/organizations/${ORG}/projects/`, as.admin))).toEqual(['acme-private', 'acme-public']);
    expect(slugsOf(await get(`/organizations/${ORG}/projects/`, as.member))).toEqual(['acme-public']);
  });

  it('404s to an outsider, as the organization does', async () => {
    const res = await get(`/organizations/${ORG}/projects/`, as.outsider);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'No Organization matches the given query.' });
  });

  it('pages with limit and offset', async () => {
    const res = await get(`/organizations/${ORG}/projects/?limit=1&offset=1`, as.owner);
    expect(res.body).toMatchObject({
      count: 2,
      next: null,
      previous: `http://lectern.test/api/v3/organizations/${ORG}/projects/?limit=1`,
      results: [{ slug: 'acme-public' }],
    });
  });
});

describe('GET /organizations/{organization}/teams/', () => {
  it("answers Read the Docs' TeamSerializer, with `members` when expanded", async () => {
    const plain = await get(`/organizations/${ORG}/teams/`, as.owner);
    expect(slugsOf(plain)).toEqual(['admins', 'readers']);
    for (const team of plain.body.results) {
      expect(Object.keys(team)).toEqual(TEAM_KEYS);
      expect(team.created).toMatch(DATETIME);
      expect(team.modified).toMatch(DATETIME);
    }
    const res = await get(`/organizations/${ORG}/teams/?expand=members`, as.owner);
    expect(res.body.results.map((r: object) => Object.keys(r))).toEqual([
      ['access', 'created', 'members', 'modified', 'name', 'slug'],
      ['access', 'created', 'members', 'modified', 'name', 'slug'],
    ]);
    expect(res.body.results).toMatchObject([
      { name: 'Admins', slug: 'admins', access: 'admin', members: [{ username: 'admin' }] },
      { name: 'Readers', slug: 'readers', access: 'readonly', members: [{ username: 'reader' }] },
    ]);
    expect((await get(`/organizations/${ORG}/teams/?expand=members&fields=slug,members`, as.owner)).body.results[1]).toEqual({
      slug: 'readers',
      members: [{ username: 'reader' }],
    });
  });

  it('404s to an outsider, as the organization does', async () => {
    for (const slug of [ORG, 'no-such-organization']) {
      const res = await get(`/organizations/${slug}/teams/`, as.outsider);
      expect(res.status).toBe(404);
      expect(res.body).toEqual(NOT_FOUND);
    }
  });

  it("answers a member who is not an owner as GraphQL's Organization.teams does: every member reads them", async () => {
    // Read the Docs answers 403 here (IsOrganizationAdmin); the route follows the GraphQL field it runs.
    const g = await t.gql(`{ organization(slug: "${ORG}") { teams { slug } } }`, {}, as.member);
    const res = await get(`/organizations/${ORG}/teams/`, as.member);
    expect(slugsOf(res)).toEqual(g.data.organization.teams.map((x: { slug: string }) => x.slug));
  });
});

describe("a project's organization", () => {
  it('expands to its slug and links for anyone who sees the project, and to null without one', async () => {
    for (const token of [as.owner, as.outsider]) {
      const res = await get('/projects/acme-public/?expand=organization', token);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body.organization)).toEqual(RELATED_ORGANIZATION_KEYS);
      expect(res.body.organization).toEqual({ slug: ORG, _links: ORGANIZATION_LINKS });
      expect((await get('/projects/loose/?expand=organization', token)).body.organization).toBeNull();
    }
    const list = await get('/projects/?expand=organization', as.owner);
    expect(list.body.results.map((p: { slug: string; organization: unknown }) => [p.slug, p.organization && ORG])).toEqual([
      ['acme-private', ORG],
      ['acme-public', ORG],
      ['loose', null],
    ]);
  });

  it('filters /projects/ with ?organization=<slug>', async () => {
    expect(slugsOf(await get('/projects/', as.owner))).toEqual(['acme-private', 'acme-public', 'loose']);
    expect(slugsOf(await get(`/projects/?organization=${ORG}`, as.owner))).toEqual(['acme-private', 'acme-public']);
    expect(slugsOf(await get('/projects/?organization=no-such-organization', as.owner))).toEqual([]);
    expect(slugsOf(await get(`/projects/?organization=${ORG}`, as.admin))).toEqual(['acme-private', 'acme-public']);
  });

  it('a private project of the organization: listed for its read-only team, not for an outsider or a member of no team', async () => {
    expect(slugsOf(await get('/projects/', as.reader))).toEqual(['acme-private']);
    expect(slugsOf(await get(`/projects/?organization=${ORG}`, as.reader))).toEqual(['acme-private']);
    for (const token of [as.outsider, as.member]) {
      expect(slugsOf(await get(`/projects/?organization=${ORG}`, token))).toEqual([]);
      expect((await get('/projects/acme-private/', token)).status).toBe(404);
    }
    expect((await get('/projects/acme-private/', as.reader)).status).toBe(200);
  });

  it('a read-only team reads a project and may not change it; an admin team changes it', async () => {
    const denied = await call('PATCH', '/projects/acme-private/', as.reader, { homepage: 'https://acme.example.com/reader/' });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ detail: 'You do not have permission to perform this action.' });
    const done = await call('PATCH', '/projects/acme-private/', as.admin, { homepage: 'https://acme.example.com/admin/' });
    expect(done.status, done.text).toBe(204);
    expect((await get('/projects/acme-private/', as.reader)).body.homepage).toBe('https://acme.example.com/admin/');
  });
});
