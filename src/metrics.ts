// Prometheus metrics at /metrics (docs/design/urls.md): the process (prom-client's defaults), HTTP traffic
// by part of the product, and the build queue as the database holds it, so an operator can alert
// on a queue that stops moving whichever process runs the workers. Labels are fixed sets, never
// paths, slugs or tokens.
// @see https://github.com/siimon/prom-client
import type { Request, RequestHandler } from 'express';
import client from 'prom-client';
import type { PrismaClient } from './db/database.ts';
import { BUILD_TASK } from './queue/builds.ts';
import { DELIVER_TASK } from './queue/deliveries.ts';
import { HOUSEKEEPING_TASK } from './queue/jobs.ts';
import { SYNC_TASK } from './queue/version-syncs.ts';

export type Area = 'graphql' | 'api_v3' | 'api_v2' | 'webhook' | 'docs' | 'health' | 'other';

/** Which part of the product a request path belongs to (a bounded label). */
export function areaOf(path: string, docsHost: boolean): Area {
  if (docsHost || path === '/docs' || path.startsWith('/docs/')) return 'docs';
  if (path === '/graphql' || path.startsWith('/graphql/')) return 'graphql';
  if (path.startsWith('/api/v2/webhook/')) return 'webhook';
  if (path.startsWith('/api/v3')) return 'api_v3';
  if (path.startsWith('/api/v2')) return 'api_v2';
  if (path === '/healthz' || path === '/readyz' || path === '/metrics') return 'health';
  return 'other';
}

export interface Metrics {
  registry: client.Registry;
  /** Counts and times every request; `docsHost` says whether a request is for docs (a docs host, or `/docs/` without one). */
  middleware(docsHost: (req: Request) => boolean): RequestHandler;
  handler: RequestHandler;
  /** Counts a request answered outside express (the docs fast path); `start` from process.hrtime.bigint(). */
  observe(area: Area, method: string, status: number, start: bigint): void;
  /** Counts a GraphQL operation executed (the REST adapter's included), by how it ran (graphql/compiled.ts). */
  graphqlOperation(executor: Executor): void;
}

/** How a GraphQL operation ran (graphql/compiled.ts). */
export type Executor = 'compiled' | 'interpreted';

const RUNNING = ['cloning', 'installing', 'building'] as const;
/** The job queue's tasks, each a label value; a task this version does not know counts as `other`. */
const TASKS = [BUILD_TASK, SYNC_TASK, DELIVER_TASK, HOUSEKEEPING_TASK];
const JOB_STATES = ['queued', 'running', 'failed'] as const;

export function createMetrics(prisma: PrismaClient): Metrics {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });

  const requests = new client.Counter({
    name: 'lectern_http_requests_total',
    help: 'HTTP requests answered, by part of the product, method and status class.',
    labelNames: ['area', 'method', 'status'] as const,
    registers: [registry],
  });
  const duration = new client.Histogram({
    name: 'lectern_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by part of the product.',
    labelNames: ['area'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });

  const operations = new client.Counter({
    name: 'lectern_graphql_operations_total',
    help: 'GraphQL operations executed (the REST APIs run theirs too), by executor: compiled (a query run before, as its compiled code) or interpreted.',
    labelNames: ['executor'] as const,
    registers: [registry],
  });
  const byExecutor = { compiled: operations.labels('compiled'), interpreted: operations.labels('interpreted') };

  queueGauges(registry, prisma);

  const methods = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
  // Label children looked up once per label set: the docs fast path answers tens of thousands of
  // requests a second, and prom-client hashes the labels on every unbound call.
  const counters = new Map<string, client.Counter.Internal>();
  const timers = new Map<string, client.Histogram.Internal<string>>();
  const observe = (area: Area, method: string, status: number, start: bigint) => {
    const m = methods.has(method) ? method : 'OTHER';
    const cls = status >= 100 && status < 600 ? `${Math.floor(status / 100)}xx` : 'other';
    const key = `${area} ${m} ${cls}`;
    let counter = counters.get(key);
    if (!counter) counters.set(key, (counter = requests.labels(area, m, cls)));
    counter.inc();
    let timer = timers.get(area);
    if (!timer) timers.set(area, (timer = duration.labels(area)));
    timer.observe(Number(process.hrtime.bigint() - start) / 1e9);
  };
  return {
    registry,
    observe,
    graphqlOperation: (executor) => byExecutor[executor].inc(),
    middleware: (docsHost) => (req, res, next) => {
      const start = process.hrtime.bigint();
      // Read now: mounted routers rewrite req.url while they handle the request.
      const area = areaOf(req.path, docsHost(req));
      res.once('finish', () => observe(area, req.method, res.statusCode, start));
      next();
    },
    handler: async (_req, res) => {
      try {
        const body = await registry.metrics();
        res.set('Content-Type', registry.contentType).set('Cache-Control', 'no-store').send(body);
      } catch {
        // The database is unreachable: the process metrics still matter, the queue ones are missing.
        res.status(503).set('Cache-Control', 'no-store').type('text/plain').send('# metrics unavailable: the database did not answer\n');
      }
    },
  };
}

/** The build queue and the job queue as the database holds them, read at scrape time: they are shared by every process. */
function queueGauges(registry: client.Registry, prisma: PrismaClient): void {
  new client.Gauge({
    name: 'lectern_builds',
    help: 'Builds not finished yet, by state (triggered = waiting for a worker).',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      const rows = await prisma.build.groupBy({ by: ['state'], where: { state: { not: 'finished' } }, _count: { _all: true } });
      this.reset();
      for (const state of ['triggered', ...RUNNING]) this.set({ state }, rows.find((r) => r.state === state)?._count._all ?? 0);
    },
  });
  new client.Gauge({
    name: 'lectern_build_queue_oldest_seconds',
    help: 'How long the oldest waiting build has waited (0 when none waits).',
    registers: [registry],
    async collect() {
      const oldest = await prisma.build.findFirst({ where: { state: 'triggered' }, orderBy: { createdAt: 'asc' }, select: { createdAt: true } });
      this.set(oldest ? Math.max(0, (Date.now() - oldest.createdAt.getTime()) / 1000) : 0);
    },
  });

  new client.Gauge({
    name: 'lectern_jobs',
    help: 'Jobs of the job queue (builds, version syncs, notification deliveries, housekeeping) by task and state: waiting (queued, due or waiting out a retry), running, failed (attempts used).',
    labelNames: ['task', 'state'] as const,
    registers: [registry],
    async collect() {
      const rows = await prisma.job.groupBy({ by: ['task', 'state'], where: { state: { in: [...JOB_STATES] } }, _count: { _all: true } });
      this.reset();
      for (const task of [...TASKS, 'other']) for (const state of JOB_STATES) this.set({ task, state }, 0);
      for (const r of rows) this.inc({ task: TASKS.includes(r.task) ? r.task : 'other', state: r.state }, r._count._all);
    },
  });
}
