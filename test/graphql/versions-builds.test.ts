// Changing a project, activating and hiding its versions, and triggering builds through /graphql,
// as a maintainer's dashboard would (docs/design/read-the-docs.md §2.4, §4.3, §4.6; docs/design/builds.md).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';

let t: TestApp;
let alice: string;
let bob: string;
let docsId: number;

const ERRORS = `... on Error { code status message }
    ... on NotFoundError { model }
    ... on ValidationError { fieldErrors { field messages } }`;

const IMPORT = `mutation($input: ImportProjectInput!) {
  importProject(input: $input) { __typename ... on MutationImportProjectSuccess { data { id slug } } ${ERRORS} }
}`;

const UPDATE_PROJECT = `mutation($slug: String!, $input: UpdateProjectInput!) {
  updateProject(slug: $slug, input: $input) {
    __typename
    ... on MutationUpdateProjectSuccess { data { id slug name description language { code name } programmingLanguage { code name }
      homepage repository { url type } defaultBranch defaultVersion tags analyticsCode analyticsDisabled singleVersion
      showVersionWarning versioningScheme readthedocsYamlPath privacyLevel } }
    ${ERRORS}
  }
}`;

const UPDATE_VERSION = `mutation($project: String!, $slug: String!, $input: UpdateVersionInput!) {
  updateVersion(project: $project, slug: $slug, input: $input) {
    __typename
    ... on MutationUpdateVersionSuccess { data { id slug active hidden built privacyLevel lastBuild { id state success versionSlug } } }
    ${ERRORS}
  }
}`;

const TRIGGER = `mutation($project: String!, $version: String!) {
  triggerBuild(project: $project, version: $version) {
    __typename
    ... on MutationTriggerBuildSuccess { data {
      build { id state success error commit finishedAt duration versionSlug version { slug } project { slug } }
      project { slug name }
      version { slug active lastBuild { id } }
    } }
    ${ERRORS}
  }
}`;

const BUILD = `query($project: String!, $id: Int!) {
  project(slug: $project) { build(id: $id) { id state success error finishedAt duration } }
}`;

const VERSION = `query($project: String!, $slug: String!) {
  project(slug: $project) {
    version(slug: $slug) { slug active hidden built lastBuild { id state } builds { totalCount } }
    activeVersions { slug }
  }
}`;

async function importProject(token: string, name: string): Promise<{ id: number; slug: string }> {
  const res = await t.gql(IMPORT, { input: { name, repository: { url: `https://github.com/acme/${name}.git` } } }, token);
  expect(res.data.importProject.__typename).toBe('MutationImportProjectSuccess');
  return res.data.importProject.data;
}

/** A version as a version sync would leave it (inactive unless told otherwise). */
function addVersion(projectId: number, slug: string, data: { active?: boolean; built?: boolean; hidden?: boolean; type?: 'branch' | 'tag' | 'external' } = {}) {
  return t.db.prisma.version.create({
    data: {
      projectId,
      slug,
      verboseName: slug,
      identifier: slug,
      type: data.type ?? 'tag',
      active: data.active ?? false,
      built: data.built ?? false,
      hidden: data.hidden ?? false,
    },
  });
}

const snapshot = async () => ({
  projects: await t.db.prisma.project.findMany({ orderBy: { id: 'asc' } }),
  versions: await t.db.prisma.version.findMany({ orderBy: { id: 'asc' } }),
  builds: await t.db.prisma.build.findMany({ orderBy: { id: 'asc' } }),
});

beforeAll(async () => {
  t = await testApp();
  alice = await t.user('alice');
  bob = await t.user('bob');
  docsId = (await importProject(alice, 'docs')).id;
  await importProject(bob, 'bobs');
});
afterAll(() => t.close());

describe('updateProject', () => {
  it('changes the fields given, keeps the others, and never changes the slug', async () => {
    const res = await t.gql(
      UPDATE_PROJECT,
      {
        slug: 'docs',
        input: {
          name: 'Acme Documentation',
          description: 'All about Acme',
          language: 'ja',
          programmingLanguage: 'js',
          homepage: 'https://acme.example/',
          tags: ['zeta', 'alpha', 'alpha'],
          analyticsCode: 'UA-1',
          analyticsDisabled: true,
          showVersionWarning: true,
          versioningScheme: 'multiple_versions_without_translations',
        },
      },
      alice,
    );
    expect(res.data.updateProject.__typename).toBe('MutationUpdateProjectSuccess');
    expect(res.data.updateProject.data).toMatchObject({
      slug: 'docs',
      name: 'Acme Documentation',
      description: 'All about Acme',
      language: { code: 'ja', name: 'Japanese' },
      programmingLanguage: { code: 'js', name: 'JavaScript' },
      homepage: 'https://acme.example/',
      repository: { url: 'https://github.com/acme/docs.git', type: 'git' },
      tags: ['alpha', 'zeta'],
      analyticsCode: 'UA-1',
      analyticsDisabled: true,
      showVersionWarning: true,
      versioningScheme: 'multiple_versions_without_translations',
      defaultVersion: 'latest',
      defaultBranch: 'master',
    });
    const stored = await t.db.prisma.project.findUniqueOrThrow({ where: { id: docsId } });
    expect(stored).toMatchObject({ slug: 'docs', name: 'Acme Documentation', language: 'ja' });
  });

  it('does not check the new name against other projects (the slug stays)', async () => {
    const res = await t.gql(UPDATE_PROJECT, { slug: 'docs', input: { name: 'bobs' } }, alice);
    expect(res.data.updateProject.data).toMatchObject({ slug: 'docs', name: 'bobs' });
    expect(await t.db.prisma.project.count({ where: { slug: 'bobs' } })).toBe(1);
  });

  it('points the machine `latest` at a new default branch', async () => {
    const res = await t.gql(UPDATE_PROJECT, { slug: 'docs', input: { defaultBranch: 'main' } }, alice);
    expect(res.data.updateProject.data.defaultBranch).toBe('main');
    const latest = await t.db.prisma.version.findUniqueOrThrow({ where: { projectId_slug: { projectId: docsId, slug: 'latest' } } });
    expect(latest.identifier).toBe('main');
    const back = await t.gql(UPDATE_PROJECT, { slug: 'docs', input: { defaultBranch: '' } }, alice);
    expect(back.data.updateProject.data.defaultBranch).toBe('master');
  });

  it('changes the repository and strips the .readthedocs.yaml path', async () => {
    const res = await t.gql(
      UPDATE_PROJECT,
      { slug: 'docs', input: { repository: { url: 'https://gitlab.com/acme/docs' }, readthedocsYamlPath: '  docs/.readthedocs.yaml  ' } },
      alice,
    );
    expect(res.data.updateProject.data).toMatchObject({
      repository: { url: 'https://gitlab.com/acme/docs', type: 'git' },
      readthedocsYamlPath: 'docs/.readthedocs.yaml',
    });
  });

  it('lists every bad field at once and changes nothing', async () => {
    const before = await snapshot();
    const res = await t.gql(
      UPDATE_PROJECT,
      {
        slug: 'docs',
        input: {
          name: '',
          repository: { url: 'ftp://example.com/r' },
          homepage: 'not a url',
          language: 'xx',
          programmingLanguage: 'cobol',
          versioningScheme: 'sometimes',
          readthedocsYamlPath: '/abs/.readthedocs.yaml',
        },
      },
      alice,
    );
    expect(res.data.updateProject).toMatchObject({ __typename: 'ValidationError', code: 'VALIDATION', status: 400 });
    expect(res.data.updateProject.fieldErrors).toEqual([
      { field: 'name', messages: ['This field may not be blank.'] },
      { field: 'repository.url', messages: ['Invalid scheme for URL'] },
      { field: 'homepage', messages: ['Enter a valid URL.'] },
      { field: 'language', messages: ['"xx" is not a valid choice.'] },
      { field: 'programmingLanguage', messages: ['"cobol" is not a valid choice.'] },
      { field: 'versioningScheme', messages: ['"sometimes" is not a valid choice.'] },
      { field: 'readthedocsYamlPath', messages: ["Use a relative path. It should not begin with '/'. The path is relative to the root of your repository."] },
    ]);
    expect(await snapshot()).toEqual(before);
  });

  it('refuses a null name, an overlong name and a config file that is not .readthedocs.yaml', async () => {
    const before = await snapshot();
    const nul = await t.gql(UPDATE_PROJECT, { slug: 'docs', input: { name: null } }, alice);
    expect(nul.data.updateProject.fieldErrors).toEqual([{ field: 'name', messages: ['This field is required.'] }]);
    const long = await t.gql(UPDATE_PROJECT, { slug: 'docs', input: { name: 'n'.repeat(64) } }, alice);
    expect(long.data.updateProject.fieldErrors).toEqual([{ field: 'name', messages: ['Ensure this field has no more than 63 characters.'] }]);
    const yaml = await t.gql(UPDATE_PROJECT, { slug: 'docs', input: { readthedocsYamlPath: 'docs/config.yaml' } }, alice);
    expect(yaml.data.updateProject.fieldErrors).toEqual([
      { field: 'readthedocsYamlPath', messages: ['The only allowed filename is <code>.readthedocs.yaml</code>.'] },
    ]);
    const dots = await t.gql(UPDATE_PROJECT, { slug: 'docs', input: { readthedocsYamlPath: '../.readthedocs.yaml' } }, alice);
    expect(dots.data.updateProject.fieldErrors).toEqual([{ field: 'readthedocsYamlPath', messages: ["The path cannot include '..'."] }]);
    expect(await snapshot()).toEqual(before);
  });

  it('rejects a wrong type in the input before running, naming the field', async () => {
    const before = await snapshot();
    const res = await t.gql(UPDATE_PROJECT, { slug: 'docs', input: { analyticsDisabled: 'yes' } }, alice);
    expect(res.status).toBe(400);
    expect(res.errors?.[0]?.message).toMatch(/input\.analyticsDisabled/);
    expect(await snapshot()).toEqual(before);
  });

  it('answers 401 to anonymous callers, 403 to non-maintainers and 404 for an unknown slug, changing nothing', async () => {
    const before = await snapshot();
    const anon = await t.gql(UPDATE_PROJECT, { slug: 'docs', input: { name: 'Hijacked' } });
    expect(anon.data.updateProject).toMatchObject({
      __typename: 'UnauthenticatedError',
      code: 'UNAUTHENTICATED',
      status: 401,
      message: 'Authentication credentials were not provided.',
    });
    const other = await t.gql(UPDATE_PROJECT, { slug: 'docs', input: { name: 'Hijacked' } }, bob);
    expect(other.data.updateProject).toMatchObject({
      __typename: 'ForbiddenError',
      code: 'FORBIDDEN',
      status: 403,
      message: 'You do not have permission to perform this action.',
    });
    const missing = await t.gql(UPDATE_PROJECT, { slug: 'nope', input: { name: 'Hijacked' } }, alice);
    expect(missing.data.updateProject).toMatchObject({
      __typename: 'NotFoundError',
      code: 'NOT_FOUND',
      status: 404,
      model: 'Project',
      message: 'No Project matches the given query.',
    });
    // Authentication first, then existence, then permission; bad input is never looked at before.
    const anonMissing = await t.gql(UPDATE_PROJECT, { slug: 'nope', input: { language: 'xx' } });
    expect(anonMissing.data.updateProject.__typename).toBe('UnauthenticatedError');
    const otherInvalid = await t.gql(UPDATE_PROJECT, { slug: 'docs', input: { language: 'xx' } }, bob);
    expect(otherInvalid.data.updateProject.__typename).toBe('ForbiddenError');
    expect(await snapshot()).toEqual(before);
  });
});

describe('updateVersion', () => {
  it('deactivating a version marks it unbuilt and stops listing it as readable, without a build', async () => {
    await addVersion(docsId, 'v2.0', { active: true, built: true });
    const builds = await t.db.prisma.build.count();
    const before = await t.gql(VERSION, { project: 'docs', slug: 'v2.0' }, alice);
    expect(before.data.project.activeVersions).toContainEqual({ slug: 'v2.0' });

    const res = await t.gql(UPDATE_VERSION, { project: 'docs', slug: 'v2.0', input: { active: false } }, alice);
    expect(res.data.updateVersion).toMatchObject({
      __typename: 'MutationUpdateVersionSuccess',
      data: { slug: 'v2.0', active: false, built: false, hidden: false },
    });
    const after = await t.gql(VERSION, { project: 'docs', slug: 'v2.0' }, alice);
    expect(after.data.project.version).toMatchObject({ active: false, built: false });
    expect(after.data.project.activeVersions).not.toContainEqual({ slug: 'v2.0' });
    expect(await t.db.prisma.build.count()).toBe(builds);
  });

  it('activating an inactive version queues a build of it', async () => {
    await addVersion(docsId, 'v1.0');
    const builds = await t.db.prisma.build.count();
    const res = await t.gql(UPDATE_VERSION, { project: 'docs', slug: 'v1.0', input: { active: true } }, alice);
    const v = res.data.updateVersion.data;
    expect(v).toMatchObject({ slug: 'v1.0', active: true, built: false, lastBuild: { state: 'triggered', success: null, versionSlug: 'v1.0' } });
    expect(await t.db.prisma.build.count()).toBe(builds + 1);
    const version = await t.gql(VERSION, { project: 'docs', slug: 'v1.0' }, alice);
    expect(version.data.project.version).toMatchObject({ active: true, lastBuild: { id: v.lastBuild.id, state: 'triggered' }, builds: { totalCount: 1 } });
    // Active but not built yet: not readable.
    expect(version.data.project.activeVersions).not.toContainEqual({ slug: 'v1.0' });
  });

  it('setting active on a version that already is active queues nothing', async () => {
    const builds = await t.db.prisma.build.count();
    const res = await t.gql(UPDATE_VERSION, { project: 'docs', slug: 'v1.0', input: { active: true } }, alice);
    expect(res.data.updateVersion.data.active).toBe(true);
    expect(await t.db.prisma.build.count()).toBe(builds);
  });

  it('hides and unhides a version without touching active, built or builds', async () => {
    await addVersion(docsId, 'v3.0', { active: true, built: true });
    const builds = await t.db.prisma.build.count();
    const res = await t.gql(UPDATE_VERSION, { project: 'docs', slug: 'v3.0', input: { hidden: true } }, alice);
    expect(res.data.updateVersion.data).toMatchObject({ slug: 'v3.0', hidden: true, active: true, built: true });
    const hidden = await t.gql(`{ project(slug: "docs") { versions(filter: { hidden: true }) { nodes { slug } } } }`, {}, alice);
    expect(hidden.data.project.versions.nodes).toEqual([{ slug: 'v3.0' }]);
    const back = await t.gql(UPDATE_VERSION, { project: 'docs', slug: 'v3.0', input: { hidden: false } }, alice);
    expect(back.data.updateVersion.data).toMatchObject({ hidden: false, active: true, built: true });
    expect(await t.db.prisma.build.count()).toBe(builds);
  });

  it('may deactivate and hide even `latest` (the API has no default-version rule)', async () => {
    const res = await t.gql(UPDATE_VERSION, { project: 'docs', slug: 'latest', input: { active: false, hidden: true } }, alice);
    expect(res.data.updateVersion.data).toMatchObject({ slug: 'latest', active: false, hidden: true, built: false });
    const again = await t.gql(UPDATE_VERSION, { project: 'docs', slug: 'latest', input: { active: true, hidden: false } }, alice);
    expect(again.data.updateVersion.data).toMatchObject({ active: true, hidden: false, lastBuild: { state: 'triggered' } });
  });

  it('an empty input changes nothing', async () => {
    const before = await snapshot();
    const res = await t.gql(UPDATE_VERSION, { project: 'docs', slug: 'v3.0', input: {} }, alice);
    expect(res.data.updateVersion.data).toMatchObject({ slug: 'v3.0', active: true, hidden: false, built: true });
    const after = await snapshot();
    expect(after.builds).toEqual(before.builds);
    expect(after.versions.map(({ modifiedAt: _m, ...v }) => v)).toEqual(before.versions.map(({ modifiedAt: _m, ...v }) => v));
  });

  it("answers NotFoundError for a version the project does not have, a pull-request version, or another project's version", async () => {
    await addVersion(docsId, 'pr-7', { type: 'external', active: true });
    await addVersion((await t.db.prisma.project.findUniqueOrThrow({ where: { slug: 'bobs' } })).id, 'only-bobs', { active: true });
    const before = await snapshot();
    for (const slug of ['v9.9', 'pr-7', 'only-bobs']) {
      const res = await t.gql(UPDATE_VERSION, { project: 'docs', slug, input: { active: false } }, alice);
      expect(res.data.updateVersion).toEqual({
        __typename: 'NotFoundError',
        code: 'NOT_FOUND',
        status: 404,
        model: 'Version',
        message: 'No Version matches the given query.',
      });
    }
    expect(await snapshot()).toEqual(before);
  });

  it('rejects a wrong type or an unknown privacy level before running, naming the field, and writes nothing', async () => {
    const before = await snapshot();
    const active = await t.gql(UPDATE_VERSION, { project: 'docs', slug: 'v1.0', input: { active: 'no' } }, alice);
    expect(active.status).toBe(400);
    expect(active.errors?.[0]?.message).toMatch(/input\.active/);
    const privacy = await t.gql(UPDATE_VERSION, { project: 'docs', slug: 'v1.0', input: { privacyLevel: 'secret' } }, alice);
    expect(privacy.status).toBe(400);
    expect(privacy.errors?.[0]?.message).toMatch(/input\.privacyLevel/);
    expect(await snapshot()).toEqual(before);
  });

  it('answers 401, 403 and 404 (project) in that order and changes nothing', async () => {
    const before = await snapshot();
    const anon = await t.gql(UPDATE_VERSION, { project: 'docs', slug: 'v1.0', input: { active: false } });
    expect(anon.data.updateVersion).toMatchObject({ __typename: 'UnauthenticatedError', status: 401 });
    const other = await t.gql(UPDATE_VERSION, { project: 'docs', slug: 'v1.0', input: { active: false } }, bob);
    expect(other.data.updateVersion).toMatchObject({ __typename: 'ForbiddenError', status: 403 });
    // A non-maintainer learns nothing about which versions exist.
    const otherMissing = await t.gql(UPDATE_VERSION, { project: 'docs', slug: 'v9.9', input: { active: false } }, bob);
    expect(otherMissing.data.updateVersion.__typename).toBe('ForbiddenError');
    const missing = await t.gql(UPDATE_VERSION, { project: 'nope', slug: 'latest', input: { active: false } }, alice);
    expect(missing.data.updateVersion).toMatchObject({
      __typename: 'NotFoundError',
      status: 404,
      model: 'Project',
      message: 'No Project matches the given query.',
    });
    expect(await snapshot()).toEqual(before);
  });
});

describe('triggerBuild', () => {
  let project: { id: number; slug: string };
  beforeAll(async () => {
    project = await importProject(alice, 'builder');
  });

  it('queues a build and answers with the build, the project and the version', async () => {
    const before = await t.db.prisma.build.count({ where: { projectId: project.id } });
    const res = await t.gql(TRIGGER, { project: 'builder', version: 'latest' }, alice);
    expect(res.data.triggerBuild.__typename).toBe('MutationTriggerBuildSuccess');
    const { build, project: p, version } = res.data.triggerBuild.data;
    expect(build).toMatchObject({
      state: 'triggered',
      success: null,
      error: null,
      commit: null,
      finishedAt: null,
      duration: null,
      versionSlug: 'latest',
      version: { slug: 'latest' },
      project: { slug: 'builder' },
    });
    expect(p).toEqual({ slug: 'builder', name: 'builder' });
    expect(version).toMatchObject({ slug: 'latest', active: true, lastBuild: { id: build.id } });
    expect(await t.db.prisma.build.count({ where: { projectId: project.id } })).toBe(before + 1);
  });

  it('supersedes the pending earlier build: it ends finished, unsuccessful, with a message; lastBuild is the newest', async () => {
    const first = (await t.gql(TRIGGER, { project: 'builder', version: 'latest' }, alice)).data.triggerBuild.data.build;
    const second = (await t.gql(TRIGGER, { project: 'builder', version: 'latest' }, alice)).data.triggerBuild.data;
    expect(second.build.id).toBeGreaterThan(first.id);
    expect(second.version.lastBuild.id).toBe(second.build.id);

    const old = await t.gql(BUILD, { project: 'builder', id: first.id }, alice);
    expect(old.data.project.build).toMatchObject({ id: first.id, state: 'finished', success: false, duration: 0 });
    expect(old.data.project.build.error).toEqual(expect.any(String));
    expect(old.data.project.build.error).toContain(`#${second.build.id}`);
    expect(old.data.project.build.finishedAt).not.toBeNull();

    const latest = await t.gql(VERSION, { project: 'builder', slug: 'latest' }, alice);
    expect(latest.data.project.version.lastBuild).toEqual({ id: second.build.id, state: 'triggered' });
    // Only one build of the version is still waiting.
    const running = await t.gql(`{ project(slug: "builder") { builds(filter: { running: true }) { totalCount nodes { id } } } }`, {}, alice);
    expect(running.data.project.builds).toEqual({ totalCount: 1, nodes: [{ id: second.build.id }] });
    // Every earlier build (the import's included) ended superseded.
    const rows = await t.db.prisma.build.findMany({ where: { projectId: project.id, id: { not: second.build.id } } });
    expect(rows.length).toBeGreaterThanOrEqual(2);
    for (const row of rows) expect(row).toMatchObject({ state: 'finished', success: false, error: expect.stringMatching(/\S/) });
  });

  it('leaves finished builds and pending builds of other versions alone', async () => {
    const v1 = await addVersion(project.id, '1.0', { active: true });
    const v2 = await addVersion(project.id, '2.0', { active: true });
    const done = await t.db.prisma.build.create({
      data: { projectId: project.id, versionId: v1.id, versionSlug: '1.0', state: 'finished', success: true, finishedAt: new Date(), duration: 12 },
    });
    const pendingOther = (await t.gql(TRIGGER, { project: 'builder', version: '2.0' }, alice)).data.triggerBuild.data.build;
    const res = await t.gql(TRIGGER, { project: 'builder', version: '1.0' }, alice);
    expect(res.data.triggerBuild.data.build.state).toBe('triggered');

    expect((await t.gql(BUILD, { project: 'builder', id: done.id }, alice)).data.project.build).toMatchObject({
      state: 'finished',
      success: true,
      error: null,
      duration: 12,
    });
    expect((await t.gql(BUILD, { project: 'builder', id: pendingOther.id }, alice)).data.project.build).toMatchObject({
      state: 'triggered',
      success: null,
      error: null,
    });
    expect((await t.db.prisma.version.findUniqueOrThrow({ where: { id: v2.id } })).lastBuildId).toBe(pendingOther.id);
  });

  it('builds an inactive version too (the API does not check activity)', async () => {
    await addVersion(project.id, '0.9');
    const res = await t.gql(TRIGGER, { project: 'builder', version: '0.9' }, alice);
    expect(res.data.triggerBuild.data).toMatchObject({ build: { state: 'triggered', versionSlug: '0.9' }, version: { slug: '0.9', active: false } });
  });

  it("of many triggers at once, exactly one build stays pending, and it is the version's lastBuild", async () => {
    await addVersion(project.id, 'race', { active: true });
    const results = await Promise.all(Array.from({ length: 6 }, () => t.gql(TRIGGER, { project: 'builder', version: 'race' }, alice)));
    for (const r of results) expect(r.data.triggerBuild.__typename).toBe('MutationTriggerBuildSuccess');
    const version = await t.db.prisma.version.findUniqueOrThrow({ where: { projectId_slug: { projectId: project.id, slug: 'race' } } });
    const builds = await t.db.prisma.build.findMany({ where: { versionId: version.id }, orderBy: { id: 'asc' } });
    expect(builds).toHaveLength(6);
    const pending = builds.filter((b) => b.state === 'triggered');
    expect(pending).toHaveLength(1);
    expect(version.lastBuildId).toBe(pending[0]!.id);
    expect(pending[0]!.id).toBe(builds[builds.length - 1]!.id);
  });

  it('answers NotFoundError for a version the project does not have, and queues nothing', async () => {
    const before = await snapshot();
    const res = await t.gql(TRIGGER, { project: 'builder', version: 'nope' }, alice);
    expect(res.data.triggerBuild).toEqual({
      __typename: 'NotFoundError',
      code: 'NOT_FOUND',
      status: 404,
      model: 'Version',
      message: 'No Version matches the given query.',
    });
    expect(await snapshot()).toEqual(before);
  });

  it('answers 401, 403 and 404 (project) and queues nothing', async () => {
    const before = await snapshot();
    const anon = await t.gql(TRIGGER, { project: 'builder', version: 'latest' });
    expect(anon.data.triggerBuild).toMatchObject({ __typename: 'UnauthenticatedError', code: 'UNAUTHENTICATED', status: 401 });
    const other = await t.gql(TRIGGER, { project: 'builder', version: 'latest' }, bob);
    expect(other.data.triggerBuild).toMatchObject({ __typename: 'ForbiddenError', code: 'FORBIDDEN', status: 403 });
    const missing = await t.gql(TRIGGER, { project: 'nope', version: 'latest' }, alice);
    expect(missing.data.triggerBuild).toMatchObject({
      __typename: 'NotFoundError',
      status: 404,
      model: 'Project',
      message: 'No Project matches the given query.',
    });
    expect(await snapshot()).toEqual(before);
  });

  it('rejects a missing argument before running, naming it', async () => {
    const before = await snapshot();
    const res = await t.gql(TRIGGER, { project: 'builder' }, alice);
    expect(res.status).toBe(400);
    expect(res.errors?.[0]?.message).toMatch(/\$version/);
    expect(await snapshot()).toEqual(before);
  });
});
