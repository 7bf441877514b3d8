// A build worker: claims builds from the database and runs up to `concurrency` at once, and beside
// them version syncs (queue/version-syncs.ts), up to `versionSync.concurrency`: a sync is short and
// must not wait behind a long build. New builds and syncs wake it at once (LISTEN/NOTIFY on
// PostgreSQL; its app's events on the embedded database, where every build is queued by the app
// of this same process: docs/design/events.md); a slow poll is only a safety net, and a sync
// waiting out its backoff wakes it when due. It renews each job's lease while working, puts back jobs whose worker died, and on stop
// either lets running ones finish or returns them to the queue.

import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { PgListener } from '../db/progress.ts';
import { pruneAudit } from '../domain/audit.ts';
import { sendDelivery } from '../notifications/send.ts';
import { claimBuild, heartbeat, reapExpired, releaseBuild } from '../queue/builds.ts';
import {
  type ClaimedDelivery,
  claimDelivery,
  DEFAULT_DELIVERY_RETRY,
  nextDeliveryDueMs,
  queueFinishedEvents,
  reapExpiredDeliveries,
  recordAttempt,
  releaseDelivery,
} from '../queue/deliveries.ts';
import {
  type ClaimedVersionSync,
  claimVersionSync,
  DEFAULT_SYNC_RETRY,
  describeSyncError,
  failVersionSync,
  finishVersionSync,
  heartbeatVersionSync,
  nextVersionSyncDueMs,
  type RetryPolicy,
  reapExpiredVersionSyncs,
  releaseVersionSync,
  retryDelaySeconds,
} from '../queue/version-syncs.ts';
import { pruneCaches } from './environment.ts';
import { Aborted, type PipelineDeps, runBuild } from './pipeline.ts';
import { removeClosedPreviews } from './previews.ts';

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

export const NOTIFY_CHANNEL = 'lectern_builds';

export class Worker {
  readonly id = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  readonly #running = new Map<number, { controller: AbortController; done: Promise<void> }>();
  /** Version syncs running, by job id. */
  readonly #syncing = new Map<number, Promise<void>>();
  readonly #syncConcurrency: number;
  readonly #retry: RetryPolicy;
  /** Webhook notifications being sent, by delivery id. */
  readonly #delivering = new Map<number, Promise<void>>();
  /** How many of them each project has (the build's project; 0 for a build that is gone). */
  readonly #deliveringByProject = new Map<number, number>();
  readonly #deliveryConcurrency: number;
  readonly #deliveryPerProject: number;
  readonly #deliveryRetry: RetryPolicy;
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
    this.#syncConcurrency = deps.syncVersions ? (opts.versionSync?.concurrency ?? DEFAULT_SYNC_CONCURRENCY) : 0;
    this.#retry = { ...DEFAULT_SYNC_RETRY, ...opts.versionSync?.retry };
    this.#deliveryConcurrency = deps.notify ? (opts.notifications?.concurrency ?? DEFAULT_DELIVERY_CONCURRENCY) : 0;
    this.#deliveryRetry = { ...DEFAULT_DELIVERY_RETRY, ...opts.notifications?.retry };
    this.#deliveryPerProject = Math.max(1, opts.notifications?.perProject ?? deliverySharePerProject(this.#deliveryConcurrency));
  }

  get running(): number[] {
    return [...this.#running.keys()];
  }

  /** Ids of the version sync jobs running. */
  get syncing(): number[] {
    return [...this.#syncing.keys()];
  }

  async start(): Promise<void> {
    const onQueued = () => this.#wake?.();
    // The app's own signals only: another app's builds (in this process too) are not this worker's.
    const { events } = this.deps;
    events.on('buildQueued', onQueued);
    events.on('syncQueued', onQueued);
    events.on('deliveryQueued', onQueued);
    if (this.opts.databaseUrl) {
      // It comes back by itself when the database does; builds queued meanwhile are looked for then.
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
          const { retried, failed } = await reapExpired(this.deps.prisma);
          if (retried.length || failed.length) this.deps.log.warn({ retried, failed }, 'builds whose worker stopped');
          await queueFinishedEvents(this.deps.prisma, this.deps.events, failed, { email: !!this.deps.notify?.email });
          if (this.deps.previewRetentionDays !== undefined) {
            const removed = await removeClosedPreviews(this.deps, this.deps.previewRetentionDays);
            if (removed.length) this.deps.log.info({ removed }, "closed pull requests' previews removed");
          }
          if (this.deps.auditRetentionDays !== undefined) await pruneAudit(this.deps.prisma, this.deps.auditRetentionDays);
          const pruned = await pruneCaches(this.deps.prisma, this.deps.dataDir);
          if (pruned.projects.length || pruned.versions.length) this.deps.log.info(pruned, 'caches of deleted projects and versions removed');
          if (this.#deliveryConcurrency > 0) {
            const lost = await reapExpiredDeliveries(this.deps.prisma, this.#deliveryRetry.maxAttempts);
            if (lost) this.deps.log.warn({ deliveries: lost }, 'notifications whose worker stopped');
          }
          if (this.#syncConcurrency > 0) {
            const syncs = await reapExpiredVersionSyncs(this.deps.prisma, this.#retry.maxAttempts);
            if (syncs.length) this.deps.log.warn({ syncs }, 'version syncs whose worker stopped');
          }
        }
        while (!this.#stopping && this.#running.size < this.opts.concurrency) {
          const build = await claimBuild(this.deps.prisma, this.id, this.#leaseSeconds);
          if (!build) break;
          this.#startBuild(build);
        }
        while (!this.#stopping && this.#syncing.size < this.#syncConcurrency) {
          const job = await claimVersionSync(this.deps.prisma, this.id, this.#leaseSeconds);
          if (!job) {
            // Nothing due: a sync waiting out its backoff wakes the loop when it is due, not at the next poll.
            const due = await nextVersionSyncDueMs(this.deps.prisma);
            if (due !== null && due < poll) setTimeout(wake, due + 5).unref();
            break;
          }
          this.#startSync(job);
        }
        while (!this.#stopping && this.#delivering.size < this.#deliveryConcurrency) {
          const busy = [...this.#deliveringByProject].filter(([, n]) => n >= this.#deliveryPerProject).map(([p]) => p);
          const job = await claimDelivery(this.deps.prisma, this.id, this.#deliveryLeaseSeconds, busy);
          if (!job) {
            const due = await nextDeliveryDueMs(this.deps.prisma, busy);
            if (due !== null && due < poll) setTimeout(wake, due + 5).unref();
            break;
          }
          this.#startDelivery(job);
        }
      } catch (e) {
        this.deps.log.error({ err: e }, 'build worker loop');
      }
      await woken;
    }
  }

  #startBuild(build: Awaited<ReturnType<typeof claimBuild>> & object): void {
    const controller = new AbortController();
    const beat = setInterval(
      () => {
        heartbeat(this.deps.prisma, build.id, this.id, this.#leaseSeconds).then(
          (mine) => {
            if (!mine) controller.abort(new Aborted('lease lost'));
          },
          () => {},
        );
      },
      (this.#leaseSeconds * 1000) / 3,
    );
    this.deps.log.info({ build: build.id, project: build.projectId }, 'build started');
    const done = runBuild(this.deps, build, controller.signal)
      .catch(async (e: unknown) => {
        // Whatever went wrong fails this build, logged, and nothing else: the worker goes on.
        this.deps.log.error({ err: e, build: build.id }, 'build failed to run');
        if (e instanceof Aborted) return;
        const ended = await this.deps.prisma.build
          .updateMany({
            where: { id: build.id, state: { not: 'finished' }, workerId: build.workerId },
            data: {
              state: 'finished',
              success: false,
              error: 'Lectern could not run this build (its log has the details).',
              finishedAt: new Date(),
              leaseExpiresAt: null,
            },
          })
          .catch(() => null);
        if (ended?.count) await queueFinishedEvents(this.deps.prisma, this.deps.events, [build.id], { email: !!this.deps.notify?.email }).catch(() => {});
      })
      .finally(() => {
        clearInterval(beat);
        this.#running.delete(build.id);
        this.deps.log.info({ build: build.id }, 'build ended');
        this.#wake?.();
      });
    this.#running.set(build.id, { controller, done });
  }

  /** A delivery's lease outlasts its attempt's deadline. */
  get #deliveryLeaseSeconds(): number {
    return Math.max(this.#leaseSeconds, (this.deps.notify?.webhooks.timeoutSeconds ?? 10) + 30);
  }

  #startDelivery(job: ClaimedDelivery): void {
    const { prisma, cipher, log } = this.deps;
    const project = job.projectId ?? 0;
    this.#deliveringByProject.set(project, (this.#deliveringByProject.get(project) ?? 0) + 1);
    const retry = this.#deliveryRetry;
    const done = sendDelivery({ prisma, cipher, config: this.deps.notify! }, job)
      .then(async (o) => {
        const delay = retryDelaySeconds(job.attempts, retry);
        const state = await recordAttempt(prisma, job.id, this.id, o, delay, o.terminal ? 0 : retry.maxAttempts);
        // The URL is not logged: a receiver's URL may itself be a secret (Slack's are).
        const fields = { delivery: job.id, webhook: job.webhookId, event: job.event, build: job.buildId, attempt: job.attempts, status: o.statusCode, state };
        if (o.error)
          log.warn(
            { ...fields, error: o.error, ...(state === 'queued' ? { retryInSeconds: Math.round(delay * 10) / 10 } : {}) },
            'webhook notification failed',
          );
        else log.info(fields, 'webhook notification delivered');
      })
      .catch((e: unknown) => log.error({ err: e, delivery: job.id }, 'webhook notification could not be recorded'))
      .finally(() => {
        this.#delivering.delete(job.id);
        const left = (this.#deliveringByProject.get(project) ?? 1) - 1;
        if (left > 0) this.#deliveringByProject.set(project, left);
        else this.#deliveringByProject.delete(project);
        this.#wake?.();
      });
    this.#delivering.set(job.id, done);
  }

  #startSync(job: ClaimedVersionSync): void {
    const { prisma, log } = this.deps;
    const beat = setInterval(
      () => {
        heartbeatVersionSync(prisma, job.id, this.id, this.#leaseSeconds).catch(() => {});
      },
      (this.#leaseSeconds * 1000) / 3,
    );
    const done = this.deps.syncVersions!(job.projectId, job.repositoryUrl)
      .then(
        async (result) => {
          const { added, removed } = (result ?? {}) as { added?: string[]; removed?: string[] };
          log.info({ project: job.projectId, added, removed, attempt: job.attempts }, 'versions synced');
          await finishVersionSync(prisma, job.id, this.id);
        },
        async (e: unknown) => {
          // The message with any credentials of the repository URL masked: it is stored and logged.
          const error = describeSyncError(e);
          const delay = retryDelaySeconds(job.attempts, this.#retry);
          const after = await failVersionSync(prisma, job.id, this.id, error, delay, this.#retry.maxAttempts);
          const retry = after?.state === 'queued' ? { retryInSeconds: Math.round(delay * 10) / 10 } : {};
          log.warn({ project: job.projectId, attempt: job.attempts, state: after?.state, ...retry, error }, 'version sync failed');
        },
      )
      .catch((e: unknown) => log.error({ err: e, sync: job.id }, 'version sync could not be recorded'))
      .finally(() => {
        clearInterval(beat);
        this.#syncing.delete(job.id);
        this.#wake?.();
      });
    this.#syncing.set(job.id, done);
  }

  /**
   * Stops claiming. Running builds and syncs get `graceMs` to finish; those still running then
   * are aborted (builds) and given back to the queue, so another worker runs them.
   */
  async stop(graceMs = 30_000): Promise<void> {
    this.#stopping = true;
    this.#wake?.();
    await this.#loop;
    const all = [...this.#running.entries()];
    const finished = Promise.all([...all.map(([, r]) => r.done), ...this.#syncing.values(), ...this.#delivering.values()]);
    const timedOut = await Promise.race([finished.then(() => false), new Promise<boolean>((r) => setTimeout(() => r(true), graceMs).unref())]);
    if (timedOut) {
      for (const [id, r] of this.#running) {
        r.controller.abort(new Aborted('worker stopping'));
        await r.done;
        await releaseBuild(this.deps.prisma, id, this.id);
      }
      // A sync cannot be interrupted (it is one ls-remote and one transaction); given back, it runs
      // again elsewhere, which is harmless: a sync is idempotent.
      for (const id of this.#syncing.keys()) await releaseVersionSync(this.deps.prisma, id, this.id);
      for (const id of this.#delivering.keys()) await releaseDelivery(this.deps.prisma, id, this.id);
    }
    await this.#listener?.close();
  }
}
