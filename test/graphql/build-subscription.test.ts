// Live build logs: Subscription.buildUpdated over server-sent events from a listening app, fed by
// the worker's own writes (claimBuild, the Recorder, state updates), in order and ending at
// `finished`, with secrets masked, Query.build's visibility, and a bound per client.

import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MASK, Recorder } from '../../src/builds/record.ts';
import { LiveBuilds, PROGRESS_CHANNEL } from '../../src/db/progress.ts';
import { createEvents } from '../../src/events.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { claimBuildAs } from '../helpers/builds.ts';
import { dbKind } from '../helpers/db.ts';
import { until } from '../helpers/wait.ts';

let t: TestApp;
let server: Server;
let base: string;
let alice: string;
let bob: string;
/** An app's live-log settings as buildApp makes them (a test changes its app's, then puts them back). */
const { maxPerClient, pollMs } = new LiveBuilds(createEvents());
const defaults = { maxPerClient, pollMs };

const SUBSCRIBE = `subscription($id: Int!) {
  buildUpdated(id: $id) {
    kind output outputOffset
    build { id state success error }
    command { id description command exitCode }
  }
}`;

interface Update {
  kind: string;
  output: string | null;
  outputOffset: number | null;
  build: { id: number; state: string; success: boolean | null; error: string | null };
  command: { id: number; description: string; command: string; exitCode: number | null } | null;
}

/** An open SSE subscription: its updates as they arrive, the raw text, and how it ended. */
interface Stream {
  updates: Update[];
  errors: { message: string; extensions?: Record<string, unknown> }[];
  raw: string;
  status: number;
  contentType: string | null;
  ended: Promise<void>;
  completed: boolean;
  /** Resolves once `pred` holds for the updates received (fails after `ms`). */
  until(pred: (u: Update[]) => boolean, ms?: number): Promise<void>;
  close(): void;
}

async function subscribe(id: number, token?: string): Promise<Stream> {
  const controller = new AbortController();
  const res = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { accept: 'text/event-stream', 'content-type': 'application/json', ...(token ? { authorization: `Token ${token}` } : {}) },
    body: JSON.stringify({ query: SUBSCRIBE, variables: { id } }),
    signal: controller.signal,
  });
  const waiters = new Set<() => void>();
  const stream: Stream = {
    updates: [],
    errors: [],
    raw: '',
    status: res.status,
    contentType: res.headers.get('content-type'),
    completed: false,
    ended: Promise.resolve(),
    until: (pred, ms = 10_000) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (pred(stream.updates)) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve();
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out; got ${JSON.stringify(stream.updates.map((u) => [u.kind, u.build.state, u.output]))} ${JSON.stringify(stream.errors)}`));
        }, ms);
        waiters.add(check);
        check();
      }),
    close: () => controller.abort(),
  };
  stream.ended = (async () => {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const text = decoder.decode(value, { stream: true });
        stream.raw += text;
        buffer += text;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = block
            .split('\n')
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).trim())
            .join('\n');
          if (event === 'complete') stream.completed = true;
          else if (event === 'next' && data) {
            const result = JSON.parse(data);
            if (result.errors) stream.errors.push(...result.errors);
            if (result.data?.buildUpdated) stream.updates.push(result.data.buildUpdated);
          }
          for (const w of [...waiters]) w();
        }
      }
    } catch (e) {
      if ((e as Error).name !== 'AbortError') throw e;
    }
  })();
  return stream;
}

/** A command's whole output, rebuilt from its updates as a client would. */
function logOf(updates: Update[], commandId: number): string {
  let log = '';
  for (const u of updates) if (u.command?.id === commandId && u.output !== null) log = log.slice(0, u.outputOffset!) + u.output;
  return log;
}

async function importProject(token: string, name: string): Promise<{ id: number; buildId: number }> {
  const res = await t.gql(
    `mutation($input: ImportProjectInput!) { importProject(input: $input) { ... on MutationImportProjectSuccess { data { id } } } }`,
    { input: { name, repository: { url: `https://github.com/acme/${name}.git` } } },
    token,
  );
  const id = res.data.importProject.data.id;
  const build = await t.db.prisma.build.findFirstOrThrow({ where: { projectId: id }, orderBy: { id: 'desc' } });
  return { id, buildId: build.id };
}

/** The state updates the pipeline makes (setState, finish), announced as the pipeline's finish does. */
async function setState(buildId: number, state: 'installing' | 'building') {
  await t.db.prisma.build.update({ where: { id: buildId }, data: { state } });
}
async function finish(buildId: number, success: boolean, error: string | null = null) {
  await t.db.prisma.build.updateMany({
    where: { id: buildId, state: { not: 'finished' } },
    data: { state: 'finished', success, error, finishedAt: new Date(), duration: 3 },
  });
  await Recorder.announce(t.services, buildId);
}

const opened: Stream[] = [];
const open = async (id: number, token?: string) => {
  const s = await subscribe(id, token);
  opened.push(s);
  return s;
};

beforeAll(async () => {
  t = await testApp();
  alice = await t.user('alice');
  bob = await t.user('bob');
  server = t.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  for (const s of opened.splice(0)) s.close();
  Object.assign(t.services.live, defaults);
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await t.close();
});

describe('Subscription.buildUpdated', () => {
  it('streams state changes and command output as the worker writes them, in order, and ends at finished', async () => {
    // A claim does not announce, so the safety-net poll is what finds it.
    t.services.live.pollMs = 200;
    const { buildId } = await importProject(alice, 'live-one');
    const stream = await open(buildId, alice);
    expect(stream.status).toBe(200);
    expect(stream.contentType).toMatch(/^text\/event-stream/);
    await stream.until((u) => u.length === 1);
    expect(stream.updates[0]).toMatchObject({ kind: 'STATE', build: { id: buildId, state: 'triggered', success: null }, command: null, output: null });

    const claimed = await claimBuildAs(t, 'test-worker', 60);
    expect(claimed?.id).toBe(buildId);
    await stream.until((u) => u.some((x) => x.build.state === 'cloning'));

    // A command whose output comes in three parts, a second apart: the recorder writes it while it runs.
    const secret = 'hunter2-very-secret';
    const recorder = new Recorder(t.services, buildId, [secret]);
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', SECRET: secret };
    let runEnded = 0;
    const ran = recorder
      .run('git clone', ['sh', '-c', 'echo one; sleep 1.2; echo two; sleep 1.2; echo three'], { cwd: '/', env, timeoutMs: 20_000 })
      .then((r) => {
        runEnded = stream.updates.length;
        return r;
      });
    await stream.until((u) => u.some((x) => x.kind === 'COMMAND_STARTED'));
    const first = await ran;
    // Output arrived before the command ended, not only at its end.
    expect(stream.updates.slice(0, runEnded).some((u) => u.command?.id === first.commandId && (u.output ?? '').includes('two'))).toBe(true);
    await stream.until((u) => u.some((x) => x.kind === 'COMMAND_FINISHED'));

    await setState(buildId, 'installing');
    const second = await recorder.run('pip install', ['sh', '-c', 'echo "token is $SECRET"; exit 3'], { cwd: '/', env, timeoutMs: 20_000 });
    await stream.until((u) => u.some((x) => x.kind === 'COMMAND_FINISHED' && x.command?.id === second.commandId));
    await setState(buildId, 'building');
    await stream.until((u) => u.some((x) => x.build.state === 'building'));
    await finish(buildId, false, 'Installing failed.');
    await stream.ended;

    expect(stream.completed).toBe(true);
    expect(stream.errors).toEqual([]);
    const states = stream.updates.filter((u) => u.kind === 'STATE').map((u) => u.build.state);
    expect(states).toEqual(['triggered', 'cloning', 'installing', 'building', 'finished']);
    expect(stream.updates.at(-1)).toMatchObject({ kind: 'STATE', build: { state: 'finished', success: false, error: 'Installing failed.' } });

    // Each command: started (or finished at once), then its output, then finished, inside its state.
    const kinds = (id: number) => stream.updates.filter((u) => u.command?.id === id).map((u) => u.kind);
    expect(kinds(first.commandId)[0]).toBe('COMMAND_STARTED');
    expect(kinds(first.commandId).at(-1)).toBe('COMMAND_FINISHED');
    expect(
      kinds(first.commandId)
        .slice(1, -1)
        .every((k) => k === 'OUTPUT'),
    ).toBe(true);
    expect(logOf(stream.updates, first.commandId)).toBe('one\ntwo\nthree\n');
    expect(logOf(stream.updates, second.commandId)).toBe(`token is ${MASK}\n`);
    const at = (pred: (u: Update) => boolean) => stream.updates.findIndex(pred);
    expect(at((u) => u.build.state === 'cloning')).toBeLessThan(at((u) => u.command?.id === first.commandId));
    expect(at((u) => u.kind === 'COMMAND_FINISHED' && u.command?.id === first.commandId)).toBeLessThan(
      at((u) => u.kind === 'STATE' && u.build.state === 'installing'),
    );
    expect(at((u) => u.kind === 'STATE' && u.build.state === 'installing')).toBeLessThan(at((u) => u.command?.id === second.commandId));
    expect(stream.updates.find((u) => u.kind === 'COMMAND_FINISHED' && u.command?.id === second.commandId)?.command?.exitCode).toBe(3);
    expect(stream.raw).not.toContain(secret);
  });

  it('starts with the build as it is, and ends at once for a finished build', async () => {
    const { buildId } = await importProject(alice, 'live-done');
    const recorder = new Recorder(t.services, buildId, []);
    const r = await recorder.run('echo', ['echo', 'done already'], { cwd: '/', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, timeoutMs: 10_000 });
    await finish(buildId, true);
    const stream = await open(buildId, alice);
    await stream.ended;
    expect(stream.completed).toBe(true);
    expect(stream.updates.map((u) => [u.kind, u.command?.id ?? null, u.output])).toEqual([
      ['COMMAND_FINISHED', r.commandId, 'done already\n'],
      ['STATE', null, null],
    ]);
    expect(stream.updates[1]!.build).toMatchObject({ state: 'finished', success: true, error: null });
  });

  it('never stores or streams the start of a secret whose rest is still to come', async () => {
    const { buildId } = await importProject(alice, 'live-mask');
    const secret = 'abcdefgh-secret';
    const stream = await open(buildId, alice);
    await stream.until((u) => u.length === 1);
    const recorder = new Recorder(t.services, buildId, [secret]);
    const seen: string[] = [];
    const watch = setInterval(() => {
      void t.db.prisma.buildCommand.findMany({ where: { buildId } }).then((rows) => seen.push(...rows.map((c) => c.output)));
    }, 50);
    // The secret is printed in two halves more than a second apart, so a write falls between them.
    const r = await recorder.run(
      'split',
      ['sh', '-c', 'printf "start\\n"; sleep 1.1; printf "x $HEAD"; sleep 1.2; printf -- "$REST y\\n"; sleep 1.1; printf "end\\n"'],
      {
        cwd: '/',
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HEAD: secret.slice(0, 8), REST: secret.slice(8) },
        timeoutMs: 20_000,
      },
    );
    clearInterval(watch);
    await finish(buildId, true);
    await stream.ended;
    expect(r.output).toBe(`start\nx ${MASK} y\nend\n`);
    expect(logOf(stream.updates, r.commandId)).toBe(r.output);
    // It was written while running (more than one version of it was stored), never with the half.
    expect(new Set(seen).size).toBeGreaterThan(1);
    for (const text of [...seen, stream.raw]) expect(text).not.toContain('abcd');
  });

  it("shows a private project's builds only to its maintainers, as Query.build does", async () => {
    const { id, buildId } = await importProject(bob, 'live-private');
    await t.db.prisma.project.update({ where: { id }, data: { privacyLevel: 'private' } });
    for (const token of [alice, undefined]) {
      const denied = await open(buildId, token);
      await denied.ended;
      expect(denied.updates).toEqual([]);
      expect(denied.errors).toMatchObject([{ message: 'No Build matches the given query.', extensions: { code: 'NOT_FOUND' } }]);
      const query = await t.gql(`query($id: Int!) { build(id: $id) { id } }`, { id: buildId }, token);
      expect(query.data.build).toBeNull();
    }
    const missing = await open(999_999, alice);
    await missing.ended;
    expect(missing.errors).toMatchObject([{ message: 'No Build matches the given query.' }]);

    const allowed = await open(buildId, bob);
    await allowed.until((u) => u.length === 1);
    expect(allowed.updates[0]).toMatchObject({ kind: 'STATE', build: { id: buildId, state: 'triggered' } });
    await finish(buildId, true);
    await allowed.ended;
    expect(allowed.updates.at(-1)?.build.state).toBe('finished');
  });

  it('bounds the live builds one client follows at once, and frees a slot when one is closed', async () => {
    t.services.live.maxPerClient = 3;
    const { buildId } = await importProject(alice, 'live-many');
    const streams = [];
    for (let i = 0; i < 3; i++) {
      const s = await open(buildId, alice);
      await s.until((u) => u.length === 1);
      streams.push(s);
    }
    const refused = await open(buildId, alice);
    await refused.ended;
    expect(refused.updates).toEqual([]);
    expect(refused.errors).toMatchObject([{ message: 'This client already follows 3 builds live: close one first.', extensions: { code: 'CONFLICT' } }]);
    // Another user is not affected.
    const other = await open(buildId, bob);
    await other.until((u) => u.length === 1);

    streams[0]!.close();
    const until = Date.now() + 10_000;
    let again: Stream;
    for (;;) {
      again = await open(buildId, alice);
      await Promise.race([again.until((u) => u.length === 1, 10_000), again.ended]);
      if (again.updates.length === 1 || Date.now() > until) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(again.updates[0]).toMatchObject({ kind: 'STATE' });
  });

  it('wakes on a notification from another process, without waiting for its poll', async () => {
    t.services.live.pollMs = 60_000;
    const { buildId } = await importProject(alice, 'live-remote');
    const services = t.services as { live: LiveBuilds };
    const before = services.live;
    if (dbKind() === 'postgres') {
      // The app LISTENs when it has a PostgreSQL URL (as `lectern serve` with DATABASE_URL does):
      // live builds as buildApp makes them then, for the requests from now on.
      services.live = Object.assign(new LiveBuilds(t.services.events, { databaseUrl: t.databaseUrl }), { pollMs: 60_000 });
    }
    try {
      const stream = await open(buildId, alice);
      await stream.until((u) => u.length === 1);
      if (dbKind() === 'postgres') {
        // Another process: its own connection, a state update and pg_notify, nothing in-process.
        const other = new pg.Client({ connectionString: t.databaseUrl });
        await other.connect();
        await until('the app to LISTEN for progress', () => t.services.live.listener?.listening, 10_000, 20);
        await other.query(`UPDATE "Build" SET state = 'building' WHERE id = $1`, [buildId]);
        await other.query(`SELECT pg_notify($1, $2)`, [PROGRESS_CHANNEL, String(buildId)]);
        await stream.until((u) => u.some((x) => x.build.state === 'building'), 5_000);
        await other.query(`UPDATE "Build" SET state = 'finished', success = true WHERE id = $1`, [buildId]);
        await other.query(`SELECT pg_notify($1, $2)`, [PROGRESS_CHANNEL, String(buildId)]);
        await other.end();
      } else {
        // The embedded database has one process: the in-process announcement is the path.
        await setState(buildId, 'building');
        await Recorder.announce(t.services, buildId);
        await stream.until((u) => u.some((x) => x.build.state === 'building'), 5_000);
        await finish(buildId, true);
      }
      await stream.ended;
      expect(stream.updates.map((u) => u.build.state)).toEqual(['triggered', 'building', 'finished']);
    } finally {
      services.live = before;
    }
  });
});
