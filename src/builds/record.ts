// Records each build command as it runs: a BuildCommand row created before it starts, its output
// written as it comes (at most once a second), its exit code and times at the end. Secret values
// (the project's environment variables) are masked in what is stored. Each write is announced
// (pg_notify, and in-process), and followBuild() turns those writes into a live log for readers,
// which may run in another process than the worker: the database is the source of truth.
import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { PrismaClient } from '../db/database.ts';
import type { Build, BuildCommand } from '../generated/prisma/client.ts';
import { runCommand, type RunResult } from './subprocess.ts';

export const MASK = '*****';

export class Recorder {
  readonly #secrets: string[];
  readonly #replacements: [string, string][];
  constructor(
    private readonly db: PrismaClient,
    private readonly buildId: number,
    secrets: string[],
    /** Long paths shown shorter: `[/x/venv/bin/, '']`. */
    replacements: [string, string][] = [],
  ) {
    // Longest first, so a value containing another is masked whole. Very short values would
    // mask ordinary text; they are masked only as whole words.
    this.#secrets = [...new Set(secrets.filter((s) => s.length > 0))].sort((a, b) => b.length - a.length);
    this.#replacements = replacements;
  }

  /** Announces that this build's rows changed (see `announceProgress`). */
  static announce(db: PrismaClient, buildId: number): Promise<void> {
    return announceProgress(db, buildId);
  }

  /**
   * Length of the end of `text` that could be the first characters of a secret whose rest has not
   * been written yet: held back from a partial write, or its start would be stored unmasked.
   */
  #unsafeTail(text: string): number {
    let n = 0;
    for (const s of this.#secrets) {
      for (let k = Math.min(s.length - 1, text.length); k > n; k--) {
        if (text.endsWith(s.slice(0, k))) {
          n = k;
          break;
        }
      }
    }
    return n;
  }

  mask(text: string): string {
    let out = text;
    for (const s of this.#secrets) {
      if (s.length >= 4) out = out.split(s).join(MASK);
      else out = out.replace(new RegExp(`(?<![\\w])${s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w])`, 'g'), MASK);
    }
    return out;
  }

  display(argv: string[]): string {
    let text = argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'"'"'`)}'`)).join(' ');
    for (const [from, to] of this.#replacements) text = text.split(from).join(to);
    return this.mask(text);
  }

  async run(
    description: string,
    argv: string[],
    opts: { cwd: string; env: Record<string, string>; timeoutMs: number; signal?: AbortSignal; wrap?: (argv: string[]) => string[] },
  ): Promise<RunResult & { commandId: number }> {
    const row = await this.db.buildCommand.create({
      data: { buildId: this.buildId, description, command: this.display(argv), startTime: new Date() },
    });
    await announceProgress(this.db, this.buildId);
    let pending = '';
    let flushed = '';
    let lastFlush = Date.now();
    let flushing: Promise<unknown> = Promise.resolve();
    const flush = () => {
      flushed += pending;
      pending = '';
      const masked = this.mask(flushed);
      const output = masked.slice(0, masked.length - this.#unsafeTail(masked));
      flushing = flushing.then(() =>
        this.db.buildCommand
          .update({ where: { id: row.id }, data: { output } })
          .then(() => announceProgress(this.db, this.buildId))
          .catch(() => {}),
      );
    };
    const result = await runCommand(opts.wrap ? opts.wrap(argv) : argv, {
      cwd: opts.cwd,
      env: opts.env,
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
      onOutput: (chunk) => {
        pending += chunk;
        if (Date.now() - lastFlush > 1000 && flushed.length < 1_000_000) {
          lastFlush = Date.now();
          flush();
        }
      },
    });
    await flushing;
    const output = this.mask(result.output);
    await this.db.buildCommand.update({ where: { id: row.id }, data: { output, exitCode: result.exitCode, endTime: new Date() } });
    await announceProgress(this.db, this.buildId);
    return { ...result, output, commandId: row.id };
  }
}

// ---------------------------------------------------------------------------------------------
// Live progress. Writers announce "build N changed" after writing; readers re-read the rows. The
// announcement carries no data, so nothing is trusted from it and nothing secret travels on it.

/** PostgreSQL channel of progress announcements; the payload is the build id. */
export const PROGRESS_CHANNEL = 'lectern_build_progress';

const progress = new EventEmitter<{ changed: [buildId: number] }>();
progress.setMaxListeners(0);

/**
 * Says that build `buildId` changed: in this process at once, and to other processes with
 * pg_notify (delivered to LISTENers on PostgreSQL; harmless on the embedded database, where every
 * reader is in this process). Never fails the caller: readers also poll.
 */
export async function announceProgress(db: PrismaClient, buildId: number): Promise<void> {
  progress.emit('changed', buildId);
  await db.$executeRaw`SELECT pg_notify(${PROGRESS_CHANNEL}, ${String(buildId)})`.then(
    () => {},
    () => {},
  );
}

/** One LISTEN connection per process and database, open while anyone follows a build. */
const listeners = new Map<string, { client: pg.Client; users: number }>();

function listen(databaseUrl: string): () => void {
  let entry = listeners.get(databaseUrl);
  if (!entry) {
    const client = new pg.Client({ connectionString: databaseUrl });
    const created = { client, users: 0 };
    entry = created;
    listeners.set(databaseUrl, created);
    const drop = () => {
      if (listeners.get(databaseUrl) === created) listeners.delete(databaseUrl);
      client.end().catch(() => {});
    };
    client.on('notification', (n) => {
      const id = Number(n.payload);
      if (n.channel === PROGRESS_CHANNEL && Number.isInteger(id)) progress.emit('changed', id);
    });
    // A lost connection is dropped (the next follower opens another); the poll covers the gap.
    client.on('error', drop);
    client
      .connect()
      .then(() => client.query(`LISTEN ${PROGRESS_CHANNEL}`))
      .catch(drop);
  }
  const used = entry;
  used.users++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--used.users === 0 && listeners.get(databaseUrl) === used) {
      listeners.delete(databaseUrl);
      used.client.end().catch(() => {});
    }
  };
}

export type ProgressKind = 'STATE' | 'COMMAND_STARTED' | 'OUTPUT' | 'COMMAND_FINISHED';

export interface BuildProgress {
  kind: ProgressKind;
  /** The build row as read for this update. */
  build: Build;
  /** The command this update is about (null for STATE). */
  command: BuildCommand | null;
  /** Output added since the previous update of this command (null for STATE). */
  output: string | null;
  /** Where `output` starts in the command's whole output; below what was sent when earlier text was rewritten. */
  outputOffset: number | null;
}

export interface FollowOptions {
  /** Reads the build row, or null when it is gone (or no longer visible to the reader). */
  load: () => Promise<Build | null>;
  signal: AbortSignal;
  /** The safety-net poll: how long to wait for an announcement before re-reading anyway. */
  pollMs?: number;
  /** PostgreSQL URL to LISTEN on; without it only this process's announcements wake the reader. */
  databaseUrl?: string;
}

const commonPrefix = (a: string, b: string) => {
  let i = 0;
  while (i < a.length && i < b.length && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
};

/**
 * A build's state changes and command output as they are written, until the build is finished
 * (the last update is then its `finished` STATE) or `signal` aborts. It starts with the build as
 * it is: its state, then every command so far. Output is what the recorder stored, masked.
 */
export async function* followBuild(db: PrismaClient, buildId: number, opts: FollowOptions): AsyncGenerator<BuildProgress> {
  const { signal } = opts;
  let dirty = true;
  let wake: (() => void) | null = null;
  const onChange = (id: number) => {
    if (id !== buildId) return;
    dirty = true;
    wake?.();
  };
  progress.on('changed', onChange);
  const unlisten = opts.databaseUrl ? listen(opts.databaseUrl) : () => {};
  let lastState: string | null = null;
  const sent = new Map<number, string>(); // output already sent, per command still running
  const ended = new Set<number>();
  try {
    while (!signal.aborted) {
      dirty = false;
      // The build before its commands: every command write made before a `finished` seen here is
      // visible to the read that follows.
      const build = await opts.load();
      if (!build) return;
      const commands = await db.buildCommand.findMany({ where: { buildId, id: { notIn: [...ended] } }, orderBy: { id: 'asc' } });
      const known: BuildProgress[] = [];
      const fresh: BuildProgress[] = [];
      for (const command of commands) {
        const before = sent.get(command.id);
        const offset = before === undefined ? 0 : commonPrefix(before, command.output);
        const output = command.output.slice(offset);
        const kind: ProgressKind | null = command.endTime
          ? 'COMMAND_FINISHED'
          : before === undefined
            ? 'COMMAND_STARTED'
            : output !== '' || offset !== before.length
              ? 'OUTPUT'
              : null;
        if (command.endTime) {
          ended.add(command.id);
          sent.delete(command.id);
        } else sent.set(command.id, command.output);
        if (kind) (before === undefined ? fresh : known).push({ kind, build, command, output, outputOffset: offset });
      }
      // Commands deleted meanwhile (a retried build starts over) are forgotten.
      const present = new Set(commands.map((c) => c.id));
      for (const id of sent.keys()) if (!present.has(id)) sent.delete(id);

      const stateChange: BuildProgress[] =
        build.state !== lastState ? [{ kind: 'STATE', build, command: null, output: null, outputOffset: null }] : [];
      lastState = build.state;
      // Output of commands already running came before the state change; new commands after it.
      // `finished` comes last of all.
      const order = build.state === 'finished' ? [...known, ...fresh, ...stateChange] : [...known, ...stateChange, ...fresh];
      for (const update of order) {
        if (signal.aborted) return;
        yield update;
      }
      if (build.state === 'finished') return;
      if (!dirty) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, opts.pollMs ?? 2000);
          function done() {
            clearTimeout(timer);
            signal.removeEventListener('abort', done);
            wake = null;
            resolve();
          }
          wake = done;
          signal.addEventListener('abort', done, { once: true });
        });
      }
    }
  } finally {
    progress.off('changed', onChange);
    unlisten();
  }
}
