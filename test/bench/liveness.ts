// Benchmark (not a test): how fast hostile or heavy input is answered, beside a plain request in
// the same run. The tests assert what these requests answer (test/rest/bad-input.test.ts,
// test/unit/flex.test.ts, test/webhooks/webhooks.test.ts); how long that takes is measured here,
// never by a timed assertion in a test.
//   REST      GET /api/v3/projects/<p>/ plain, then with `expand=a.b.c.d.e` 1,000 times (repeated
//             parameters and one comma list) and `fields` of 3,000 segments
//   GraphQL   `{ project(slug:) { slug } }`, then a document of 10,000 aliases (refused while parsing)
//   flex      parseFlex of a plain `expand` vs 1,000 repeated deep paths in expand and fields
//   webhook   a GitHub `create` event answered, vs the version sync it queues run to its outcome by
//             a worker (to a repository that refuses the connection)
// Each row prints the median of its runs and its ratio to the row's baseline.
// Run: npx tsx test/bench/liveness.ts [runs]
// First: the app runs as `lectern serve` runs it, in production mode (src/bin.js).
import './production-mode.ts';

import { createHmac } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../../src/app.ts';
import { Worker } from '../../src/builds/worker.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { contextFor } from '../../src/domain/context.ts';
import { createIntegration } from '../../src/domain/integrations.ts';
import { createUser } from '../../src/domain/users.ts';
import { syncProjectVersions } from '../../src/domain/version-sync.ts';
import { createLogger } from '../../src/log.ts';
import { SYNC_TASK, syncJobKey } from '../../src/queue/version-syncs.ts';
import { parseFlex } from '../../src/rest/flex.ts';
import { bwrapAvailable } from '../../src/sandbox/sandbox.ts';

const RUNS = Number(process.argv[2] ?? 15);
const SECRET_KEY = 'bench-secret-key-0123456789abcdef0123456789';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
async function timed(fn: () => Promise<unknown> | unknown, runs = RUNS): Promise<number> {
  await fn(); // warm
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    ms.push(performance.now() - start);
  }
  return median(ms);
}
function row(group: string, name: string, ms: number, baseline: number) {
  console.log(`${group.padEnd(9)} ${name.padEnd(44)} ${ms.toFixed(2).padStart(9)} ms  ${(ms / baseline).toFixed(1).padStart(6)}×`);
}

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'lectern-bench-liveness-'));
const db = await openDatabase({ dataDir });
const config = loadConfig({
  LECTERN_DATA_DIR: dataDir,
  LECTERN_PUBLIC_URL: 'http://localhost',
  LECTERN_LOG_LEVEL: 'silent',
  LECTERN_API_THROTTLE: '0',
  LECTERN_BUILD_NETWORK_ALLOW: '127.0.0.0/8',
});
const log = createLogger('silent');
const { handler, services } = buildApp({ config, db, log, secretKey: SECRET_KEY });
const server = createServer(handler);
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;

try {
  const { user, token } = await createUser(db.prisma, 'bench');
  await db.prisma.project.create({
    data: { name: 'Bench', slug: 'bench', repositoryUrl: 'git://127.0.0.1:1/bench.git', users: { connect: { id: user.id } } },
  });
  await db.prisma.version.create({
    data: {
      projectId: (await db.prisma.project.findUniqueOrThrow({ where: { slug: 'bench' } })).id,
      slug: 'latest',
      verboseName: 'latest',
      machine: true,
      active: true,
      type: 'branch',
    },
  });
  const auth = { authorization: `Token ${token}` };
  const statuses = new Map<string, number>();
  const get = async (p: string) => {
    const res = await fetch(`${base}${p}`, { headers: auth });
    await res.arrayBuffer();
    if (res.status >= 500) throw new Error(`${p}: ${res.status}`);
    statuses.set(p, res.status);
  };
  /** The row's name with the status it was answered with (200 read, 400/414/431 refused). */
  const answered = (name: string, p: string) => `${name} → ${statuses.get(p)}`;
  const gql = async (query: string) => {
    const res = await fetch(`${base}/graphql`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
    await res.arrayBuffer();
    if (res.status >= 500) throw new Error(`graphql: ${res.status}`);
  };

  console.log(`median of ${RUNS} runs, ratio to the first row of each group`);
  const plain = await timed(() => get('/api/v3/projects/bench/'));
  row('REST', 'GET project', plain, plain);
  const repeated = Array(1000).fill('expand=a.b.c.d.e').join('&');
  const commas = `expand=${Array.from({ length: 1000 }, (_, i) => `a${i}.b.c.d.e`).join(',')}`;
  for (const [name, query] of [
    ['expand ×1000 (repeated)', repeated],
    ['expand ×1000 (commas)', commas],
    ['fields of 3000 segments', `fields=${'f.'.repeat(3000)}z`],
  ]) {
    const p = `/api/v3/projects/bench/?${query}`;
    const ms = await timed(() => get(p));
    row('REST', answered(`GET project, ${name}`, p), ms, plain);
  }

  const one = await timed(() => gql('{ project(slug: "bench") { slug } }'));
  row('GraphQL', 'one lookup', one, one);
  const aliases = `{ ${Array.from({ length: 10_000 }, (_, i) => `a${i}: project(slug: "bench") { slug }`).join(' ')} }`;
  row('GraphQL', '10,000 aliases (refused while parsing)', await timed(() => gql(aliases)), one);

  const simple = await timed(() => parseFlex({ expand: 'active_versions' }), RUNS * 20);
  row('flex', 'parseFlex expand=active_versions', simple, simple);
  row(
    'flex',
    'parseFlex 1000 deep paths ×2, omit 10 kB',
    await timed(() => parseFlex({ expand: Array(1000).fill('a.b.c.d.e'), fields: Array(1000).fill('a.b.c.d.e'), omit: 'x'.repeat(10_000) }), RUNS * 20),
    simple,
  );

  if (!bwrapAvailable()) {
    console.log('webhook   skipped: bubblewrap (bwrap) is not installed, and version syncs run in its sandbox');
  } else {
    const project = await db.prisma.project.findUniqueOrThrow({ where: { slug: 'bench' } });
    const { secret } = await createIntegration(contextFor(services, user), 'bench', 'github');
    const worker = new Worker(
      {
        prisma: db.prisma,
        storage: services.storage,
        cipher: services.cipher,
        log,
        dataDir,
        publicUrl: config.publicUrl,
        syncVersions: (projectId, url) => syncProjectVersions(services, projectId, url),
        limits: config.build,
        events: services.events,
      },
      { concurrency: 0, versionSync: { concurrency: 1, retry: { maxAttempts: 1 } } },
    );
    await worker.start();
    const answers: number[] = [];
    const outcomes: number[] = [];
    for (let i = 0; i < Math.min(RUNS, 5); i++) {
      await db.prisma.job.deleteMany({ where: { task: SYNC_TASK } });
      const body = JSON.stringify({ ref: `feature-${i}`, ref_type: 'branch' });
      const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
      const start = performance.now();
      const res = await fetch(`${base}/api/v2/webhook/github/bench/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-github-event': 'create', 'x-github-delivery': `bench-${i}`, 'x-hub-signature-256': signature },
        body,
      });
      await res.arrayBuffer();
      answers.push(performance.now() - start);
      for (;;) {
        const job = await db.prisma.job.findUnique({ where: { key: syncJobKey(project.id) } });
        if (job?.lastError || job?.state === 'done' || job?.state === 'failed') break;
        await new Promise((r) => setTimeout(r, 5));
      }
      outcomes.push(performance.now() - start);
    }
    await worker.stop(1000);
    const answer = median(answers);
    row('webhook', 'the answer to a GitHub create event', answer, answer);
    row('webhook', 'the sync it queued, to its outcome', median(outcomes), answer);
  }
} finally {
  server.close();
  await db.close();
  await rm(dataDir, { recursive: true, force: true });
}
