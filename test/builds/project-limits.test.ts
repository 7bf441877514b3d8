// A project whose build limits a site admin raised builds with them (docs/design/builds.md
// "Per-project limits"): real builds, in the sandbox, of two projects of the same repository. The
// installation gives every build 10 seconds and 512 processes; the raised project gets 60 seconds
// and 700 processes, its build says so in its log, and a command that outlasts the default passes
// there while the other project's build is stopped at the default.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Worker } from '../../src/builds/worker.ts';
import { bwrapAvailable } from '../../src/sandbox/sandbox.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { importProject, latestBuildOf, startTestWorker, waitForBuild } from '../helpers/builds.ts';
import { type GitServer, startGitServer } from '../helpers/git.ts';

// Two real builds, one of them stopped at its time limit.
vi.setConfig({ testTimeout: 240_000 });

let t: TestApp;
let server: GitServer;
let worker: Worker | undefined;
let admin: string;
let maintainer: string;

beforeAll(async () => {
  if (!bwrapAvailable()) throw new Error('bubblewrap (bwrap) is missing or cannot run here: apt-get install -y bubblewrap');
  t = await testApp({ LECTERN_BUILD_TIME_LIMIT_SECONDS: '10', LECTERN_BUILD_MAX_PROCESSES: '512', LECTERN_BUILD_PROJECT_MAX_TIME_SECONDS: '120' });
  server = await startGitServer();
  admin = await t.user('admin');
  maintainer = await t.user('maintainer');
  await t.db.prisma.user.update({ where: { username: 'admin' }, data: { isAdmin: true } });
});
afterAll(async () => {
  await worker?.stop(1000);
  await server?.close();
  await t?.close();
});

/** Says the build's process limit, then outlasts the default time limit, then leaves a page. */
const SLOW = [
  'version: 2',
  'build:',
  '  os: ubuntu-22.04',
  '  tools: {python: "3.11"}',
  '  commands:',
  '    - echo "process limit $(ulimit -u)"',
  '    - sleep 14',
  '    - mkdir -p $READTHEDOCS_OUTPUT/html',
  '    - echo "<h1>slow</h1>" > $READTHEDOCS_OUTPUT/html/index.html',
  '',
].join('\n');

type BuildRow = Awaited<ReturnType<typeof waitForBuild>>;
const logOf = (b: BuildRow) => b.commands.map((c) => `$ ${c.command}\n${c.output}`).join('\n');

describe("a project's own build limits", () => {
  it('apply to its builds, and its log says so; another project keeps the defaults', async () => {
    const repo = server.repo('slow', { 'README.md': 'x', '.readthedocs.yaml': SLOW });
    const raised = await importProject(t, maintainer, 'Raised', repo.url);
    const plain = await importProject(t, maintainer, 'Plain', repo.url);
    // Raised before any worker runs: the import's own build is the first to get the new limits.
    const set = await t.gql(
      `mutation { setProjectBuildLimits(project: "${raised.slug}", input: { timeSeconds: 60, processes: 700 }) { __typename ... on Error { message } } }`,
      {},
      admin,
    );
    expect(set.data.setProjectBuildLimits, JSON.stringify(set)).toMatchObject({ __typename: 'MutationSetProjectBuildLimitsSuccess' });
    worker = await startTestWorker(t);

    const fast = await waitForBuild(t, await latestBuildOf(t, raised.slug), 120_000);
    expect(fast.success, `${fast.error}\n${logOf(fast)}`).toBe(true);
    expect(logOf(fast)).toContain('process limit 700');
    const note = fast.commands.find((c) => c.command === 'build limits');
    expect(note?.output).toContain("This project's builds have limits of their own, set by a site admin");
    expect(note?.output).toContain("time: 60 s (the installation's LECTERN_BUILD_TIME_LIMIT_SECONDS is 10 s)");
    expect(note?.output).toContain('processes: 700 processes');
    expect(note?.output).not.toContain('memory');
    const page = await t.http.get(`/docs/${raised.slug}/en/latest/`).set('authorization', `Token ${maintainer}`);
    expect(page.text).toContain('slow');

    const stopped = await waitForBuild(t, await latestBuildOf(t, plain.slug), 120_000);
    expect(stopped.success).toBe(false);
    // Stopped at the installation's limit, named by its setting.
    expect(stopped.error).toContain("was killed at the build's time limit of 10 s (LECTERN_BUILD_TIME_LIMIT_SECONDS)");
    expect(logOf(stopped)).toContain('process limit 512');
    expect(stopped.commands.some((c) => c.command === 'build limits')).toBe(false);
  });

  it("stop a build at the project's own limit, which its error names as the project's, not the installation's setting", async () => {
    // Raised before any worker runs, as above: the import's own build is the one to get the limit.
    await worker?.stop(1000);
    const repo = server.repo('slower', { 'README.md': 'x', '.readthedocs.yaml': SLOW });
    const p = await importProject(t, maintainer, 'Raised a little', repo.url);
    const set = await t.gql(
      `mutation { setProjectBuildLimits(project: "${p.slug}", input: { timeSeconds: 11 }) { __typename ... on Error { message } } }`,
      {},
      admin,
    );
    expect(set.data.setProjectBuildLimits, JSON.stringify(set)).toMatchObject({ __typename: 'MutationSetProjectBuildLimitsSuccess' });
    worker = await startTestWorker(t);
    const stopped = await waitForBuild(t, await latestBuildOf(t, p.slug), 120_000);
    expect(stopped.success).toBe(false);
    expect(stopped.error).toContain("was killed at the build's time limit of 11 s (this project's own limit, set by a site admin)");
    expect(stopped.error).not.toContain('LECTERN_BUILD_TIME_LIMIT_SECONDS');
  });
});
