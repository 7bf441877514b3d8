// A build worker: claims builds from the database and runs up to `concurrency` at once. New
// builds wake it at once (LISTEN/NOTIFY on PostgreSQL; the in-process event on the embedded
// database, where every build is queued by this same process); a slow poll is only a safety net.
// It renews each build's lease while working, puts back builds whose worker died, and on stop
// either lets running builds finish or returns them to the queue.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { events } from '../domain/events.ts';
import { Aborted, runBuild, type PipelineDeps } from './pipeline.ts';
import { PgListener } from './record.ts';
import { claimBuild, heartbeat, reapExpired, releaseBuild } from './queue.ts';

export interface WorkerOptions {
  concurrency: number;
  /** Lease length; heartbeats renew it every third of it. */
  leaseSeconds?: number;
  /** PostgreSQL URL to LISTEN on; without it the worker relies on in-process events. */
  databaseUrl?: string;
  pollMs?: number;
}

export const NOTIFY_CHANNEL = 'lectern_builds';

export class Worker {
  readonly id = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  readonly #running = new Map<number, { controller: AbortController; done: Promise<void> }>();
  #stopping = false;
  #wake: (() => void) | null = null;
  #listener: PgListener | null = null;
  #loop: Promise<void> | null = null;
  readonly #leaseSeconds: number;

  constructor(
    private readonly deps: PipelineDeps,
    private readonly opts: WorkerOptions,
  ) {
    this.#leaseSeconds = opts.leaseSeconds ?? 60;
  }

  get running(): number[] {
    return [...this.#running.keys()];
  }

  async start(): Promise<void> {
    const onQueued = () => this.#wake?.();
    events.on('buildQueued', onQueued);
    if (this.opts.databaseUrl) {
      // It comes back by itself when the database does; builds queued meanwhile are looked for then.
      this.#listener = new PgListener(this.opts.databaseUrl, NOTIFY_CHANNEL, { log: this.deps.log, onNotify: onQueued, onReconnect: onQueued });
      await this.#listener.ready;
    }
    this.#loop = this.#run().finally(() => events.off('buildQueued', onQueued));
  }

  async #run(): Promise<void> {
    // Expired leases are looked for at least twice per lease length, even when nothing wakes the loop.
    const poll = Math.min(this.opts.pollMs ?? 15_000, (this.#leaseSeconds * 1000) / 2);
    let lastReap = 0;
    while (!this.#stopping) {
      const woken = new Promise<void>((resolve) => {
        this.#wake = resolve;
        setTimeout(resolve, poll).unref();
      });
      try {
        if (Date.now() - lastReap > (this.#leaseSeconds * 1000) / 2) {
          lastReap = Date.now();
          const { retried, failed } = await reapExpired(this.deps.prisma);
          if (retried.length || failed.length) this.deps.log.warn({ retried, failed }, 'builds whose worker stopped');
        }
        while (!this.#stopping && this.#running.size < this.opts.concurrency) {
          const build = await claimBuild(this.deps.prisma, this.id, this.#leaseSeconds);
          if (!build) break;
          this.#startBuild(build);
        }
      } catch (e) {
        this.deps.log.error({ err: e }, 'build worker loop');
      }
      await woken;
    }
  }

  #startBuild(build: Awaited<ReturnType<typeof claimBuild>> & object): void {
    const controller = new AbortController();
    const beat = setInterval(() => {
      heartbeat(this.deps.prisma, build.id, this.id, this.#leaseSeconds).then(
        (mine) => {
          if (!mine) controller.abort(new Aborted('lease lost'));
        },
        () => {},
      );
    }, (this.#leaseSeconds * 1000) / 3);
    this.deps.log.info({ build: build.id, project: build.projectId }, 'build started');
    const done = runBuild(this.deps, build, controller.signal)
      .catch(async (e: unknown) => {
        // Whatever went wrong fails this build, logged, and nothing else: the worker goes on.
        this.deps.log.error({ err: e, build: build.id }, 'build failed to run');
        if (e instanceof Aborted) return;
        await this.deps.prisma.build
          .updateMany({
            where: { id: build.id, state: { not: 'finished' }, workerId: build.workerId },
            data: { state: 'finished', success: false, error: 'Lectern could not run this build (its log has the details).', finishedAt: new Date(), leaseExpiresAt: null },
          })
          .catch(() => {});
      })
      .finally(() => {
        clearInterval(beat);
        this.#running.delete(build.id);
        this.deps.log.info({ build: build.id }, 'build ended');
        this.#wake?.();
      });
    this.#running.set(build.id, { controller, done });
  }

  /**
   * Stops claiming. Running builds get `graceMs` to finish; those still running then are
   * aborted and given back to the queue, so another worker builds them.
   */
  async stop(graceMs = 30_000): Promise<void> {
    this.#stopping = true;
    this.#wake?.();
    await this.#loop;
    const all = [...this.#running.entries()];
    const finished = Promise.all(all.map(([, r]) => r.done));
    const timedOut = await Promise.race([finished.then(() => false), new Promise<boolean>((r) => setTimeout(() => r(true), graceMs).unref())]);
    if (timedOut) {
      for (const [id, r] of this.#running) {
        r.controller.abort(new Aborted('worker stopping'));
        await r.done;
        await releaseBuild(this.deps.prisma, id, this.id);
      }
    }
    await this.#listener?.close();
  }
}
