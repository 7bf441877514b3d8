// Two apps in one process share nothing (issue 23, docs/design/events.md): each has its own
// settings, its own events and its own docs caches. A write through one app is served by it at
// once and leaves the other's caches alone; a build queued through one wakes its own worker and
// is never heard by the other; the bound on live build logs per client is counted by each app.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '../../src/builds/worker.ts';
import type { DomainEvents } from '../../src/events.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { startTestWorker } from '../helpers/builds.ts';
import { firstBuildUpdate } from '../helpers/follow.ts';
import { htmlPage, makeProject, publish, removePages } from '../helpers/publish.ts';
import { until } from '../helpers/wait.ts';

/** Both cache what docs URLs resolve to for a minute: only an app's own events make it look again. */
const CACHED = { LECTERN_SERVE_CACHE_SECONDS: '60' };

let a: TestApp;
let b: TestApp;
const tokens = { a: '', b: '' };
const projectIds = { a: 0, b: 0 };
/** Everything B's events carried. */
const heardByB: string[] = [];

beforeAll(async () => {
  [a, b] = await Promise.all([testApp(CACHED), testApp({ ...CACHED, LECTERN_DOCS_DOMAIN: 'docs.test' })]);
  for (const [name, t] of [
    ['a', a],
    ['b', b],
  ] as const) {
    tokens[name] = await t.user('alice');
    const alice = await t.db.prisma.user.findUniqueOrThrow({ where: { username: 'alice' } });
    const project = await makeProject(t, { slug: 'guide', maintainers: [alice.id] });
    projectIds[name] = project.id;
    await publish(t, { project, version: 'latest', html: htmlPage(`<p>${name.toUpperCase()} first</p>`) });
  }
  for (const name of ['buildQueued', 'syncQueued', 'deliveryQueued', 'servedChanged'] as (keyof DomainEvents)[]) {
    b.services.events.on(name, () => heardByB.push(name));
  }
});

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  removePages();
});

/** A's page, on its `/docs/` path. */
const pageOfA = () => a.http.get('/docs/guide/en/latest/index.html');
/** B's page, on its docs host (B's setting, not A's). */
const pageOfB = () => b.http.get('/en/latest/index.html').set('host', 'guide.docs.test');

async function createRedirect(t: TestApp, token: string, input: Record<string, unknown>): Promise<void> {
  const r = await t.gql(
    `mutation($input: RedirectInput!) { createRedirect(project: "guide", input: $input) { __typename ... on Error { message } } }`,
    { input },
    token,
  );
  expect(r.data?.createRedirect?.__typename, JSON.stringify(r)).toBe('MutationCreateRedirectSuccess');
}

describe('two apps in one process share nothing', () => {
  it('keeps each its own settings: A serves docs under /docs/, B on its docs domain', async () => {
    expect(a.services.config.docsDomain).toBeUndefined();
    expect(b.services.config.docsDomain).toBe('docs.test');
    expect(a.services.events).not.toBe(b.services.events);

    const fromA = await pageOfA();
    expect(fromA.status).toBe(200);
    expect(fromA.text).toContain('A first');
    const fromB = await pageOfB();
    expect(fromB.status).toBe(200);
    expect(fromB.text).toContain('B first');
    // On B, `/docs/…` on Lectern's own host is sent to the docs host; A serves it itself.
    const redirected = await b.http.get('/docs/guide/en/latest/index.html');
    expect(redirected.status).toBeGreaterThanOrEqual(300);
    expect(redirected.status).toBeLessThan(400);
    expect(redirected.headers.location).toContain('guide.docs.test');
  });

  it("serves A's write at once in A, and leaves what B cached alone", async () => {
    // Both pages are cached (the previous test read them); B's version becomes private behind B's
    // back, straight in its database: B keeps serving what it cached until it hears of a write.
    await b.db.prisma.version.update({ where: { projectId_slug: { projectId: projectIds.b, slug: 'latest' } }, data: { privacyLevel: 'private' } });
    expect((await pageOfB()).status).toBe(200);
    heardByB.length = 0;

    await createRedirect(a, tokens.a, { type: 'page', fromUrl: '/index.html', toUrl: '/moved.html', force: true });
    const fromA = await pageOfA();
    expect([fromA.status, fromA.headers.location]).toEqual([302, '/docs/guide/en/latest/moved.html']);

    // A's servedChanged emptied none of B's caches: B still answers from them.
    const fromB = await pageOfB();
    expect(fromB.status).toBe(200);
    expect(fromB.text).toContain('B first');
    expect(heardByB).toEqual([]);

    // A write through B itself makes B look again, and find its version private.
    await createRedirect(b, tokens.b, { type: 'page', fromUrl: '/elsewhere.html', toUrl: '/index.html' });
    expect(heardByB).toContain('servedChanged');
    expect((await pageOfB()).status).toBe(404);
  });

  it("wakes A's worker for a build queued through A, and B hears nothing of it", async () => {
    let worker: Worker | undefined;
    try {
      a.queries.length = 0;
      worker = await startTestWorker(a);
      // Its first look at the queue is over: from now on only a wake-up (or its 15 s poll) makes it look again.
      await until('the worker to look at the queue once', () => a.queries.some((q) => q.includes('FOR UPDATE SKIP LOCKED')), 10_000, 20);
      heardByB.length = 0;

      const queued = await a.gql(
        `mutation { triggerBuild(project: "guide", version: "latest") { __typename ... on MutationTriggerBuildSuccess { data { build { id } } } ... on Error { message } } }`,
        {},
        tokens.a,
      );
      const id = queued.data?.triggerBuild?.data?.build?.id as number | undefined;
      expect(id, JSON.stringify(queued)).toBeTypeOf('number');
      // Claimed well before the worker's next poll: the build queued through A woke A's worker.
      await until(
        "A's worker to claim the build",
        async () => (await a.db.prisma.build.findUniqueOrThrow({ where: { id: id! } })).state !== 'triggered',
        5_000,
        20,
      );
      expect(heardByB).toEqual([]);
      expect(await b.db.prisma.build.count()).toBe(1); // B's own publish of its page, nothing of A's
    } finally {
      await worker?.stop(5_000);
    }
  });

  it("counts each app's followers of live build logs on their own: the same user in A does not use up B's bound", async () => {
    const ids = await Promise.all([a, b].map(async (t) => (await t.db.prisma.user.findUniqueOrThrow({ where: { username: 'alice' } })).id));
    // Both apps' alice have the same id, so one shared count would hold them as one client.
    expect(ids[0]).toBe(ids[1]);
    const servers: Server[] = [];
    const streams: AbortController[] = [];
    try {
      const [baseA, baseB] = await Promise.all(
        [a, b].map(async (t) => {
          const server = createServer(t.handler).listen(0, '127.0.0.1');
          servers.push(server);
          await new Promise((r) => server.once('listening', r));
          return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        }),
      );
      a.services.live.maxPerClient = 1;
      b.services.live.maxPerClient = 1;
      const running = (t: TestApp, projectId: number) => t.db.prisma.build.create({ data: { projectId, state: 'building' } });
      const [inA, alsoInA, inB] = [await running(a, projectIds.a), await running(a, projectIds.a), await running(b, projectIds.b)];

      expect(await follow(baseA!, inA.id, tokens.a, streams)).toEqual({ ok: true });
      expect(await follow(baseA!, alsoInA.id, tokens.a, streams)).toEqual({
        ok: false,
        error: 'This client already follows 1 builds live: close one first.',
      });
      expect(await follow(baseB!, inB.id, tokens.b, streams)).toEqual({ ok: true });
    } finally {
      for (const s of streams) s.abort();
      for (const server of servers) {
        server.closeAllConnections();
        await new Promise((r) => server.close(r));
      }
    }
  });
});

/** One live subscription to a build, signed in with `token`: its first event. */
const follow = (base: string, buildId: number, token: string, streams: AbortController[]) =>
  firstBuildUpdate(base, buildId, { authorization: `Token ${token}` }, streams);
