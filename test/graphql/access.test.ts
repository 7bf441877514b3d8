// Who sees what through /graphql (docs/design/read-the-docs.md §1.1, §2.2): everyone reads public data; maintainers
// also read their private projects, versions and builds, their redirects and variables; a bad
// token is refused even where no token is needed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';

let t: TestApp;
let alice: string;
let bob: string;
const ids: Record<string, number> = {};

type Who = 'anonymous' | 'bob' | 'alice';
const tokenOf = (who: Who) => (who === 'alice' ? alice : who === 'bob' ? bob : undefined);

/** A project maintained by `maintainer`, with a public, active, built `latest` that has one build. */
async function project(
  slug: string,
  maintainer: 'alice' | 'bob',
  data: { privacyLevel?: 'public' | 'private'; language?: string; programmingLanguage?: string; tags?: string[] } = {},
) {
  const db = t.db.prisma;
  const p = await db.project.create({
    data: { name: slug, slug, repositoryUrl: `https://github.com/acme/${slug}`, ...data, users: { connect: { username: maintainer } } },
  });
  await version(p.id, slug, 'latest', 'public');
  ids[slug] = p.id;
  return p;
}

async function version(projectId: number, projectSlug: string, slug: string, privacyLevel: 'public' | 'private') {
  const db = t.db.prisma;
  const v = await db.version.create({ data: { projectId, slug, verboseName: slug, type: 'branch', active: true, built: true, privacyLevel } });
  const b = await db.build.create({ data: { projectId, versionId: v.id, versionSlug: slug, state: 'finished', success: true, config: { version: 2 } } });
  await db.version.update({ where: { id: v.id }, data: { lastBuildId: b.id } });
  ids[`${projectSlug}/${slug}`] = v.id;
  ids[`build:${projectSlug}/${slug}`] = b.id;
}

beforeAll(async () => {
  t = await testApp();
  alice = await t.user('alice');
  bob = await t.user('bob');
  const db = t.db.prisma;
  // alice: `pub` (public, with a private version), `priv` (private), `hidden-parent` (private).
  // bob: `bobs` and `visible-child` (public); `visible-child` is a subproject of alice's private `hidden-parent`.
  const pub = await project('pub', 'alice', { language: 'en', programmingLanguage: 'py', tags: ['api', 'guide'] });
  await version(pub.id, 'pub', 'internal-notes', 'private');
  const priv = await project('priv', 'alice', { privacyLevel: 'private', language: 'es', programmingLanguage: 'py', tags: ['api'] });
  const bobs = await project('bobs', 'bob', { language: 'es', programmingLanguage: 'js' });
  const hiddenParent = await project('hidden-parent', 'alice', { privacyLevel: 'private' });
  const visibleChild = await project('visible-child', 'bob');
  await db.subproject.create({ data: { parentId: pub.id, childId: bobs.id, alias: 'bobs' } });
  await db.subproject.create({ data: { parentId: pub.id, childId: priv.id, alias: 'internal' } });
  await db.subproject.create({ data: { parentId: hiddenParent.id, childId: visibleChild.id, alias: 'child' } });
  await db.redirect.create({ data: { projectId: pub.id, type: 'page', fromUrl: '/old', toUrl: '/new' } });
  await db.environmentVariable.create({ data: { projectId: pub.id, name: 'SECRET', valueEncrypted: 'not-really-encrypted', valueSize: 5 } });
});
afterAll(() => t.close());

const slugs = (nodes: { slug: string }[]) => nodes.map((n) => n.slug);

describe('private projects', () => {
  it.each<[Who, string | null]>([
    ['anonymous', null],
    ['bob', null],
    ['alice', 'priv'],
  ])('project(slug) for %s is %s', async (who, expected) => {
    const res = await t.gql(`{ project(slug: "priv") { slug } }`, {}, tokenOf(who));
    expect(res.status).toBe(200);
    expect(res.errors).toBeUndefined();
    expect(res.data.project?.slug ?? null).toBe(expected);
  });

  it.each<[Who, string[]]>([
    ['anonymous', ['bobs', 'pub', 'visible-child']],
    ['bob', ['bobs', 'pub', 'visible-child']],
    ['alice', ['bobs', 'hidden-parent', 'priv', 'pub', 'visible-child']],
  ])('the projects list for %s is %j', async (who, expected) => {
    const res = await t.gql(`{ projects(limit: 100) { totalCount nodes { slug } } }`, {}, tokenOf(who));
    expect(res.data.projects).toEqual({ totalCount: expected.length, nodes: expected.map((slug) => ({ slug })) });
  });
});

describe('private versions and their builds', () => {
  const VERSIONS = `query($id: Int!, $build: Int!) {
    project(slug: "pub") {
      versions { totalCount nodes { slug privacyLevel } }
      version(slug: "internal-notes") { slug }
      activeVersions { slug }
      builds { totalCount nodes { versionSlug } }
      build(id: $build) { id }
    }
    version(id: $id) { slug }
    build(id: $build) { id }
  }`;

  it.each<Who>(['anonymous', 'bob'])('are hidden from %s', async (who) => {
    const res = await t.gql(VERSIONS, { id: ids['pub/internal-notes'], build: ids['build:pub/internal-notes'] }, tokenOf(who));
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({
      project: {
        versions: { totalCount: 1, nodes: [{ slug: 'latest', privacyLevel: 'public' }] },
        version: null,
        activeVersions: [{ slug: 'latest' }],
        builds: { totalCount: 1, nodes: [{ versionSlug: 'latest' }] },
        build: null,
      },
      version: null,
      build: null,
    });
  });

  it('are shown to the maintainer, though never among the active versions readers can open', async () => {
    const res = await t.gql(VERSIONS, { id: ids['pub/internal-notes'], build: ids['build:pub/internal-notes'] }, alice);
    expect(res.errors).toBeUndefined();
    expect(res.data.project.versions).toEqual({
      totalCount: 2,
      nodes: [
        { slug: 'latest', privacyLevel: 'public' },
        { slug: 'internal-notes', privacyLevel: 'private' },
      ],
    });
    expect(res.data.project.version).toEqual({ slug: 'internal-notes' });
    expect(res.data.project.activeVersions).toEqual([{ slug: 'latest' }]);
    expect(res.data.project.builds.totalCount).toBe(2);
    expect(res.data.project.build).toEqual({ id: ids['build:pub/internal-notes'] });
    expect(res.data.version).toEqual({ slug: 'internal-notes' });
    expect(res.data.build).toEqual({ id: ids['build:pub/internal-notes'] });
  });

  it.each<[Who, string[]]>([
    ['anonymous', ['pub/latest', 'bobs/latest', 'visible-child/latest']],
    ['bob', ['pub/latest', 'bobs/latest', 'visible-child/latest']],
    ['alice', ['pub/latest', 'pub/internal-notes', 'priv/latest', 'bobs/latest', 'hidden-parent/latest', 'visible-child/latest']],
  ])('the builds of every project for %s are %j', async (who, expected) => {
    const res = await t.gql(`{ builds(limit: 100) { totalCount nodes { id project { slug } versionSlug } } }`, {}, tokenOf(who));
    const seen = res.data.builds.nodes.map((b: { project: { slug: string }; versionSlug: string }) => `${b.project.slug}/${b.versionSlug}`);
    expect(seen.sort()).toEqual([...expected].sort());
    expect(res.data.builds.totalCount).toBe(expected.length);
  });

  it('the builds of a private project are hidden with it, even by id', async () => {
    const res = await t.gql(`query($id: Int!) { build(id: $id) { id } }`, { id: ids['build:priv/latest'] }, bob);
    expect(res.data.build).toBeNull();
    const mine = await t.gql(`query($id: Int!) { build(id: $id) { id project { slug } } }`, { id: ids['build:priv/latest'] }, alice);
    expect(mine.data.build).toEqual({ id: ids['build:priv/latest'], project: { slug: 'priv' } });
  });
});

describe('subprojects', () => {
  const SUBPROJECTS = `{
    project(slug: "pub") { subprojects { totalCount nodes { alias child { slug } } } subproject(alias: "internal") { alias } }
    child: project(slug: "visible-child") { superproject { slug } }
  }`;

  it.each<Who>(['anonymous', 'bob'])('with a private child, or a private parent, are hidden from %s', async (who) => {
    const res = await t.gql(SUBPROJECTS, {}, tokenOf(who));
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({
      project: { subprojects: { totalCount: 1, nodes: [{ alias: 'bobs', child: { slug: 'bobs' } }] }, subproject: null },
      child: { superproject: null },
    });
  });

  it('are all shown to the maintainer of the private projects', async () => {
    const res = await t.gql(SUBPROJECTS, {}, alice);
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({
      project: {
        subprojects: {
          totalCount: 2,
          nodes: [
            { alias: 'bobs', child: { slug: 'bobs' } },
            { alias: 'internal', child: { slug: 'priv' } },
          ],
        },
        subproject: { alias: 'internal' },
      },
      child: { superproject: { slug: 'hidden-parent' } },
    });
  });
});

describe('redirects and environment variables', () => {
  it.each(['redirects', 'environmentVariables'])('%s: anonymous callers get 401 UNAUTHENTICATED', async (field) => {
    const http = await t.http
      .post('/graphql')
      .set('accept', 'application/json')
      .send({ query: `{ project(slug: "pub") { slug ${field} { totalCount } } }` });
    expect(http.headers['www-authenticate']).toBe('Token');
    const res = await t.gql(`{ project(slug: "pub") { slug ${field} { totalCount } } }`);
    expect(res.status).toBe(401);
    expect(res.data).toEqual({ project: null });
    expect(res.errors).toEqual([
      expect.objectContaining({
        message: 'Authentication credentials were not provided.',
        path: ['project', field],
        extensions: expect.objectContaining({ code: 'UNAUTHENTICATED' }),
      }),
    ]);
  });

  it.each(['redirects', 'environmentVariables'])('%s: a signed-in non-maintainer gets 403 FORBIDDEN', async (field) => {
    const res = await t.gql(`{ project(slug: "pub") { slug ${field} { totalCount } } }`, {}, bob);
    expect(res.status).toBe(403);
    expect(res.data).toEqual({ project: null });
    expect(res.errors).toEqual([
      expect.objectContaining({
        message: 'You do not have permission to perform this action.',
        path: ['project', field],
        extensions: expect.objectContaining({ code: 'FORBIDDEN' }),
      }),
    ]);
  });

  it('the maintainer reads them, without the variable values', async () => {
    const res = await t.gql(
      `{ project(slug: "pub") { redirects { totalCount nodes { fromUrl toUrl } } environmentVariables { totalCount nodes { name public } } } }`,
      {},
      alice,
    );
    expect(res.status).toBe(200);
    expect(res.errors).toBeUndefined();
    expect(res.data.project).toEqual({
      redirects: { totalCount: 1, nodes: [{ fromUrl: '/old', toUrl: '/new' }] },
      environmentVariables: { totalCount: 1, nodes: [{ name: 'SECRET', public: false }] },
    });
  });

  it('a private project stays invisible rather than forbidden', async () => {
    const res = await t.gql(`{ project(slug: "priv") { redirects { totalCount } } }`, {}, bob);
    expect(res.status).toBe(200);
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({ project: null });
  });
});

describe('projects filters', () => {
  const LIST = `query($filter: ProjectFilter) { projects(limit: 100, filter: $filter) { totalCount nodes { slug } } }`;

  it.each<[Who, string[]]>([
    ['alice', ['hidden-parent', 'priv', 'pub']],
    ['bob', ['bobs', 'visible-child']],
    ['anonymous', []],
  ])('mine: true lists only the projects %s maintains', async (who, expected) => {
    const res = await t.gql(LIST, { filter: { mine: true } }, tokenOf(who));
    expect(res.errors).toBeUndefined();
    expect(slugs(res.data.projects.nodes)).toEqual(expected);
    expect(res.data.projects.totalCount).toBe(expected.length);
  });

  it.each<[Who, Record<string, string>, string[]]>([
    ['anonymous', { language: 'es' }, ['bobs']],
    ['alice', { language: 'es' }, ['bobs', 'priv']],
    ['anonymous', { programmingLanguage: 'py' }, ['pub']],
    ['alice', { programmingLanguage: 'py' }, ['priv', 'pub']],
    ['alice', { language: 'es', programmingLanguage: 'py' }, ['priv']],
    ['anonymous', { language: 'fr' }, []],
    // The dashboard's tag filter: a private project's tags show only to those who see it.
    ['anonymous', { tag: 'api' }, ['pub']],
    ['alice', { tag: 'api' }, ['priv', 'pub']],
    ['alice', { tag: 'guide' }, ['pub']],
    ['alice', { tag: 'API' }, []],
  ])('%s filtering by %j gets %j', async (who, filter, expected) => {
    const res = await t.gql(LIST, { filter }, tokenOf(who));
    expect(res.errors).toBeUndefined();
    expect(slugs(res.data.projects.nodes)).toEqual(expected);
    expect(res.data.projects.totalCount).toBe(expected.length);
  });
});

describe('the Authorization header', () => {
  const post = (authorization: string) =>
    t.http
      .post('/graphql')
      .set('content-type', 'application/json')
      .set('accept', 'application/json')
      .set('authorization', authorization)
      .send({ query: '{ viewer { username } projects { totalCount } }' });

  it('`Token <key>` identifies the caller, whatever the case of the keyword', async () => {
    for (const header of [`Token ${alice}`, `token ${alice}`, `TOKEN  ${alice} `]) {
      const res = await post(header);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ viewer: { username: 'alice' }, projects: { totalCount: 5 } });
    }
  });

  it('an unknown key is refused with 401 "Invalid token.", even for public data', async () => {
    const res = await post('Token 0123456789abcdef');
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toMatch(/json/);
    expect(res.headers['www-authenticate']).toBe('Token');
    expect(res.body.data).toBeUndefined();
    expect(res.body.errors).toEqual([expect.objectContaining({ message: 'Invalid token.', extensions: expect.objectContaining({ code: 'UNAUTHENTICATED' }) })]);
  });

  it.each([
    ['Token', 'Invalid token header. No credentials provided.'],
    ['Token   ', 'Invalid token header. No credentials provided.'],
    ['Token abc def', 'Invalid token header. Token string should not contain spaces.'],
  ])('%j is refused with 401 %j (DRF)', async (header, message) => {
    const res = await post(header);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Token');
    expect(res.body.errors).toEqual([expect.objectContaining({ message, extensions: expect.objectContaining({ code: 'UNAUTHENTICATED' }) })]);
  });

  it.each(['Bearer x', "Bearer <alice's key>", 'Basic YWxpY2U6cHc='])('another scheme (%s) counts as anonymous', async (header) => {
    const res = await post(header.replace("<alice's key>", alice));
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ viewer: null, projects: { totalCount: 3 } });
  });
});
