// Cancelling a build (issue 12, the dashboard's builds page): a queued build never starts; a
// running one is stopped by its worker at the next heartbeat, its command killed, nothing
// published; the build ends unsuccessful saying who cancelled it. Only maintainers cancel, and a
// finished build stays as it ended.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '../../src/builds/worker.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { buildJobOf, importProject, latestBuildOf, startTestWorker } from '../helpers/builds.ts';
import { type GitServer, startGitServer } from '../helpers/git.ts';
import { until } from '../helpers/wait.ts';

let t: TestApp;
let server: GitServer;
let alice: string;
let bob: string;
const workers: Worker[] = [];

const CANCEL = `mutation($project: String!, $id: Int!) { cancelBuild(project: $project, id: $id) {
  __typename ... on MutationCancelBuildSuccess { data { id state success error } }
  ... on Error { code status message } ... on NotFoundError { model } } }`;

/** A project whose build runs `sleep` for a minute before it makes any HTML. */
const slowProject = {
  '.readthedocs.yaml': [
    'version: 2',
    'build:',
    '  commands:',
    '    - sleep 60',
    '    - mkdir -p $READTHEDOCS_OUTPUT/html',
    '    - echo "<p>late</p>" > $READTHEDOCS_OUTPUT/html/index.html',
    '',
  ].join('\n'),
};

beforeAll(async () => {
  t = await testApp();
  server = await startGitServer();
  alice = await t.user('alice');
  bob = await t.user('bob');
});
afterAll(async () => {
  for (const w of workers) await w.stop(0);
  await server?.close();
  await t?.close();
});

describe('cancelBuild', () => {
  it('ends a queued build before it starts, and no worker takes it', async () => {
    const repo = server.repo('queued', slowProject);
    const p = await importProject(t, alice, 'Queued', repo.url);
    const id = await latestBuildOf(t, p.slug);
    expect((await t.gql(CANCEL, { project: p.slug, id }, bob)).data.cancelBuild).toMatchObject({ __typename: 'ForbiddenError' });
    const res = await t.gql(CANCEL, { project: p.slug, id }, alice);
    expect(res.data.cancelBuild).toEqual({
      __typename: 'MutationCancelBuildSuccess',
      data: { id, state: 'finished', success: false, error: 'Cancelled by alice.' },
    });
    const again = await t.gql(CANCEL, { project: p.slug, id }, alice);
    expect(again.data.cancelBuild).toMatchObject({ __typename: 'ConflictError', status: 409 });
    expect((await t.gql(CANCEL, { project: p.slug, id: 999_999 }, alice)).data.cancelBuild).toMatchObject({ __typename: 'NotFoundError', model: 'Build' });

    const worker = await startTestWorker(t, { leaseSeconds: 3 });
    workers.push(worker);
    // A fixed wait on purpose: it proves something does NOT happen (the worker, which claims at once,
    // never starts the cancelled build), so there is no condition to wait on, only a time bound.
    await new Promise((r) => setTimeout(r, 1500));
    const build = await t.db.prisma.build.findUniqueOrThrow({ where: { id }, include: { commands: true } });
    expect(build).toMatchObject({ state: 'finished', error: 'Cancelled by alice.', workerId: null });
    expect(build.commands).toEqual([]);
  });

  it('stops a running build at its next heartbeat: the command is killed and nothing is published', { timeout: 120_000 }, async () => {
    const repo = server.repo('running', slowProject);
    const p = await importProject(t, alice, 'Running', repo.url);
    const id = await latestBuildOf(t, p.slug);
    await until('the sleep to start', async () => (await t.db.prisma.buildCommand.count({ where: { buildId: id, command: { contains: 'sleep 60' } } })) > 0);
    const res = await t.gql(CANCEL, { project: p.slug, id }, alice);
    expect(res.data.cancelBuild.data).toMatchObject({ state: 'finished', success: false, error: 'Cancelled by alice.' });
    const cancelledAt = Date.now();
    // The worker lets go of it within a heartbeat (a second, with a 3 s lease): the sleep ends early.
    await until(
      'the sleep to be killed',
      async () => {
        const sleep = await t.db.prisma.buildCommand.findFirst({ where: { buildId: id, command: { contains: 'sleep 60' } } });
        return sleep?.endTime != null;
      },
      30_000,
    );
    expect(Date.now() - cancelledAt).toBeLessThan(30_000);
    const build = await t.db.prisma.build.findUniqueOrThrow({ where: { id }, include: { commands: true, version: true } });
    expect(build).toMatchObject({ state: 'finished', success: false, error: 'Cancelled by alice.' });
    expect(build.commands.some((c) => c.command.includes('mkdir'))).toBe(false);
    expect(build.version?.publishedBuildId).toBeNull();
    expect(await t.storage.list(`projects/${p.slug}/`)).toEqual([]);
  });

  it('stops a running build whose project is deleted meanwhile: its worker lets go within a heartbeat, and nothing is published', {
    timeout: 120_000,
  }, async () => {
    const repo = server.repo('deleted-while-running', slowProject);
    const p = await importProject(t, alice, 'Deleted While Running', repo.url);
    const id = await latestBuildOf(t, p.slug);
    await until('the sleep to start', async () => (await t.db.prisma.buildCommand.count({ where: { buildId: id, command: { contains: 'sleep 60' } } })) > 0);
    const res = await t.gql('mutation($p: String!) { deleteProject(project: $p, confirm: $p) { __typename } }', { p: p.slug }, alice);
    expect(res.data?.deleteProject.__typename, JSON.stringify(res)).toBe('MutationDeleteProjectSuccess');
    const deletedAt = Date.now();
    // The build and its commands went with the project; the worker running it lets go at its next heartbeat.
    await until('the worker to let go of the build', () => workers.every((w) => !w.running.includes(id)), 30_000);
    expect(Date.now() - deletedAt).toBeLessThan(30_000);
    await until('its job to end', async () => (await buildJobOf(t, id)) === null);
    expect(await t.db.prisma.build.count({ where: { id } })).toBe(0);
    expect(await t.storage.list(`projects/${p.slug}/`)).toEqual([]);
  });
});
