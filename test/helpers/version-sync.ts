// Version syncs in tests: a worker that runs syncs only (builds stay queued for the test to see),
// and waiting for a project's queued sync to end.

import { Worker } from '../../src/builds/worker.ts';
import { syncProjectVersions } from '../../src/domain/version-sync.ts';
import type { Job } from '../../src/generated/prisma/client.ts';
import { createLogger, type Logger } from '../../src/log.ts';
import type { RetryPolicy } from '../../src/queue/jobs.ts';
import { syncJobKey } from '../../src/queue/version-syncs.ts';
import { Cipher } from '../../src/secrets.ts';
import { TEST_SECRET_KEY, type TestApp } from './app.ts';

export async function startSyncWorker(
  t: TestApp,
  opts: { leaseSeconds?: number; retry?: Partial<RetryPolicy>; concurrency?: number; log?: Logger } = {},
): Promise<Worker> {
  const worker = new Worker(
    {
      prisma: t.db.prisma,
      storage: t.storage,
      cipher: new Cipher(TEST_SECRET_KEY),
      log: opts.log ?? createLogger('silent'),
      dataDir: t.dataDir,
      publicUrl: t.config.publicUrl,
      syncVersions: (projectId, url) => syncProjectVersions(t.services, projectId, url),
      limits: t.config.build,
      events: t.services.events,
    },
    // No builds: those a sync queues (a promoted `stable`) stay `triggered`, as the test may check.
    { concurrency: 0, databaseUrl: t.databaseUrl, leaseSeconds: opts.leaseSeconds, versionSync: { concurrency: opts.concurrency, retry: opts.retry } },
  );
  await worker.start();
  return worker;
}

/** The project's sync job row (null when none was ever queued). */
export function syncJobOf(t: TestApp, projectId: number): Promise<Job | null> {
  return t.db.prisma.job.findUnique({ where: { key: syncJobKey(projectId) } });
}

/**
 * Waits until the project's sync job has ended (`done` or `failed`, not to run again) and returns
 * it. Call it after the request that queued the sync has been answered.
 */
export async function syncSettled(t: TestApp, projectId: number, timeoutMs = 60_000): Promise<Job> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const job = await syncJobOf(t, projectId);
    if (job && (job.state === 'done' || job.state === 'failed') && !job.again) return job;
    if (Date.now() > until) throw new Error(`the version sync of project ${projectId} has not ended after ${timeoutMs} ms: ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
