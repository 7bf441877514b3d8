// Outgoing deliveries are fair and bounded (issue 21): slow receivers on 127.0.0.1 play a hostile
// project's webhooks and forge: one accepts the connection and never answers, one trickles its
// status line and headers a byte at a time, one sends its headers and then trickles the body.
// Each attempt ends at LECTERN_WEBHOOK_TIMEOUT_SECONDS in total (not after that long of silence),
// commit statuses to the forge included, and one project's deliveries hold at most half of a
// worker's slots: another project's webhook is delivered while the hostile project's hang.
// docs/design/deliveries.md.
import { createHmac, randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '../../src/builds/worker.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { tarGz } from '../helpers/archives.ts';
import { importProject, latestBuildOf, startTestWorker, waitForBuild } from '../helpers/builds.ts';
import { type GitServer, git, startGitServer } from '../helpers/git.ts';
import { until } from '../helpers/wait.ts';

/** The deadline of every attempt here, in seconds. */
const DEADLINE = 4;
/** How long a trickling receiver would go on: far past the deadline. */
const TRICKLE_MS = 120_000;

interface Connection {
  path: string;
  /** Project of the receiver's URL (its first path segment), e.g. `hostile`. */
  project: string;
  openedAt: number;
  closedAt: number | null;
  /** Bytes the receiver had written when the connection closed. */
  written: number;
}

let t: TestApp;
let worker: Worker;
let gitServer: GitServer;
/** The slow receivers: what they do is the request path's second segment. */
let slow: Server;
let slowBase: string;
let fast: HttpServer;
let fastBase: string;
let token: string;
const connections: Connection[] = [];
const fastReceived: { path: string; at: number }[] = [];

const open = (project: string) => connections.filter((c) => c.project === project && c.closedAt === null);
/** The most connections of `project` open at once, so far. */
function mostAtOnce(project: string): number {
  const edges = connections
    .filter((c) => c.project === project)
    .flatMap((c) => [
      [c.openedAt, 1],
      [c.closedAt ?? Number.POSITIVE_INFINITY, -1],
    ])
    .sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
  let now = 0;
  let most = 0;
  for (const [, d] of edges) most = Math.max(most, (now += d!));
  return most;
}

/**
 * A receiver behaving as its path says: `/<project>/silent/…` reads the request and never answers;
 * `/<project>/trickle-headers/…` writes its status line and headers one byte every 300 ms, forever;
 * `/<project>/trickle-body/…` writes complete headers, then its body one byte every 300 ms.
 */
function slowReceiver(socket: Socket): void {
  let request = '';
  let timer: NodeJS.Timeout | undefined;
  const c: Connection = { path: '', project: '', openedAt: Date.now(), closedAt: null, written: 0 };
  const drip = (text: string) => {
    let i = 0;
    timer = setInterval(() => {
      if (socket.destroyed || Date.now() - c.openedAt > TRICKLE_MS) return clearInterval(timer);
      socket.write(text[i++ % text.length]!);
      c.written++;
    }, 300);
  };
  socket.on('data', (chunk: Buffer) => {
    if (c.path) return;
    request += chunk.toString('latin1');
    const line = /^POST (\S+) HTTP/.exec(request);
    if (!line || !request.includes('\r\n\r\n')) return;
    c.path = line[1]!;
    c.project = c.path.split('/')[1]!;
    connections.push(c);
    const kind = c.path.split('/')[2];
    if (kind === 'trickle-headers') drip('HTTP/1.1 200 OK\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n');
    else if (kind === 'trickle-body') {
      socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 100000\r\n\r\n');
      drip('x');
    }
    // silent: nothing, ever
  });
  socket.on('error', () => {});
  socket.on('close', () => {
    clearInterval(timer);
    c.closedAt = Date.now();
  });
}

const DELIVERIES = `query($p: String!) { project(slug: $p) { webhooks { url deliveries { event state attempts statusCode error durationMs } } } }`;

async function ok(query: string, variables: Record<string, unknown>) {
  const r = await t.gql(query, variables, token);
  const field = Object.values(r.data ?? {})[0] as { __typename?: string; data?: Record<string, any> } | undefined;
  expect(field?.__typename, JSON.stringify(r)).toMatch(/Success$/);
  return field!.data!;
}

const createWebhook = (project: string, url: string) =>
  ok(
    `mutation($p: String!, $input: WebhookInput!) { createWebhook(project: $p, input: $input) { __typename ... on MutationCreateWebhookSuccess { data { secret } } } }`,
    { p: project, input: { url, events: ['BUILD_TRIGGERED'] } },
  );

const upload = async (project: string, version: string) =>
  t.http
    .post(`/api/v3/projects/${project}/versions/${version}/upload/`)
    .set('authorization', `Token ${token}`)
    .set('content-type', 'application/gzip')
    .send(await tarGz([{ name: 'index.html', body: `<html><body><h1>${version}</h1></body></html>` }]));

beforeAll(async () => {
  slow = createServer(slowReceiver);
  await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
  slowBase = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
  fast = createHttpServer((req, res) => {
    req.resume();
    req.on('end', () => {
      fastReceived.push({ path: req.url ?? '', at: Date.now() });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => fast.listen(0, '127.0.0.1', r));
  fastBase = `http://127.0.0.1:${(fast.address() as AddressInfo).port}`;
  t = await testApp({ LECTERN_WEBHOOK_ALLOW: '127.0.0.0/8', LECTERN_WEBHOOK_TIMEOUT_SECONDS: String(DEADLINE) });
  token = await t.user('owner');
  gitServer = await startGitServer();
  // The default slots (4), and no retry: what a receiver does to one attempt is what is measured.
  worker = await startTestWorker(t, { notifications: { retry: { maxAttempts: 1 } } });
}, 60_000);

afterAll(async () => {
  await worker?.stop(1000);
  await gitServer?.close();
  await t?.close();
  for (const s of [slow, fast]) {
    (s as HttpServer).closeAllConnections?.();
    await new Promise((r) => s?.close(r));
  }
});

describe('each attempt has one deadline for connecting, headers and body', () => {
  it(`cuts a receiver that never answers, one trickling its headers, and ends one trickling its body once its status is in (deadline ${DEADLINE} s)`, async () => {
    await ok(`mutation { importProject(input: {name: "Deadline", uploadOnly: true}) { __typename } }`, {});
    for (const kind of ['silent', 'trickle-headers', 'trickle-body']) await createWebhook('deadline', `${slowBase}/deadline/${kind}/`);
    expect((await upload('deadline', '1.0')).status).toBe(201);

    const deliveries = await until(
      'three first attempts',
      async () => {
        const d = (await t.gql(DELIVERIES, { p: 'deadline' }, token)).data.project.webhooks as { url: string; deliveries: Record<string, any>[] }[];
        return d.every((w) => w.deliveries[0]?.attempts >= 1 && w.deliveries[0]?.state !== 'running') && d;
      },
      60_000,
    );
    const outcome = (kind: string) => deliveries.find((w) => w.url.includes(`/${kind}/`))!.deliveries[0]!;
    const ended = await until('the receivers to see their connections closed', () => {
      const mine = connections.filter((c) => c.project === 'deadline');
      return mine.length === 3 && mine.every((c) => c.closedAt !== null) && mine;
    });
    const lasted = (kind: string) => {
      const c = ended.find((x) => x.path.includes(`/${kind}/`))!;
      return c.closedAt! - c.openedAt;
    };
    const report = `silent ${lasted('silent')} ms, trickle-headers ${lasted('trickle-headers')} ms (${ended.find((c) => c.path.includes('trickle-headers'))!.written} bytes sent), trickle-body ${lasted('trickle-body')} ms`;

    // Nothing came, or only part of the headers while bytes kept coming: cut at the deadline,
    // long before the receiver would have stopped on its own.
    for (const kind of ['silent', 'trickle-headers']) {
      expect(outcome(kind), report).toMatchObject({ state: 'failed', statusCode: null, error: `No answer within ${DEADLINE} seconds.` });
      expect(outcome(kind).durationMs, report).toBeGreaterThanOrEqual(DEADLINE * 1000 - 50);
      expect(lasted(kind), report).toBeLessThan(TRICKLE_MS / 4);
    }
    // Its bytes kept coming every 300 ms: an idle timeout would never have fired.
    expect(ended.find((c) => c.path.includes('trickle-headers'))!.written, report).toBeGreaterThan(3);
    // The status was in: the receiver answered 200, and the connection is not kept for its body.
    expect(outcome('trickle-body'), report).toMatchObject({ state: 'delivered', statusCode: 200, error: null });
    expect(lasted('trickle-body'), report).toBeLessThan(DEADLINE * 1000);
  });
});

describe("one project's slow receivers hold at most a share of the slots", () => {
  it('delivers another project’s webhook while five slow receivers of one project (webhooks and its forge) hang', async () => {
    // The hostile project: a pull-request preview whose forge never answers its commit status,
    // and four webhooks whose receivers never answer or trickle.
    const repo = gitServer.repo('hostile', {
      '.readthedocs.yaml':
        'version: 2\nbuild:\n  commands:\n    - mkdir -p $READTHEDOCS_OUTPUT/html\n    - echo "<p>x</p>" > $READTHEDOCS_OUTPUT/html/index.html\n',
    });
    const { slug: hostile } = await importProject(t, token, 'Hostile', repo.url);
    await waitForBuild(t, await latestBuildOf(t, hostile));
    await ok(`mutation($p: String!) { updateProject(slug: $p, input: {externalBuildsEnabled: true}) { __typename } }`, { p: hostile });
    const integration = await ok(
      `mutation($p: String!) { createIntegration(project: $p, provider: github) { __typename ... on MutationCreateIntegrationSuccess { data { secret integration { id } } } } }`,
      { p: hostile },
    );
    await ok(
      `mutation($p: String!, $id: Int!, $token: String, $api: String) { setIntegrationToken(project: $p, id: $id, token: $token, apiUrl: $api) { __typename } }`,
      { p: hostile, id: integration.integration.id, token: 'forge-token-1', api: `${slowBase}/${hostile}/silent/forge` },
    );
    for (const kind of ['silent', 'silent', 'trickle-headers', 'trickle-headers'])
      await createWebhook(hostile, `${slowBase}/${hostile}/${kind}/${randomUUID()}`);
    await ok(`mutation { importProject(input: {name: "Bystander", uploadOnly: true}) { __typename } }`, {});
    await createWebhook('bystander', `${fastBase}/bystander`);

    // A pull request: its build:triggered goes to the four webhooks and, as a commit status, to the forge.
    git(repo.work, 'checkout', '--quiet', '-B', 'feature');
    const sha = repo.commit({ 'extra.txt': 'x' }, 'feature');
    git(repo.work, 'push', '--quiet', '--force', 'origin', 'HEAD:refs/pull/7/head');
    git(repo.work, 'checkout', '--quiet', 'main');
    const body = JSON.stringify({
      action: 'opened',
      number: 7,
      pull_request: { head: { sha, ref: 'feature' }, base: { ref: 'main' }, html_url: 'https://github.example/acme/docs/pull/7' },
      repository: { full_name: 'acme/docs', default_branch: 'main' },
    });
    const hook = await t.http
      .post(`/api/v2/webhook/github/${hostile}/`)
      .set('content-type', 'application/json')
      .set('x-github-event', 'pull_request')
      .set('x-github-delivery', randomUUID())
      .set('x-hub-signature-256', `sha256=${createHmac('sha256', integration.secret).update(body).digest('hex')}`)
      .send(body);
    expect(hook.status, JSON.stringify(hook.body)).toBe(200);
    // Half of the worker's four slots.
    const share = 2;
    await until(`the hostile project's deliveries to take ${share} slots`, () => open(hostile).length >= share);

    // The bystander's event, while the hostile project's receivers hang.
    const asked = Date.now();
    expect((await upload('bystander', '1.0')).status).toBe(201);
    const arrived = await until('the bystander’s webhook', () => fastReceived.find((r) => r.path === '/bystander'), 60_000);
    const hangingThen = connections.filter((c) => c.project === hostile && c.openedAt <= arrived.at && (c.closedAt === null || c.closedAt > arrived.at));
    const endedBefore = connections.filter((c) => c.project === hostile && c.closedAt !== null && c.closedAt <= arrived.at);
    const report = `bystander delivered ${arrived.at - asked} ms after its upload answered; ${hangingThen.length} hostile attempts were hanging then, ${endedBefore.length} had ended; deadline ${DEADLINE} s`;
    // It did not wait for a slot: no hostile attempt had ended (at its deadline) when it arrived.
    expect(hangingThen.length, report).toBe(share);
    expect(endedBefore, report).toEqual([]);

    // Every one of the hostile project's five deliveries, the forge's status included, is tried,
    // never more than its share at once.
    const tried = await until('all five hostile deliveries tried', () => {
      const paths = new Set(connections.filter((c) => c.project === hostile).map((c) => c.path.split('/').slice(0, 4).join('/')));
      return paths.size >= 5 && paths;
    });
    expect(
      [...tried].some((p) => p.endsWith('/silent/forge')),
      report,
    ).toBe(true);
    expect(mostAtOnce(hostile), report).toBeLessThanOrEqual(share);
    // The forge's status was cut at the deadline as the webhooks were.
    const status = await until('the commit status attempt to end', async () => {
      const row = await t.db.prisma.notificationDelivery.findFirst({ where: { kind: 'status', attempts: { gte: 1 }, state: { not: 'running' } } });
      return row;
    });
    expect(status, report).toMatchObject({ statusCode: null, error: `No answer within ${DEADLINE} seconds.` });
  }, 120_000);
});
