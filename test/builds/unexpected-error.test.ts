// A build that meets an error Lectern did not expect (here: storage that cannot be written, a real
// ENOTDIR from the file system) fails that build with a message and is logged; the process goes on
// serving and building.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Worker } from '../../src/builds/worker.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { importProject, latestBuildOf, startTestWorker, waitForBuild } from '../helpers/builds.ts';
import { type GitServer, startGitServer } from '../helpers/git.ts';

let t: TestApp;
let server: GitServer;
let worker: Worker;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'lectern-broken-storage-'));
  // A storage directory below a regular file: every write fails with ENOTDIR.
  writeFileSync(path.join(dir, 'not-a-dir'), '');
  t = await testApp({ LECTERN_STORAGE: `file:${path.join(dir, 'not-a-dir', 'storage')}` });
  server = await startGitServer();
  worker = await startTestWorker(t);
});
afterAll(async () => {
  await worker?.stop(1000);
  await server?.close();
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('fails the build with a message, and the server and worker go on', async () => {
  const yaml = [
    'version: 2',
    'build:',
    '  os: ubuntu-22.04',
    '  tools: {python: "3.11"}',
    '  commands:',
    '    - mkdir -p $READTHEDOCS_OUTPUT/html',
    '    - echo hi > $READTHEDOCS_OUTPUT/html/index.html',
    '',
  ].join('\n');
  const token = await t.user('owner');
  const repo = server.repo('unlucky', { '.readthedocs.yaml': yaml });
  const p = await importProject(t, token, 'unlucky', repo.url);
  const first = await waitForBuild(t, await latestBuildOf(t, p.slug));
  expect(first.success).toBe(false);
  expect(first.error).toMatch(/^Lectern could not run this build: .*(ENOTDIR|not a directory)/);
  // The process is still there: it answers, and the worker takes the next build.
  expect((await t.http.get('/healthz')).status).toBe(200);
  const res = await t.http.post(`/api/v3/projects/${p.slug}/versions/latest/builds/`).set('authorization', `Token ${token}`);
  expect(res.status).toBe(202);
  const second = await waitForBuild(t, res.body.build.id);
  expect(second.state).toBe('finished');
  expect(second.success).toBe(false);
});
