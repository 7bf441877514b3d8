// LISTEN comes back after the database connection is lost: the build worker's (new builds wake it)
// and the live log's (followBuild readers). On PostgreSQL the LISTEN backend is really terminated
// (pg_terminate_backend), or the database made unreachable for a while through a TCP relay, and a
// NOTIFY sent afterwards must wake the reader with its poll set to half an hour; the outage is
// logged once. On the embedded database there is no LISTEN: every writer is in this process, and
// the in-process path is what is checked there.
import net from 'node:net';
import { Writable } from 'node:stream';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOTIFY_CHANNEL, Worker } from '../../src/builds/worker.ts';
import { announceProgress, type BuildProgress, followBuild, LiveBuilds, PgListener, PROGRESS_CHANNEL } from '../../src/db/progress.ts';
import { createLogger } from '../../src/log.ts';
import { queueBuildJob } from '../../src/queue/builds.ts';
import { Cipher } from '../../src/secrets.ts';
import { TEST_SECRET_KEY, type TestApp, testApp } from '../helpers/app.ts';
import { dbKind } from '../helpers/db.ts';
import { until } from '../helpers/wait.ts';

const LONG_POLL = 30 * 60_000;
let t: TestApp;
let projectId: number;

beforeAll(async () => {
  t = await testApp();
  projectId = (await t.db.prisma.project.create({ data: { name: 'Waits', slug: 'waits', repositoryUrl: 'https://example.invalid/waits.git' } })).id;
});
afterAll(() => t.close());

/** A logger whose lines are kept, to count warnings. */
function capturedLog() {
  const lines: { level: number; msg: string }[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: createLogger('info', stream), lines, warnings: () => lines.filter((l) => l.level === 40).map((l) => l.msg) };
}

/** Another session on the test database: what another Lectern process would do. */
async function otherProcess<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: t.databaseUrl });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** The backend LISTENing on `channel` in this test's database. */
const listenerPid = (channel: string) =>
  otherProcess(async (c) => {
    const r = await c.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = $1 AND pid <> pg_backend_pid()`, [
      `LISTEN ${channel}`,
    ]);
    return r.rows.length === 1 ? r.rows[0]!.pid : null;
  });

/** Terminates the LISTEN backend, as a database restart would; returns once one came back. */
async function dropListener(channel: string): Promise<void> {
  const pid = await until(`LISTEN ${channel}`, () => listenerPid(channel));
  const killed = await otherProcess((c) =>
    c.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%' AND query = $1`, [
      `LISTEN ${channel}`,
    ]),
  );
  expect(killed.rowCount).toBe(1);
  await until(`LISTEN ${channel} on a new connection`, async () => {
    const now = await listenerPid(channel);
    return now !== null && now !== pid;
  });
}

/** A build queued as the app queues one: its row, and its job. */
async function newBuild() {
  const build = await t.db.prisma.build.create({ data: { projectId, state: 'triggered' } });
  await queueBuildJob(t.db.prisma, build);
  return build;
}

function worker(log = capturedLog().log, databaseUrl = t.databaseUrl) {
  return new Worker(
    {
      prisma: t.db.prisma,
      storage: t.storage,
      cipher: new Cipher(TEST_SECRET_KEY),
      log,
      dataDir: t.dataDir,
      publicUrl: t.config.publicUrl,
      events: t.services.events,
    },
    // Lease and poll of half an hour: only a notification can wake it within the test.
    { concurrency: 1, databaseUrl, leaseSeconds: 3600, pollMs: LONG_POLL },
  );
}

describe('the build worker', () => {
  it('is woken by NOTIFY again after its LISTEN connection was terminated, and says so once', async () => {
    const captured = capturedLog();
    const w = worker(captured.log);
    await w.start();
    try {
      if (dbKind() === 'embedded') {
        // No LISTEN on the embedded database: builds are queued by this process, which wakes it.
        expect(t.databaseUrl).toBeUndefined();
        const build = await newBuild();
        t.services.events.emit('buildQueued', { buildId: build.id, projectId });
        await until('the build claimed', async () => (await t.db.prisma.build.findUniqueOrThrow({ where: { id: build.id } })).state !== 'triggered');
        expect(captured.warnings()).toEqual([]);
        return;
      }
      await dropListener(NOTIFY_CHANNEL);
      // Queued by "another process" after the drop: only its NOTIFY can wake the worker now.
      const build = await newBuild();
      await otherProcess((c) => c.query(`SELECT pg_notify($1, $2)`, [NOTIFY_CHANNEL, String(build.id)]));
      const claimed = await until('the build claimed', async () => {
        const b = await t.db.prisma.build.findUniqueOrThrow({ where: { id: build.id } });
        return b.state !== 'triggered' && b;
      });
      expect(claimed.workerId).toBe(w.id);
      expect(captured.warnings()).toEqual(['LISTEN connection to the database lost; reconnecting (polling meanwhile)']);
      expect(captured.lines.filter((l) => l.msg === 'LISTEN connection to the database is back')).toHaveLength(1);
    } finally {
      await w.stop(0);
    }
  });
});

describe('live build logs (followBuild)', () => {
  it('get an update announced from another process after the LISTEN connection was terminated', async () => {
    const build = await newBuild();
    const captured = capturedLog();
    const controller = new AbortController();
    const updates: BuildProgress[] = [];
    const reading = (async () => {
      const follow = followBuild(t.db.prisma, build.id, {
        load: (db) => db.build.findUnique({ where: { id: build.id } }),
        signal: controller.signal,
        pollMs: LONG_POLL,
        // The app's events, with a LISTEN connection of this test's (its log captured).
        live: new LiveBuilds(t.services.events, { databaseUrl: t.databaseUrl, log: captured.log }),
      });
      for await (const u of follow) updates.push(u);
    })();
    const states = () => updates.filter((u) => u.kind === 'STATE').map((u) => u.build.state);
    try {
      await until('the first update', () => states().length === 1);
      if (dbKind() === 'embedded') {
        // Writers are in this process: their announcement wakes the reader at once.
        await t.db.prisma.build.update({ where: { id: build.id }, data: { state: 'cloning' } });
        await announceProgress(t.services, build.id);
        await until('the cloning state', () => states().includes('cloning'));
        expect(captured.warnings()).toEqual([]);
        return;
      }
      await dropListener(PROGRESS_CHANNEL);
      // Two changes written and announced by another process: the first may be picked up by the
      // look the reader takes when its connection comes back; the second only by its NOTIFY.
      for (const state of ['cloning', 'building'] as const) {
        await otherProcess(async (c) => {
          await c.query(`UPDATE "Build" SET state = $1 WHERE id = $2`, [state, build.id]);
          await c.query(`SELECT pg_notify($1, $2)`, [PROGRESS_CHANNEL, String(build.id)]);
        });
        await until(`the ${state} state`, () => states().includes(state));
      }
      expect(states()).toEqual(['triggered', 'cloning', 'building']);
      expect(captured.warnings()).toEqual(['LISTEN connection to the database lost; reconnecting (polling meanwhile)']);
    } finally {
      controller.abort();
      await reading;
    }
  });
});

describe('PgListener through an outage', () => {
  it('keeps trying while the database is unreachable, warns once, and listens again when it is back', async () => {
    if (dbKind() === 'embedded') {
      // Nothing to listen to on the embedded database: followers and the worker are given no URL.
      expect(t.databaseUrl).toBeUndefined();
      expect(t.config.databaseUrl).toBeUndefined();
      return;
    }
    // A TCP relay to PostgreSQL that can be taken down ("the database is down": connections are
    // accepted and closed at once) and brought back.
    const target = new URL(t.databaseUrl!);
    let up = true;
    let refused = 0;
    const open = new Set<net.Socket>();
    const relay = net.createServer((client) => {
      if (!up) {
        refused++;
        client.destroy();
        return;
      }
      const server = net.connect(Number(target.port || 5432), target.hostname);
      open.add(client).add(server);
      client.pipe(server).pipe(client);
      const close = () => {
        client.destroy();
        server.destroy();
        open.delete(client);
        open.delete(server);
      };
      client.on('error', close).on('close', close);
      server.on('error', close).on('close', close);
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    const via = new URL(t.databaseUrl!);
    via.hostname = '127.0.0.1';
    via.port = String((relay.address() as net.AddressInfo).port);

    const captured = capturedLog();
    const got: string[] = [];
    let reconnects = 0;
    const listener = new PgListener(via.toString(), 'lectern_test_outage', {
      log: captured.log,
      onNotify: (p) => got.push(p),
      onReconnect: () => reconnects++,
      retryMs: { min: 20, max: 200 },
    });
    try {
      expect(await listener.ready).toBe(true);
      const notify = (payload: string) => otherProcess((c) => c.query(`SELECT pg_notify('lectern_test_outage', $1)`, [payload]));
      await notify('before');
      await until('the first notification', () => got.includes('before'));

      // Down: the connection drops and every new one is closed at once.
      up = false;
      for (const s of open) s.destroy();
      await until('several attempts while down', () => refused >= 4 && !listener.listening);
      expect(captured.warnings()).toEqual(['LISTEN connection to the database lost; reconnecting (polling meanwhile)']);
      await notify('missed'); // sent while away: lost, which is why onReconnect exists

      up = true;
      await until('listening again', () => listener.listening);
      expect(reconnects).toBe(1);
      await notify('after');
      await until('a notification after the outage', () => got.includes('after'));
      expect(got).toEqual(['before', 'after']);
      expect(captured.warnings()).toHaveLength(1);
      expect(captured.lines.filter((l) => l.msg === 'LISTEN connection to the database is back')).toHaveLength(1);
    } finally {
      await listener.close();
      for (const s of open) s.destroy();
      await new Promise((r) => relay.close(r));
    }
  });
});
