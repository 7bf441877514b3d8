// /metrics as a Prometheus server scrapes it: the process, requests by part of the product, and
// the build queue read from the database; nothing in it names a project, a path or a token.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishBuild } from '../../src/builds/publish.ts';
import { areaOf } from '../../src/metrics.ts';
import { type TestApp, testApp } from '../helpers/app.ts';

let t: TestApp;
let token: string;

beforeAll(async () => {
  t = await testApp();
  token = await t.user('metrics');
});
afterAll(() => t.close());

const scrape = async () => {
  const res = await t.http.get('/metrics');
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text;
};
const value = (text: string, series: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe('/metrics', () => {
  it('has the process metrics', async () => {
    const text = await scrape();
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d/m);
  });

  it('counts requests by part of the product and status class', async () => {
    const before = await scrape();
    const graphql = (s: string) => value(s, 'lectern_http_requests_total{area="graphql",method="POST",status="2xx"}') ?? 0;
    const v3 = (s: string) => value(s, 'lectern_http_requests_total{area="api_v3",method="GET",status="4xx"}') ?? 0;
    await t.gql('{ viewer { username } }', {}, token);
    await t.gql('{ viewer { username } }', {}, token);
    await t.http.get('/api/v3/projects/');
    const after = await scrape();
    expect(graphql(after) - graphql(before)).toBe(2);
    expect(v3(after) - v3(before)).toBe(1);
    expect(after).toMatch(/^lectern_http_request_duration_seconds_bucket\{le="0\.1",area="graphql"\} \d+/m);
  });

  it('shows the build queue from the database', async () => {
    const queued = (s: string) => value(s, 'lectern_builds{state="triggered"}');
    expect(queued(await scrape())).toBe(0);
    // An import queues the first build of latest; no worker runs in this app.
    const res = await t.gql(
      `mutation { importProject(input: {name: "Metered", repository: {url: "https://github.com/acme/metered"}}) { __typename } }`,
      {},
      token,
    );
    expect(res.data.importProject.__typename).toMatch(/Success/);
    const text = await scrape();
    expect(queued(text)).toBe(1);
    // Its job, waiting in the job queue.
    expect(value(text, 'lectern_jobs{task="build",state="queued"}')).toBe(1);
    expect(value(text, 'lectern_builds{state="building"}')).toBe(0);
    expect(value(text, 'lectern_build_queue_oldest_seconds')).toBeGreaterThanOrEqual(0);
    // Labels are fixed sets: no slug, path or token appears.
    expect(text).not.toContain('metered');
    expect(text).not.toContain(token);
  });

  it('shows the job queue from the database', async () => {
    const syncs = (s: string) => value(s, 'lectern_jobs{task="version-sync",state="queued"}');
    const before = syncs(await scrape());
    // A sync asked for is a job, waiting: no worker runs in this app.
    const res = await t.gql(`mutation { syncVersions(project: "metered") { __typename } }`, {}, token);
    expect(res.data.syncVersions.__typename).toMatch(/Success/);
    const text = await scrape();
    expect(syncs(text)).toBe((before ?? 0) + 1);
    expect(value(text, 'lectern_jobs{task="deliver",state="failed"}')).toBe(0);
    expect(value(text, 'lectern_jobs{task="other",state="running"}')).toBe(0);
  });
});

describe('docs requests', () => {
  it('are counted whether express or the fast path answers them', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'lectern-metrics-html-'));
    writeFileSync(path.join(dir, 'index.html'), '<html><body><p>metered page</p></body></html>');
    const version = await t.db.prisma.version.findFirstOrThrow({ where: { project: { slug: 'metered' }, slug: 'latest' } });
    const build = await t.db.prisma.build.findFirstOrThrow({ where: { versionId: version.id } });
    await publishBuild(t.services, { projectSlug: 'metered', version, buildId: build.id, htmlDir: dir });
    rmSync(dir, { recursive: true, force: true });
    const docs = (s: string) => value(s, 'lectern_http_requests_total{area="docs",method="GET",status="2xx"}') ?? 0;
    const before = docs(await scrape());
    for (let i = 0; i < 3; i++) {
      const res = await t.http.get('/docs/metered/en/latest/');
      expect(res.status).toBe(200);
      expect(res.text).toContain('metered page');
    }
    expect(docs(await scrape()) - before).toBe(3);
  });
});

describe('areaOf', () => {
  it.each([
    ['/graphql', false, 'graphql'],
    ['/api/v3/projects/x/', false, 'api_v3'],
    ['/api/v2/build/1/', false, 'api_v2'],
    ['/api/v2/webhook/github/x/', false, 'webhook'],
    ['/docs/x/en/latest/', false, 'docs'],
    ['/en/latest/', true, 'docs'],
    ['/healthz', false, 'health'],
    ['/favicon.ico', false, 'other'],
  ] as const)('%s (docs host: %s) is %s', (path, docsHost, area) => {
    expect(areaOf(path, docsHost)).toBe(area);
  });
});
