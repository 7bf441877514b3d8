// Syncing versions from a real repository served by git daemon: new branches and tags become
// inactive versions, `stable` follows the highest release, `latest` the default branch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncProjectVersions } from '../../src/domain/version-sync.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { type GitServer, git, startGitServer } from '../helpers/git.ts';
import { startSyncWorker, syncJobOf, syncSettled } from '../helpers/version-sync.ts';

let t: TestApp;
let server: GitServer;
let token: string;

beforeAll(async () => {
  t = await testApp();
  server = await startGitServer();
  token = await t.user('alice');
});
afterAll(async () => {
  await server.close();
  await t.close();
});

async function importProject(name: string, url: string, privacyLevel?: 'public' | 'private') {
  const res = await t.gql(
    `mutation($input: ImportProjectInput!) { importProject(input: $input) { ... on MutationImportProjectSuccess { data { id slug } } ... on Error { message } } }`,
    { input: { name, repository: { url }, ...(privacyLevel ? { privacyLevel } : {}) } },
    token,
  );
  return res.data.importProject.data as { id: number; slug: string };
}

const versions = async (projectId: number) =>
  Object.fromEntries(
    (await t.db.prisma.version.findMany({ where: { projectId }, orderBy: { slug: 'asc' } })).map((v) => [
      v.slug,
      { identifier: v.identifier, type: v.type, active: v.active, machine: v.machine },
    ]),
  );

describe('syncing versions', () => {
  it('adds branches and tags inactive, promotes stable to the highest release and queues its build', async () => {
    const repo = server.repo('sync-one');
    git(repo.work, 'checkout', '--quiet', '-b', 'dev');
    const devCommit = repo.commit({ 'dev.txt': 'dev' });
    git(repo.work, 'push', '--quiet', 'origin', 'dev');
    git(repo.work, 'checkout', '--quiet', 'main');
    const c1 = repo.commit({ 'a.txt': '1' });
    git(repo.work, 'tag', 'v1.0');
    const c2 = repo.commit({ 'a.txt': '2' });
    git(repo.work, 'tag', '-a', 'v2.0', '-m', 'release 2.0'); // annotated: the commit, not the tag object
    repo.commit({ 'a.txt': '3' });
    git(repo.work, 'tag', 'v3.0rc1');
    git(repo.work, 'push', '--quiet', 'origin', 'main', '--tags');

    const p = await importProject('Sync One', repo.url);
    const result = await syncProjectVersions(t.services, p.id, repo.url);
    expect(result.added.sort()).toEqual(['dev', 'main', 'stable', 'v1.0', 'v2.0', 'v3.0rc1']);
    expect(await versions(p.id)).toEqual({
      dev: { identifier: 'dev', type: 'branch', active: false, machine: false },
      latest: { identifier: 'main', type: 'branch', active: true, machine: true },
      main: { identifier: 'main', type: 'branch', active: false, machine: false },
      stable: { identifier: c2, type: 'tag', active: true, machine: true },
      'v1.0': { identifier: c1, type: 'tag', active: false, machine: false },
      'v2.0': { identifier: c2, type: 'tag', active: false, machine: false },
      'v3.0rc1': { identifier: expect.any(String), type: 'tag', active: false, machine: false },
    });
    expect(devCommit).toMatch(/^[0-9a-f]{40}$/);
    const stable = await t.db.prisma.version.findFirstOrThrow({ where: { projectId: p.id, slug: 'stable' } });
    expect(await t.db.prisma.build.count({ where: { versionId: stable.id, state: 'triggered' } })).toBe(1);

    // ref: stable points at v2.0
    const q = await t.gql(`query { project(slug: "sync-one") { version(slug: "stable") { ref } } }`, {}, token);
    expect(q.data.project.version.ref).toBe('v2.0');
  });

  it('moves stable when a higher release is tagged, and drops branches that are gone unless active', async () => {
    const repo = server.repo('sync-two');
    git(repo.work, 'tag', '1.9');
    for (const b of ['old', 'kept']) git(repo.work, 'branch', b);
    git(repo.work, 'push', '--quiet', 'origin', '--all');
    git(repo.work, 'push', '--quiet', 'origin', '--tags');
    const p = await importProject('Sync Two', repo.url);
    await syncProjectVersions(t.services, p.id, repo.url);
    await t.db.prisma.version.updateMany({ where: { projectId: p.id, slug: 'kept' }, data: { active: true } });

    const c = repo.commit({ 'b.txt': 'x' });
    git(repo.work, 'tag', '1.10');
    git(repo.work, 'push', '--quiet', 'origin', 'main', '--tags');
    git(repo.work, 'push', '--quiet', 'origin', '--delete', 'old', 'kept');
    const r = await syncProjectVersions(t.services, p.id, repo.url);
    expect(r.removed).toEqual(['old']);
    const now = await versions(p.id);
    expect(now.stable).toEqual({ identifier: c, type: 'tag', active: true, machine: true });
    expect(now.kept).toMatchObject({ active: true });
    expect(now.old).toBeUndefined();
  });

  it('lets a branch named stable take the slug over, and gives it back when the branch goes', async () => {
    const repo = server.repo('sync-three');
    git(repo.work, 'tag', '1.0');
    git(repo.work, 'push', '--quiet', 'origin', '--tags');
    const p = await importProject('Sync Three', repo.url);
    await syncProjectVersions(t.services, p.id, repo.url);
    expect((await versions(p.id)).stable).toMatchObject({ machine: true, type: 'tag' });

    git(repo.work, 'branch', 'stable');
    git(repo.work, 'push', '--quiet', 'origin', 'stable');
    await syncProjectVersions(t.services, p.id, repo.url);
    expect((await versions(p.id)).stable).toEqual({ identifier: 'stable', type: 'branch', active: true, machine: false });

    git(repo.work, 'push', '--quiet', 'origin', '--delete', 'stable');
    await syncProjectVersions(t.services, p.id, repo.url);
    expect((await versions(p.id)).stable).toMatchObject({ machine: true });
  });

  it('answers sync-versions over REST with 202 and queues the sync, which a worker runs', async () => {
    const repo = server.repo('sync-rest');
    git(repo.work, 'branch', 'feature');
    git(repo.work, 'push', '--quiet', 'origin', 'feature');
    const p = await importProject('Sync Rest', repo.url);
    const res = await t.http.post(`/api/v3/projects/${p.slug}/sync-versions/`).set('authorization', `Token ${token}`);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ triggered: true });
    expect(await syncJobOf(t, p.id)).toMatchObject({ state: 'queued', attempts: 0 });
    const worker = await startSyncWorker(t);
    try {
      expect(await syncSettled(t, p.id)).toMatchObject({ state: 'done', lastError: null });
    } finally {
      await worker.stop(1000);
    }
    expect((await versions(p.id)).feature).toMatchObject({ active: false, type: 'branch' });
  });

  it('answers 400 {"triggered": false} when there is no latest version to sync', async () => {
    const repo = server.repo('sync-nolatest');
    const p = await importProject('Sync No Latest', repo.url);
    await t.db.prisma.version.deleteMany({ where: { projectId: p.id, slug: 'latest' } });
    const res = await t.http.post(`/api/v3/projects/${p.slug}/sync-versions/`).set('authorization', `Token ${token}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ triggered: false });
    expect(await syncJobOf(t, p.id)).toBeNull();
  });

  it('creates the versions of a private project private, and those of a public project public', async () => {
    const repo = server.repo('sync-private');
    git(repo.work, 'branch', 'secret-feature');
    git(repo.work, 'tag', '1.0');
    git(repo.work, 'push', '--quiet', 'origin', 'secret-feature', '--tags');
    const p = await importProject('Sync Private', repo.url, 'private');
    await syncProjectVersions(t.services, p.id, repo.url);
    const privacy = async () => {
      const res = await t.gql(
        `query($slug: String!) { project(slug: $slug) { versions(limit: 100) { nodes { slug privacyLevel } } } }`,
        { slug: p.slug },
        token,
      );
      expect(res.errors).toBeUndefined();
      return Object.fromEntries(res.data.project.versions.nodes.map((v: { slug: string; privacyLevel: string }) => [v.slug, v.privacyLevel]));
    };
    expect(await privacy()).toEqual({ latest: 'private', main: 'private', 'secret-feature': 'private', '1.0': 'private', stable: 'private' });

    // Made public later: what existed stays as it was (the maintainer opens versions one by one);
    // a branch created from then on is public like its project.
    const made = await t.gql(
      `mutation($slug: String!) { updateProject(slug: $slug, input: { privacyLevel: public }) { __typename ... on Error { message } } }`,
      { slug: p.slug },
      token,
    );
    expect(made.errors, JSON.stringify(made)).toBeUndefined();
    git(repo.work, 'branch', 'open-feature');
    git(repo.work, 'push', '--quiet', 'origin', 'open-feature');
    await syncProjectVersions(t.services, p.id, repo.url);
    expect(await privacy()).toMatchObject({ 'secret-feature': 'private', 'open-feature': 'public' });
  });
});
