// A build's live progress (docs/design/events.md): writers announce "build N changed" after
// writing, on the app's events and, for other processes, with PostgreSQL's NOTIFY; readers (the
// build-log subscription) re-read the rows. A database concern, below the domain: the domain's
// services hold the app's LiveBuilds, and the build recorder announces through it.
import type Pg from 'pg';
import type { Events } from '../events.ts';
import type { Build, BuildCommand, Prisma } from '../generated/prisma/client.ts';
import { lazyModule } from '../lazy-module.ts';
import type { Logger } from '../log.ts';
import type { PrismaClient } from './database.ts';

// The PostgreSQL client, loaded when a listener connects: the embedded database has none.
const pg = lazyModule<typeof Pg>('pg');

// ---------------------------------------------------------------------------------------------
// Live progress. Writers announce "build N changed" after writing; readers re-read the rows. The
// announcement carries no data, so nothing is trusted from it and nothing secret travels on it.

/** PostgreSQL channel of progress announcements; the payload is the build id. */
export const PROGRESS_CHANNEL = 'lectern_build_progress';

/** Who announces progress: the build's database, and the events of the app whose followers hear it first. */
export interface ProgressDeps {
  prisma: PrismaClient;
  events: Events;
}

/**
 * Says that build `buildId` changed: on the app's events at once (`buildProgress`), and to other
 * processes with pg_notify (delivered to LISTENers on PostgreSQL; harmless on the embedded
 * database, where every reader is in this process). Never fails the caller: readers also poll.
 */
export async function announceProgress({ prisma, events }: ProgressDeps, buildId: number): Promise<void> {
  events.emit('buildProgress', { buildId });
  await prisma.$executeRaw`SELECT pg_notify(${PROGRESS_CHANNEL}, ${String(buildId)})`.then(
    () => {},
    () => {},
  );
}

export interface ListenerOptions {
  /** Called with each notification's payload. */
  onNotify: (payload: string) => void;
  /** Called when listening again after the connection was lost: what was announced meanwhile is unknown. */
  onReconnect?: () => void;
  /** Told once per outage (warn) and when it ends (info). */
  log?: Logger;
  /** First and longest wait between attempts to reconnect (doubling in between). */
  retryMs?: { min: number; max: number };
}

/**
 * LISTEN on one PostgreSQL channel, on a connection of its own that comes back when it is lost
 * (the database restarted, the backend was terminated, the network dropped): it retries with
 * growing waits until `close()`. Notifications sent while it was away are lost, so `onReconnect`
 * tells its user to look again.
 */
export class PgListener {
  #client: Pg.Client | null = null;
  #closed = false;
  #listening = false;
  /** An outage is under way (and was logged). */
  #down = false;
  #delay: number;
  #timer: NodeJS.Timeout | undefined;
  /** Settles when the first attempt ends: true when it is listening. */
  readonly ready: Promise<boolean>;

  private readonly databaseUrl: string;
  private readonly channel: string;
  private readonly opts: ListenerOptions;
  constructor(databaseUrl: string, channel: string, opts: ListenerOptions) {
    this.databaseUrl = databaseUrl;
    this.channel = channel;
    this.opts = opts;
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
    this.#delay = opts.retryMs?.min ?? 250;
    this.ready = this.#connect();
  }

  get listening(): boolean {
    return this.#listening;
  }

  /** The logger used from now on (a later user may bring one when the first had none). */
  set log(log: Logger | undefined) {
    this.opts.log ??= log;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#listening = false;
    clearTimeout(this.#timer);
    const client = this.#client;
    this.#client = null;
    await client?.end().catch(() => {});
  }

  async #connect(): Promise<boolean> {
    if (this.#closed) return false;
    // keepAlive: a silent network drop is noticed too, not only a closed connection.
    const client = new (pg().Client)({ connectionString: this.databaseUrl, keepAlive: true, connectionTimeoutMillis: 10_000 });
    this.#client = client;
    let lost = false;
    const onLost = (err?: Error) => {
      if (lost) return;
      lost = true;
      this.#listening = false;
      if (this.#client === client) this.#client = null;
      client.end().catch(() => {});
      if (this.#closed) return;
      if (!this.#down) {
        this.#down = true;
        this.opts.log?.warn(
          { err: err?.message ?? 'connection closed', channel: this.channel },
          'LISTEN connection to the database lost; reconnecting (polling meanwhile)',
        );
      }
      const max = this.opts.retryMs?.max ?? 30_000;
      const wait = this.#delay * (0.75 + Math.random() / 2);
      this.#delay = Math.min(max, this.#delay * 2);
      this.#timer = setTimeout(() => void this.#connect(), wait);
      this.#timer.unref();
    };
    client.on('notification', (n) => {
      if (n.channel === this.channel) this.opts.onNotify(n.payload ?? '');
    });
    client.on('error', onLost);
    client.on('end', () => onLost());
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
    } catch (e) {
      onLost(e as Error);
      return false;
    }
    if (lost || this.#closed) {
      if (this.#closed) await client.end().catch(() => {});
      return false;
    }
    this.#listening = true;
    this.#delay = this.opts.retryMs?.min ?? 250;
    if (this.#down) {
      this.#down = false;
      this.opts.log?.info({ channel: this.channel }, 'LISTEN connection to the database is back');
      this.opts.onReconnect?.();
    }
    return true;
  }
}

/**
 * An app's live build logs: how many builds each client follows (a bound per client), and what
 * wakes its followers. Those hear the app's own announcements on its events (its API, and the
 * worker it runs beside) and, on PostgreSQL, every process's, through one LISTEN connection the app
 * opens while anyone follows a build and closes when the last one stops. One per app
 * (Services.live): another app in the same process counts its own clients and holds its own
 * connection, even on the same database (one connection more, never a signal of another app's).
 * docs/design/events.md.
 */
export class LiveBuilds {
  /** Builds one client (a user, or an address when anonymous) may follow at once, in this app. */
  maxPerClient = 8;
  /** Safety-net re-read when no announcement came (a write by code that does not announce). */
  pollMs = 2000;
  readonly events: Events;
  readonly #databaseUrl: string | undefined;
  readonly #log: Logger | undefined;
  readonly #following = new Map<string, number>();
  #listening: { listener: PgListener; users: number } | null = null;

  /** `databaseUrl`: PostgreSQL to LISTEN on; without it only the app's own announcements wake its followers. */
  constructor(events: Events, opts: { databaseUrl?: string; log?: Logger } = {}) {
    this.events = events;
    this.#databaseUrl = opts.databaseUrl;
    this.#log = opts.log;
  }

  /** Counts one more build followed by `client`: false, counting nothing, when it already follows `maxPerClient`. */
  admit(client: string): boolean {
    const count = this.#following.get(client) ?? 0;
    if (count >= this.maxPerClient) return false;
    this.#following.set(client, count + 1);
    return true;
  }

  /** One build fewer followed by `client`. */
  release(client: string): void {
    const left = (this.#following.get(client) ?? 1) - 1;
    if (left > 0) this.#following.set(client, left);
    else this.#following.delete(client);
  }

  /** The LISTEN connection, while anyone follows a build (for tests). */
  get listener(): PgListener | undefined {
    return this.#listening?.listener;
  }

  /** Listens (when on PostgreSQL) while the caller follows a build; the answer stops it. */
  listen(): () => void {
    const databaseUrl = this.#databaseUrl;
    if (!databaseUrl) return () => {};
    let entry = this.#listening;
    if (!entry) {
      const listener = new PgListener(databaseUrl, PROGRESS_CHANNEL, {
        log: this.#log,
        onNotify: (payload) => {
          const id = Number(payload);
          if (Number.isInteger(id)) this.events.emit('buildProgress', { buildId: id });
        },
        // Announcements made while the connection was away were missed: every reader looks again.
        onReconnect: () => this.events.emit('progressResync'),
      });
      entry = { listener, users: 0 };
      this.#listening = entry;
    }
    const used = entry;
    used.users++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--used.users === 0 && this.#listening === used) {
        this.#listening = null;
        void used.listener.close();
      }
    };
  }
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
  /**
   * Reads the build row with `db` (the snapshot's transaction), or null when it is gone (or no
   * longer visible to the reader). Only through `db`: on the embedded database the transaction
   * holds the one connection, and another client would wait for it.
   */
  load: (db: Prisma.TransactionClient) => Promise<Build | null>;
  signal: AbortSignal;
  /** The app's live builds: its announcements wake the reader (and its LISTEN connection on PostgreSQL). */
  live: LiveBuilds;
  /** The safety-net poll: how long to wait for an announcement before re-reading anyway (the app's `pollMs` by default). */
  pollMs?: number;
}

const commonPrefix = (a: string, b: string) => {
  let i = 0;
  while (i < a.length && i < b.length && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
};

/**
 * What changed in `commands` since they were last seen (`sent`: the output sent of each command
 * still running; `ended`: the commands whose end was sent, updated here): updates of commands
 * already known, and of new ones. Commands deleted meanwhile (a retried build starts over) are forgotten.
 */
function commandUpdates(build: BuildProgress['build'], commands: BuildCommand[], sent: Map<number, string>, ended: Set<number>) {
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
  const present = new Set(commands.map((c) => c.id));
  for (const id of sent.keys()) if (!present.has(id)) sent.delete(id);
  return { known, fresh };
}

/**
 * A build's state changes and command output as they are written, until the build is finished
 * (the last update is then its `finished` STATE) or `signal` aborts. It starts with the build as
 * it is: its state, then every command so far. Output is what the recorder stored, masked.
 */
export async function* followBuild(db: PrismaClient, buildId: number, opts: FollowOptions): AsyncGenerator<BuildProgress> {
  const { signal } = opts;
  let dirty = true;
  let wake: (() => void) | null = null;
  const onChange = ({ buildId: id }: { buildId: number }) => {
    if (id !== buildId) return;
    dirty = true;
    wake?.();
  };
  const onResync = () => {
    dirty = true;
    wake?.();
  };
  const { live } = opts;
  live.events.on('buildProgress', onChange);
  live.events.on('progressResync', onResync);
  const unlisten = live.listen();
  let lastState: string | null = null;
  const sent = new Map<number, string>(); // output already sent, per command still running
  const ended = new Set<number>();
  try {
    while (!signal.aborted) {
      dirty = false;
      // The build and its commands as of one moment (one snapshot): read one after the other, a
      // command started after a state change could be seen with the state before it, and sent
      // before that change.
      const [build, commands] = await db.$transaction(
        async (tx) => {
          const row = await opts.load(tx);
          if (!row) return [null, []] as const;
          return [row, await tx.buildCommand.findMany({ where: { buildId, id: { notIn: [...ended] } }, orderBy: { id: 'asc' } })] as const;
        },
        { isolationLevel: 'RepeatableRead' },
      );
      if (!build) return;
      const { known, fresh } = commandUpdates(build, commands, sent, ended);
      const stateChange: BuildProgress[] = build.state !== lastState ? [{ kind: 'STATE', build, command: null, output: null, outputOffset: null }] : [];
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
          const timer = setTimeout(done, opts.pollMs ?? live.pollMs);
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
    live.events.off('buildProgress', onChange);
    live.events.off('progressResync', onResync);
    unlisten();
  }
}
