// Outgoing webhooks (issue 14's notifications): a receiver on 127.0.0.1 records what Lectern sends
// for real builds and uploads, run by a real worker: the events, Read the Docs' payload template
// and default JSON, the X-Hub-Signature HMAC, retries after the receiver answers 500 twice, a
// receiver that never answers (the build does not wait), outcomes in GraphQL, and server-side
// request forgery refused (an address at creation, a name resolving to loopback at delivery)
// when LECTERN_WEBHOOK_ALLOW does not name it.
import { createHmac } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '../../src/builds/worker.ts';
import { refusedAddress } from '../../src/notifications/send.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { tarGz } from '../helpers/archives.ts';
import { importProject, latestBuildOf, startTestWorker, waitForBuild } from '../helpers/builds.ts';
import { type GitServer, startGitServer } from '../helpers/git.ts';
import { until } from '../helpers/wait.ts';

interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

let t: TestApp;
let worker: Worker;
let git: GitServer;
let receiver: Server;
let base: string;
let token: string;
const received: Received[] = [];
/** How many more times /flaky answers 500. */
let flakyFailures = 2;

const CREATE = `mutation($p: String!, $input: WebhookInput!) { createWebhook(project: $p, input: $input) {
  __typename ... on MutationCreateWebhookSuccess { data { secret webhook { id url events payload } } }
  ... on ValidationError { fieldErrors { field messages } } ... on Error { message } } }`;
const DELIVERIES = `query($p: String!) { project(slug: $p) { webhooks { id url deliveries { event buildId state attempts statusCode error durationMs lastAttemptAt nextAttemptAt } } } }`;

async function createWebhook(app: TestApp, tok: string, project: string, input: Record<string, unknown>) {
  return (await app.gql(CREATE, { p: project, input }, tok)).data.createWebhook;
}

const upload = async (app: TestApp, tok: string, project: string, version: string) =>
  app.http
    .post(`/api/v3/projects/${project}/versions/${version}/upload/`)
    .set('authorization', `Token ${tok}`)
    .set('content-type', 'application/gzip')
    .send(await tarGz([{ name: 'index.html', body: `<html><body><h1>${version}</h1></body></html>` }]));

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body });
      if (req.url === '/hang') return; // never answers
      if (req.url === '/flaky' && flakyFailures > 0) {
        flakyFailures--;
        res.writeHead(500).end('try later');
        return;
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  t = await testApp({ LECTERN_WEBHOOK_ALLOW: '127.0.0.0/8', LECTERN_WEBHOOK_TIMEOUT_SECONDS: '1' });
  token = await t.user('hooker');
  git = await startGitServer();
  worker = await startTestWorker(t, { notifications: { retry: { baseSeconds: 0.2, capSeconds: 0.4, maxAttempts: 4 } } });
}, 60_000);
afterAll(async () => {
  await worker?.stop(1000);
  await git?.close();
  await t?.close();
  receiver?.closeAllConnections();
  await new Promise((r) => receiver?.close(r));
});

describe('outgoing webhooks', () => {
  it('sends build:triggered and build:failed for a real build, signed, with the default JSON; the secret is shown once only', async () => {
    const repo = git.repo('hooked', { '.readthedocs.yaml': 'version: 2\nbuild:\n  commands:\n    - "exit 3"\n' });
    const { slug } = await importProject(t, token, 'Hooked', repo.url);
    await waitForBuild(t, await latestBuildOf(t, slug)); // the import's own build, before any webhook
    const created = await createWebhook(t, token, slug, { url: `${base}/default`, events: ['BUILD_TRIGGERED', 'BUILD_PASSED', 'BUILD_FAILED'] });
    expect(created.__typename).toBe('MutationCreateWebhookSuccess');
    const { secret, webhook } = created.data;
    expect(secret).toMatch(/^[0-9a-f]{48}$/);
    const stored = await t.db.prisma.webhook.findUniqueOrThrow({ where: { id: webhook.id } });
    expect(stored.secretEncrypted).not.toContain(secret);

    const trigger = await t.http.post(`/api/v3/projects/${slug}/versions/latest/builds/`).set('authorization', `Token ${token}`);
    const build = await waitForBuild(t, trigger.body.build.id);
    expect(build.success).toBe(false);
    const mine = await until('two deliveries', async () => {
      const got = received.filter((r) => r.path === '/default');
      return got.length >= 2 && got;
    });
    expect(mine.map((r) => r.headers['x-rtd-event'])).toEqual(['build:triggered', 'build:failed']);
    for (const r of mine) {
      const hmac = createHmac('sha256', secret).update(r.body).digest('hex');
      expect(r.headers['x-hub-signature']).toBe(hmac);
      expect(r.headers['x-hub-signature-256']).toBe(`sha256=${hmac}`);
      expect(r.headers['content-type']).toBe('application/json');
    }
    expect(JSON.parse(mine[1]!.body)).toMatchObject({
      event: 'build:failed',
      name: 'Hooked',
      slug,
      version: 'latest',
      build: { id: build.id, commit: build.commit, state: 'finished', success: false, url: `${t.config.publicUrl}/projects/${slug}/builds/${build.id}` },
    });

    // Read back: the URL and events, never the secret; outcomes of both deliveries.
    const read = await t.gql(DELIVERIES, { p: slug }, token);
    expect(JSON.stringify(read.data)).not.toContain(secret);
    expect(read.data.project.webhooks[0].deliveries.map((d: { event: string; state: string; statusCode: number }) => [d.event, d.state, d.statusCode])).toEqual(
      [
        ['BUILD_FAILED', 'delivered', 204],
        ['BUILD_TRIGGERED', 'delivered', 204],
      ],
    );
    // Nobody but a maintainer reads the webhooks.
    const stranger = await t.user('nosy');
    const refused = await t.gql(DELIVERIES, { p: slug }, stranger);
    expect(refused.data?.project?.webhooks ?? null).toBeNull();
  }, 120_000);

  it("renders Read the Docs' template variables, and retries a receiver that answers 500 twice", async () => {
    const r = await t.gql(`mutation { importProject(input: {name: "Templated", uploadOnly: true}) { __typename } }`, {}, token);
    expect(r.data.importProject.__typename).toBe('MutationImportProjectSuccess');
    const template =
      '{"text": "{{ event }} {{ project.name }} ({{project.slug}}) {{ version.slug }}/{{ version.name }} #{{ build.id }} {{ build.url }} {{ build.docs_url }} [{{ build.commit }}] {{ project.url }}"}';
    const created = await createWebhook(t, token, 'templated', { url: `${base}/flaky`, events: ['BUILD_PASSED'], payload: template, secret: 'my-own-secret' });
    expect(created.data.secret).toBe('my-own-secret');
    const res = await upload(t, token, 'templated', '2.0');
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const id = res.body.id as number;
    const deliveries = await until('a delivery after two failures', async () => {
      const d = (await t.gql(DELIVERIES, { p: 'templated' }, token)).data.project.webhooks[0].deliveries;
      return d[0]?.state === 'delivered' && d;
    });
    expect(deliveries).toHaveLength(1); // build:triggered was not asked for
    expect(deliveries[0]).toMatchObject({
      event: 'BUILD_PASSED',
      buildId: id,
      state: 'delivered',
      attempts: 3,
      statusCode: 204,
      error: null,
      nextAttemptAt: null,
    });
    const sent = received.filter((x) => x.path === '/flaky');
    expect(sent).toHaveLength(3);
    expect(new Set(sent.map((x) => x.body)).size).toBe(1); // the same body each time
    const text = JSON.parse(sent[0]!.body).text as string;
    const origin = t.config.publicUrl;
    expect(text).toBe(
      `build:passed Templated (templated) 2.0/2.0 #${id} ${origin}/projects/templated/builds/${id} ${origin}/docs/templated/en/2.0/ [] ${origin}/projects/templated`,
    );
    expect(sent[0]!.headers['x-hub-signature']).toBe(createHmac('sha256', 'my-own-secret').update(sent[0]!.body).digest('hex'));
  });

  it('a receiver that never answers delays nothing: the upload answers, the delivery times out and is retried', async () => {
    await t.gql(`mutation { importProject(input: {name: "Hung", uploadOnly: true}) { __typename } }`, {}, token);
    await createWebhook(t, token, 'hung', { url: `${base}/hang`, events: ['BUILD_TRIGGERED'] });
    const started = Date.now();
    const res = await upload(t, token, 'hung', '1.0');
    expect(res.status).toBe(201);
    expect(res.body.success).toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000);
    const d = await until('a timed-out attempt', async () => {
      const list = (await t.gql(DELIVERIES, { p: 'hung' }, token)).data.project.webhooks[0].deliveries;
      return list[0]?.attempts >= 2 && list[0];
    });
    expect(d.error).toBe('No answer within 1 seconds.');
    expect(d.statusCode).toBeNull();
  });

  it('validates what it is given and changes nothing when refused', async () => {
    await t.gql(`mutation { importProject(input: {name: "Checked", uploadOnly: true}) { __typename } }`, {}, token);
    // The worker's own statements (its claims, the earlier tests' deliveries retried) would count
    // as writes: it is stopped, the last test of this file to need it.
    await worker.stop(1000);
    const writes = t.writes();
    for (const [input, field, message] of [
      [{ url: 'ftp://example.com/', events: ['BUILD_PASSED'] }, 'url', /Only http and https/],
      [{ url: 'https://user:pw@example.com/', events: ['BUILD_PASSED'] }, 'url', /user name or password/],
      [{ url: 'https://example.com/', events: [] }, 'events', /at least one event/],
      [{ url: 'https://example.com/', events: ['BUILD_PASSED'], secret: 'short' }, 'secret', /8 to 255/],
      [{ url: 'https://example.com/', events: ['BUILD_PASSED'], payload: 'x'.repeat(25_001) }, 'payload', /25000/],
    ] as const) {
      const r = await createWebhook(t, token, 'checked', input);
      expect(r.__typename).toBe('ValidationError');
      expect(r.fieldErrors[0].field).toBe(field);
      expect(r.fieldErrors[0].messages.join(' ')).toMatch(message);
    }
    expect(t.writes()).toBe(writes);
  });
});

describe('server-side request forgery', () => {
  let strict: TestApp;
  let strictWorker: Worker;
  let strictToken: string;
  beforeAll(async () => {
    strict = await testApp({ LECTERN_WEBHOOK_TIMEOUT_SECONDS: '1' });
    strictToken = await strict.user('admin');
    strictWorker = await startTestWorker(strict, { notifications: { retry: { baseSeconds: 0.2, capSeconds: 0.4, maxAttempts: 2 } } });
    await strict.gql(`mutation { importProject(input: {name: "Strict", uploadOnly: true}) { __typename } }`, {}, strictToken);
  });
  afterAll(async () => {
    await strictWorker?.stop(1000);
    await strict?.close();
  });

  it('refuses loopback, private, link-local and metadata addresses when the webhook is made', async () => {
    for (const url of [
      base,
      'http://localhost:8000/',
      'http://10.1.2.3/',
      'http://192.168.0.10/hook',
      'http://169.254.169.254/latest/meta-data/',
      'http://[::1]:8000/',
      'http://[::ffff:127.0.0.1]/',
      'http://0.0.0.0/',
    ]) {
      const r = await createWebhook(strict, strictToken, 'strict', { url, events: ['BUILD_PASSED'] });
      expect(r.__typename, url).toBe('ValidationError');
      expect(r.fieldErrors[0].messages.join(' '), url).toMatch(
        /loopback, private or reserved address; Lectern sends notifications there only when LECTERN_WEBHOOK_ALLOW names it/,
      );
    }
    expect(await strict.db.prisma.webhook.count()).toBe(0);
    expect(refusedAddress('93.184.216.34', [])).toBeNull();
  });

  it('refuses at delivery a name that resolves to loopback, and sends it nothing', async () => {
    const name = hostname();
    const resolved = await lookup(name).catch(() => null);
    if (!resolved || refusedAddress(resolved.address, []) === null) {
      throw new Error(
        `this test needs the machine's host name (${name}) to resolve to a loopback or private address (/etc/hosts); it resolves to ${resolved?.address ?? 'nothing'}`,
      );
    }
    const port = (receiver.address() as AddressInfo).port;
    const created = await createWebhook(strict, strictToken, 'strict', { url: `http://${name}:${port}/rebound`, events: ['BUILD_PASSED'] });
    expect(created.__typename).toBe('MutationCreateWebhookSuccess'); // a name is resolved when sending
    const res = await upload(strict, strictToken, 'strict', '1.0');
    expect(res.status).toBe(201);
    const d = await until('a refused delivery', async () => {
      const list = (await strict.gql(DELIVERIES, { p: 'strict' }, strictToken)).data.project.webhooks[0].deliveries;
      return list[0]?.state === 'failed' && list[0];
    });
    expect(d.error).toMatch(new RegExp(`^Refused: ${name} resolves to ${resolved.address.replace(/\./g, '\\.')} is a loopback, private or reserved address`));
    expect(received.filter((r) => r.path === '/rebound')).toEqual([]);
  });
});
