// Incoming webhooks end to end (docs/design/read-the-docs.md §6): integrations made through GraphQL, payloads
// signed here with their secrets, versions synced from a real repository served by git daemon (by
// a worker, from the sync the webhook queued), and what a user sees asserted: status, body, builds
// queued, versions created or removed.
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import type { Worker } from '../../src/builds/worker.ts';
import { syncProjectVersions } from '../../src/domain/version-sync.ts';
import { createLogger } from '../../src/log.ts';
import { syncJobKey } from '../../src/queue/version-syncs.ts';
import { TEST_SECRET_KEY, type TestApp, testApp } from '../helpers/app.ts';
import { type GitServer, git, startGitServer, TEST_HOST } from '../helpers/git.ts';
import { startSyncWorker, syncJobOf, syncSettled } from '../helpers/version-sync.ts';
import { until } from '../helpers/wait.ts';

let t: TestApp;
let server: GitServer;
let alice: string;
let bob: string;
/** Runs the syncs webhooks queue (builds stay queued, for queuedBy to see). */
let syncWorker: Worker;

const NO_SECRET =
  "This webhook doesn't have a secret configured.\nFor security reasons, webhooks without a secret are no longer permitted.\nFor more information, read our blog post: https://blog.readthedocs.com/security-update-on-incoming-webhooks/.";

beforeAll(async () => {
  t = await testApp();
  server = await startGitServer();
  alice = await t.user('alice');
  bob = await t.user('bob');
  syncWorker = await startSyncWorker(t);
});
afterAll(async () => {
  await syncWorker?.stop(1000);
  await server.close();
  await t.close();
});

interface Setup {
  slug: string;
  repo: ReturnType<GitServer['repo']>;
}

/** A repository with `main` and `dev` branches and a `v1.0` tag, imported by alice (and its versions synced). */
async function project(name: string, opts: { sync?: boolean } = {}): Promise<Setup> {
  const repo = server.repo(name);
  git(repo.work, 'branch', 'dev');
  git(repo.work, 'tag', 'v1.0');
  git(repo.work, 'push', '--quiet', 'origin', 'dev', '--tags');
  const res = await t.gql(
    `mutation($input: ImportProjectInput!) { importProject(input: $input) { ... on MutationImportProjectSuccess { data { slug } } ... on Error { message } } }`,
    { input: { name, repository: { url: repo.url } } },
    alice,
  );
  expect(res.data.importProject.data, JSON.stringify(res)).toBeDefined();
  const slug = res.data.importProject.data.slug;
  if (opts.sync) {
    const { id } = await t.db.prisma.project.findUniqueOrThrow({ where: { slug } });
    await syncProjectVersions(t.services, id, repo.url);
  }
  return { slug, repo };
}

/** Waits for the sync a webhook queued to end, and says how it ended. */
async function synced(slug: string): Promise<string> {
  const { id } = await t.db.prisma.project.findUniqueOrThrow({ where: { slug } });
  const job = await syncSettled(t, id);
  expect(job.lastError).toBeNull();
  return job.state;
}

async function integration(slug: string, provider: string, token = alice): Promise<{ id: number; secret: string }> {
  const res = await t.gql(
    `mutation($project: String!, $provider: IntegrationProvider!) {
      createIntegration(project: $project, provider: $provider) {
        ... on MutationCreateIntegrationSuccess { data { secret integration { id } } } ... on Error { message }
      }
    }`,
    { project: slug, provider },
    token,
  );
  const data = res.data.createIntegration.data;
  expect(data, JSON.stringify(res)).toBeDefined();
  return { id: data.integration.id, secret: data.secret };
}

/** Versions as a maintainer sees them through GraphQL. */
async function versions(slug: string): Promise<Record<string, { active: boolean; identifier: string | null }>> {
  const res = await t.gql(`query($slug: String!) { project(slug: $slug) { versions(limit: 100) { nodes { slug active identifier } } } }`, { slug }, alice);
  expect(res.errors).toBeUndefined();
  return Object.fromEntries(
    res.data.project.versions.nodes.map((v: { slug: string; active: boolean; identifier: string | null }) => [
      v.slug,
      { active: v.active, identifier: v.identifier },
    ]),
  );
}

async function setActive(slug: string, version: string, active = true) {
  const res = await t.gql(
    `mutation($p: String!, $v: String!, $a: Boolean!) { updateVersion(project: $p, slug: $v, input: { active: $a }) { __typename ... on Error { message } } }`,
    { p: slug, v: version, a: active },
    alice,
  );
  expect(res.data?.updateVersion?.__typename, JSON.stringify(res)).toBe('MutationUpdateVersionSuccess');
}

/** Ids and versions of the project's builds, through GraphQL. */
async function builds(slug: string): Promise<{ id: number; versionSlug: string; state: string }[]> {
  const res = await t.gql(`query($slug: String!) { project(slug: $slug) { builds(limit: 100) { nodes { id versionSlug state } } } }`, { slug }, alice);
  expect(res.errors).toBeUndefined();
  return res.data.project.builds.nodes;
}

/** Runs `send` and answers with the versions of the builds it queued. */
async function queuedBy(slug: string, send: () => Promise<unknown>): Promise<string[]> {
  const before = Math.max(0, ...(await builds(slug)).map((b) => b.id));
  await send();
  return (await builds(slug))
    .filter((b) => b.id > before)
    .map((b) => {
      expect(b.state).toBe('triggered');
      return b.versionSlug;
    })
    .sort();
}

const sign = (secret: string, body: string | Buffer) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

function post(path: string, body: string | Buffer, headers: Record<string, string> = {}) {
  const req = t.http.post(path);
  for (const [k, v] of Object.entries({ 'content-type': 'application/json', ...headers })) req.set(k, v);
  return req.send(body);
}

/** As GitHub sends it: signed, with a delivery id of its own (a new one per delivery). */
function github(
  slug: string,
  secret: string,
  event: string,
  payload: unknown,
  path = `/api/v2/webhook/github/${slug}/`,
  delivery: string | null = randomUUID(),
) {
  const body = JSON.stringify(payload);
  return post(path, body, { 'x-github-event': event, 'x-hub-signature-256': sign(secret, body), ...(delivery ? { 'x-github-delivery': delivery } : {}) });
}

/**
 * A push as GitHub sends one: each names its own new commit (`after`), so no two pushes have the
 * same body (a body seen before is a replay, whatever its delivery id).
 */
const pushPayload = (ref: string, extra: Record<string, unknown> = {}) => ({
  ref,
  after: randomBytes(20).toString('hex'),
  repository: { default_branch: 'main' },
  created: false,
  deleted: false,
  ...extra,
});

describe('GitHub', () => {
  let p: Setup;
  let hook: { id: number; secret: string };
  beforeAll(async () => {
    p = await project('gh-docs');
    hook = await integration(p.slug, 'github');
  });

  it('answers a ping, and points latest at the default branch the payload names', async () => {
    expect((await versions(p.slug)).latest).toEqual({ active: true, identifier: null });
    const res = await github(p.slug, hook.secret, 'ping', { zen: 'hi', repository: { default_branch: 'main' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ detail: 'Webhook configured correctly' });
    expect((await versions(p.slug)).latest).toEqual({ active: true, identifier: 'main' });
  });

  it('syncs versions on create and delete events, from the real repository', async () => {
    git(p.repo.work, 'tag', 'v2.0');
    git(p.repo.work, 'push', '--quiet', 'origin', 'v2.0');
    let res: { status: number; body: unknown } | undefined;
    const queued = await queuedBy(p.slug, async () => {
      res = await github(p.slug, hook.secret, 'create', { ref: 'v2.0', ref_type: 'tag', repository: { default_branch: 'main' } });
      expect(await synced(p.slug)).toBe('done');
    });
    expect(res!.status).toBe(200);
    expect(res!.body).toEqual({ build_triggered: false, project: p.slug, versions: ['latest'], versions_synced: true });
    const now = await versions(p.slug);
    expect(Object.keys(now).sort()).toEqual(['dev', 'latest', 'main', 'stable', 'v1.0', 'v2.0']);
    expect(now['v2.0']!.active).toBe(false);
    // The newly promoted stable is built (docs/design/read-the-docs.md §4.2).
    expect(queued).toEqual(['stable']);

    git(p.repo.work, 'push', '--quiet', 'origin', '--delete', 'dev');
    res = await github(p.slug, hook.secret, 'delete', { ref: 'dev', ref_type: 'branch' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ build_triggered: false, project: p.slug, versions: ['latest'], versions_synced: true });
    await synced(p.slug);
    expect((await versions(p.slug)).dev).toBeUndefined();
  });

  it('builds the active versions a push to a branch touches: latest and the branch itself', async () => {
    let res: { status: number; body: { versions: string[] } } | undefined;
    expect(await queuedBy(p.slug, async () => (res = await github(p.slug, hook.secret, 'push', pushPayload('refs/heads/main'))))).toEqual(['latest']);
    expect(res!.status).toBe(200);
    expect(res!.body).toEqual({ build_triggered: true, project: p.slug, versions: ['latest'] });

    await setActive(p.slug, 'main');
    expect(await queuedBy(p.slug, async () => (res = await github(p.slug, hook.secret, 'push', pushPayload('refs/heads/main'))))).toEqual(['latest', 'main']);
    expect([...res!.body.versions].sort()).toEqual(['latest', 'main']);
  });

  it('builds nothing for a push to an inactive branch or an unknown one', async () => {
    git(p.repo.work, 'branch', 'quiet');
    git(p.repo.work, 'push', '--quiet', 'origin', 'quiet');
    await github(p.slug, hook.secret, 'create', { ref: 'quiet', ref_type: 'branch' });
    await synced(p.slug);
    expect((await versions(p.slug)).quiet).toEqual({ active: false, identifier: 'quiet' });
    for (const ref of ['refs/heads/quiet', 'refs/heads/no-such-branch']) {
      let res: { status: number; body: unknown } | undefined;
      expect(await queuedBy(p.slug, async () => (res = await github(p.slug, hook.secret, 'push', pushPayload(ref))))).toEqual([]);
      expect(res!.status).toBe(200);
      expect(res!.body).toEqual({ build_triggered: false, project: p.slug, versions: [] });
    }
  });

  it('builds an active tag version on a tag push, and syncs on a push that creates a branch', async () => {
    await setActive(p.slug, 'v1.0');
    let res: { status: number; body: unknown } | undefined;
    expect(await queuedBy(p.slug, async () => (res = await github(p.slug, hook.secret, 'push', pushPayload('refs/tags/v1.0'))))).toEqual(['v1.0']);
    expect(res!.body).toEqual({ build_triggered: true, project: p.slug, versions: ['v1.0'] });

    git(p.repo.work, 'branch', 'pushed-new');
    git(p.repo.work, 'push', '--quiet', 'origin', 'pushed-new');
    res = await github(p.slug, hook.secret, 'push', pushPayload('refs/heads/pushed-new', { created: true }));
    expect(res.body).toEqual({ build_triggered: false, project: p.slug, versions: ['latest'], versions_synced: true });
    await synced(p.slug);
    expect((await versions(p.slug))['pushed-new']).toEqual({ active: false, identifier: 'pushed-new' });
  });

  it('accepts a form-encoded payload (payload=...), signed over the raw form body', async () => {
    const body = `payload=${encodeURIComponent(JSON.stringify(pushPayload('refs/heads/main')))}`;
    let res: { status: number; body: { versions: string[] } } | undefined;
    const queued = await queuedBy(p.slug, async () => {
      res = await post(`/api/v2/webhook/github/${p.slug}/`, body, {
        'content-type': 'application/x-www-form-urlencoded',
        'x-github-event': 'push',
        'x-hub-signature-256': sign(hook.secret, body),
        'x-github-delivery': randomUUID(),
      });
    });
    expect(res!.status).toBe(200);
    expect(queued).toEqual(['latest', 'main']);
  });

  it("works on the integration-id URL too, dispatching by the integration's provider", async () => {
    const res = await github(p.slug, hook.secret, 'ping', {}, `/api/v2/webhook/${p.slug}/${hook.id}/`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ detail: 'Webhook configured correctly' });
  });

  it('answers other events as unhandled, and queues nothing', async () => {
    for (const event of ['issues', 'pull_request', 'star']) {
      let res: { status: number; body: unknown } | undefined;
      // Each event its own body, as GitHub's are (the same body again would be a replay).
      expect(await queuedBy(p.slug, async () => (res = await github(p.slug, hook.secret, event, { action: 'opened', number: 1, [event]: {} })))).toEqual([]);
      expect(res!.status).toBe(200);
      expect(res!.body).toEqual({ detail: 'Unhandled webhook event' });
    }
  });

  it('refuses a missing, wrong or other-secret signature with 400, and queues nothing', async () => {
    const body = JSON.stringify(pushPayload('refs/heads/main'));
    const other = await integration((await project('gh-other')).slug, 'github');
    const cases: Record<string, string>[] = [
      {},
      { 'x-hub-signature-256': 'sha256=' },
      { 'x-hub-signature-256': 'nonsense' },
      { 'x-hub-signature-256': sign(other.secret, body) },
      { 'x-hub-signature-256': sign(hook.secret, `${body} `) },
      { 'x-hub-signature-256': sign(hook.secret, body).toUpperCase() },
      // The legacy SHA-1 header is not accepted in place of the SHA-256 one.
      { 'x-hub-signature': `sha1=${createHmac('sha1', hook.secret).update(body).digest('hex')}` },
    ];
    for (const headers of cases) {
      let res: { status: number; body: unknown; text: string } | undefined;
      expect(
        await queuedBy(p.slug, async () => (res = await post(`/api/v2/webhook/github/${p.slug}/`, body, { 'x-github-event': 'push', ...headers }))),
      ).toEqual([]);
      expect(res!.status).toBe(400);
      expect(res!.body).toEqual({ detail: 'Payload not valid, invalid or missing signature' });
      expect(res!.text).not.toContain(hook.secret);
    }
  });

  it('answers malformed payloads with 400 and a JSON body, never 500', async () => {
    const bad: [string, string][] = [
      ['{"ref": ', 'application/json'],
      ['[1, 2]', 'application/json'],
      ['"a string"', 'application/json'],
      ['null', 'application/json'],
      ['payload=%7Bnot+json', 'application/x-www-form-urlencoded'],
      ['payload=5', 'application/x-www-form-urlencoded'],
      ['\x00\xff\xfe', 'application/octet-stream'],
    ];
    for (const [body, type] of bad) {
      const res = await post(`/api/v2/webhook/github/${p.slug}/`, body, {
        'content-type': type,
        'x-github-event': 'push',
        'x-hub-signature-256': sign(hook.secret, body),
      });
      expect(res.status, body).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body.detail).toMatch(/^JSON parse error - /);
    }
    const refs: [unknown, string][] = [
      [undefined, 'Parameter "ref" is required'],
      ['', 'Parameter "ref" is required'],
      [42, 'Parameter "ref" is required'],
      ['main', 'Parameter "ref" must be refs/heads/<branch> or refs/tags/<tag>'],
      ['refs/pull/1/head', 'Parameter "ref" must be refs/heads/<branch> or refs/tags/<tag>'],
      ['refs/heads/', 'Parameter "ref" must be refs/heads/<branch> or refs/tags/<tag>'],
    ];
    for (const [ref, detail] of refs) {
      const res = await github(p.slug, hook.secret, 'push', { ref, repository: 'not an object' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ detail });
    }
  });
});

describe('finding the project and the integration', () => {
  let p: Setup;
  let hook: { id: number; secret: string };
  beforeAll(async () => {
    p = await project('lookup');
    hook = await integration(p.slug, 'github');
  });

  it('answers 404 for an unknown project, on every URL', async () => {
    for (const path of [
      '/api/v2/webhook/github/nope/',
      '/api/v2/webhook/gitlab/nope/',
      '/api/v2/webhook/bitbucket/nope/',
      '/api/v2/webhook/generic/nope/',
      `/api/v2/webhook/nope/${hook.id}/`,
    ]) {
      const res = await post(path, '{}');
      expect(res.status, path).toBe(404);
      expect(res.body).toEqual({ detail: 'Project not found' });
    }
  });

  it('answers 404 when the project has no integration of that provider, or not that id', async () => {
    const elsewhere = await integration((await project('lookup-other')).slug, 'github');
    for (const path of [
      `/api/v2/webhook/gitlab/${p.slug}/`,
      `/api/v2/webhook/bitbucket/${p.slug}/`,
      `/api/v2/webhook/${p.slug}/999999/`,
      `/api/v2/webhook/${p.slug}/9999999999/`,
      `/api/v2/webhook/${p.slug}/${elsewhere.id}/`,
    ]) {
      const body = '{}';
      const res = await post(path, body, { 'x-hub-signature-256': sign(elsewhere.secret, body) });
      expect(res.status, path).toBe(404);
      expect(res.body).toEqual({ detail: 'No Integration matches the given query.' });
    }
  });

  it('answers 400 when the provider URL is ambiguous, and the id URL still works', async () => {
    const q = await project('lookup-two');
    const first = await integration(q.slug, 'gitlab');
    await integration(q.slug, 'gitlab');
    const res = await post(`/api/v2/webhook/gitlab/${q.slug}/`, '{}', { 'x-gitlab-token': first.secret });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ detail: 'Multiple integrations found for this project. Please use the webhook URL with an explicit integration ID.' });
    const byId = await post(`/api/v2/webhook/${q.slug}/${first.id}/`, JSON.stringify({ object_kind: 'note' }), { 'x-gitlab-token': first.secret });
    expect(byId.status).toBe(200);
    expect(byId.body).toEqual({ detail: 'Unhandled webhook event' });
  });

  it('refuses an integration without a secret', async () => {
    const q = await project('lookup-nosecret');
    const { id } = await integration(q.slug, 'github');
    await t.db.prisma.integration.update({ where: { id }, data: { secretEncrypted: null } });
    const res = await post(`/api/v2/webhook/github/${q.slug}/`, '{}', { 'x-github-event': 'ping' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ detail: NO_SECRET });
  });

  it('answers only POST, with 405 and a JSON body; other paths fall through to the API 404', async () => {
    const res = await t.http.get(`/api/v2/webhook/github/${p.slug}/`);
    expect(res.status).toBe(405);
    expect(res.body).toEqual({ detail: 'Method "GET" not allowed.' });
    const put = await t.http.put(`/api/v2/webhook/${p.slug}/${hook.id}/`).send({});
    expect(put.status).toBe(405);
    for (const path of ['/api/v2/webhook/svn/x/y/', '/api/v2/webhook/x/', '/api/v2/webhook/lookup/not-a-number/', '/api/v2/webhook/github/bad.slug/']) {
      const other = await post(path, '{}');
      expect(other.status, path).toBe(404);
      expect(other.headers['content-type']).toMatch(/^application\/json/);
    }
  });

  it('answers an oversized body with 413 and a JSON body', async () => {
    const body = JSON.stringify({ ref: 'refs/heads/main', pad: 'x'.repeat(t.config.maxBodyBytes) });
    const res = await post(`/api/v2/webhook/github/${p.slug}/`, body, { 'x-hub-signature-256': sign(hook.secret, body) });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ detail: `Request body larger than ${t.config.maxBodyBytes} bytes.` });
  });
});

describe('the answer to a sync (docs/design/read-the-docs.md §6.4 sync_versions_response)', () => {
  it('says versions_synced when the sync is queued, not done: the answer comes at once, whatever the repository does', async () => {
    const p = await project('sync-answer');
    const hook = await integration(p.slug, 'github');
    const { id } = await t.db.prisma.project.findUniqueOrThrow({ where: { slug: p.slug } });
    // Nothing listens on port 1 of the test host: the sync will fail, after the answer.
    await t.db.prisma.project.update({ where: { id }, data: { repositoryUrl: `git://${TEST_HOST}:1/sync-answer.git` } });
    const res = await github(p.slug, hook.secret, 'create', { ref: 'feature', ref_type: 'branch' });
    expect(res.status).toBe(200);
    // Answered before the sync's result: the job has no outcome yet (test/bench/liveness.ts times the answer).
    expect(await syncJobOf(t, id)).toMatchObject({
      lastError: null,
      state: expect.stringMatching(/^(queued|running)$/),
    });
    expect(res.body).toEqual({ build_triggered: false, project: p.slug, versions: ['latest'], versions_synced: true });
    expect(await t.db.prisma.job.count({ where: { key: syncJobKey(id) } })).toBe(1);
    // The worker runs it, it fails and waits to be tried again; the answer did not wait for any of it.
    await until('the sync to fail once', async () => (await syncJobOf(t, id))?.lastError, 20_000, 50);
    expect(await syncJobOf(t, id)).toMatchObject({ state: 'queued', attempts: 1, lastError: expect.stringMatching(/ls-remote/) });
    // Not tried again while the rest of this file runs.
    await t.db.prisma.job.update({ where: { key: syncJobKey(id) }, data: { state: 'failed' } });
  });

  it('says versions_synced: false, and queues nothing, when there is no latest version to sync from', async () => {
    const p = await project('sync-no-latest');
    const hook = await integration(p.slug, 'github');
    const { id } = await t.db.prisma.project.findUniqueOrThrow({ where: { slug: p.slug } });
    await t.db.prisma.version.deleteMany({ where: { projectId: id, slug: 'latest' } });
    const res = await github(p.slug, hook.secret, 'delete', { ref: 'dev', ref_type: 'branch' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ build_triggered: false, project: p.slug, versions: [], versions_synced: false });
    expect(await syncJobOf(t, id)).toBeNull();
  });

  it('queues one sync for deliveries that come while it waits', async () => {
    const p = await project('sync-coalesced');
    const { id } = await t.db.prisma.project.findUniqueOrThrow({ where: { slug: p.slug } });
    const hook = await integration(p.slug, 'gitlab');
    await syncWorker.stop(1000); // so that the deliveries find it waiting
    try {
      // A branch created, then one deleted (a zero sha on either side).
      for (const [before, after] of [
        ['0'.repeat(40), 'e'.repeat(40)],
        ['f'.repeat(40), '0'.repeat(40)],
      ]) {
        const res = await post(`/api/v2/webhook/gitlab/${p.slug}/`, JSON.stringify({ object_kind: 'push', ref: 'refs/heads/x', before, after }), {
          'x-gitlab-token': hook.secret,
        });
        expect(res.body).toMatchObject({ versions_synced: true });
      }
      expect(await t.db.prisma.job.findMany({ where: { key: syncJobKey(id) } })).toEqual([expect.objectContaining({ state: 'queued', attempts: 0 })]);
    } finally {
      syncWorker = await startSyncWorker(t);
    }
    expect(await synced(p.slug)).toBe('done');
  });
});

describe('GitLab', () => {
  let p: Setup;
  let hook: { id: number; secret: string };
  beforeAll(async () => {
    p = await project('gl-docs', { sync: true });
    hook = await integration(p.slug, 'gitlab');
    await setActive(p.slug, 'dev');
  });
  const gitlab = (payload: unknown, token = hook.secret) => post(`/api/v2/webhook/gitlab/${p.slug}/`, JSON.stringify(payload), { 'x-gitlab-token': token });

  it('builds on a push with the right token, following the default branch it names', async () => {
    let res: { status: number; body: unknown } | undefined;
    const queued = await queuedBy(p.slug, async () => {
      res = await gitlab({ object_kind: 'push', ref: 'refs/heads/main', before: 'a'.repeat(40), after: 'b'.repeat(40), project: { default_branch: 'main' } });
    });
    expect(res!.status).toBe(200);
    expect(res!.body).toEqual({ build_triggered: true, project: p.slug, versions: ['latest'] });
    expect(queued).toEqual(['latest']);
    expect(await queuedBy(p.slug, () => gitlab({ ref: 'refs/heads/dev', before: 'a'.repeat(40), after: 'c'.repeat(40) }))).toEqual(['dev']);
  });

  it('refuses a missing or wrong token with 400', async () => {
    for (const token of ['', 'wrong', `${hook.secret}x`, hook.secret.slice(0, -1)]) {
      let res: { status: number; body: unknown } | undefined;
      expect(await queuedBy(p.slug, async () => (res = await gitlab({ ref: 'refs/heads/main' }, token))), token).toEqual([]);
      expect(res!.status).toBe(400);
      expect(res!.body).toEqual({ detail: 'Payload not valid, invalid or missing token' });
    }
  });

  it('syncs when a branch or tag is created or deleted (a zero sha)', async () => {
    git(p.repo.work, 'tag', 'v3.0');
    git(p.repo.work, 'push', '--quiet', 'origin', 'v3.0');
    const res = await gitlab({ object_kind: 'tag_push', ref: 'refs/tags/v3.0', before: '0'.repeat(40), after: 'd'.repeat(40) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ build_triggered: false, project: p.slug, versions: ['latest'], versions_synced: true });
    await synced(p.slug);
    expect((await versions(p.slug))['v3.0']).toMatchObject({ active: false });
  });

  it('answers merge requests and other kinds as unhandled', async () => {
    const res = await gitlab({ object_kind: 'merge_request', object_attributes: { action: 'open', iid: 3 } });
    expect(res.body).toEqual({ detail: 'Unhandled webhook event' });
  });
});

describe('Bitbucket', () => {
  let p: Setup;
  let hook: { id: number; secret: string };
  beforeAll(async () => {
    p = await project('bb-docs', { sync: true });
    hook = await integration(p.slug, 'bitbucket');
    await setActive(p.slug, 'dev');
    await setActive(p.slug, 'v1.0');
  });
  const bitbucket = (payload: unknown, event = 'repo:push', secret = hook.secret) => {
    const body = JSON.stringify(payload);
    return post(`/api/v2/webhook/bitbucket/${p.slug}/`, body, {
      'x-event-key': event,
      'x-hub-signature': sign(secret, body),
      'x-request-uuid': `{${randomUUID()}}`,
    });
  };
  const change = (type: string, name: string, old = true) => ({ old: old ? { type, name } : null, new: { type, name } });

  it('builds the branches and tags a push changes', async () => {
    let res: { status: number; body: { versions: string[] } } | undefined;
    const queued = await queuedBy(p.slug, async () => (res = await bitbucket({ push: { changes: [change('branch', 'dev'), change('tag', 'v1.0')] } })));
    expect(res!.status).toBe(200);
    expect(res!.body).toMatchObject({ build_triggered: true, project: p.slug });
    expect([...res!.body.versions].sort()).toEqual(['dev', 'v1.0']);
    expect(queued).toEqual(['dev', 'v1.0']);
  });

  it('syncs when a push only creates or deletes refs', async () => {
    git(p.repo.work, 'branch', 'bb-new');
    git(p.repo.work, 'push', '--quiet', 'origin', 'bb-new');
    const res = await bitbucket({ push: { changes: [change('branch', 'bb-new', false)] } });
    expect(res.body).toEqual({ build_triggered: false, project: p.slug, versions: ['latest'], versions_synced: true });
    await synced(p.slug);
    expect((await versions(p.slug))['bb-new']).toEqual({ active: false, identifier: 'bb-new' });
  });

  it('refuses a bad signature, a malformed push, and leaves other events unhandled', async () => {
    const wrong = await bitbucket({ push: { changes: [] } }, 'repo:push', 'not-the-secret');
    expect(wrong.status).toBe(400);
    expect(wrong.body).toEqual({ detail: 'Payload not valid' });
    for (const payload of [{}, { push: { changes: 'x' } }, { push: { changes: [5] } }, { push: { changes: [{ old: {}, new: { type: 'branch' } }] } }]) {
      const res = await bitbucket(payload);
      expect(res.status, JSON.stringify(payload)).toBe(400);
      expect(res.body).toEqual({ detail: 'Invalid request' });
    }
    expect((await bitbucket({}, 'pullrequest:created')).body).toEqual({ detail: 'Unhandled webhook event' });
  });
});

describe('generic API', () => {
  let p: Setup;
  let hook: { id: number; secret: string };
  beforeAll(async () => {
    p = await project('api-docs', { sync: true });
    hook = await integration(p.slug, 'generic');
    await setActive(p.slug, 'dev');
  });
  const byId = () => `/api/v2/webhook/${p.slug}/${hook.id}/`;

  it('builds the branches named, with the token in a JSON body or a form', async () => {
    let res: { status: number; body: unknown } | undefined;
    expect(await queuedBy(p.slug, async () => (res = await post(byId(), JSON.stringify({ token: hook.secret, branches: ['dev'] }))))).toEqual(['dev']);
    expect(res!.status).toBe(200);
    expect(res!.body).toEqual({ build_triggered: true, project: p.slug, versions: ['dev'] });
    const form = `branches=dev&token=${hook.secret}`;
    expect(await queuedBy(p.slug, () => post(byId(), form, { 'content-type': 'application/x-www-form-urlencoded' }))).toEqual(['dev']);
  });

  it('builds the default branch when none is named, and nothing for a branch that does not exist', async () => {
    let res: { status: number; body: unknown } | undefined;
    expect(await queuedBy(p.slug, async () => (res = await post(byId(), JSON.stringify({ token: hook.secret, default_branch: 'main' }))))).toEqual(['latest']);
    expect(res!.body).toEqual({ build_triggered: true, project: p.slug, versions: ['latest'] });
    expect((await versions(p.slug)).latest!.identifier).toBe('main');
    expect(await queuedBy(p.slug, async () => (res = await post(byId(), JSON.stringify({ token: hook.secret, branches: 'nope' }))))).toEqual([]);
    expect(res!.body).toEqual({ build_triggered: false, project: p.slug, versions: [] });
  });

  it('refuses a wrong token with 404 and a missing one with 403', async () => {
    for (const token of ['wrong', hook.secret.toUpperCase(), 12]) {
      const res = await post(byId(), JSON.stringify({ token, branches: ['dev'] }));
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: 'Project not found' });
    }
    const res = await post(byId(), JSON.stringify({ branches: ['dev'] }));
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ detail: 'Authentication credentials were not provided.' });
  });

  it("on /generic/<project>/: a maintainer's API token or the integration token; others are refused", async () => {
    const url = `/api/v2/webhook/generic/${p.slug}/`;
    expect(await queuedBy(p.slug, () => post(url, JSON.stringify({ branches: ['dev'] }), { authorization: `Token ${alice}` }))).toEqual(['dev']);
    expect(await queuedBy(p.slug, () => post(url, JSON.stringify({ branches: ['dev'], token: hook.secret })))).toEqual(['dev']);
    const other = await post(url, JSON.stringify({ branches: ['dev'] }), { authorization: `Token ${bob}` });
    expect([other.status, other.body]).toEqual([404, { detail: 'Project not found' }]);
    const invalid = await post(url, JSON.stringify({ branches: ['dev'] }), { authorization: 'Token 0000' });
    expect([invalid.status, invalid.body]).toEqual([401, { detail: 'Invalid token.' }]);
    const anonymous = await post(url, JSON.stringify({ branches: ['dev'] }));
    expect([anonymous.status, anonymous.body]).toEqual([403, { detail: 'Authentication credentials were not provided.' }]);
  });

  it('answers bad branch lists with 400', async () => {
    for (const branches of [5, [1], { a: 1 }]) {
      const res = await post(byId(), JSON.stringify({ token: hook.secret, branches }));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ detail: '"branches" must be a branch name or a list of them' });
    }
  });
});

describe('replayed deliveries', () => {
  let p: Setup;
  let hook: { id: number; secret: string };
  const ALREADY = { detail: 'Delivery already processed' };
  beforeAll(async () => {
    p = await project('replayed', { sync: true });
    hook = await integration(p.slug, 'github');
  });
  const push = (delivery: string | null) => github(p.slug, hook.secret, 'push', pushPayload('refs/heads/main'), undefined, delivery);

  it('answers a GitHub delivery seen before with 200 and queues nothing; the next push builds', async () => {
    const id = randomUUID();
    expect(await queuedBy(p.slug, () => push(id))).toEqual(['latest']);
    let again: { status: number; body: unknown } | undefined;
    expect(await queuedBy(p.slug, async () => (again = await push(id)))).toEqual([]);
    expect(again!.status).toBe(200);
    expect(again!.body).toEqual(ALREADY);
    // Another push (its own commit, its own id) is acted on. The same signed body under a new id
    // is a replay (issue 21; test/security/incoming.test.ts): it was acted on before.
    expect(await queuedBy(p.slug, () => push(randomUUID()))).toEqual(['latest']);
  });

  it('knows a replay with the delivery header left out by its signed body', async () => {
    const payload = pushPayload('refs/heads/main', { after: 'e'.repeat(40) });
    const send = () => github(p.slug, hook.secret, 'push', payload, undefined, null);
    expect(await queuedBy(p.slug, send)).toEqual(['latest']);
    let again: { status: number; body: unknown } | undefined;
    expect(await queuedBy(p.slug, async () => (again = await send()))).toEqual([]);
    expect(again!.body).toEqual(ALREADY);
  });

  it('records a delivery id only once its signature is valid, and per integration', async () => {
    const id = randomUUID();
    const body = JSON.stringify(pushPayload('refs/heads/main'));
    // Someone without the secret cannot use up a delivery id.
    const forged = await post(`/api/v2/webhook/github/${p.slug}/`, body, {
      'x-github-event': 'push',
      'x-hub-signature-256': sign('not-the-secret', body),
      'x-github-delivery': id,
    });
    expect(forged.status).toBe(400);
    expect(await t.db.prisma.webhookDelivery.count({ where: { deliveryId: { contains: id } } })).toBe(0);
    expect(await queuedBy(p.slug, () => push(id))).toEqual(['latest']);
    // The same id sent to another project's integration is that integration's own.
    const other = await project('replayed-other', { sync: true });
    const otherHook = await integration(other.slug, 'github');
    expect(await queuedBy(other.slug, () => github(other.slug, otherHook.secret, 'push', pushPayload('refs/heads/main'), undefined, id))).toEqual(['latest']);
  });

  it('forgets a delivery it refused, so the provider can send it again', async () => {
    const id = randomUUID();
    const bad = await post(`/api/v2/webhook/github/${p.slug}/`, '{"ref": ', {
      'x-github-event': 'push',
      'x-hub-signature-256': sign(hook.secret, '{"ref": '),
      'x-github-delivery': id,
    });
    expect(bad.status).toBe(400);
    expect(await queuedBy(p.slug, () => push(id))).toEqual(['latest']);
  });

  it('remembers a delivery for a day: an older record is deleted and the delivery acted on again', async () => {
    const id = randomUUID();
    const payload = pushPayload('refs/heads/main');
    const send = () => github(p.slug, hook.secret, 'push', payload, undefined, id);
    expect(await queuedBy(p.slug, send)).toEqual(['latest']);
    const stale = new Date(Date.now() - 25 * 3600 * 1000);
    // Both of its records, its id's and its body's, a day old.
    expect(
      (
        await t.db.prisma.webhookDelivery.updateMany({
          where: { integrationId: hook.id, receivedAt: { gt: new Date(Date.now() - 60_000) } },
          data: { receivedAt: stale },
        })
      ).count,
    ).toBeGreaterThanOrEqual(2);
    const old = await t.db.prisma.webhookDelivery.create({ data: { integrationId: hook.id, deliveryId: 'x-github-delivery:long-gone', receivedAt: stale } });
    expect(await queuedBy(p.slug, send)).toEqual(['latest']);
    expect(await t.db.prisma.webhookDelivery.findUnique({ where: { id: old.id } })).toBeNull();
    expect(await t.db.prisma.webhookDelivery.count({ where: { receivedAt: { lt: new Date(Date.now() - 24 * 3600 * 1000) } } })).toBe(0);
  });

  it("uses GitLab's Idempotency-Key or UUID headers, and Bitbucket's X-Request-UUID (not X-Hook-UUID, which names the hook)", async () => {
    const gl = await integration(p.slug, 'gitlab');
    const gitlab = (headers: Record<string, string>, after: string) =>
      post(`/api/v2/webhook/${p.slug}/${gl.id}/`, JSON.stringify({ object_kind: 'push', ref: 'refs/heads/main', before: 'a'.repeat(40), after }), {
        'x-gitlab-token': gl.secret,
        ...headers,
      });
    for (const [i, header] of ['idempotency-key', 'x-gitlab-webhook-uuid', 'x-gitlab-event-uuid'].entries()) {
      const id = randomUUID();
      const after = String(i + 1).repeat(40);
      expect(await queuedBy(p.slug, () => gitlab({ [header]: id }, after)), header).toEqual(['latest']);
      let again: { status: number; body: unknown } | undefined;
      // A retry carries the same id; its body may differ in nothing that matters.
      expect(await queuedBy(p.slug, async () => (again = await gitlab({ [header]: id }, after))), header).toEqual([]);
      expect(again!.body).toEqual(ALREADY);
    }
    // Without any id, a GitLab delivery is known by its body: another push is acted on, the same
    // one again is not (issue 21: deliveries are known by their content as well as their id).
    expect(await queuedBy(p.slug, () => gitlab({}, 'c'.repeat(40)))).toEqual(['latest']);
    expect(await queuedBy(p.slug, () => gitlab({}, 'c'.repeat(40)))).toEqual([]);

    const bb = await integration(p.slug, 'bitbucket');
    const hookUuid = `{${randomUUID()}}`;
    const bitbucket = (request: string, name: string, hash = randomBytes(20).toString('hex')) => {
      const body = JSON.stringify({ push: { changes: [{ old: { type: 'branch', name }, new: { type: 'branch', name, target: { hash } } }] } });
      return post(`/api/v2/webhook/${p.slug}/${bb.id}/`, body, {
        'x-event-key': 'repo:push',
        'x-hub-signature': sign(bb.secret, body),
        'x-hook-uuid': hookUuid,
        'x-request-uuid': request,
      });
    };
    const request = `{${randomUUID()}}`;
    const hash = randomBytes(20).toString('hex');
    expect(await queuedBy(p.slug, () => bitbucket(request, 'main', hash))).toEqual(['latest']);
    expect(await queuedBy(p.slug, () => bitbucket(request, 'main', hash))).toEqual([]);
    // The same signed body under a new request id is a replay; another push is acted on.
    expect(await queuedBy(p.slug, () => bitbucket(`{${randomUUID()}}`, 'main', hash))).toEqual([]);
    expect(await queuedBy(p.slug, () => bitbucket(`{${randomUUID()}}`, 'main'))).toEqual(['latest']);
  });
});

describe('logs', () => {
  it('say which webhook was handled, never its secret, signature or token', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    // The same database and key, with a logger that keeps what it is given.
    const { app } = buildApp({ config: t.config, db: t.db, log: createLogger('debug', sink), secretKey: TEST_SECRET_KEY });
    const http = supertest(app);
    const p = await project('logged', { sync: true });
    const gh = await integration(p.slug, 'github');
    const api = await integration(p.slug, 'generic');
    const body = JSON.stringify(pushPayload('refs/heads/main'));
    const signature = sign(gh.secret, body);
    const sent = [
      await http
        .post(`/api/v2/webhook/github/${p.slug}/`)
        .set('content-type', 'application/json')
        .set('x-github-event', 'push')
        .set('x-hub-signature-256', signature)
        .send(body),
      await http.post(`/api/v2/webhook/github/${p.slug}/`).set('content-type', 'application/json').set('x-hub-signature-256', sign('wrong', body)).send(body),
      await http
        .post(`/api/v2/webhook/${p.slug}/${api.id}/`)
        .set('content-type', 'application/json')
        .send(JSON.stringify({ token: api.secret })),
      await http
        .post(`/api/v2/webhook/${p.slug}/${api.id}/`)
        .set('content-type', 'application/json')
        .send(JSON.stringify({ token: `${api.secret}0` })),
    ];
    expect(sent.map((r) => r.status)).toEqual([200, 400, 200, 404]);
    const logged = lines.join('');
    expect(logged).toContain('"project":"logged"');
    for (const secret of [gh.secret, api.secret, signature, signature.slice(7), sign('wrong', body).slice(7)]) {
      expect(logged).not.toContain(secret);
      for (const r of sent) expect(r.text).not.toContain(secret);
    }
  });
});
