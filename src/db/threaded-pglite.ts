// PGlite on a thread of its own (docs/design/startup.md, "PGlite on a thread of its own"). PGlite
// runs PostgreSQL's WebAssembly on the thread that made it, and its start (0.5-0.6 s: the
// WebAssembly instantiated, its file bundle unpacked, `postgres` started) is CPU work that keeps
// that thread busy. The command line's database commands start it on a worker thread first, and
// load Prisma and the command's modules on the main thread meanwhile: on two cores the two halves
// of a command's start run side by side instead of one after the other.
//
// `startThreadedPGlite` returns what the Prisma adapter and the migration runner call of a PGlite:
// `query`, `exec`, `transaction` (its `tx`: `query`, `exec`, `rollback`, `closed`) and `close`.
// Each is a message to the thread (src/db/pglite-thread.js); values cross as structured clones.
// The functions of a query's `parsers` cannot cross: the thread sends those types' values as
// PostgreSQL's text, and they are parsed here by the same functions, as PGlite would have.
// A PostgreSQL error comes back as PGlite's own DatabaseError, with its code, detail and
// constraint, so the adapter maps it as it maps the in-process one (a unique violation is P2002).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { PGlite, Results, Transaction } from '@electric-sql/pglite';
import { wholeBuffer } from '../bytes.ts';

type QueryOptions = NonNullable<Parameters<PGlite['query']>[2]>;
type Parser = (text: string, typeId: number) => unknown;

interface ErrorData {
  database: boolean;
  message: string;
  [field: string]: unknown;
}

type Reply = { id: number; result: unknown; error?: undefined } | { id: number; error: ErrorData };

/** The thread started by prestartPGliteThread, not yet given a data dir. */
let prestarted: Worker | undefined;

/**
 * Starts PGlite's thread before the data dir is known (the command line does, first thing): it
 * loads PGlite while this thread loads the rest, and startThreadedPGlite then uses it. Unused, it
 * keeps no process alive.
 */
export function prestartPGliteThread(): void {
  prestarted ??= spawn();
  prestarted.unref();
}

/** A file of PGlite's beside its modules: its WebAssembly (`pglite.wasm`), its file bundle (`pglite.data`, the files PostgreSQL reads). */
export function pgliteFile(name: 'pglite.wasm' | 'pglite.data'): string {
  return fileURLToPath(new URL(name, import.meta.resolve('@electric-sql/pglite')));
}

/**
 * A new thread for PGlite, sent PGlite's WebAssembly, compiled here, and its file bundle, read
 * here, while it starts: a thread's start (a Node environment, then PGlite's modules) takes about
 * as long, and they are then off its path to a running PostgreSQL. Where they can't be read, the
 * thread's PGlite reads them itself.
 */
function spawn(): Worker {
  const worker = new Worker(new URL('./pglite-thread.js', import.meta.url));
  try {
    const wasm = new WebAssembly.Module(readFileSync(pgliteFile('pglite.wasm')));
    const buffer = wholeBuffer(readFileSync(pgliteFile('pglite.data')));
    worker.postMessage({ artifacts: { wasm, data: buffer } }, [buffer]);
  } catch {
    worker.postMessage({ artifacts: null });
  }
  return worker;
}

/** What of a PGlite the adapter and the migration runner use, run on a worker thread. */
export type ThreadedPGlite = Pick<PGlite, 'query' | 'exec' | 'transaction' | 'close'> & {
  /** Resolves once PostgreSQL runs on the thread; rejects with its error when it cannot start (the thread is then gone). */
  started: Promise<void>;
};

/**
 * Starts PGlite on `dir`, with `startParams` after its default ones, on a worker thread, and
 * returns at once: what is asked of it before PostgreSQL runs waits for it (so Prisma can load its
 * query compiler meanwhile, which needs no statement).
 */
export function startThreadedPGlite(dir: string, startParams: string[]): ThreadedPGlite {
  const worker = prestarted ?? spawn();
  prestarted = undefined;
  worker.ref();
  worker.postMessage({ start: { dir, startParams } });
  const thread = new PGliteThread(worker);
  return {
    started: thread.started,
    query: ((sql: string, params?: unknown[], options?: QueryOptions) => thread.query(sql, params, options)) as PGlite['query'],
    exec: ((sql: string) => thread.exec(sql)) as PGlite['exec'],
    transaction: (<T>(callback: (tx: Transaction) => Promise<T>) => thread.transaction(callback)) as PGlite['transaction'],
    close: () => thread.close(),
  };
}

/** The requests to PGlite's thread and their answers. */
class PGliteThread {
  readonly started: Promise<void>;
  readonly #worker: Worker;
  readonly #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  #nextId = 1;
  #failed: Error | null = null;
  /** Called with the first message (whether PostgreSQL started), or the thread's death before it. */
  #onStart?: (e?: ErrorData | Error) => void;
  #toError = (data: ErrorData): Error => new Error(data.message);

  constructor(worker: Worker) {
    this.#worker = worker;
    const ready = new Promise<ErrorData | Error | undefined>((resolve) => (this.#onStart = resolve));
    worker.on('message', (m: Reply | { ready: boolean; error?: ErrorData }) => this.#answer(m));
    // A thread that dies (out of memory, a crash in PostgreSQL) fails what waits on it, and all after.
    worker.on('error', (e) => this.#fail(e));
    worker.on('exit', (code) => this.#fail(new Error(`PGlite's thread exited (code ${code})`)));
    // PGlite's DatabaseError is made here for the errors the thread sends: its module loads meanwhile.
    this.started = Promise.all([import('@electric-sql/pglite'), ready]).then(async ([{ messages }, error]) => {
      this.#onStart = undefined;
      this.#toError = (data) => {
        if (!data.database) return new Error(data.message);
        const { database: _, message, length, name, ...fields } = data;
        return Object.assign(new messages.DatabaseError(message, Number(length ?? 0), name as never), fields);
      };
      if (error) {
        this.#failed = error instanceof Error ? error : this.#toError(error);
        await worker.terminate();
        throw this.#failed;
      }
    });
    this.started.catch(() => {}); // a failed start is seen by whoever awaits `started` or sends
  }

  #answer(m: Reply | { ready: boolean; error?: ErrorData }): void {
    if ('ready' in m) {
      this.#onStart?.(m.error);
      return;
    }
    const p = this.#pending.get(m.id);
    this.#pending.delete(m.id);
    if (m.error) p?.reject(this.#toError(m.error));
    else p?.resolve(m.result);
  }

  #fail(e: Error): void {
    this.#failed ??= e;
    this.#onStart?.(e);
    for (const p of this.#pending.values()) p.reject(e);
    this.#pending.clear();
  }

  /** Sends `message` once PostgreSQL runs (in the order sent); resolves with its answer. `id`: the id it goes with. */
  #send<T>(message: Record<string, unknown>, id = this.#nextId++): Promise<T> {
    return this.started.then(() => {
      if (this.#failed) throw this.#failed;
      return new Promise<T>((resolve, reject) => {
        this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        this.#worker.postMessage({ id, ...message });
      });
    });
  }

  async query<T>(sql: string, params?: unknown[], options?: QueryOptions, tx?: number): Promise<Results<T>> {
    const parsers = (options?.parsers ?? {}) as unknown as Record<string, Parser>;
    const raw = Object.keys(parsers).map(Number);
    const r = await this.#send<Results<T>>({ op: 'query', sql, params: params ?? [], rowMode: options?.rowMode, raw, tx });
    if (raw.length) parseRaw(r, parsers);
    return r;
  }

  exec(sql: string, tx?: number): Promise<Results[]> {
    return this.#send<Results[]>({ op: 'exec', sql, tx });
  }

  /** PGlite's own transaction on the thread, held open between `begin` and `commit` or `rollback`. */
  async transaction<T>(callback: (tx: Transaction) => Promise<T>): Promise<T> {
    const id = this.#nextId++;
    await this.#send({ op: 'begin' }, id);
    let closed = false;
    const end = (op: 'commit' | 'rollback') => {
      closed = true;
      return this.#send({ op, tx: id });
    };
    const open = () => {
      if (closed) throw new Error('Transaction is closed');
    };
    const tx = {
      query: async <R>(sql: string, params?: unknown[], options?: QueryOptions) => (open(), this.query<R>(sql, params, options, id)),
      exec: async (sql: string) => (open(), this.exec(sql, id)),
      rollback: async () => (open(), void (await end('rollback'))),
      get closed() {
        return closed;
      },
    } as unknown as Transaction;
    let result: T;
    try {
      result = await callback(tx);
    } catch (e) {
      if (!closed) await end('rollback');
      throw e;
    }
    if (!closed) await end('commit');
    return result;
  }

  async close(): Promise<void> {
    await this.started.catch(() => {});
    if (!this.#failed) await this.#send({ op: 'close' });
    await this.#worker.terminate();
  }
}

/** Parses, with `parsers`, the values the thread sent as text (those of the types `parsers` names). */
function parseRaw(r: Results<unknown>, parsers: Record<string, Parser>): void {
  const columns = r.fields.map((f, i) => ({ i, name: f.name, parse: parsers[f.dataTypeID], typeId: f.dataTypeID })).filter((c) => c.parse);
  if (!columns.length) return;
  for (const row of r.rows as unknown[]) {
    const values = row as Record<string | number, unknown>;
    for (const c of columns) {
      const key = Array.isArray(row) ? c.i : c.name;
      const text = values[key];
      if (text !== null && text !== undefined) values[key] = (c.parse as Parser)(text as string, c.typeId);
    }
  }
}
