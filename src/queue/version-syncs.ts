// Version syncs are jobs of the one job queue (jobs.ts, docs/design/jobs.md), so a sync asked for
// survives a restart and runs on a worker, never in the web process. One job key per project:
// requests made while its sync waits coalesce into it, and one made while it runs makes it run again.
import type { PrismaClient } from '../db/database.ts';
import type { Events } from '../events.ts';
import { addKeyedJob, type RetryPolicy } from './jobs.ts';

/** The job queue's task that syncs a project's versions: payload `{ projectId }`. */
export const SYNC_TASK = 'version-sync';

/** About 25 minutes from the first run to the last: enough for a git host's outage, not a day. */
export const DEFAULT_SYNC_RETRY: RetryPolicy = { baseSeconds: 10, capSeconds: 600, maxAttempts: 8 };

/** The job key of a project's sync. */
export const syncJobKey = (projectId: number) => `${SYNC_TASK}:${projectId}`;

/**
 * Asks for a sync of the project's versions. The NOTIFY wakes workers in other processes when the
 * statement commits; the app's `syncQueued` wakes its own (the embedded database has one process,
 * and no NOTIFY to deliver).
 */
export async function queueVersionSync(db: PrismaClient, events: Events, projectId: number): Promise<void> {
  await addKeyedJob(db, syncJobKey(projectId), { task: SYNC_TASK, payload: { projectId }, groupKey: `project:${projectId}` });
  events.emit('syncQueued', { projectId });
}
