// From a git push to what readers and API clients get: a repository is imported, a GitHub push
// webhook with a real signature triggers the build, the worker builds it with Sphinx, and the docs
// server, the download, API v2 (with the build's commands) and the embed API all serve its output.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '../../src/builds/worker.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { importProject, latestBuildOf, sphinxFiles, startTestWorker, waitForBuild } from '../helpers/builds.ts';
import { type GitServer, git, startGitServer } from '../helpers/git.ts';

let t: TestApp;
let server: GitServer;
let worker: Worker;
let token: string;
let slug: string;
let buildId: number;
let commit: string;

beforeAll(async () => {
  t = await testApp();
  server = await startGitServer();
  token = await t.user('e2e');
  worker = await startTestWorker(t);

  const repo = server.repo('end-to-end', sphinxFiles({ '.readthedocs.yaml': 'version: 2\nformats: [htmlzip]\nsphinx:\n  configuration: docs/conf.py\n' }));
  const p = await importProject(t, token, 'End To End', repo.url);
  slug = p.slug;
  await waitForBuild(t, await latestBuildOf(t, slug));

  // A GitHub integration, and a push of a new commit signed with its secret.
  const created = await t.gql(
    `mutation($p: String!) { createIntegration(project: $p, provider: github) { ... on MutationCreateIntegrationSuccess { data { secret integration { id } } } ... on Error { message } } }`,
    { p: slug },
    token,
  );
  const integration = created.data?.createIntegration?.data as { secret: string };
  expect(integration?.secret, JSON.stringify(created)).toBeTruthy();
  commit = repo.commit({ 'docs/guide.rst': 'Guide\n=====\n\nUsage\n-----\n\nUse it, now pushed.\n' }, 'pushed');
  git(repo.work, 'push', '--quiet', 'origin', 'main');
  const body = JSON.stringify({ ref: 'refs/heads/main', after: commit, before: '0'.repeat(40), repository: { default_branch: 'main' } });
  const signature = `sha256=${createHmac('sha256', integration.secret).update(body).digest('hex')}`;
  const hook = await t.http
    .post(`/api/v2/webhook/github/${slug}/`)
    .set('content-type', 'application/json')
    .set('x-github-event', 'push')
    .set('x-hub-signature-256', signature)
    .send(body);
  expect(hook.status, JSON.stringify(hook.body)).toBe(200);
  expect(hook.body.build_triggered).toBe(true);
  buildId = await latestBuildOf(t, slug);
  const build = await waitForBuild(t, buildId);
  expect(build.success, build.error ?? '').toBe(true);
}, 180_000);
afterAll(async () => {
  await worker?.stop(1000);
  await server?.close();
  await t?.close();
});

describe('a pushed commit, built and served', () => {
  it('the build of the push has the pushed commit', async () => {
    const build = await t.db.prisma.build.findUniqueOrThrow({ where: { id: buildId } });
    expect(build.commit).toBe(commit);
  });

  it('readers get the new page at the docs URL the API shows', async () => {
    const v = await t.http.get(`/api/v3/projects/${slug}/versions/latest/`).set('authorization', `Token ${token}`);
    const docs = new URL(v.body.urls.documentation as string);
    expect(docs.pathname).toBe(`/docs/${slug}/en/latest/`);
    const root = await t.http.get(`/docs/${slug}/`);
    expect(root.status).toBe(302);
    expect(root.headers.location).toMatch(new RegExp(`/docs/${slug}/en/latest/$`));
    const page = await t.http.get(`${docs.pathname}guide.html`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('Use it, now pushed.');
    expect(page.text).toContain('switcher.js');
  });

  it('the htmlzip download is served where the API says', async () => {
    const v = await t.http.get(`/api/v3/projects/${slug}/versions/latest/`).set('authorization', `Token ${token}`);
    const url = new URL(v.body.downloads.htmlzip as string);
    const zip = await t.http
      .get(url.pathname)
      .buffer(true)
      .parse((res, cb) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => cb(null, Buffer.concat(chunks)));
      });
    expect(zip.status).toBe(200);
    expect(zip.headers['content-disposition']).toMatch(/attachment; filename="?end-to-end-latest\.zip"?/);
    expect((zip.body as Buffer).subarray(0, 2).toString()).toBe('PK');
  });

  it('API v2 shows the build with its commands', async () => {
    const res = await t.http.get(`/api/v2/build/${buildId}/`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: buildId, state: 'finished', success: true, error: '', commit, project_slug: slug, version_slug: 'latest' });
    const commands = (res.body.commands as { command: string; exit_code: number }[]).map((c) => c.command);
    expect(commands.some((c) => c.startsWith('git clone'))).toBe(true);
    expect(commands.some((c) => /sphinx .*-b html/.test(c))).toBe(true);
  });

  it('the embed API returns a section of the built page', async () => {
    const res = await t.http.get('/api/v2/embed/').query({ project: slug, version: 'latest', doc: 'guide', section: 'usage' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(JSON.stringify(res.body.content)).toContain('Use it, now pushed.');
  });
});
