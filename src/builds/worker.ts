// A worker of the job queue (src/queue/jobs.ts, docs/design/jobs.md): builds up to `concurrency` at
// once (each project's up to its limit, across all workers), and beside them version syncs up to
// `versionSync.concurrency` (a sync is short and must not wait behind a long build) and notification
// deliveries up to `notifications.concurrency`, each project's holding at most its share. New builds
// and jobs wake it at once (LISTEN/NOTIFY on PostgreSQL, one channel; its app's events on the
// embedded database, where every build is queued by the app of this same process:
// docs/design/events.md); a slow poll is only a safety net, and a job waiting out its backoff wakes
// it when due. It renews each build's and job's lease while working, puts back work whose worker
// died, and on stop either lets running work finish or returns it to the queue.

import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { PgListener } from '../db/progress.ts';
import { pruneAudit } from '../domain/audit.ts';
import { sendDelivery } from '../notifications/send.ts';
import { BUILD_ATTEMPTS, BUILD_TASK, releaseBuild, startBuild, stillRunning, takeBackBuilds } from '../queue/builds.ts';
import {
  DEFAULT_DELIVERY_RETRY,
  DELIVER_TASK,
  delivered,
  queueFinishedEvents,
  recordAttempt,
  recordLost,
  recordReleased,
  startAttempt,
} from '../queue/deliveries.ts';
import {
  type ClaimedJob,
  claimJob,
  completeJob,
  describeJobError,
  ensureRecurringJob,
  failJob,
  HOUSEKEEPING_TASK,
  heartbeatJob,
  JOBS_CHANNEL,
  nextJobDueMs,
  pruneEndedJobs,
  type RetryPolicy,
  reapExpiredJobs,
  releaseJob,
  rescheduleJob,
  retryDelaySeconds,
  type Wanted,
} from '../queue/jobs.ts';
import { DEFAULT_SYNC_RETRY, SYNC_TASK } from '../queue/version-syncs.ts';
import { pruneCaches } from './environment.ts';
import { Aborted, type PipelineDeps, runBuild } from './pipeline.ts';
import { removeClosedPreviews } from './previews.ts';
import { endBuild } from './run.ts';

export interface WorkerOptions {
  concurrency: number;
  /** Lease length; heartbeats renew it every third of it. */
  leaseSeconds?: number;
  /** PostgreSQL URL to LISTEN on; without it the worker relies on its app's events (`deps.events`). */
  databaseUrl?: string;
  pollMs?: number;
  /** Version syncs run with `deps.syncVersions` (none without it). */
  versionSync?: { concurrency?: number; retry?: Partial<RetryPolicy> };
  /**
   * Webhook notifications and commit statuses are sent with `deps.notify` (none without it):
   * `concurrency` at once, of which one project's hold `perProject` at most.
   */
  notifications?: { concurrency?: number; perProject?: number; retry?: Partial<RetryPolicy> };
}

/** Notifications one worker sends at once: each waits on a receiver, at most LECTERN_WEBHOOK_TIMEOUT_SECONDS. */
const DEFAULT_DELIVERY_CONCURRENCY = 4;

/**
 * The slots one project's deliveries may hold: half of them (at least one). However many slow
 * receivers a project has, the other half is left to the other projects (docs/design/deliveries.md).
 */
export const deliverySharePerProject = (concurrency: number) => Math.max(1, Math.floor(concurrency / 2));

/** Syncs one worker runs at once: each is one `git ls-remote` and one transaction. */
const DEFAULT_SYNC_CONCURRENCY = 2;

/** The channel the worker LISTENs on: the job queue's, on which builds are announced too. */
export const NOTIFY_CHANNEL = JOBS_CHANNEL;

/** One task of the job queue as this worker runs it. */
interface TaskSlots {
  concurrency: number;
  /** The slots one group's jobs may hold at once; no limit when absent. */
  perGroup?: number;
  retry: RetryPolicy;
  /** Runs one claimed job of the task and ends it (its signal is aborted when the job is no longer this worker's). */
  run: (job: ClaimedJob, signal: AbortSignal) => Promise<void>;
}

export class Worker {
  readonly id = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  /** The jobs running, by job id; a build's is stopped through its `controller`. */
  readonly #jobs = new Map<number, { job: ClaimedJob; group: string; controller: AbortController; done: Promise<void> }>();
  readonly #tasks: Record<string, TaskSlots>;
  /** Jobs given back on stop while their run went on (a request cannot be taken back): the run records nothing. */
  readonly #givenBack = new Set<number>();
  #stopping = false;
  #wake: (() => void) | null = null;
  #listener: PgListener | null = null;
  #loop: Promise<void> | null = null;
  readonly #leaseSeconds: number;

  private readonly deps: PipelineDeps;
  private readonly opts: WorkerOptions;
  constructor(deps: PipelineDeps, opts: WorkerOptions) {
    this.deps = deps;
    this.opts = opts;
    this.#leaseSeconds = opts.leaseSeconds ?? 60;
    const deliveries = deps.notify ? (opts.notifications?.concurrency ?? DEFAULT_DELIVERY_CONCURRENCY) : 0;
    this.#tasks = {
      // A build's failure is its outcome, not the job's: only a run lost with its worker is run again.
      [BUILD_TASK]: {
        concurrency: opts.concurrency,
        retry: { baseSeconds: 0, capSeconds: 0, maxAttempts: BUILD_ATTEMPTS },
        run: (job, signal) => this.#runBuild(job, signal),
      },
      [SYNC_TASK]: {
        concurrency: deps.syncVersions ? (opts.versionSync?.concurrency ?? DEFAULT_SYNC_CONCURRENCY) : 0,
        retry: { ...DEFAULT_SYNC_RETRY, ...opts.versionSync?.retry },
        run: (job) => this.#runSync(job),
      },
      [DELIVER_TASK]: {
        concurrency: deliveries,
        perGroup: Math.max(1, opts.notifications?.perProject ?? deliverySharePerProject(deliveries)),
        retry: { ...DEFAULT_DELIVERY_RETRY, ...opts.notifications?.retry },
        run: (job) => this.#runDelivery(job),
      },
      // One run at a time across all workers (its key); a run lost with its worker is tried again.
      [HOUSEKEEPING_TASK]: { concurrency: 1, retry: { baseSeconds: 0, capSeconds: 0, maxAttempts: 3 }, run: (job) => this.#housekeeping(job) },
    };
  }

  /** Ids of the builds running. */
  get running(): number[] {
    return this.#ofTask(BUILD_TASK).map(({ job }) => Number(job.payload.buildId));
  }

  /** Ids of the version sync jobs running. */
  get syncing(): number[] {
    return this.#ofTask(SYNC_TASK).map(({ job }) => job.id);
  }

  #ofTask(task: string) {
    return [...this.#jobs.values()].filter((j) => j.job.task === task);
  }

  async start(): Promise<void> {
    const onQueued = () => this.#wake?.();
    // The app's own signals only: another app's builds (in this process too) are not this worker's.
    const { events } = this.deps;
    events.on('buildQueued', onQueued);
    events.on('syncQueued', onQueued);
    events.on('deliveryQueued', onQueued);
    if (this.opts.databaseUrl) {
      // It comes back by itself when the database does; work queued meanwhile is looked for then.
      this.#listener = new PgListener(this.opts.databaseUrl, NOTIFY_CHANNEL, { log: this.deps.log, onNotify: onQueued, onReconnect: onQueued });
      await this.#listener.ready;
    }
    this.#loop = this.#run().finally(() => {
      events.off('buildQueued', onQueued);
      events.off('syncQueued', onQueued);
      events.off('deliveryQueued', onQueued);
    });
  }

  async #run(): Promise<void> {
    // Expired leases are looked for at least twice per lease length, even when nothing wakes the loop.
    const poll = Math.min(this.opts.pollMs ?? 15_000, (this.#leaseSeconds * 1000) / 2);
    let lastReap = 0;
    while (!this.#stopping) {
      let wake!: () => void;
      const woken = new Promise<void>((resolve) => {
        this.#wake = wake = resolve;
        setTimeout(resolve, poll).unref();
      });
      try {
        if (Date.now() - lastReap > (this.#leaseSeconds * 1000) / 2) {
          lastReap = Date.now();
          await this.#maintain();
        }
        await this.#claimJobs(wake, poll);
      } catch (e) {
        this.deps.log.error({ err: e }, 'worker loop');
      }
      await woken;
    }
  }

  /** Puts back builds and jobs whose worker died, prunes this machine's caches, and sees the housekeeping job waits. */
  async #maintain(): Promise<void> {
    const { prisma, log } = this.deps;
    const attempts = Object.fromEntries(Object.entries(this.#tasks).map(([task, t]) => [task, t.retry.maxAttempts]));
    // One transaction: no worker claims a build's job again before its build is reset, and a build
    // failed here has its build:failed queued with its end, as endBuild does.
    const reap = (notify: boolean) =>
      prisma.$transaction(async (tx) => {
        const lost = await reapExpiredJobs(tx, attempts);
        const builds = (state: string) => lost.filter((j) => j.task === BUILD_TASK && j.state === state).map((j) => Number(j.payload.buildId));
        const failed = await takeBackBuilds(tx, builds('queued'), builds('failed'));
        if (notify) await queueFinishedEvents(tx, this.deps.events, failed, { email: !!this.deps.notify?.email });
        return lost;
      });
    const lost = await reap(true).catch((e: unknown) => {
      // Once more without the notifications: the lost builds are still put back or ended, and
      // their notifications are what is lost when that pass succeeds.
      log.error({ err: e }, 'taking back lost jobs with the notifications of their builds failed; again without them');
      return reap(false);
    });
    for (const job of lost) {
      log.warn({ job: job.id, task: job.task, state: job.state }, 'a job whose worker stopped');
      if (job.task === DELIVER_TASK)
        await recordLost(prisma, Number(job.payload.deliveryId), job, 'The worker sending this notification stopped before it ended (its lease expired).');
    }
    // The caches are this machine's; what is shared is the housekeeping job's, run by one worker of all.
    const pruned = await pruneCaches(prisma, this.deps.dataDir);
    if (pruned.projects.length || pruned.versions.length) log.info(pruned, 'caches of deleted projects and versions removed');
    await ensureRecurringJob(prisma, HOUSEKEEPING_TASK, { task: HOUSEKEEPING_TASK, payload: {} });
  }

  /** What outlived its keeping goes (ended jobs, closed previews, old audit entries); due again in half a lease. */
  async #housekeeping(job: ClaimedJob): Promise<void> {
    const { prisma, log } = this.deps;
    let error: string | null = null;
    try {
      await pruneEndedJobs(prisma);
      if (this.deps.previewRetentionDays !== undefined) {
        const removed = await removeClosedPreviews(this.deps, this.deps.previewRetentionDays);
        if (removed.length) log.info({ removed }, "closed pull requests' previews removed");
      }
      if (this.deps.auditRetentionDays !== undefined) await pruneAudit(prisma, this.deps.auditRetentionDays);
    } catch (e) {
      error = describeJobError(e);
      log.warn({ error }, 'housekeeping failed; it runs again at its next turn');
    }
    await rescheduleJob(prisma, job.id, this.id, this.#leaseSeconds / 2, error);
  }

  /** What this worker can take now: the tasks with a free slot, and the groups that have had their share. */
  #wanted(): Wanted {
    const tasks: string[] = [];
    const busy: string[] = [];
    for (const [task, slots] of Object.entries(this.#tasks)) {
      const mine = this.#ofTask(task);
      if (mine.length >= slots.concurrency) continue;
      tasks.push(task);
      if (slots.perGroup === undefined) continue;
      const byGroup = new Map<string, number>();
      for (const j of mine) byGroup.set(j.group, (byGroup.get(j.group) ?? 0) + 1);
      for (const [group, n] of byGroup) if (n >= slots.perGroup) busy.push(`${task}|${group}`);
    }
    return { tasks, busy };
  }

  /** Claims jobs while there are free slots; nothing due wakes the loop when the next one is, not at the next poll. */
  async #claimJobs(wake: () => void, poll: number): Promise<void> {
    while (!this.#stopping) {
      const wanted = this.#wanted();
      if (!wanted.tasks.length) return;
      const job = await claimJob(this.deps.prisma, this.id, this.#leaseSeconds, wanted);
      if (!job) {
        const due = await nextJobDueMs(this.deps.prisma, wanted);
        if (due !== null && due < poll) setTimeout(wake, due + 5).unref();
        return;
      }
      this.#startJob(job);
    }
  }

  #startJob(job: ClaimedJob): void {
    const { log } = this.deps;
    const controller = new AbortController();
    const beat = setInterval(
      () => {
        this.#heartbeat(job, controller).catch(() => {});
      },
      (this.#leaseSeconds * 1000) / 3,
    );
    // The claim returns only tasks this worker runs (a newer Lectern's wait for a worker that runs them).
    const done = this.#tasks[job.task]!.run(job, controller.signal)
      .catch((e: unknown) => log.error({ err: e, job: job.id, task: job.task }, 'job could not be recorded'))
      .finally(() => {
        clearInterval(beat);
        this.#jobs.delete(job.id);
        this.#wake?.();
      });
    this.#jobs.set(job.id, { job, group: job.groupKey ?? '', controller, done });
  }

  /** Renews the job's lease; a build no longer this worker's (taken back, cancelled, deleted) is stopped. */
  async #heartbeat(job: ClaimedJob, controller: AbortController): Promise<void> {
    const { prisma } = this.deps;
    const mine = await heartbeatJob(prisma, job.id, this.id, this.#leaseSeconds);
    if (job.task !== BUILD_TASK) return;
    if (!mine || !(await stillRunning(prisma, Number(job.payload.buildId), this.id))) controller.abort(new Aborted("the build is no longer this worker's"));
  }

  async #runBuild(job: ClaimedJob, signal: AbortSignal): Promise<void> {
    const { prisma, log } = this.deps;
    const build = await startBuild(prisma, Number(job.payload.buildId), this.id);
    // Finished before it started (superseded, cancelled), or deleted with its project: no run.
    if (!build) return completeJob(prisma, job.id, this.id);
    log.info({ build: build.id, project: build.projectId, attempt: job.attempts }, 'build started');
    await runBuild(this.deps, build, signal).catch(async (e: unknown) => {
      // Whatever went wrong fails this build, logged, and nothing else: the worker goes on.
      log.error({ err: e, build: build.id }, 'build failed to run');
      if (!(e instanceof Aborted)) await this.#failBuild(build);
    });
    log.info({ build: build.id }, 'build ended');
    // A build stopped with the worker is given back by stop(), its job with it.
    if (!this.#gaveBack(job)) await completeJob(prisma, job.id, this.id);
  }

  /** Ends a build its run could not end, with its build:failed queued in the same transaction (endBuild). */
  async #failBuild(build: Parameters<typeof endBuild>[1]): Promise<void> {
    const data = { success: false, error: 'Lectern could not run this build (its log has the details).', finishedAt: new Date() };
    await endBuild(this.deps, build, data).catch(() => {});
  }

  /** Whether the job was given back on stop while it ran: then its run, now ended, records nothing (logged). */
  #gaveBack(job: ClaimedJob): boolean {
    if (!this.#givenBack.has(job.id)) return false;
    this.deps.log.info({ job: job.id, task: job.task }, 'a job given back at stop ended its run: nothing recorded, it runs again elsewhere');
    return true;
  }

  async #runSync(job: ClaimedJob): Promise<void> {
    const { prisma, log } = this.deps;
    const projectId = Number(job.payload.projectId);
    const project = await prisma.project.findUnique({ where: { id: projectId }, select: { repositoryUrl: true } });
    // The project was deleted after asking: nothing left to sync.
    if (!project) return completeJob(prisma, job.id, this.id);
    let result: unknown;
    try {
      result = await this.deps.syncVersions!(projectId, project.repositoryUrl);
    } catch (e) {
      if (this.#gaveBack(job)) return;
      // The message with any credentials of the repository URL masked: it is stored and logged.
      const error = describeJobError(e);
      const { retry } = this.#tasks[SYNC_TASK]!;
      const delay = retryDelaySeconds(job.attempts, retry);
      const after = await failJob(prisma, job.id, this.id, error, delay, retry.maxAttempts);
      const again = after?.state === 'queued' ? { retryInSeconds: Math.round(delay * 10) / 10 } : {};
      log.warn({ project: projectId, attempt: job.attempts, state: after?.state, ...again, error }, 'version sync failed');
      return;
    }
    if (this.#gaveBack(job)) return;
    const { added, removed } = (result ?? {}) as { added?: string[]; removed?: string[] };
    log.info({ project: projectId, added, removed, attempt: job.attempts }, 'versions synced');
    await completeJob(prisma, job.id, this.id);
  }

  async #runDelivery(job: ClaimedJob): Promise<void> {
    const { prisma, cipher, log } = this.deps;
    const delivery = await startAttempt(prisma, Number(job.payload.deliveryId), job.attempts);
    // Its webhook (and with it the delivery) was deleted meanwhile: nothing to send.
    if (!delivery) return completeJob(prisma, job.id, this.id);
    const o = await sendDelivery({ prisma, cipher, config: this.deps.notify! }, delivery);
    if (this.#gaveBack(job)) return;
    // The URL is not logged: a receiver's URL may itself be a secret (Slack's are).
    const fields = {
      delivery: delivery.id,
      webhook: delivery.webhookId,
      event: delivery.event,
      build: delivery.buildId,
      attempt: job.attempts,
      status: o.statusCode,
    };
    if (delivered(o)) {
      await recordAttempt(prisma, delivery.id, o, 'delivered');
      await completeJob(prisma, job.id, this.id);
      log.info({ ...fields, state: 'delivered' }, 'webhook notification delivered');
      return;
    }
    const { retry } = this.#tasks[DELIVER_TASK]!;
    const delay = retryDelaySeconds(job.attempts, retry);
    const error = o.error ?? `HTTP ${o.statusCode}`;
    const after = await failJob(prisma, job.id, this.id, error, delay, o.terminal ? 0 : retry.maxAttempts);
    // Null: the job is no longer this worker's (its lease ran out); whoever holds it records.
    if (after) await recordAttempt(prisma, delivery.id, o, after);
    const again = after?.state === 'queued' ? { retryInSeconds: Math.round(delay * 10) / 10 } : {};
    log.warn({ ...fields, state: after?.state ?? null, error: o.error, ...again }, 'webhook notification failed');
  }

  /**
   * Stops claiming. Running builds and jobs get `graceMs` to finish; those still running then
   * are aborted (builds) and given back to the queue, so another worker runs them.
   */
  async stop(graceMs = 30_000): Promise<void> {
    this.#stopping = true;
    this.#wake?.();
    await this.#loop;
    const running = [...this.#jobs.values()];
    const finished = Promise.all(running.map((j) => j.done));
    const timedOut = await Promise.race([finished.then(() => false), new Promise<boolean>((r) => setTimeout(() => r(true), graceMs).unref())]);
    if (timedOut) {
      // A sync or a delivery cannot be interrupted (one ls-remote and one transaction, one request);
      // given back, it runs again elsewhere, which is harmless: each is idempotent. A build is
      // stopped, and starts over elsewhere.
      for (const { job, controller, done } of running) {
        this.#givenBack.add(job.id);
        if (job.task === BUILD_TASK) {
          controller.abort(new Aborted('worker stopping'));
          await done;
          await releaseBuild(this.deps.prisma, Number(job.payload.buildId), this.id);
        }
        await releaseJob(this.deps.prisma, job.id, this.id);
        if (job.task === DELIVER_TASK) await recordReleased(this.deps.prisma, Number(job.payload.deliveryId));
      }
    }
    await this.#listener?.close();
  }
}
