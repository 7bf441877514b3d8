// Pull-request previews (issue 14): GitHub pull_request and GitLab merge_request events on an
// integration build the request's head (fetched from the repository's pull/<n>/head or
// merge-requests/<n>/head over git://) as an external version named by its number, served with a
// banner linking the pull request, listed only when asked for, reported back as commit statuses to
// a forge stand-in on 127.0.0.1 (which may be down: the build does not care, the status is retried),
// and removed with its files once the pull request closes (LECTERN_PREVIEW_RETENTION_DAYS=0 here).
import { createHmac, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '../../src/builds/worker.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { importProject, latestBuildOf, startTestWorker, waitForBuild } from '../helpers/builds.ts';
import { type GitServer, git, startGitServer } from '../helpers/git.ts';
import { until } from '../helpers/wait.ts';

interface Call {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

let t: TestApp;
let worker: Worker;
let server: GitServer;
let forge: Server;
let forgeUrl: string;
let token: string;
const calls: Call[] = [];
/** The forge answers 503 to this many more calls (down), then 201. */
let forgeDown = 0;

const page = (text: string) => ({
  '.readthedocs.yaml': `version: 2\nbuild:\n  commands:\n    - mkdir -p $READTHEDOCS_OUTPUT/html\n    - echo "<html><body><h1>${text}</h1><p>private=\${DOCS_PRIVATE:-absent} public=\${DOCS_PUBLIC:-absent}</p></body></html>" > $READTHEDOCS_OUTPUT/html/index.html\n`,
});

async function gqlOk(query: string, variables: Record<string, unknown>) {
  const r = await t.gql(query, variables, token);
  const field = Object.values(r.data ?? {})[0] as { __typename?: string } | undefined;
  expect(field?.__typename, JSON.stringify(r)).toMatch(/Success$/);
  return field as { data: Record<string, any> };
}

async function setup(name: string, provider: 'github' | 'gitlab', privacy: 'public' | 'private') {
  const repo = server.repo(name.toLowerCase(), page(`${name} main`));
  const { slug } = await importProject(t, token, name, repo.url);
  await waitForBuild(t, await latestBuildOf(t, slug));
  const created = await gqlOk(
    `mutation($p: String!, $provider: IntegrationProvider!) { createIntegration(project: $p, provider: $provider) { __typename ... on MutationCreateIntegrationSuccess { data { secret integration { id } } } } }`,
    { p: slug, provider },
  );
  const integration = created.data.integration.id as number;
  const secret = created.data.secret as string;
  const withToken = await gqlOk(
    `mutation($p: String!, $id: Int!, $token: String, $api: String) { setIntegrationToken(project: $p, id: $id, token: $token, apiUrl: $api) { __typename ... on MutationSetIntegrationTokenSuccess { data { id hasToken apiUrl } } } }`,
    { p: slug, id: integration, token: `${provider}-token-123`, api: `${forgeUrl}/${provider}-api/` },
  );
  expect(withToken.data).toEqual({ id: integration, hasToken: true, apiUrl: `${forgeUrl}/${provider}-api` });
  return { repo, slug, secret, integration, privacy };
}

/** Pushes a commit of the pull request's branch and points refs/pull/<n>/head (or GitLab's) at it. */
function pushHead(repo: ReturnType<GitServer['repo']>, ref: string, text: string): string {
  git(repo.work, 'checkout', '--quiet', '-B', `pr-${ref.replace(/\W/g, '-')}`);
  const sha = repo.commit(page(text), text);
  git(repo.work, 'push', '--quiet', '--force', 'origin', `HEAD:refs/${ref}`);
  git(repo.work, 'checkout', '--quiet', 'main');
  return sha;
}

function github(slug: string, secret: string, payload: Record<string, unknown>) {
  const body = JSON.stringify(payload);
  return t.http
    .post(`/api/v2/webhook/github/${slug}/`)
    .set('content-type', 'application/json')
    .set('x-github-event', 'pull_request')
    .set('x-github-delivery', randomUUID())
    .set('x-hub-signature-256', `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`)
    .send(body);
}

function gitlab(slug: string, secret: string, payload: Record<string, unknown>) {
  return t.http
    .post(`/api/v2/webhook/gitlab/${slug}/`)
    .set('content-type', 'application/json')
    .set('x-gitlab-token', secret)
    .set('x-gitlab-event-uuid', randomUUID())
    .send(JSON.stringify({ object_kind: 'merge_request', ...payload }));
}

/** Events sent so far: each of GitHub's payloads is its own (its `updated_at`); the same body again is a replay (issue 21). */
let events = 0;
const prPayload = (action: string, number: number, sha: string) => ({
  action,
  number,
  pull_request: {
    head: { sha, ref: 'feature' },
    base: { ref: 'main' },
    html_url: `https://github.example/acme/docs/pull/${number}`,
    updated_at: new Date(Date.UTC(2026, 0, 1, 0, 0, ++events)).toISOString(),
  },
  repository: { full_name: 'acme/docs', default_branch: 'main' },
});

const statusesFor = (sha: string) => calls.filter((c) => c.path.endsWith(`/statuses/${sha}`));

beforeAll(async () => {
  forge = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      calls.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: body ? JSON.parse(body) : {} });
      if (forgeDown > 0) {
        forgeDown--;
        res.writeHead(503).end('{"message":"down"}');
        return;
      }
      res.writeHead(201, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => forge.listen(0, '127.0.0.1', r));
  forgeUrl = `http://127.0.0.1:${(forge.address() as AddressInfo).port}`;
  t = await testApp({ LECTERN_WEBHOOK_ALLOW: '127.0.0.0/8', LECTERN_PREVIEW_RETENTION_DAYS: '0' });
  token = await t.user('reviewer');
  server = await startGitServer();
  worker = await startTestWorker(t, { leaseSeconds: 4, notifications: { retry: { baseSeconds: 0.3, capSeconds: 0.6, maxAttempts: 5 } } });
}, 60_000);
afterAll(async () => {
  await worker?.stop(1000);
  await server?.close();
  await t?.close();
  await new Promise((r) => forge?.close(r));
});

describe('pull-request previews', () => {
  it('GitHub: opened, synchronized and closed drive the preview, its banner, its statuses and its removal', async () => {
    const p = await setup('Reviewed', 'github', 'public');
    const sha1 = pushHead(p.repo, 'pull/7/head', 'PR seven, first push');

    // Off by default, as on Read the Docs: the event is not handled.
    const off = await github(p.slug, p.secret, prPayload('opened', 7, sha1));
    expect(off.body).toEqual({ detail: 'Unhandled webhook event' });
    expect(await t.db.prisma.version.count({ where: { slug: '7' } })).toBe(0);
    await gqlOk(`mutation($p: String!) { updateProject(slug: $p, input: {externalBuildsEnabled: true}) { __typename } }`, { p: p.slug });
    // A preview builds anyone's code: it gets the public variables only.
    for (const [name, value, isPublic] of [
      ['DOCS_PRIVATE', 'private-value-1', false],
      ['DOCS_PUBLIC', 'public-value-2', true],
    ] as const) {
      await gqlOk(`mutation($p: String!, $input: EnvironmentVariableInput!) { createEnvironmentVariable(project: $p, input: $input) { __typename } }`, {
        p: p.slug,
        input: { name, value, public: isPublic },
      });
    }

    forgeDown = 1; // the first status call finds the forge down
    const opened = await github(p.slug, p.secret, prPayload('opened', 7, sha1));
    expect(opened.body).toEqual({ build_triggered: true, project: p.slug, versions: ['7'] });
    const build = await waitForBuild(t, await latestBuildOf(t, p.slug, '7'));
    expect([build.success, build.versionSlug, build.commit]).toEqual([true, '7', sha1]);

    const docs = await t.http.get(`/docs/${p.slug}/en/7/`);
    expect(docs.status).toBe(200);
    expect(docs.text).toContain('PR seven, first push');
    expect(docs.text).toContain('private=absent public=public-value-2');
    expect(docs.text).toContain('This page is a preview of pull request #7');
    expect(docs.text).toContain('href="https://github.example/acme/docs/pull/7"');
    // The project's published docs have no banner.
    expect((await t.http.get(`/docs/${p.slug}/en/latest/`)).text).not.toContain('preview of pull request');

    // Listed only when asked for.
    const rest = await t.http.get(`/api/v3/projects/${p.slug}/versions/`).set('authorization', `Token ${token}`);
    expect(rest.body.results.map((v: { slug: string }) => v.slug)).not.toContain('7');
    const restAsked = await t.http.get(`/api/v3/projects/${p.slug}/versions/?type=external`).set('authorization', `Token ${token}`);
    expect(restAsked.body.results.map((v: { slug: string; type: string }) => [v.slug, v.type])).toEqual([['7', 'external']]);
    const restBad = await t.http.get(`/api/v3/projects/${p.slug}/versions/?type=pull`).set('authorization', `Token ${token}`);
    expect([restBad.status, restBad.body]).toEqual([400, { type: ['Select a valid choice. pull is not one of the available choices.'] }]);
    const asked = await t.gql(
      `query($p: String!) { project(slug: $p) { versions(filter: {type: external}) { nodes { slug type privacyLevel pullRequest { number url provider open } } } } }`,
      { p: p.slug },
      token,
    );
    expect(asked.data.project.versions.nodes).toEqual([
      {
        slug: '7',
        type: 'external',
        privacyLevel: 'public',
        pullRequest: { number: 7, url: 'https://github.example/acme/docs/pull/7', provider: 'github', open: true },
      },
    ]);

    // Statuses: pending (retried after the forge's 503), then success linking the preview.
    const reported = await until('pending and success statuses', async () => {
      const got = statusesFor(sha1).filter((c) => c.method === 'POST');
      return got.some((c) => c.body.state === 'success') && got;
    });
    expect(reported.map((c) => c.body.state)).toEqual(['pending', 'pending', 'success']);
    expect(reported[0]!.path).toBe(`/github-api/repos/acme/docs/statuses/${sha1}`);
    expect(reported[0]!.headers.authorization).toBe('Bearer github-token-123');
    expect(reported[2]!.body).toEqual({
      state: 'success',
      target_url: `${t.config.publicUrl}/docs/${p.slug}/en/7/`,
      description: 'The documentation preview is ready.',
      context: `docs/lectern:${p.slug}`,
    });
    expect(reported[0]!.body.target_url).toBe(`${t.config.publicUrl}/projects/${p.slug}/builds/${build.id}`);

    // A new push to the pull request builds its new head.
    const sha2 = pushHead(p.repo, 'pull/7/head', 'PR seven, second push');
    expect((await github(p.slug, p.secret, prPayload('synchronize', 7, sha2))).body.versions).toEqual(['7']);
    const second = await waitForBuild(t, await latestBuildOf(t, p.slug, '7'));
    expect([second.success, second.commit]).toEqual([true, sha2]);
    expect((await t.http.get(`/docs/${p.slug}/en/7/`)).text).toContain('PR seven, second push');
    await until('the second head reported', async () => statusesFor(sha2).some((c) => c.body.state === 'success'));

    // A head that fails to build: failure, linking the build; the preview keeps what it served.
    git(p.repo.work, 'checkout', '--quiet', '-B', 'pr-pull-7-head');
    git(p.repo.work, 'reset', '--quiet', '--hard', sha2);
    const sha3 = p.repo.commit({ '.readthedocs.yaml': 'version: 2\nbuild:\n  commands:\n    - "exit 4"\n' }, 'broken');
    git(p.repo.work, 'push', '--quiet', '--force', 'origin', 'HEAD:refs/pull/7/head');
    git(p.repo.work, 'checkout', '--quiet', 'main');
    await github(p.slug, p.secret, prPayload('synchronize', 7, sha3));
    const broken = await waitForBuild(t, await latestBuildOf(t, p.slug, '7'));
    expect([broken.success, broken.commit]).toEqual([false, sha3]);
    const failure = await until('a failure status', async () => statusesFor(sha3).find((c) => c.body.state === 'failure'));
    expect(failure.body).toMatchObject({
      target_url: `${t.config.publicUrl}/projects/${p.slug}/builds/${broken.id}`,
      description: 'The documentation build failed.',
    });
    expect((await t.http.get(`/docs/${p.slug}/en/7/`)).text).toContain('PR seven, second push');

    // Closed: the preview goes, files and all (kept 0 days here).
    const closed = await github(p.slug, p.secret, prPayload('closed', 7, sha2));
    expect(closed.body).toEqual({ closed: true, project: p.slug, versions: ['7'] });
    await until('the preview removed', async () => (await t.db.prisma.version.count({ where: { slug: '7', project: { slug: p.slug } } })) === 0);
    expect(await t.storage.list(`projects/${p.slug}/7/`)).toEqual([]);
    expect((await t.http.get(`/docs/${p.slug}/en/7/`)).status).toBe(404);
    expect((await t.http.get(`/docs/${p.slug}/en/latest/`)).status).toBe(200);
  }, 180_000);

  it('GitLab: a merge request builds a private preview (externalBuildsPrivacyLevel) and reports to its API with PRIVATE-TOKEN', async () => {
    const p = await setup('Merged', 'gitlab', 'private');
    await gqlOk(`mutation($p: String!) { updateProject(slug: $p, input: {externalBuildsEnabled: true, externalBuildsPrivacyLevel: private}) { __typename } }`, {
      p: p.slug,
    });
    const sha = pushHead(p.repo, 'merge-requests/3/head', 'MR three');
    const res = await gitlab(p.slug, p.secret, {
      project: { id: 4242, default_branch: 'main' },
      object_attributes: { action: 'open', iid: 3, last_commit: { id: sha }, url: 'https://gitlab.example/acme/docs/-/merge_requests/3' },
    });
    expect(res.body).toEqual({ build_triggered: true, project: p.slug, versions: ['3'] });
    const build = await waitForBuild(t, await latestBuildOf(t, p.slug, '3'));
    expect([build.success, build.commit]).toEqual([true, sha]);
    // Private: anonymous readers get 404; the version says so.
    expect((await t.http.get(`/docs/${p.slug}/en/3/`)).status).toBe(404);
    expect((await t.db.prisma.version.findFirstOrThrow({ where: { slug: '3', project: { slug: p.slug } } })).privacyLevel).toBe('private');

    const reported = await until('GitLab statuses', async () => {
      const got = statusesFor(sha);
      return got.some((c) => c.body.state === 'success') && got;
    });
    expect(reported.map((c) => c.body.state)).toEqual(['pending', 'success']);
    expect(reported[0]!.path).toBe(`/gitlab-api/projects/4242/statuses/${sha}`);
    expect(reported[0]!.headers['private-token']).toBe('gitlab-token-123');
    expect(reported[1]!.body).toMatchObject({ name: `docs/lectern:${p.slug}`, target_url: `${t.config.publicUrl}/docs/${p.slug}/en/3/` });

    // Bad payloads are refused by name; a version of that name that is not a preview is not taken over.
    const bad = await gitlab(p.slug, p.secret, { project: { id: 4242 }, object_attributes: { action: 'update', iid: 3 } });
    expect([bad.status, bad.body]).toEqual([400, { detail: 'Invalid payload. id is required.' }]);
    // The token never comes back.
    const read = await t.gql(`query($p: String!) { project(slug: $p) { integrations { id hasToken apiUrl } } }`, { p: p.slug }, token);
    expect(JSON.stringify(read.data)).not.toContain('gitlab-token-123');

    const merged = await gitlab(p.slug, p.secret, { project: { id: 4242 }, object_attributes: { action: 'merge', iid: 3, last_commit: { id: sha } } });
    expect(merged.body).toEqual({ closed: true, project: p.slug, versions: ['3'] });
    await until('the preview removed', async () => (await t.db.prisma.version.count({ where: { slug: '3', project: { slug: p.slug } } })) === 0);
  }, 180_000);

  it('refuses what a hostile payload or setting would aim elsewhere: a repository name leaving the API path, a forge API on a private address', async () => {
    const p = await setup('Guarded', 'github', 'public');
    await gqlOk(`mutation($p: String!) { updateProject(slug: $p, input: {externalBuildsEnabled: true}) { __typename } }`, { p: p.slug });
    const sha = pushHead(p.repo, 'pull/9/head', 'PR nine');
    for (const full_name of ['../../admin', 'acme/..', 'acme/docs/statuses', 'acme docs/x']) {
      const res = await github(p.slug, p.secret, { ...prPayload('opened', 9, sha), repository: { full_name } });
      expect([res.status, res.body], full_name).toEqual([400, { detail: 'Invalid payload. full_name is required.' }]);
    }
    expect(await t.db.prisma.version.count({ where: { slug: '9', project: { slug: p.slug } } })).toBe(0);
    const metadata = await t.gql(
      `mutation($p: String!, $id: Int!) { setIntegrationToken(project: $p, id: $id, token: "t", apiUrl: "http://169.254.169.254/latest") {
        __typename ... on ValidationError { fieldErrors { field messages } } } }`,
      { p: p.slug, id: p.integration },
      token,
    );
    expect(metadata.data.setIntegrationToken.fieldErrors[0].field).toBe('apiUrl');
    expect(metadata.data.setIntegrationToken.fieldErrors[0].messages.join(' ')).toMatch(/loopback, private or reserved address/);
  }, 120_000);
});
