// Traffic and search analytics, counted off the request path (docs/design/analytics.md): the docs
// server and search add to counters in memory, which a timer writes in one statement per kind
// every few seconds (and at shutdown), adding to each day's row. A request never waits for the
// database; a flush that fails is logged and its counts are lost (never retried into a growing
// backlog). Projects that turned analytics off are left out when written, so the request path
// does not look them up. Nothing about the reader is kept: no address, no user, no referrer.
import type { PrismaClient } from '../db/database.ts';
import type { AnalyticsSink } from '../domain/context.ts';
import type { Logger } from '../log.ts';

/** Pending keys of one kind past which a flush starts at once. */
const FLUSH_AT = 5_000;
/** Pending keys of one kind past which new ones are dropped (a flush is slower than what comes in). */
const DROP_AT = 50_000;
const MAX_PATH = 1024;
const MAX_QUERY = 200;

interface View {
  projectId: number;
  versionSlug: string;
  path: string;
  day: string;
  status: number;
  views: number;
}

interface Search {
  projectId: number;
  versionSlug: string;
  query: string;
  day: string;
  searches: number;
  results: number;
}

/** The UTC day of `now`, as PostgreSQL reads a date. */
const dayOf = (now: number) => new Date(now).toISOString().slice(0, 10);

export class AnalyticsRecorder implements AnalyticsSink {
  readonly #prisma: PrismaClient;
  readonly #log: Logger;
  readonly #retentionDays: number;
  readonly #flushMs: number;
  #views = new Map<string, View>();
  #searches = new Map<string, Search>();
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();
  #lastPrune = 0;
  #closed = false;
  /** Today (UTC) as written, and when it ends: worked out once a day, not on every page read. */
  #day = '';
  #dayEnds = 0;
  /** Counts dropped because too many were pending (a sign the database is too slow or away). */
  dropped = 0;

  constructor(prisma: PrismaClient, log: Logger, opts: { retentionDays: number; flushMs?: number }) {
    this.#prisma = prisma;
    this.#log = log;
    this.#retentionDays = opts.retentionDays;
    this.#flushMs = opts.flushMs ?? 5_000;
  }

  pageView(projectId: number, versionSlug: string, path: string, status: number): void {
    if (this.#closed) return;
    const p = path.length > MAX_PATH ? path.slice(0, MAX_PATH) : path;
    const day = this.#today();
    const key = `${projectId}\u0000${versionSlug}\u0000${p}\u0000${day}\u0000${status}`;
    const seen = this.#views.get(key);
    if (seen) seen.views++;
    else if (this.#views.size >= DROP_AT) this.dropped++;
    else this.#views.set(key, { projectId, versionSlug, path: p, day, status, views: 1 });
    this.#schedule(this.#views.size);
  }

  search(projectId: number, versionSlug: string, query: string, results: number): void {
    if (this.#closed) return;
    // One spelling per question: case and runs of spaces do not make another query.
    const q = query.trim().replace(/\s+/g, ' ').toLowerCase().slice(0, MAX_QUERY);
    if (!q) return;
    const day = this.#today();
    const key = `${projectId}\u0000${versionSlug}\u0000${q}\u0000${day}`;
    const seen = this.#searches.get(key);
    if (seen) {
      seen.searches++;
      seen.results = results;
    } else if (this.#searches.size >= DROP_AT) this.dropped++;
    else this.#searches.set(key, { projectId, versionSlug, query: q, day, searches: 1, results });
    this.#schedule(this.#searches.size);
  }

  #today(): string {
    const now = Date.now();
    if (now >= this.#dayEnds) {
      this.#day = dayOf(now);
      this.#dayEnds = (Math.floor(now / 86_400_000) + 1) * 86_400_000;
    }
    return this.#day;
  }

  #schedule(pending: number): void {
    if (pending >= FLUSH_AT) {
      void this.flush();
      return;
    }
    if (this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.flush();
    }, this.#flushMs);
    this.#timer.unref();
  }

  /** Writes what is pending (after any flush under way); resolves when written, or when the write failed (logged). */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const views = [...this.#views.values()];
    const searches = [...this.#searches.values()];
    this.#views = new Map();
    this.#searches = new Map();
    this.#flushing = this.#flushing.then(() => this.#write(views, searches));
    return this.#flushing;
  }

  /** Stops counting and writes what is pending: before the database closes. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.flush();
  }

  async #write(views: View[], searches: Search[]): Promise<void> {
    try {
      if (views.length) {
        await this.#prisma.$executeRaw`
          INSERT INTO "PageViewDaily" ("projectId", "versionSlug", "path", "day", "status", "views")
          SELECT u.* FROM unnest(${views.map((v) => v.projectId)}::int[], ${views.map((v) => v.versionSlug)}::text[], ${views.map((v) => v.path)}::text[],
            ${views.map((v) => v.day)}::date[], ${views.map((v) => v.status)}::int[], ${views.map((v) => v.views)}::int[]) AS u(p, v, path, day, status, views)
          WHERE EXISTS (SELECT 1 FROM "Project" pr WHERE pr."id" = u.p AND NOT pr."analyticsDisabled")
          ON CONFLICT ("projectId", "versionSlug", "path", "day", "status") DO UPDATE SET "views" = "PageViewDaily"."views" + EXCLUDED."views"`;
      }
      if (searches.length) {
        await this.#prisma.$executeRaw`
          INSERT INTO "SearchQueryDaily" ("projectId", "versionSlug", "query", "day", "searches", "results")
          SELECT u.* FROM unnest(${searches.map((s) => s.projectId)}::int[], ${searches.map((s) => s.versionSlug)}::text[], ${searches.map((s) => s.query)}::text[],
            ${searches.map((s) => s.day)}::date[], ${searches.map((s) => s.searches)}::int[], ${searches.map((s) => s.results)}::int[]) AS u(p, v, q, day, n, results)
          WHERE EXISTS (SELECT 1 FROM "Project" pr WHERE pr."id" = u.p AND NOT pr."analyticsDisabled")
          ON CONFLICT ("projectId", "versionSlug", "query", "day") DO UPDATE SET "searches" = "SearchQueryDaily"."searches" + EXCLUDED."searches", "results" = EXCLUDED."results"`;
      }
      await this.#prune();
    } catch (err) {
      this.#log.warn({ err: (err as Error).message, views: views.length, searches: searches.length }, 'analytics could not be written; these counts are lost');
    }
  }

  /** Drops days older than the retention, at most once an hour. */
  async #prune(): Promise<void> {
    if (Date.now() - this.#lastPrune < 3_600_000) return;
    this.#lastPrune = Date.now();
    const before = dayOf(Date.now() - this.#retentionDays * 86_400_000);
    await this.#prisma.$executeRaw`DELETE FROM "PageViewDaily" WHERE "day" < ${before}::date`;
    await this.#prisma.$executeRaw`DELETE FROM "SearchQueryDaily" WHERE "day" < ${before}::date`;
  }
}
