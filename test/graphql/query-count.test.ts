// The dashboard's nested project query must cost a fixed number of SQL statements whatever the
// page size: one per level of the selection, never one per row (no N+1).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { dbKind } from '../helpers/db.ts';

const PROJECTS = 120;
const VERSIONS_PER_PROJECT = 3;

let t: TestApp;
const tokens: Record<string, string> = {};

const DASHBOARD = `query($limit: Int) {
  projects(limit: $limit) {
    totalCount
    nodes { slug users { username } activeVersions { slug lastBuild { id state config } } }
  }
}`;

const ONE_PROJECT = `query($slug: String!) {
  project(slug: $slug) { slug activeVersions { slug lastBuild { config } } }
}`;

const slugOf = (i: number) => `project-${String(i).padStart(3, '0')}`;
/** A build config as the builder stores it, made distinct per version so mix-ups show. */
const configOf = (project: string, version: string) => ({
  version: 2,
  build: { os: 'ubuntu-24.04', tools: { python: '3.12' } },
  sphinx: { configuration: 'docs/conf.py', fail_on_warning: false },
  formats: ['pdf'],
  python: { install: [{ requirements: `docs/${project}/${version}/requirements.txt` }] },
});

beforeAll(async () => {
  t = await testApp();
  tokens.alice = await t.user('alice');
  tokens.bob = await t.user('bob');
  const db = t.db.prisma;

  const projects = await db.project.createManyAndReturn({
    data: Array.from({ length: PROJECTS }, (_, i) => ({ name: `Project ${i}`, slug: slugOf(i), repositoryUrl: `https://github.com/acme/p${i}` })),
    select: { id: true, slug: true },
  });
  // alice maintains every project; bob the even-numbered ones as well.
  await db.$executeRawUnsafe(
    `INSERT INTO "_ProjectMaintainers" ("A", "B") SELECT p.id, u.id FROM "Project" p JOIN "User" u ON u.username = 'alice' OR (u.username = 'bob' AND right(p.slug, 1) IN ('0', '2', '4', '6', '8'))`,
  );

  const versions = await db.version.createManyAndReturn({
    data: projects.flatMap((p) => [
      ...Array.from({ length: VERSIONS_PER_PROJECT }, (_, v) => ({
        projectId: p.id,
        slug: `v${v + 1}.0`,
        verboseName: `v${v + 1}.0`,
        identifier: `v${v + 1}.0`,
        type: 'tag' as const,
        active: true,
        built: true,
        privacyLevel: 'public' as const,
      })),
      // Not listed as active: inactive, unbuilt, private.
      { projectId: p.id, slug: 'old', verboseName: 'old', type: 'branch' as const, active: false, built: true },
      { projectId: p.id, slug: 'latest', verboseName: 'latest', type: 'branch' as const, active: true, built: false, machine: true },
      { projectId: p.id, slug: 'secret', verboseName: 'secret', type: 'branch' as const, active: true, built: true, privacyLevel: 'private' as const },
    ]),
    select: { id: true, projectId: true, slug: true, project: { select: { slug: true } } },
  });
  const builds = await db.build.createManyAndReturn({
    data: versions.map((v) => ({
      projectId: v.projectId,
      versionId: v.id,
      versionSlug: v.slug,
      state: 'finished' as const,
      success: true,
      config: configOf(v.project.slug, v.slug),
    })),
    select: { id: true },
  });
  expect(builds).toHaveLength(versions.length);
  await db.$executeRawUnsafe(`UPDATE "Version" v SET "lastBuildId" = b.id FROM "Build" b WHERE b."versionId" = v.id`);
}, 120_000);
afterAll(() => t.close());

/** A statement reduced to what it reads: `count Project`, `select Version`, … */
function shape(sql: string): string {
  const table = /FROM "public"\."(\w+)"/.exec(sql)?.[1] ?? '?';
  return `${/^SELECT COUNT/.test(sql) ? 'count' : sql.trim().split(/\s/)[0]!.toLowerCase()} ${table}`;
}

/** Runs a query and returns its result and the SQL statements it sent. */
async function counted(query: string, variables: Record<string, unknown>, token?: string) {
  t.queries.length = 0;
  const res = await t.gql(query, variables, token);
  return { res, sql: [...t.queries] };
}

describe('the dashboard project list', () => {
  it('loads in the same number of SQL statements at page size 10 and 100', async () => {
    const small = await counted(DASHBOARD, { limit: 10 });
    const large = await counted(DASHBOARD, { limit: 100 });
    console.log(`[${dbKind()}] SQL statements for the dashboard query: page size 10 → ${small.sql.length}, page size 100 → ${large.sql.length}`);
    expect(small.res.errors).toBeUndefined();
    expect(large.res.errors).toBeUndefined();

    expect(large.sql.length).toBe(small.sql.length);
    expect(large.sql.length).toMatchInlineSnapshot(`5`);
    // One statement per level of the selection, and the total count.
    expect(large.sql.map(shape)).toMatchInlineSnapshot(`
      [
        "count Project",
        "select Project",
        "select User",
        "select Version",
        "select Build",
      ]
    `);
    expect(small.sql.map(shape)).toEqual(large.sql.map(shape));
  });

  it('costs the same at any page size for a signed-in maintainer, who also sees private projects', async () => {
    const carol = await t.user('carol');
    await t.db.prisma.project.update({ where: { slug: slugOf(0) }, data: { privacyLevel: 'private', users: { connect: { username: 'carol' } } } });
    try {
      const query = DASHBOARD.replace('nodes { slug', 'nodes { slug viewerIsMaintainer');
      const small = await counted(query, { limit: 10 }, carol);
      const large = await counted(query, { limit: 100 }, carol);
      console.log(`[${dbKind()}] SQL statements for the dashboard query with a token: page size 10 → ${small.sql.length}, page size 100 → ${large.sql.length}`);
      expect(large.res.errors).toBeUndefined();
      expect(large.res.data.projects.totalCount).toBe(PROJECTS);
      expect(large.res.data.projects.nodes[0]).toMatchObject({ slug: slugOf(0), viewerIsMaintainer: true });
      expect(large.res.data.projects.nodes[1]).toMatchObject({ slug: slugOf(1), viewerIsMaintainer: false });
      expect(large.sql.length).toBe(small.sql.length);
      // The token with its user (one statement), the projects the caller maintains (once per request), then as above.
      expect(large.sql.map(shape)).toMatchInlineSnapshot(`
        [
          "select ApiToken",
          "count Project",
          "select Project",
          "select User",
          "select Version",
          "select Build",
          "select Project",
        ]
      `);
    } finally {
      await t.db.prisma.project.update({ where: { slug: slugOf(0) }, data: { privacyLevel: 'public', users: { disconnect: { username: 'carol' } } } });
    }
  });

  it('returns every project of the page with its maintainers and active versions', async () => {
    const { res } = await counted(DASHBOARD, { limit: 100 });
    const page = res.data.projects;
    expect(page.totalCount).toBe(PROJECTS);
    expect(page.nodes).toHaveLength(100);
    expect(page.nodes.map((p: { slug: string }) => p.slug)).toEqual(Array.from({ length: 100 }, (_, i) => slugOf(i)));
    for (const [i, p] of page.nodes.entries()) {
      expect(p.users).toEqual(i % 2 === 0 ? [{ username: 'alice' }, { username: 'bob' }] : [{ username: 'alice' }]);
      expect(p.activeVersions.map((v: { slug: string }) => v.slug)).toEqual(['v3.0', 'v2.0', 'v1.0']);
      for (const v of p.activeVersions) {
        expect(v.lastBuild).toEqual({ id: expect.any(Number), state: 'finished', config: configOf(p.slug, v.slug) });
      }
    }
    // No build is listed twice.
    const ids = page.nodes.flatMap((p: { activeVersions: { lastBuild: { id: number } }[] }) => p.activeVersions.map((v) => v.lastBuild.id));
    expect(new Set(ids).size).toBe(100 * VERSIONS_PER_PROJECT);
  });

  it('shows one project in full', async () => {
    const { res, sql } = await counted(ONE_PROJECT, { slug: slugOf(7) });
    expect(res.data.project).toEqual({
      slug: slugOf(7),
      activeVersions: ['v3.0', 'v2.0', 'v1.0'].map((v) => ({ slug: v, lastBuild: { config: configOf(slugOf(7), v) } })),
    });
    expect(sql.map(shape)).toMatchInlineSnapshot(`
      [
        "select Project",
        "select Version",
        "select Build",
      ]
    `);
  });
});

describe('where the projects of a page are served', () => {
  const URLS = `query($urls: Boolean!) { projects(limit: 10) { nodes { slug documentationUrl @include(if: $urls) } } }`;

  it('is read in one statement when a field below asks, and not at all when @include or @skip leaves every such field out', async () => {
    const asked = await counted(URLS, { urls: true });
    const left = await counted(URLS, { urls: false });
    const skipped = await counted(URLS.replace('@include(if: $urls)', '@skip(if: $urls)'), { urls: true });
    expect(asked.res.errors).toBeUndefined();
    expect(asked.res.data.projects.nodes[0]).toEqual({ slug: slugOf(0), documentationUrl: expect.stringContaining(slugOf(0)) });
    expect(left.res.data.projects.nodes[0]).toEqual({ slug: slugOf(0) });
    expect(skipped.res.data.projects.nodes[0]).toEqual({ slug: slugOf(0) });
    expect(asked.sql.map(shape)).toEqual(['select Project', 'select Project']);
    expect(left.sql.map(shape)).toEqual(['select Project']);
    expect(skipped.sql.map(shape)).toEqual(['select Project']);
    // The same documents again, compiled from their second run (src/graphql/compiled.ts).
    for (let i = 0; i < 2; i++) {
      expect((await counted(URLS, { urls: false })).sql.map(shape)).toEqual(['select Project']);
      expect((await counted(URLS, { urls: true })).sql.map(shape)).toEqual(['select Project', 'select Project']);
    }
  });
});

describe('lookups by key, one per row or one per alias', () => {
  const PER_ROW = `query($limit: Int, $slug: String!) { projects(limit: $limit) { nodes { slug version(slug: $slug) { slug privacyLevel } } } }`;

  it("reads a page's per-project version in one statement, whatever the page size", async () => {
    const small = await counted(PER_ROW, { limit: 10, slug: 'v2.0' });
    const large = await counted(PER_ROW, { limit: 100, slug: 'v2.0' });
    console.log(
      `[${dbKind()}] SQL statements for a page of projects each asking for a version: page size 10 → ${small.sql.length}, page size 100 → ${large.sql.length}`,
    );
    expect(large.res.errors).toBeUndefined();
    expect(large.res.data.projects.nodes).toHaveLength(100);
    for (const p of large.res.data.projects.nodes) expect(p.version).toEqual({ slug: 'v2.0', privacyLevel: 'public' });
    expect(large.sql.map(shape)).toEqual(['select Project', 'select Version']);
    expect(small.sql.map(shape)).toEqual(large.sql.map(shape));
  });

  it('still hides private versions from readers and shows them to maintainers, in the same one statement', async () => {
    const anonymous = await counted(PER_ROW, { limit: 100, slug: 'secret' });
    expect(anonymous.res.errors).toBeUndefined();
    expect(anonymous.res.data.projects.nodes.every((p: { version: unknown }) => p.version === null)).toBe(true);
    expect(anonymous.sql.map(shape)).toEqual(['select Project', 'select Version']);

    // bob maintains the even-numbered projects: he sees their private version, and only theirs.
    const bob = tokens.bob!;
    const signedIn = await counted(PER_ROW, { limit: 20, slug: 'secret' }, bob);
    expect(signedIn.res.errors).toBeUndefined();
    for (const [i, p] of signedIn.res.data.projects.nodes.entries()) {
      expect(p.version, p.slug).toEqual(i % 2 === 0 ? { slug: 'secret', privacyLevel: 'private' } : null);
    }
  });

  it('reads aliased project lookups in one statement, and a private project stays hidden', async () => {
    await t.db.prisma.project.update({ where: { slug: slugOf(3) }, data: { privacyLevel: 'private' } });
    try {
      const aliases = Array.from({ length: 50 }, (_, i) => `a${i}: project(slug: "${slugOf(i)}") { slug }`).join(' ');
      const { res, sql } = await counted(`{ ${aliases} missing: project(slug: "no-such-project") { slug } }`, {});
      expect(res.errors).toBeUndefined();
      expect(res.data.a0).toEqual({ slug: slugOf(0) });
      expect(res.data.a49).toEqual({ slug: slugOf(49) });
      expect(res.data.a3).toBeNull();
      expect(res.data.missing).toBeNull();
      expect(sql.map(shape)).toEqual(['select Project']);
      // Its maintainer (alice maintains every project) sees it.
      const alice = tokens.alice!;
      const mine = await t.gql(`{ a3: project(slug: "${slugOf(3)}") { slug } b: projectById(id: -1) { slug } }`, {}, alice);
      expect(mine.data).toEqual({ a3: { slug: slugOf(3) }, b: null });
    } finally {
      await t.db.prisma.project.update({ where: { slug: slugOf(3) }, data: { privacyLevel: 'public' } });
    }
  });
});

describe('the URLs of a page of projects and of their versions', () => {
  const URLS = `query($limit: Int) {
    projects(limit: $limit) {
      nodes {
        slug documentationUrl superproject { slug } translationOf { slug }
        activeVersions { slug documentationUrl vcsUrl downloads { pdf } project { slug } }
      }
    }
  }`;

  it('read where every project is served in one statement, parents and translations included, whatever the page size', async () => {
    // project-001 is served under project-000 as its subproject "one"; project-002 as its Spanish translation.
    const db = t.db.prisma;
    const [main, sub, translation] = await Promise.all([0, 1, 2].map((i) => db.project.findUniqueOrThrow({ where: { slug: slugOf(i) } })));
    await db.subproject.create({ data: { parentId: main!.id, childId: sub!.id, alias: 'one' } });
    await db.project.update({ where: { id: translation!.id }, data: { language: 'es', mainLanguageProjectId: main!.id } });
    try {
      // 30: the largest page of this selection under the default cost limit.
      const small = await counted(URLS, { limit: 10 });
      const large = await counted(URLS, { limit: 30 });
      expect(large.res.errors).toBeUndefined();
      expect(large.sql.map(shape)).toEqual(small.sql.map(shape));
      // The page, its versions, where the page is served (one statement with joins), and the parent's
      // and the main project's rows, for the two projects that have one. The versions' project is the
      // page's own row.
      expect(large.sql.map(shape)).toMatchInlineSnapshot(`
        [
          "select Project",
          "select Version",
          "select Project",
          "select Project",
          "select Project",
        ]
      `);

      const [p0, p1, p2, p3] = large.res.data.projects.nodes;
      const root = p0.documentationUrl.replace(/en\/latest\/$/, '');
      expect(root).toMatch(new RegExp(`${slugOf(0)}/$`));
      expect(p1).toMatchObject({ documentationUrl: `${root}projects/one/en/latest/`, superproject: { slug: slugOf(0) }, translationOf: null });
      expect(p1.activeVersions[0]).toEqual({
        slug: 'v3.0',
        documentationUrl: `${root}projects/one/en/v3.0/`,
        vcsUrl: 'https://github.com/acme/p1/tree/v3.0/',
        downloads: { pdf: null },
        project: { slug: slugOf(1) },
      });
      expect(p2).toMatchObject({ documentationUrl: `${root}es/latest/`, superproject: null, translationOf: { slug: slugOf(0) } });
      expect(p2.activeVersions[2]).toMatchObject({ slug: 'v1.0', documentationUrl: `${root}es/v1.0/` });
      expect(p3).toMatchObject({ documentationUrl: p0.documentationUrl.replace(slugOf(0), slugOf(3)), superproject: null, translationOf: null });
    } finally {
      await db.subproject.deleteMany({ where: { childId: sub!.id } });
      await db.project.update({ where: { id: translation!.id }, data: { language: 'en', mainLanguageProjectId: null } });
    }
  });

  it('are read afresh in a mutation, after its write', async () => {
    const alice = tokens.alice;
    const res = await t.gql(
      `mutation { updateProject(slug: "${slugOf(5)}", input: { language: "de" }) {
        ... on MutationUpdateProjectSuccess { data { documentationUrl activeVersions { documentationUrl } } }
      } }`,
      {},
      alice,
    );
    try {
      expect(res.errors).toBeUndefined();
      const project = res.data.updateProject.data;
      expect(project.documentationUrl).toMatch(new RegExp(`${slugOf(5)}/de/latest/$`));
      expect(project.activeVersions.map((v: { documentationUrl: string }) => v.documentationUrl.replace(/.*\/de\//, ''))).toEqual(['v3.0/', 'v2.0/', 'v1.0/']);
    } finally {
      await t.db.prisma.project.update({ where: { slug: slugOf(5) }, data: { language: 'en' } });
    }
  });
});
