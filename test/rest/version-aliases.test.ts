// A version's `aliases` in REST v3 (GraphQL's `Version.original`): on the machine `stable` and
// `latest`, the active version each stands for, serialized as its own URL answers it; empty
// everywhere else (docs/design/read-the-docs.md §3.2). The versions come from a real repository,
// synced over git's protocol, so `stable` and `latest` hold the identifiers a sync gives them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncProjectVersions } from '../../src/domain/version-sync.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { type GitServer, git, startGitServer } from '../helpers/git.ts';

let t: TestApp;
let server: GitServer;
let token: string;
let projectId: number;
let released: string;

beforeAll(async () => {
  t = await testApp();
  server = await startGitServer();
  token = await t.user('alice');
  const repo = server.repo('aliases');
  repo.commit({ 'a.txt': '1' });
  git(repo.work, 'tag', 'v1.0');
  released = repo.commit({ 'a.txt': '2' });
  git(repo.work, 'tag', '-a', 'v2.0', '-m', 'release 2.0'); // annotated: stable's identifier is the commit
  git(repo.work, 'push', '--quiet', 'origin', 'main', '--tags');
  const res = await t.gql(
    `mutation($input: ImportProjectInput!) { importProject(input: $input) { ... on MutationImportProjectSuccess { data { id } } ... on Error { message } } }`,
    { input: { name: 'Aliases', repository: { url: repo.url } } },
    token,
  );
  projectId = res.data.importProject.data.id;
  await syncProjectVersions(t.services, projectId, repo.url);
});
afterAll(async () => {
  await server?.close();
  await t?.close();
});

const version = async (slug: string, who = token) => {
  const res = await t.http.get(`/api/v3/projects/aliases/versions/${slug}/`).set('Authorization', `Token ${who}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};
const activate = async (slug: string, active: boolean) => {
  const res = await t.http.patch(`/api/v3/projects/aliases/versions/${slug}/`).set('Authorization', `Token ${token}`).send({ active });
  expect(res.status, JSON.stringify(res.body)).toBe(204);
};

describe("a version's aliases", () => {
  it('are empty on stable and latest while the versions they stand for are inactive', async () => {
    const stable = await version('stable');
    expect(stable).toMatchObject({ ref: 'v2.0', identifier: released, aliases: [] });
    expect((await version('latest')).aliases).toEqual([]);
  });

  it("hold the active version each stands for, as that version's own URL answers it", async () => {
    await activate('v2.0', true);
    await activate('main', true);
    const v2 = await version('v2.0');
    expect(v2.aliases).toEqual([]);
    expect((await version('stable')).aliases).toEqual([v2]);
    const main = await version('main');
    expect((await version('latest')).aliases).toEqual([main]);
    // No other version has any.
    const list = await t.http.get('/api/v3/projects/aliases/versions/?limit=100').set('Authorization', `Token ${token}`);
    for (const v of list.body.results as { slug: string; aliases: unknown[] }[]) {
      if (!['stable', 'latest'].includes(v.slug)) expect(v.aliases, v.slug).toEqual([]);
    }
  });

  it('are the same in GraphQL, as Version.original', async () => {
    const q = await t.gql(
      `{ project(slug: "aliases") { stable: version(slug: "stable") { ref original { slug original { slug } } } v2: version(slug: "v2.0") { original { slug } } } }`,
    );
    expect(q.errors).toBeUndefined();
    expect(q.data.project).toEqual({ stable: { ref: 'v2.0', original: { slug: 'v2.0', original: null } }, v2: { original: null } });
  });

  it("never name a pull request's preview, though it was built from stable's commit and sorts higher", async () => {
    // A contributor's pull request whose head is the release commit: a preview named above v2.0.
    await t.db.prisma.version.create({
      data: { projectId, slug: 'zz-pr', verboseName: 'zz-pr', type: 'external', identifier: released, active: true, built: true },
    });
    expect((await version('stable')).aliases.map((v: { slug: string }) => v.slug)).toEqual(['v2.0']);
    expect((await version('stable')).ref).toBe('v2.0');
  });

  it('are empty for a caller who may not see the version they stand for', async () => {
    await t.db.prisma.version.updateMany({ where: { projectId, slug: 'v2.0' }, data: { privacyLevel: 'private' } });
    try {
      expect((await version('stable', await t.user('bob'))).aliases).toEqual([]);
      expect((await version('stable')).aliases.map((v: { slug: string; privacy_level: string }) => [v.slug, v.privacy_level])).toEqual([['v2.0', 'private']]);
    } finally {
      await t.db.prisma.version.updateMany({ where: { projectId, slug: 'v2.0' }, data: { privacyLevel: 'public' } });
    }
  });

  it('empty again once the version stood for is deactivated', async () => {
    await activate('v2.0', false);
    expect((await version('stable')).aliases).toEqual([]);
    expect((await version('stable')).ref).toBe('v2.0');
  });
});
