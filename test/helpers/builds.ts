// Running real builds in tests: a build worker on the test app's database and storage, fixture
// repositories for the kinds of documentation Lectern builds, and waiting for a build to end.
import type { PipelineDeps } from '../../src/builds/pipeline.ts';
import { Worker, type WorkerOptions } from '../../src/builds/worker.ts';
import { syncProjectVersions } from '../../src/domain/version-sync.ts';
import type { Build, Job } from '../../src/generated/prisma/client.ts';
import { createLogger, type Logger } from '../../src/log.ts';
import { BUILD_TASK, startBuild } from '../../src/queue/builds.ts';
import { claimJob } from '../../src/queue/jobs.ts';
import { Cipher } from '../../src/secrets.ts';
import { artifactPrefix } from '../../src/storage/artifacts.ts';
import { fileStorageDir } from '../../src/storage/index.ts';
import { TEST_SECRET_KEY, type TestApp } from './app.ts';

/** What a build worker of the test app is given: its database, storage, settings and events. */
export function pipelineDeps(t: TestApp): PipelineDeps {
  return {
    prisma: t.db.prisma,
    storage: t.storage,
    cipher: new Cipher(TEST_SECRET_KEY),
    log: createLogger('silent'),
    dataDir: t.dataDir,
    hidden: [fileStorageDir(t.config.storage)].filter((d): d is string => d !== null),
    publicUrl: t.config.publicUrl,
    syncVersions: (projectId, url) => syncProjectVersions(t.services, projectId, url),
    limits: t.config.build,
    notify: t.config,
    previewRetentionDays: t.config.previewRetentionDays,
    // The app's own: what it queues wakes this worker, what the worker publishes empties the app's docs caches.
    events: t.services.events,
  };
}

export async function startTestWorker(
  t: TestApp,
  opts: { concurrency?: number; leaseSeconds?: number; notifications?: WorkerOptions['notifications']; log?: Logger } = {},
): Promise<Worker> {
  const deps = pipelineDeps(t);
  const worker = new Worker(opts.log ? { ...deps, log: opts.log } : deps, {
    concurrency: opts.concurrency ?? 1,
    databaseUrl: t.databaseUrl,
    leaseSeconds: opts.leaseSeconds,
    notifications: opts.notifications,
  });
  await worker.start();
  return worker;
}

/** The build's job in the job queue (null once it ended and was removed). */
export function buildJobOf(t: TestApp, buildId: number): Promise<Job | null> {
  return t.db.prisma.job.findFirst({ where: { task: BUILD_TASK, payload: { path: ['buildId'], equals: buildId } } });
}

/**
 * Claims the next build as a worker named `workerId` would, for `leaseSeconds`, and starts it (the
 * build is that worker's, `cloning`): a worker that then dies, or a test that plays the worker.
 */
export async function claimBuildAs(t: TestApp, workerId: string, leaseSeconds: number): Promise<Build | null> {
  const job = await claimJob(t.db.prisma, workerId, leaseSeconds, { tasks: [BUILD_TASK], busy: [] });
  return job && startBuild(t.db.prisma, Number(job.payload.buildId), workerId);
}

/** Polls the build row until it is finished; fails with its state and commands when it takes too long. */
export async function waitForBuild(t: TestApp, id: number, timeoutMs = 120_000) {
  const until = Date.now() + timeoutMs;
  // Polled by its state alone: the build's commands hold their output, and reading them ten times a
  // second competes with the build's own writes (on the embedded database, for its one connection).
  const read = () => t.db.prisma.build.findUniqueOrThrow({ where: { id }, include: { commands: { orderBy: { id: 'asc' } } } });
  for (;;) {
    const { state } = await t.db.prisma.build.findUniqueOrThrow({ where: { id }, select: { state: true } });
    if (state === 'finished') return read();
    if (Date.now() > until) {
      const build = await read();
      throw new Error(`build ${id} still ${build.state} after ${timeoutMs} ms; commands: ${build.commands.map((c) => c.command).join(' | ')}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The id of the newest build of a version. */
export async function latestBuildOf(t: TestApp, projectSlug: string, versionSlug = 'latest'): Promise<number> {
  const b = await t.db.prisma.build.findFirstOrThrow({
    where: { project: { slug: projectSlug }, versionSlug },
    orderBy: { id: 'desc' },
  });
  return b.id;
}

export async function importProject(t: TestApp, token: string, name: string, url: string): Promise<{ id: number; slug: string }> {
  const res = await t.gql(
    `mutation($input: ImportProjectInput!) { importProject(input: $input) { ... on MutationImportProjectSuccess { data { id slug } } ... on Error { message } } }`,
    { input: { name, repository: { url } } },
    token,
  );
  const data = res.data?.importProject?.data;
  if (!data) throw new Error(`import failed: ${JSON.stringify(res.errors ?? res.data)}`);
  return data;
}

/** A small Sphinx project: two pages with sections. */
export function sphinxFiles(extra: Record<string, string> = {}): Record<string, string> {
  return {
    'docs/conf.py': "project = 'Fixture'\nextensions = []\nhtml_theme = 'alabaster'\n",
    'docs/index.rst': 'Fixture\n=======\n\nWelcome.\n\n.. toctree::\n\n   guide\n\nInstall\n-------\n\nRun it.\n',
    'docs/guide.rst': 'Guide\n=====\n\nUsage\n-----\n\nUse it.\n',
    ...extra,
  };
}

export function mkdocsFiles(): Record<string, string> {
  return {
    'mkdocs.yml': 'site_name: Fixture MkDocs\nnav:\n  - Home: index.md\n  - About: about.md\n',
    'docs/index.md': '# Home\n\nHello from MkDocs.\n',
    'docs/about.md': '# About\n\nAbout page.\n',
  };
}

/** A file of the HTML a version serves now (its published build's), as stored; null when it serves none or has no such file. */
export async function publishedHtml(t: TestApp, projectSlug: string, versionSlug: string, file: string): Promise<string | null> {
  const v = await t.db.prisma.version.findFirstOrThrow({ where: { project: { slug: projectSlug }, slug: versionSlug } });
  if (!v.publishedBuildId) return null;
  const obj = await t.storage.get(`${artifactPrefix(projectSlug, versionSlug, v.publishedBuildId, 'html')}/${file}`);
  if (!obj || obj.notModified) return null;
  const chunks: Buffer[] = [];
  for await (const c of obj.body) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
