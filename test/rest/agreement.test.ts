// The REST adapter is a view of GraphQL: for every v3 read route, the REST body and the same data
// fetched by hand through /graphql describe the same objects (ids, slugs, names, states, counts,
// URLs where both have them). The GraphQL queries here are written by hand, not taken from the
// route table, so a route that asks GraphQL for the wrong thing is caught.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.ts';
import { type Caller, pathFor, send, v3Routes, worldApp } from './v3-calls.ts';

let t: TestApp;
type Node = Record<string, any>;

/** A GraphQL DateTime as Django REST framework writes it: `Z`, microseconds only when not zero. */
function drf(iso: string | null): string | null {
  if (iso === null) return null;
  const d = new Date(iso);
  const ms = d.getUTCMilliseconds();
  return `${d.toISOString().slice(0, 19)}${ms ? `.${String(ms).padStart(3, '0')}000` : ''}Z`;
}

const API = 'http://lectern.test/api/v3';

async function gql(query: string, caller: Caller, variables: Record<string, unknown> = {}) {
  const token = caller === 'me' ? 'me' : caller === 'other' ? 'other' : undefined;
  return t.gql(query, variables, token);
}

async function data(query: string, caller: Caller, variables: Record<string, unknown> = {}) {
  const res = await gql(query, caller, variables);
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data;
}

async function rest(path: string, caller: Caller) {
  const res = await send(t, 'GET', path, caller);
  expect(res.status, `${path}: ${res.text}`).toBe(200);
  return res.body;
}

// What GraphQL says, in the REST names: only the fields both sides have.
const PROJECT = `id slug name language { code name } programmingLanguage { code name } repository { url type } defaultVersion defaultBranch
  privacyLevel externalBuildsPrivacyLevel tags homepage documentationUrl users { username } superproject { slug } translationOf { slug }
  createdAt modifiedAt singleVersion versioningScheme readthedocsYamlPath`;
const project = (p: Node) => ({
  id: p.id,
  slug: p.slug,
  name: p.name,
  language: p.language,
  programming_language: p.programmingLanguage,
  repository: p.repository,
  default_version: p.defaultVersion,
  default_branch: p.defaultBranch,
  privacy_level: p.privacyLevel,
  external_builds_privacy_level: p.externalBuildsPrivacyLevel,
  tags: p.tags,
  homepage: p.homepage,
  users: p.users,
  subproject_of: p.superproject
    ? expect.objectContaining({ slug: p.superproject.slug, _links: expect.objectContaining({ _self: `${API}/projects/${p.superproject.slug}/` }) })
    : null,
  translation_of: p.translationOf ? expect.objectContaining({ slug: p.translationOf.slug }) : null,
  created: drf(p.createdAt),
  modified: drf(p.modifiedAt),
  single_version: p.singleVersion,
  versioning_scheme: p.versioningScheme,
  readthedocs_yaml_path: p.readthedocsYamlPath,
  urls: expect.objectContaining({
    documentation: p.documentationUrl,
    versions: `${API}/projects/${p.slug}/versions/`,
    builds: `${API}/projects/${p.slug}/builds/`,
  }),
  _links: expect.objectContaining({ _self: `${API}/projects/${p.slug}/`, versions: `${API}/projects/${p.slug}/versions/` }),
});

const VERSION =
  'id slug verboseName identifier ref built active hidden type privacyLevel documentationUrl vcsUrl downloads { pdf htmlzip epub } project { slug }';
const version = (v: Node) => ({
  id: v.id,
  slug: v.slug,
  verbose_name: v.verboseName,
  identifier: v.identifier,
  ref: v.ref,
  built: v.built,
  active: v.active,
  hidden: v.hidden,
  type: v.type,
  privacy_level: v.privacyLevel,
  urls: { documentation: v.documentationUrl, vcs: v.vcsUrl, dashboard: { edit: `http://lectern.test/projects/${v.project.slug}/versions` } },
  downloads: Object.fromEntries(Object.entries(v.downloads as Node).filter(([, url]) => url)),
  _links: expect.objectContaining({ _self: `${API}/projects/${v.project.slug}/versions/${v.slug}/` }),
});

const BUILD = 'id versionSlug project { slug } createdAt finishedAt duration state success error commit config';
const build = (b: Node) => ({
  id: b.id,
  version: b.versionSlug,
  project: b.project.slug,
  created: drf(b.createdAt),
  finished: drf(b.finishedAt),
  duration: b.duration,
  state: { code: b.state, name: b.state.charAt(0).toUpperCase() + b.state.slice(1) },
  success: b.success,
  error: b.error,
  commit: b.commit,
  _links: expect.objectContaining({ _self: `${API}/projects/${b.project.slug}/builds/${b.id}/` }),
  urls: expect.objectContaining({ build: `${API}/projects/${b.project.slug}/builds/${b.id}/` }),
});

const SUBPROJECT = `alias parent { slug } child { ${PROJECT} }`;
const subproject = (s: Node) => {
  const { subproject_of: _parent, ...child } = project(s.child);
  return {
    alias: s.alias,
    child: expect.objectContaining(child),
    _links: { _self: `${API}/projects/${s.parent.slug}/subprojects/${s.alias}/`, parent: `${API}/projects/${s.parent.slug}/` },
  };
};

const REDIRECT = 'id type fromUrl toUrl force enabled description httpStatus position createdAt modifiedAt project { slug }';
/** Detail and list show an empty URL as null (docs/design/read-the-docs.md §3.4). */
const redirect = (r: Node) => ({
  pk: r.id,
  type: r.type,
  from_url: r.fromUrl === '' ? null : r.fromUrl,
  to_url: r.toUrl === '' ? null : r.toUrl,
  force: r.force,
  enabled: r.enabled,
  description: r.description,
  http_status: r.httpStatus,
  position: r.position,
  project: r.project.slug,
  created: drf(r.createdAt),
  modified: drf(r.modifiedAt),
  _links: { _self: `${API}/projects/${r.project.slug}/redirects/${r.id}/`, project: `${API}/projects/${r.project.slug}/` },
});

const VARIABLE = 'id name public createdAt modifiedAt project { slug }';
const variable = (v: Node) => ({
  pk: v.id,
  name: v.name,
  public: v.public,
  project: v.project.slug,
  created: drf(v.createdAt),
  modified: drf(v.modifiedAt),
  _links: { _self: `${API}/projects/${v.project.slug}/environmentvariables/${v.id}/`, project: `${API}/projects/${v.project.slug}/` },
});

/** A REST page and a GraphQL page hold the same objects, in the same order. */
function samePage(body: Node, page: Node, map: (n: Node) => Node) {
  expect(body.count).toBe(page.totalCount);
  expect(body.results).toHaveLength(page.nodes.length);
  for (const [i, r] of (body.results as Node[]).entries()) expect(r).toMatchObject(map(page.nodes[i]));
}

// An organization and a team, in the REST names (Read the Docs' OrganizationSerializer and TeamSerializer).
const ORGANIZATION = 'slug name description url email disabled createdAt modifiedAt owners { username }';
const organization = (o: Node) => ({
  slug: o.slug,
  name: o.name,
  description: o.description,
  url: o.url,
  email: o.email,
  disabled: o.disabled,
  created: drf(o.createdAt),
  modified: drf(o.modifiedAt),
  owners: o.owners,
  _links: {
    _self: `${API}/organizations/${o.slug}/`,
    projects: `${API}/organizations/${o.slug}/projects/`,
    notifications: `${API}/organizations/${o.slug}/notifications/`,
  },
});
const TEAM = 'slug name access createdAt modifiedAt members { username }';
const team = (x: Node) => ({ slug: x.slug, name: x.name, access: x.access, created: drf(x.createdAt), modified: drf(x.modifiedAt), members: x.members });

const route = (name: string) => {
  const r = v3Routes.find((x) => x.name === name);
  if (!r) throw new Error(`no route ${name}`);
  return r;
};

beforeAll(async () => {
  t = await worldApp();
  const db = t.db.prisma;
  // Beyond the RTD world: a private version with a queued build (visible to maintainers only), a
  // second queued build of v1.0, and a redirect whose URLs are empty.
  await db.version.create({
    data: { id: 20, projectId: 1, slug: 'internal', verboseName: 'internal', type: 'branch', identifier: 'internal', active: true, privacyLevel: 'private' },
  });
  const triggered = await t.gql(
    `mutation { a: triggerBuild(project: "project", version: "internal") { __typename } b: triggerBuild(project: "project", version: "v1.0") { __typename } }`,
    {},
    'me',
  );
  expect(triggered.data).toEqual({ a: { __typename: 'MutationTriggerBuildSuccess' }, b: { __typename: 'MutationTriggerBuildSuccess' } });
  await db.redirect.create({ data: { id: 20, projectId: 1, type: 'sphinx_html', fromUrl: '', toUrl: '', position: 1 } });
});
afterAll(() => t.close());

/** One check per read route; each runs for the maintainer and for a user who maintains nothing here. */
const checks: Record<string, (caller: Caller) => Promise<void>> = {
  // This world builds no docs: both sides say the page is not there, in their own words.
  embed: async (caller) => {
    const url = 'http://lectern.test/docs/project/en/latest/index.html#intro';
    expect((await data('query($url: String!) { embedPage(url: $url) { content } }', caller, { url })).embedPage).toBeNull();
    const res = await send(t, 'GET', `/embed/?url=${encodeURIComponent(url)}`, caller);
    expect([res.status, res.body]).toEqual([404, { error: `Can't find content for section: url=${url} fragment=intro maincontent=None` }]);
  },
  // This world builds no docs: both sides search the versions the caller may read and find nothing.
  search: async (caller) => {
    const d = await data(
      '{ searchPages(query: "intro", scopes: [{ project: "project" }]) { totalCount searched { project { slug } version { slug } } } }',
      caller,
    );
    const res = await send(t, 'GET', '/search/?q=intro+project%3Aproject', caller);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      count: d.searchPages.totalCount,
      next: null,
      previous: null,
      results: [],
      projects: d.searchPages.searched.map((v: { project: { slug: string }; version: { slug: string } }) => ({
        slug: v.project.slug,
        versions: [{ slug: v.version.slug }],
      })),
      query: 'intro',
    });
  },
  'projects-list': async (caller) => {
    const d = await data(`{ projects(filter: { mine: true }, limit: 100) { totalCount nodes { ${PROJECT} } } }`, caller);
    samePage(await rest('/projects/', caller), d.projects, project);
    // A page further on, and a filter.
    const second = await data(`{ projects(filter: { mine: true }, limit: 1, offset: 1) { totalCount nodes { ${PROJECT} } } }`, caller);
    samePage(await rest('/projects/?limit=1&offset=1', caller), second.projects, project);
    const filtered = await data(`{ projects(filter: { mine: true, name: "PROJ" }, limit: 100) { totalCount nodes { ${PROJECT} } } }`, caller);
    samePage(await rest('/projects/?name=PROJ', caller), filtered.projects, project);
  },
  'projects-detail': async (caller) => {
    for (const slug of ['project', 'subproject', 'project-es', 'others-project']) {
      const d = await data(`query($slug: String!) { project(slug: $slug) { ${PROJECT} viewerIsMaintainer activeVersions { ${VERSION} } } }`, caller, { slug });
      const body = await rest(`/projects/${slug}/?expand=active_versions,permissions`, caller);
      expect(body).toMatchObject(project(d.project));
      expect(body.permissions).toEqual({ admin: d.project.viewerIsMaintainer });
      expect(Object.keys(body.active_versions)).toEqual(d.project.activeVersions.map((v: Node) => v.slug));
      for (const v of d.project.activeVersions) expect(body.active_versions[v.slug]).toMatchObject(version(v));
    }
  },
  'projects-superproject': async (caller) => {
    const d = await data(`{ project(slug: "subproject") { superproject { ${PROJECT} } } }`, caller);
    expect(await rest('/projects/subproject/superproject/', caller)).toMatchObject(project(d.project.superproject));
    // No parent: both say so.
    expect((await data('{ project(slug: "project") { superproject { id } } }', caller)).project.superproject).toBeNull();
    expect((await send(t, 'GET', '/projects/project/superproject/', caller)).status).toBe(404);
  },
  'projects-versions-list': async (caller) => {
    const d = await data(`{ project(slug: "project") { versions(limit: 100) { totalCount nodes { ${VERSION} } } } }`, caller);
    samePage(await rest('/projects/project/versions/', caller), d.project.versions, version);
    const built = await data(`{ project(slug: "project") { versions(filter: { built: true, active: true }) { totalCount nodes { ${VERSION} } } } }`, caller);
    samePage(await rest('/projects/project/versions/?built=true&active=1', caller), built.project.versions, version);
  },
  'projects-versions-detail': async (caller) => {
    for (const slug of ['v1.0', 'latest']) {
      const d = await data(`query($slug: String!) { project(slug: "project") { version(slug: $slug) { ${VERSION} lastBuild { ${BUILD} } } } }`, caller, {
        slug,
      });
      const body = await rest(`/projects/project/versions/${slug}/?expand=last_build`, caller);
      expect(body).toMatchObject(version(d.project.version));
      if (d.project.version.lastBuild) expect(body.last_build).toMatchObject(build(d.project.version.lastBuild));
      else expect(body.last_build ?? null).toBeNull();
    }
  },
  'projects-versions-builds-list': async (caller) => {
    const d = await data(`{ project(slug: "project") { version(slug: "v1.0") { builds(limit: 100) { totalCount nodes { ${BUILD} } } } } }`, caller);
    samePage(await rest('/projects/project/versions/v1.0/builds/', caller), d.project.version.builds, build);
  },
  'projects-versions-builds-detail': async (caller) => {
    const d = await data(`{ build(id: 1) { ${BUILD} } }`, caller);
    const body = await rest('/projects/project/versions/v1.0/builds/1/?expand=config', caller);
    expect(body).toMatchObject(build(d.build));
    expect(body.config).toEqual(d.build.config);
  },
  'projects-builds-list': async (caller) => {
    const d = await data(`{ project(slug: "project") { builds(limit: 100) { totalCount nodes { ${BUILD} } } } }`, caller);
    samePage(await rest('/projects/project/builds/', caller), d.project.builds, build);
    const running = await data(`{ project(slug: "project") { builds(filter: { running: true }) { totalCount nodes { ${BUILD} } } } }`, caller);
    samePage(await rest('/projects/project/builds/?running=true', caller), running.project.builds, build);
    const commit = await data(`{ project(slug: "project") { builds(filter: { commit: "a1b2c3" }) { totalCount nodes { ${BUILD} } } } }`, caller);
    samePage(await rest('/projects/project/builds/?commit=a1b2c3', caller), commit.project.builds, build);
  },
  'projects-builds-detail': async (caller) => {
    const d = await data(`{ project(slug: "project") { build(id: 1) { ${BUILD} } } }`, caller);
    const body = await rest('/projects/project/builds/1/?expand=config', caller);
    expect(body).toMatchObject(build(d.project.build));
    expect(body.config).toEqual(d.project.build.config);
  },
  'projects-subprojects-list': async (caller) => {
    const d = await data(`{ project(slug: "project") { subprojects(limit: 100) { totalCount nodes { ${SUBPROJECT} } } } }`, caller);
    samePage(await rest('/projects/project/subprojects/', caller), d.project.subprojects, subproject);
  },
  'projects-subprojects-detail': async (caller) => {
    const d = await data(`{ project(slug: "project") { subproject(alias: "subproject") { ${SUBPROJECT} } } }`, caller);
    expect(await rest('/projects/project/subprojects/subproject/', caller)).toMatchObject(subproject(d.project.subproject));
  },
  'projects-translations-list': async (caller) => {
    const d = await data(`{ project(slug: "project") { translations(limit: 100) { totalCount nodes { ${PROJECT} } } } }`, caller);
    expect(d.project.translations.totalCount).toBeGreaterThan(0);
    samePage(await rest('/projects/project/translations/', caller), d.project.translations, project);
  },
  'projects-redirects-list': async (caller) => {
    const q = `{ project(slug: "project") { redirects(limit: 100) { totalCount nodes { ${REDIRECT} } } } }`;
    if (caller !== 'me') return bothRefuse(q, '/projects/project/redirects/', caller);
    samePage(await rest('/projects/project/redirects/', caller), (await data(q, caller)).project.redirects, redirect);
  },
  'projects-redirects-detail': async (caller) => {
    for (const id of [1, 20]) {
      const q = `{ project(slug: "project") { redirect(id: ${id}) { ${REDIRECT} } } }`;
      if (caller !== 'me') return bothRefuse(q, `/projects/project/redirects/${id}/`, caller);
      expect(await rest(`/projects/project/redirects/${id}/`, caller)).toEqual(redirect((await data(q, caller)).project.redirect));
    }
  },
  'projects-environmentvariables-list': async (caller) => {
    const q = `{ project(slug: "project") { environmentVariables(limit: 100) { totalCount nodes { ${VARIABLE} } } } }`;
    if (caller !== 'me') return bothRefuse(q, '/projects/project/environmentvariables/', caller);
    const body = await rest('/projects/project/environmentvariables/', caller);
    samePage(body, (await data(q, caller)).project.environmentVariables, variable);
    for (const r of body.results) expect(r).toEqual(variable((await data(q, caller)).project.environmentVariables.nodes.find((n: Node) => n.id === r.pk)));
  },
  'projects-environmentvariables-detail': async (caller) => {
    const q = `{ project(slug: "project") { environmentVariable(id: 2) { ${VARIABLE} } } }`;
    if (caller !== 'me') return bothRefuse(q, '/projects/project/environmentvariables/2/', caller);
    expect(await rest('/projects/project/environmentvariables/2/', caller)).toEqual(variable((await data(q, caller)).project.environmentVariable));
  },
  // `me` owns the world's organization; `other` is not in it: GraphQL says null, REST 404.
  'organizations-list': async (caller) => {
    const d = await data(`{ organizations(limit: 100) { totalCount nodes { ${ORGANIZATION} } } }`, caller);
    samePage(await rest('/organizations/', caller), d.organizations, organization);
  },
  'organizations-detail': async (caller) => {
    const d = await data(`{ organization(slug: "organization") { ${ORGANIZATION} } }`, caller);
    if (!d.organization) {
      expect((await send(t, 'GET', '/organizations/organization/', caller)).status).toBe(404);
      return;
    }
    expect(await rest('/organizations/organization/', caller)).toEqual(organization(d.organization));
  },
  'organizations-projects-list': async (caller) => {
    const d = await data(`{ organization(slug: "organization") { projects(limit: 100) { totalCount nodes { ${PROJECT} } } } }`, caller);
    if (!d.organization) {
      expect((await send(t, 'GET', '/organizations/organization/projects/', caller)).status).toBe(404);
      return;
    }
    samePage(await rest('/organizations/organization/projects/', caller), d.organization.projects, project);
  },
  'organizations-teams-list': async (caller) => {
    const d = await data(`{ organization(slug: "organization") { teams { ${TEAM} } } }`, caller);
    if (!d.organization) {
      expect((await send(t, 'GET', '/organizations/organization/teams/', caller)).status).toBe(404);
      return;
    }
    const body = await rest('/organizations/organization/teams/?expand=members', caller);
    expect(body).toEqual({ count: d.organization.teams.length, next: null, previous: null, results: d.organization.teams.map(team) });
  },
};

/** A maintainers-only read: GraphQL answers FORBIDDEN where REST answers 403. */
async function bothRefuse(query: string, path: string, caller: Caller) {
  const g = await gql(query, caller);
  expect(g.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  const r = await send(t, 'GET', path, caller);
  expect(r.status).toBe(403);
  expect(r.body).toEqual({ detail: g.errors![0]!.message });
}

describe('REST and GraphQL agree', () => {
  it('every read route has a check here', () => {
    const reads = v3Routes.filter((r) => r.method === 'GET').map((r) => r.name);
    expect(Object.keys(checks).sort()).toEqual([...reads].sort());
    for (const name of reads) expect(() => pathFor(route(name))).not.toThrow();
  });

  describe.each(['me', 'other'] as Caller[])('for %s', (caller) => {
    it.each(Object.keys(checks))('%s', async (name) => {
      await checks[name]!(caller);
    });
  });

  it('the private version and its build show on both sides to the maintainer only', async () => {
    const q = '{ project(slug: "project") { versions { totalCount } builds { totalCount } version(slug: "internal") { id } } }';
    const mine = (await data(q, 'me')).project;
    const others = (await data(q, 'other')).project;
    expect(mine.versions.totalCount).toBe(others.versions.totalCount + 1);
    expect(mine.builds.totalCount).toBe(others.builds.totalCount + 1);
    expect(others.version).toBeNull();
    expect((await rest('/projects/project/versions/', 'me')).count).toBe(mine.versions.totalCount);
    expect((await rest('/projects/project/versions/', 'other')).count).toBe(others.versions.totalCount);
    expect((await rest('/projects/project/builds/', 'other')).count).toBe(others.builds.totalCount);
    expect((await send(t, 'GET', '/projects/project/versions/internal/', 'other')).status).toBe(404);
  });
});
