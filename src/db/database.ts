// One code path, two databases: an embedded PostgreSQL (PGlite) in the data dir when nothing is
// configured, a PostgreSQL server when DATABASE_URL is set. Both are opened here, migrated, and
// handed out as one Prisma client.
// @see docs/design/settings.md "Database"
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
// Each database's driver is loaded when that database is opened (import()): a command on the
// embedded database loads no PostgreSQL client, and one on PostgreSQL no PGlite
// (docs/design/startup.md).
import type { PGlite } from '@electric-sql/pglite';
import type { SqlDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import type pg from 'pg';
import { wholeBuffer } from '../bytes.ts';
import type { PrismaClient } from '../generated/prisma/client.ts';
import { lockDataDir } from './lock.ts';
import { migrate, pendingMigrations, readMigrations, type SqlRunner } from './migrate.ts';
import { copyTemplate, ensureTemplate, isEmptyDir } from './template.ts';
import { pgliteFile, prestartPGliteThread, startThreadedPGlite, type ThreadedPGlite } from './threaded-pglite.ts';

export type { PrismaClient };

export interface Database {
  kind: 'embedded' | 'postgres';
  prisma: PrismaClient;
  /** Migrations this open applied (empty when it did not migrate, or nothing was pending). */
  applied: string[];
  /** Migration names not yet applied; empty when the schema is current. */
  pending(): Promise<string[]>;
  close(): Promise<void>;
}

export interface OpenOptions {
  dataDir: string;
  databaseUrl?: string;
  /** Apply pending migrations before returning (default true). */
  migrate?: boolean;
  /** Called with every SQL statement sent, for tests that count queries. */
  onQuery?: (sql: string) => void;
  /**
   * Longest one statement of the Prisma client may run, ms (LECTERN_DB_STATEMENT_TIMEOUT_MS);
   * 0: no limit. Default 10 s. Migrations run without it.
   */
  statementTimeoutMs?: number;
  /**
   * A process that opens the database, runs a few statements and exits (the command line): PGlite
   * starts with 2 MB of shared buffers instead of 16 (docs/design/startup.md).
   */
  shortLived?: boolean;
  /**
   * PGlite runs on a worker thread, started before Prisma's modules load on this one, so the two
   * starts overlap (src/db/threaded-pglite.ts, docs/design/startup.md). The command line's.
   */
  thread?: boolean;
}

export const DEFAULT_STATEMENT_TIMEOUT_MS = 10_000;

/** Connections of the PostgreSQL pool; statements outside transactions use at most two fewer, fairly. */
const PG_POOL_SIZE = 10;

/**
 * The PostgreSQL adapter with statements outside transactions taking fair turns between requests
 * (FairTurns), at most PG_POOL_SIZE - 2 at once, so one request's hundreds of lookups don't fill
 * the pool's queue ahead of everyone else's. Transactions take their connection as before.
 */
function fairPg(factory: SqlDriverAdapterFactory): SqlDriverAdapterFactory {
  const fair = new FairTurns(PG_POOL_SIZE - 2, undefined, { handBackOnePerTurn: true });
  return aroundStatements(factory, (run) => fair.run(run), { inTransactions: false });
}

/** Wraps a driver adapter factory so every statement is reported before it runs. */
function observe(factory: SqlDriverAdapterFactory, onQuery: (sql: string) => void): SqlDriverAdapterFactory {
  return aroundStatements(
    factory,
    (run, query) => {
      onQuery(query.sql);
      return run();
    },
    { inTransactions: true },
  );
}

/**
 * The adapter factory with `around` wrapped about each statement (`queryRaw`/`executeRaw`) of the
 * adapters it connects, and of their transactions too when `inTransactions`.
 */
function aroundStatements(
  factory: SqlDriverAdapterFactory,
  around: (run: () => Promise<unknown>, query: { sql: string }) => Promise<unknown>,
  o: { inTransactions: boolean },
): SqlDriverAdapterFactory {
  const wrap = <T extends object>(q: T): T =>
    new Proxy(q, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        if (prop === 'queryRaw' || prop === 'executeRaw') return (query: { sql: string }) => around(() => value.call(target, query), query);
        if (prop === 'startTransaction' && o.inTransactions) return async (...args: unknown[]) => wrap(await value.apply(target, args));
        return value.bind(target);
      },
    });
  return new Proxy(factory, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop === 'connect') return async () => wrap(await value.call(target));
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Who a statement is for: the app runs each HTTP request in a store of its own
 * (`dbOwner.run({}, next)`), and statements take turns fairly between owners (FairTurns, on both
 * databases). Work outside any request (builds, the queue) shares one owner.
 */
export const dbOwner = new AsyncLocalStorage<object>();
const NO_OWNER = {};

/**
 * The PGlite instance as the Prisma adapter sees it, taking turns with the rest of the process.
 * PGlite runs each statement synchronously on this thread and resolves through promises only, so
 * a queue of statements (one operation's many lookups) would run back to back without the event
 * loop ever reading a socket: /healthz and docs would wait for all of it. Here statements outside
 * a transaction run one at a time, each in a turn of its own (after a setImmediate, so pending I/O
 * is handled between any two); a transaction's statements (PGlite holds the database for the
 * transaction anyway) each wait for a turn too, without queueing behind the others.
 * The adapter calls exactly `query`, `exec` and `transaction` (whose `tx` it calls `query` and
 * `rollback` on).
 */
/** `tx.query`/`tx.exec`, each after a turn of the event loop. */
function turnThen<T extends { query: PGlite['query']; exec: PGlite['exec'] }>(tx: T, prop: 'query' | 'exec') {
  return async (...args: unknown[]) => {
    await nextTurn();
    return (tx[prop] as (...a: unknown[]) => Promise<unknown>)(...args);
  };
}

/** Items waiting in one line per owner, taken from the lines round-robin. */
class RoundRobin<T> {
  readonly #lines = new Map<unknown, T[]>();
  readonly #order: unknown[] = [];

  push(owner: unknown, item: T): void {
    let line = this.#lines.get(owner);
    if (!line) {
      line = [];
      this.#lines.set(owner, line);
      this.#order.push(owner);
    }
    line.push(item);
  }

  /** The next owner's first item (that owner goes to the back); undefined when none waits. */
  take(): T | undefined {
    const owner = this.#order.shift();
    if (owner === undefined) return undefined;
    const line = this.#lines.get(owner)!;
    const item = line.shift()!;
    if (line.length) this.#order.push(owner);
    else this.#lines.delete(owner);
    return item;
  }

  get empty(): boolean {
    return this.#order.length === 0;
  }
}

/**
 * Fair turns between owners (HTTP requests, see dbOwner): each owner has its own line, and the
 * lines are served round-robin, at most `concurrency` statements at once. A docs lookup behind an
 * operation of hundreds of lookups waits for one statement of each other request, not all of theirs.
 */
export class FairTurns {
  readonly #waiting = new RoundRobin<() => void>();
  #running = 0;
  readonly #handBack: HandBack | null;
  private readonly concurrency: number;
  /** How a turn starts (PGlite: after a setImmediate, so pending I/O runs between two statements). */
  private readonly begin: (start: () => void) => void;
  constructor(
    concurrency: number,
    begin: (start: () => void) => void = (start) => start(),
    /**
     * Results handed back one per turn of the event loop (PostgreSQL): the work a result resumes
     * (Prisma reading the rows, GraphQL resolving the fields they feed) runs between two reads of
     * the sockets, instead of several connections' results and all they resume in one turn.
     */
    o: { handBackOnePerTurn?: boolean } = {},
  ) {
    this.concurrency = concurrency;
    this.begin = begin;
    this.#handBack = o.handBackOnePerTurn ? new HandBack() : null;
  }

  run<T>(fn: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const owner = dbOwner.getStore() ?? NO_OWNER;
      const settle = this.#handBack ? (then: () => void) => this.#handBack!.add(owner, then) : (then: () => void) => then();
      const start = () => {
        let result: Promise<T>;
        try {
          result = fn();
        } catch (e) {
          result = Promise.reject(e);
        }
        result
          .then(
            (v) => settle(() => resolve(v)),
            (e) => settle(() => reject(e)),
          )
          .finally(() => {
            this.#running--;
            this.#pump();
          });
      };
      this.#waiting.push(owner, start);
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#running < this.concurrency) {
      const start = this.#waiting.take();
      if (start === undefined) return;
      this.#running++;
      this.begin(start);
    }
  }
}

/**
 * Settles waiting statements one per turn of the event loop (each in a setImmediate scheduled by
 * the one before, so I/O is polled between any two), owners round-robin.
 */
class HandBack {
  readonly #waiting = new RoundRobin<() => void>();
  #scheduled = false;

  add(owner: unknown, then: () => void): void {
    this.#waiting.push(owner, then);
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#next);
    }
  }

  readonly #next = (): void => {
    this.#waiting.take()?.();
    if (!this.#waiting.empty) setImmediate(this.#next);
    else this.#scheduled = false;
  };
}

function takingTurns(db: PGlite): PGlite {
  const fair = new FairTurns(1, (start) => setImmediate(start));
  const inTurn = <T>(fn: () => Promise<T>): Promise<T> => fair.run(fn);
  const turns = {
    query: (...args: Parameters<PGlite['query']>) => inTurn(() => db.query(...args)),
    exec: (...args: Parameters<PGlite['exec']>) => inTurn(() => db.exec(...args)),
    transaction: <T>(fn: (tx: Parameters<Parameters<PGlite['transaction']>[0]>[0]) => Promise<T>) =>
      db.transaction((tx) => fn(new Proxy(tx, { get: (t, prop) => (prop === 'query' || prop === 'exec' ? turnThen(t, prop) : Reflect.get(t, prop)) }))),
  };
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop in turns) return turns[prop as keyof typeof turns];
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

function pgliteRunner(db: PGlite): SqlRunner {
  return {
    exec: async (sql) => {
      await db.exec(sql);
    },
    query: async <T>(sql: string) => (await db.query<T>(sql)).rows,
  };
}

function pgRunner(client: pg.Client): SqlRunner {
  return {
    exec: async (sql) => {
      await client.query(sql);
    },
    query: async <T>(sql: string) => (await client.query(sql)).rows as T[],
  };
}

/**
 * PostgreSQL's shared buffers in PGlite. Its default, 128 MB, is zeroed by WebAssembly code at
 * every start: about 1.4 s of CPU, most of what a command line waited for. Pages not in them are
 * read from the OS's page cache, a copy away. docs/design/startup.md has the figures.
 */
const PGLITE_SHARED_BUFFERS = '16MB';
/** A short-lived process's: zeroing them took 0.14 s of the 16 MB's 0.15 s. */
const PGLITE_SHARED_BUFFERS_SHORT = '2MB';

/**
 * The rest of PostgreSQL's shared memory, sized for what PGlite runs: one backend (PostgreSQL's
 * single-user mode) and no replication. The defaults (100 connections, 10 WAL senders and
 * replication slots) sized 7 MB beside the buffers, zeroed at every start like them; these, 3 MB.
 * The lock table shrinks with them: one transaction can still create 1,475 tables with their
 * indexes (2,049 with a server's buffers; 3,000 and 2,568 before), and Lectern's largest, a
 * migration, creates a few dozen.
 */
const PGLITE_ONE_BACKEND = ['max_connections=1', 'max_wal_senders=0', 'max_replication_slots=0'];

/** What Lectern adds to PGlite's default start parameters: its shared memory. */
function extraStartParams(shortLived: boolean): string[] {
  const settings = [`shared_buffers=${shortLived ? PGLITE_SHARED_BUFFERS_SHORT : PGLITE_SHARED_BUFFERS}`, ...PGLITE_ONE_BACKEND];
  return settings.flatMap((setting) => ['-c', setting]);
}

/** What PGlite.create would read and compile first: its WebAssembly, compiled, and its file bundle. */
interface PGliteArtifacts {
  pgliteWasmModule: WebAssembly.Module;
  fsBundle: { arrayBuffer(): Promise<ArrayBuffer> };
}

/**
 * PGlite's WebAssembly compiled and its file bundle read, begun before a new data dir's template
 * is copied: V8 compiles on its own threads meanwhile (docs/design/startup.md, "PGlite compiled
 * during the copy"). Undefined where they cannot be read: PGlite.create reads them itself.
 */
async function pgliteArtifacts(): Promise<PGliteArtifacts | undefined> {
  try {
    const [wasm, data] = await Promise.all([readFile(pgliteFile('pglite.wasm')), readFile(pgliteFile('pglite.data'))]);
    const pgliteWasmModule = await WebAssembly.compile(wasm);
    const buffer = wholeBuffer(data);
    return { pgliteWasmModule, fsBundle: { arrayBuffer: async () => buffer } };
  } catch {
    return undefined;
  }
}

/** A PGlite on the data dir `dir` (made there, by initdb, when it holds none). */
async function createPGlite(dir: string, shortLived = false, artifacts?: Promise<PGliteArtifacts | undefined>): Promise<PGlite> {
  const [{ PGlite }, ready] = await Promise.all([import('@electric-sql/pglite'), artifacts]);
  return PGlite.create(dir, { ...(ready as object), startParams: [...PGlite.defaultStartParams, ...extraStartParams(shortLived)] });
}

/**
 * The PGlite the embedded database runs on: on a worker thread when `opts.thread` (what the
 * adapter calls of it, PGlite's own API), returned at once with `started` to wait on; else in this
 * thread, returned once it runs.
 */
async function startPGlite(dir: string, opts: OpenOptions, artifacts?: Promise<PGliteArtifacts | undefined>): Promise<{ db: PGlite; started: Promise<void> }> {
  if (!opts.thread) return { db: await createPGlite(dir, opts.shortLived, artifacts), started: Promise.resolve() };
  const db = startThreadedPGlite(dir, extraStartParams(opts.shortLived ?? false));
  return { db: db as unknown as PGlite, started: db.started };
}

/**
 * Fills the empty PGlite data dir `dir` with a copy of the migrated template (made first when there
 * is none: src/db/template.ts, docs/design/startup.md); returns the migrations the copy brought.
 * Without a template (node_modules not writable, say), nothing is copied: [] and `dir` still empty.
 */
async function fromTemplate(dir: string): Promise<string[]> {
  try {
    const migrations = await readMigrations();
    const template = await ensureTemplate(migrations, async (tmp) => {
      const db = await createPGlite(tmp);
      try {
        await migrate(pgliteRunner(db), migrations);
        await dropTemplateDatabases(db);
      } finally {
        await db.close();
      }
    });
    copyTemplate(template, dir);
    return migrations.map((m) => m.name);
  } catch {
    return [];
  }
}

/**
 * Drops initdb's template0 and template1 from the template: PostgreSQL copies them for CREATE
 * DATABASE, which the embedded database never runs (it is one database, Lectern's), and they were
 * half the template's files, 600 of 1,183, each copied into every new data dir
 * (docs/design/startup.md, "A smaller template").
 */
async function dropTemplateDatabases(db: PGlite): Promise<void> {
  for (const name of ['template0', 'template1']) {
    await db.exec(`ALTER DATABASE ${name} IS_TEMPLATE false`);
    await db.exec(`DROP DATABASE ${name}`);
  }
  await db.exec('CHECKPOINT');
}

/** PGlite started by startEmbeddedEarly, with the data dir's lock, until openDatabase takes both. */
let early: { dataDir: string; db: ThreadedPGlite; release: () => void } | undefined;

/**
 * Starts PostgreSQL on an existing embedded data dir now, on PGlite's thread, for a command that
 * will open it with `{ shortLived: true, thread: true }`: the command line calls this first thing,
 * before its configuration and modules load, and openDatabase then takes the running PGlite
 * (docs/design/startup.md, "PostgreSQL started before the configuration"). The data dir's lock is
 * taken first, so no server can open it meanwhile; it is released when the process exits, if
 * nothing took it. On a new or held data dir it only starts the thread.
 */
export function startEmbeddedEarly(dataDir: string): void {
  const dir = path.join(dataDir, 'db');
  // A new data dir is a copy of the template first (openDatabase); one held by another process is its.
  const release = isEmptyDirOrUnreadable(dir) ? undefined : lockOrUndefined(dataDir);
  if (!release) {
    prestartPGliteThread();
    return;
  }
  early = { dataDir: path.resolve(dataDir), db: startThreadedPGlite(dir, extraStartParams(true)), release };
  process.once('exit', () => early?.release());
}

function isEmptyDirOrUnreadable(dir: string): boolean {
  try {
    return isEmptyDir(dir);
  } catch {
    return true;
  }
}

/** The data dir's lock, or undefined where another process holds it (or it can't be taken). */
function lockOrUndefined(dataDir: string): (() => void) | undefined {
  try {
    return lockDataDir(dataDir);
  } catch {
    return undefined;
  }
}

/** The PGlite startEmbeddedEarly started, when it is on `opts`' data dir and started as `opts` asks; any other is closed. */
async function takeEarly(opts: OpenOptions): Promise<typeof early> {
  const taken = early;
  early = undefined;
  if (!taken) return undefined;
  if (opts.thread && opts.shortLived && taken.dataDir === path.resolve(opts.dataDir)) return taken;
  await taken.db.close().catch(() => {});
  taken.release();
  return undefined;
}

export async function openDatabase(opts: OpenOptions): Promise<Database> {
  return opts.databaseUrl ? openPostgres(opts.databaseUrl, opts) : openEmbedded(opts);
}

/** The PostgreSQL server at `url`: migrated on one connection of its own, then queried through a pool. */
async function openPostgres(url: string, opts: OpenOptions): Promise<Database> {
  const [{ default: pg }, { PrismaPg }, { PrismaClient }] = await Promise.all([
    import('pg'),
    import('@prisma/adapter-pg'),
    import('../generated/prisma/client.ts'),
  ]);
  const withClient = async <T>(fn: (r: SqlRunner) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return await fn(pgRunner(client));
    } finally {
      await client.end();
    }
  };
  const applied = (opts.migrate ?? true) ? await withClient((r) => migrate(r)) : [];
  // Sent as a startup parameter of every pooled connection: PostgreSQL cancels a statement that
  // runs longer (SQLSTATE 57014, `canceling statement due to statement timeout`).
  const timeout = opts.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  let adapter: SqlDriverAdapterFactory = fairPg(
    new PrismaPg({ connectionString: url, max: PG_POOL_SIZE, ...(timeout > 0 ? { statement_timeout: timeout } : {}) }),
  );
  if (opts.onQuery) adapter = observe(adapter, opts.onQuery);
  const prisma = new PrismaClient({ adapter });
  return {
    kind: 'postgres',
    prisma,
    applied,
    pending: () => withClient((r) => pendingMigrations(r)),
    close: () => prisma.$disconnect(),
  };
}

/** The embedded database of `opts.dataDir` (PGlite), with the data dir's lock held until it closes. */
async function openEmbedded(opts: OpenOptions): Promise<Database> {
  const shouldMigrate = opts.migrate ?? true;
  const taken = await takeEarly(opts);
  const release = taken?.release ?? lockDataDir(opts.dataDir);
  let opened: PGlite | undefined = taken?.db as unknown as PGlite | undefined;
  try {
    const dir = path.join(opts.dataDir, 'db');
    const artifacts = taken || opts.thread ? undefined : pgliteArtifacts();
    // A new database is a copy of the template, its migrations applied: they count as applied here.
    const copied = !taken && shouldMigrate && isEmptyDir(dir) ? await fromTemplate(dir) : [];
    mkdirSync(dir, { recursive: true });
    // PGlite starts (on its thread, where opts.thread) while Prisma's modules load; or started already.
    const starting = taken
      ? Promise.resolve({ db: taken.db as unknown as PGlite, started: taken.db.started })
      : startPGlite(dir, opts, artifacts).then((p) => ((opened = p.db), p));
    const [{ db, started }, { PrismaPGlite }, { PrismaClient }] = await Promise.all([
      starting,
      import('pglite-prisma-adapter'),
      import('../generated/prisma/client.ts'),
    ]);
    const runner = pgliteRunner(db);
    // PGlite (PostgreSQL compiled to WASM) has no timer interrupts: `statement_timeout` is accepted
    // and never fires, so none is set here (see README: the limit applies to PostgreSQL).
    let adapter: SqlDriverAdapterFactory = new PrismaPGlite(takingTurns(db)) as unknown as SqlDriverAdapterFactory;
    if (opts.onQuery) adapter = observe(adapter, opts.onQuery);
    const prisma = new PrismaClient({ adapter });
    // On a thread, Prisma loads its query compiler (connect runs no statement) while PostgreSQL
    // starts there; in this thread, PGlite already runs, and the first query loads it.
    const connected = opts.thread ? prisma.$connect() : undefined;
    const migrated = started.then(async () => (shouldMigrate ? [...copied, ...(await migrate(runner))] : []));
    const [applied] = await Promise.all([migrated, connected]);
    return {
      kind: 'embedded',
      prisma,
      applied,
      pending: () => pendingMigrations(runner),
      close: async () => {
        await prisma.$disconnect();
        await db.close();
        release();
      },
    };
  } catch (e) {
    // Close before releasing: the lock must not be free while this PGlite still has the files open.
    await opened?.close().catch(() => {});
    release();
    throw e;
  }
}
