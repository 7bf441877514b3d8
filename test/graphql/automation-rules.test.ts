// Automation rules (docs/design/automation-rules.md) on real tags and branches pushed to a
// repository served by git daemon: each match (any version, SemVer, a custom expression; on tags or
// on branches) and each action, applied by the version sync in priority order and recorded; the
// rules written through GraphQL by maintainers only, with every bad field named; an expression
// that would take a backtracking engine forever does not stall a sync.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncProjectVersions } from '../../src/domain/version-sync.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { type GitServer, git, startGitServer } from '../helpers/git.ts';
import { publish } from '../helpers/publish.ts';
import { startSyncWorker, syncSettled } from '../helpers/version-sync.ts';

let t: TestApp;
let server: GitServer;
let alice: string;
let bob: string;

beforeAll(async () => {
  t = await testApp();
  server = await startGitServer();
  alice = await t.user('alice');
  bob = await t.user('bob');
});
afterAll(async () => {
  await server?.close();
  await t?.close();
});

async function importProject(name: string, url: string, privacyLevel?: 'public' | 'private') {
  const res = await t.gql(
    `mutation($input: ImportProjectInput!) { importProject(input: $input) { ... on MutationImportProjectSuccess { data { id slug } } ... on Error { message } } }`,
    { input: { name, repository: { url }, ...(privacyLevel ? { privacyLevel } : {}) } },
    alice,
  );
  return res.data.importProject.data as { id: number; slug: string };
}

const RULE_FIELDS = 'id priority description predefinedMatchArg matchArg pattern versionType action enabled';

async function addRule(project: string, input: Record<string, unknown>, token = alice) {
  const res = await t.gql(
    `mutation($project: String!, $input: AutomationRuleInput!) { createAutomationRule(project: $project, input: $input) {
      __typename ... on MutationCreateAutomationRuleSuccess { data { ${RULE_FIELDS} } }
      ... on ValidationError { fieldErrors { field messages } } ... on Error { message } } }`,
    { project, input },
    token,
  );
  return res.data?.createAutomationRule ?? res;
}

const versions = async (projectId: number) =>
  Object.fromEntries(
    (await t.db.prisma.version.findMany({ where: { projectId, machine: false }, orderBy: { slug: 'asc' } })).map((v) => [
      v.slug,
      { active: v.active, hidden: v.hidden, privacyLevel: v.privacyLevel },
    ]),
  );

const queuedBuilds = async (projectId: number) =>
  (await t.db.prisma.build.findMany({ where: { projectId, state: 'triggered' }, select: { versionSlug: true } })).map((b) => b.versionSlug).sort();

describe('writing rules', () => {
  it('is for maintainers only, and names every bad field at once, writing nothing', async () => {
    const repo = server.repo('rules-write');
    const p = await importProject('Rules Write', repo.url);
    const ok = { predefinedMatchArg: 'all-versions', versionType: 'tag', action: 'activate-version' };
    const refused = await addRule(p.slug, ok, bob);
    expect(JSON.stringify(refused)).toMatch(/not allowed|permission|maintainer|No Project matches/i);

    const bad = await addRule(p.slug, { predefinedMatchArg: 'most-versions', versionType: 'external', action: 'explode-version' });
    expect(bad.__typename).toBe('ValidationError');
    expect(bad.fieldErrors.map((e: { field: string }) => e.field).sort()).toEqual(['action', 'predefinedMatchArg', 'versionType']);

    const noPattern = await addRule(p.slug, { ...ok, predefinedMatchArg: 'custom-match' });
    expect(noPattern.fieldErrors).toEqual([{ field: 'matchArg', messages: ['A custom match needs a regular expression.'] }]);
    const lookbehind = await addRule(p.slug, { ...ok, predefinedMatchArg: 'custom-match', matchArg: '(?<=v)1' });
    expect(lookbehind.fieldErrors[0].field).toBe('matchArg');
    expect(lookbehind.fieldErrors[0].messages[0]).toMatch(/^Enter a valid regular expression \(RE2 syntax/);
    const stray = await addRule(p.slug, { ...ok, matchArg: '^v' });
    expect(stray.fieldErrors).toEqual([{ field: 'matchArg', messages: ['Only a custom match takes a regular expression; "all-versions" has its own.'] }]);
    expect(await t.db.prisma.automationRule.count({ where: { projectId: p.id } })).toBe(0);

    const made = await addRule(p.slug, { ...ok, description: '  Releases  ' });
    expect(made.data).toMatchObject({ priority: 0, description: 'Releases', predefinedMatchArg: 'all-versions', matchArg: '', pattern: '.*', enabled: true });
    // Nobody else reads them either.
    const q = `query { project(slug: "${p.slug}") { automationRules { totalCount } } }`;
    expect((await t.gql(q, {}, alice)).data.project.automationRules.totalCount).toBe(1);
    expect((await t.gql(q, {}, bob)).data?.project?.automationRules ?? null).toBeNull();
  });

  it('keeps the priorities dense through moves (wrapping, as Read the Docs moves them) and deletes', async () => {
    const repo = server.repo('rules-order');
    const p = await importProject('Rules Order', repo.url);
    const ids: number[] = [];
    for (const d of ['a', 'b', 'c'])
      ids.push((await addRule(p.slug, { description: d, predefinedMatchArg: 'all-versions', versionType: 'tag', action: 'hide-version' })).data.id);
    const order = async () =>
      (await t.gql(`query { project(slug: "${p.slug}") { automationRules { nodes { description priority } } } }`, {}, alice)).data.project.automationRules.nodes
        .map((r: { description: string; priority: number }) => `${r.priority}${r.description}`)
        .join(' ');
    expect(await order()).toBe('0a 1b 2c');
    await t.gql(`mutation { moveAutomationRule(project: "${p.slug}", id: ${ids[0]}, steps: -1) { __typename } }`, {}, alice);
    expect(await order()).toBe('0b 1c 2a');
    await t.gql(`mutation { updateAutomationRule(project: "${p.slug}", id: ${ids[0]}, input: { priority: 0 }) { __typename } }`, {}, alice);
    expect(await order()).toBe('0a 1b 2c');
    await t.gql(`mutation { deleteAutomationRule(project: "${p.slug}", id: ${ids[1]}) { __typename } }`, {}, alice);
    expect(await order()).toBe('0a 1c');
    const other = await t.gql(`mutation { deleteAutomationRule(project: "${p.slug}", id: 999999) { __typename ... on Error { message } } }`, {}, alice);
    expect(other.data.deleteAutomationRule.message).toBe('No AutomationRule matches the given query.');
  });
});

describe('applying rules when versions are synced', () => {
  it('applies each action on added versions, every matching rule in priority order, and records it', async () => {
    const repo = server.repo('rules-apply');
    git(repo.work, 'tag', 'v1.0.0');
    git(repo.work, 'push', '--quiet', 'origin', 'main', '--tags');
    const p = await importProject('Rules Apply', repo.url);
    await syncProjectVersions(t.services, p.id, repo.url);
    const rule = (predefinedMatchArg: string, versionType: string, action: string, matchArg?: string) =>
      addRule(p.slug, { predefinedMatchArg, versionType, action, ...(matchArg ? { matchArg } : {}) });
    await rule('semver-versions', 'tag', 'activate-version');
    await rule('custom-match', 'branch', 'hide-version', '^release-');
    await rule('custom-match', 'tag', 'make-version-private', '-beta');
    await rule('custom-match', 'tag', 'set-default-version', '^v9\\.');
    // Disabled: applies to nothing.
    const off = await rule('all-versions', 'branch', 'activate-version');
    await t.gql(`mutation { updateAutomationRule(project: "${p.slug}", id: ${off.data.id}, input: { enabled: false }) { __typename } }`, {}, alice);

    repo.commit({ 'b.txt': 'two' });
    for (const tag of ['v2.0.0', 'v3.0.0-beta.1', 'v9.0.0', 'nightly']) git(repo.work, 'tag', tag);
    git(repo.work, 'branch', 'release-x');
    git(repo.work, 'branch', 'feature');
    git(repo.work, 'push', '--quiet', 'origin', '--all');
    git(repo.work, 'push', '--quiet', 'origin', '--tags');
    await syncProjectVersions(t.services, p.id, repo.url);

    const now = await versions(p.id);
    // v1.0.0 was there before the rules: untouched.
    expect(now['v1.0.0']).toEqual({ active: false, hidden: false, privacyLevel: 'public' });
    expect(now['v2.0.0']).toEqual({ active: true, hidden: false, privacyLevel: 'public' });
    expect(now['v3.0.0-beta.1']).toEqual({ active: true, hidden: false, privacyLevel: 'private' });
    expect(now['v9.0.0']).toEqual({ active: true, hidden: false, privacyLevel: 'public' });
    expect(now.nightly).toEqual({ active: false, hidden: false, privacyLevel: 'public' });
    expect(now['release-x']).toEqual({ active: true, hidden: true, privacyLevel: 'public' });
    expect(now.feature).toEqual({ active: false, hidden: false, privacyLevel: 'public' });
    expect((await t.db.prisma.project.findUniqueOrThrow({ where: { id: p.id } })).defaultVersion).toBe('v9.0.0');
    // What the rules activated is built (beside latest, built on import, and the promoted stable).
    expect(await queuedBuilds(p.id)).toEqual(['latest', 'release-x', 'stable', 'v2.0.0', 'v3.0.0-beta.1', 'v9.0.0']);

    const shown = await t.gql(
      `query { project(slug: "${p.slug}") { automationRules { nodes { action matches { versionName versionType action matchArg } } } } }`,
      {},
      alice,
    );
    const matched = shown.data.project.automationRules.nodes.map((r: { action: string; matches: { versionName: string }[] }) => [
      r.action,
      r.matches.map((m) => m.versionName).sort(),
    ]);
    expect(matched).toEqual([
      ['activate-version', ['v2.0.0', 'v3.0.0-beta.1', 'v9.0.0']],
      ['hide-version', ['release-x']],
      ['make-version-private', ['v3.0.0-beta.1']],
      ['set-default-version', ['v9.0.0']],
      ['activate-version', []],
    ]);
    expect(shown.data.project.automationRules.nodes[1].matches[0]).toEqual({
      versionName: 'release-x',
      versionType: 'branch',
      action: 'hide-version',
      matchArg: '^release-',
    });
  });

  it("makes a private project's new tags public, on a sync a worker runs from the API", async () => {
    const repo = server.repo('rules-public');
    const p = await importProject('Rules Public', repo.url, 'private');
    await addRule(p.slug, { predefinedMatchArg: 'all-versions', versionType: 'tag', action: 'make-version-public' });
    git(repo.work, 'tag', '1.0');
    git(repo.work, 'push', '--quiet', 'origin', '--tags');
    const worker = await startSyncWorker(t);
    try {
      const res = await t.http.post(`/api/v3/projects/${p.slug}/sync-versions/`).set('authorization', `Token ${alice}`);
      expect(res.status).toBe(202);
      expect(await syncSettled(t, p.id)).toMatchObject({ state: 'done', lastError: null });
    } finally {
      await worker.stop(1000);
    }
    expect((await versions(p.id))['1.0']).toEqual({ active: false, hidden: false, privacyLevel: 'public' });
  });

  it('deletes an active version whose tag is gone, and its files, but never the default version', async () => {
    const repo = server.repo('rules-delete');
    for (const tag of ['1.0', '2.0']) git(repo.work, 'tag', tag);
    git(repo.work, 'push', '--quiet', 'origin', '--tags');
    const p = await importProject('Rules Delete', repo.url);
    await syncProjectVersions(t.services, p.id, repo.url);
    const html = await import('../helpers/publish.ts').then((m) => m.sphinxBuild('sphinx'));
    const project = await t.db.prisma.project.findUniqueOrThrow({ where: { id: p.id } });
    for (const v of ['1.0', '2.0']) {
      await t.db.prisma.version.updateMany({ where: { projectId: p.id, slug: v }, data: { active: true } });
      await publish(t, { project, version: v, html });
    }
    await t.db.prisma.project.update({ where: { id: p.id }, data: { defaultVersion: '1.0' } });
    await addRule(p.slug, { predefinedMatchArg: 'all-versions', versionType: 'tag', action: 'delete-version' });
    expect((await t.storage.list(`projects/${p.slug}/2.0/`)).length).toBeGreaterThan(0);

    git(repo.work, 'push', '--quiet', 'origin', '--delete', 'refs/tags/1.0', 'refs/tags/2.0');
    const result = await syncProjectVersions(t.services, p.id, repo.url);
    expect(result.removed).toEqual(['2.0']);
    expect(Object.keys(await versions(p.id)).sort()).toEqual(['1.0', 'main']);
    expect(await t.storage.list(`projects/${p.slug}/2.0/`)).toEqual([]);
    expect((await t.storage.list(`projects/${p.slug}/1.0/`)).length).toBeGreaterThan(0);
  });

  it('cannot be stalled by an expression a backtracking engine would take forever on', async () => {
    const repo = server.repo('rules-redos');
    const p = await importProject('Rules Redos', repo.url);
    await addRule(p.slug, { predefinedMatchArg: 'custom-match', matchArg: '^(a+)+$', versionType: 'branch', action: 'activate-version' });
    // JavaScript's own RegExp takes longer than the age of the universe on this name.
    const name = `${'a'.repeat(200)}!`;
    git(repo.work, 'branch', name);
    git(repo.work, 'branch', 'aaaa');
    git(repo.work, 'push', '--quiet', 'origin', '--all');
    await syncProjectVersions(t.services, p.id, repo.url);
    const now = await t.db.prisma.version.findMany({ where: { projectId: p.id, type: 'branch', machine: false }, select: { verboseName: true, active: true } });
    expect(Object.fromEntries(now.map((v) => [v.verboseName.length > 10 ? 'long' : v.verboseName, v.active]))).toEqual({
      long: false,
      aaaa: true,
      main: false,
    });
  });
});
