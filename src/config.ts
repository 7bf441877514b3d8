// Every setting Lectern reads from the environment, validated once at start-up so a typo fails
// loudly with every bad key listed, instead of surfacing later as odd behaviour.
// @see ../shared/spec/decisions.md §3
import path from 'node:path';
import { z } from 'zod';

const intFrom = (def: number, min: number, max: number) =>
  z.coerce.number().int().min(min).max(max).default(def);

const schema = z.object({
  LECTERN_DATA_DIR: z.string().min(1).default('./.lectern'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  LECTERN_STORAGE: z.string().optional(),
  HOST: z.string().min(1).default('0.0.0.0'),
  PORT: intFrom(8000, 0, 65535),
  LECTERN_PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  LECTERN_DOCS_DOMAIN: z.string().optional(),
  LECTERN_SECRET_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
  LECTERN_BUILD_CONCURRENCY: intFrom(1, 0, 64),
  /** Seconds a worker holds a build without a heartbeat before another worker takes it back. */
  LECTERN_BUILD_LEASE_SECONDS: intFrom(60, 3, 3600),
  LECTERN_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Largest request body accepted, in bytes. */
  LECTERN_MAX_BODY_BYTES: intFrom(1_048_576, 1024, 100 * 1_048_576),
  /** GraphQL limits: nesting depth and total complexity of one operation. */
  LECTERN_GRAPHQL_MAX_DEPTH: intFrom(12, 2, 50),
  LECTERN_GRAPHQL_MAX_COMPLEXITY: intFrom(20_000, 100, 1_000_000),
  /** REST v3 requests per user: `N/second|minute|hour|day`, or `0` for no limit (RTD: 60/minute). */
  LECTERN_API_THROTTLE: z
    .string()
    .regex(/^(0|off|\d+\/(s|sec|second|m|min|minute|h|hour|d|day))$/, 'must be N/second, N/minute, N/hour, N/day or 0')
    .default('60/minute'),
  /** Docs server behind nginx: answer with `X-Accel-Redirect: <prefix><storage key>` instead of the bytes (file: storage only). */
  LECTERN_SERVE_X_ACCEL: z
    .string()
    .regex(/^\/(?:[A-Za-z0-9._~-]+\/)*$/, 'must be a path that starts and ends with /, such as /_lectern_files/')
    .refine((v) => !v.split('/').some((s) => s === '.' || s === '..'), 'must not contain . or .. segments')
    .optional(),
  /** Seconds the docs server keeps what a URL resolves to (project, redirects, version); `0` looks up every request. */
  LECTERN_SERVE_CACHE_SECONDS: intFrom(2, 0, 300),
});

export type Env = z.input<typeof schema>;

export interface Config {
  dataDir: string;
  databaseUrl: string | undefined;
  storage: string;
  host: string;
  port: number;
  publicUrl: string;
  docsDomain: string | undefined;
  secretKey: string | undefined;
  buildConcurrency: number;
  buildLeaseSeconds: number;
  logLevel: z.infer<typeof schema>['LECTERN_LOG_LEVEL'];
  maxBodyBytes: number;
  graphql: { maxDepth: number; maxComplexity: number };
  /** REST v3 rate per user, as `N/unit`; `0` turns it off. */
  apiThrottle: string;
  /** nginx internal location that maps to the file storage's objects/ directory; unset: Lectern sends the bytes. */
  serveXAccel: string | undefined;
  /** How long the docs server may answer from what it looked up before (other processes' writes show after this); 0: no cache. */
  serveCacheSeconds: number;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Reads the settings; throws a ConfigError that names every invalid variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const known = Object.fromEntries(
    Object.keys(schema.shape).map((k) => [k, env[k] === '' ? undefined : env[k]]),
  );
  const parsed = schema.safeParse(known);
  // nginx can only be handed files it can read itself: X-Accel-Redirect needs local (file:) storage.
  const xAccelIssue =
    known.LECTERN_SERVE_X_ACCEL && known.LECTERN_STORAGE && !known.LECTERN_STORAGE.startsWith('file:')
      ? [{ path: ['LECTERN_SERVE_X_ACCEL'], message: 'needs LECTERN_STORAGE=file:… (nginx must read the files itself)' }]
      : [];
  if (!parsed.success || xAccelIssue.length) {
    // Name the variable and the rule, never the value: it may be a secret.
    const issues = [...(parsed.success ? [] : parsed.error.issues), ...xAccelIssue];
    const lines = issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const dataDir = path.resolve(e.LECTERN_DATA_DIR);
  return {
    dataDir,
    databaseUrl: e.DATABASE_URL,
    storage: e.LECTERN_STORAGE ?? `file:${path.join(dataDir, 'storage')}`,
    host: e.HOST,
    port: e.PORT,
    publicUrl: (e.LECTERN_PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
    docsDomain: e.LECTERN_DOCS_DOMAIN,
    secretKey: e.LECTERN_SECRET_KEY,
    buildConcurrency: e.LECTERN_BUILD_CONCURRENCY,
    buildLeaseSeconds: e.LECTERN_BUILD_LEASE_SECONDS,
    logLevel: e.LECTERN_LOG_LEVEL,
    maxBodyBytes: e.LECTERN_MAX_BODY_BYTES,
    graphql: { maxDepth: e.LECTERN_GRAPHQL_MAX_DEPTH, maxComplexity: e.LECTERN_GRAPHQL_MAX_COMPLEXITY },
    apiThrottle: e.LECTERN_API_THROTTLE,
    serveXAccel: e.LECTERN_SERVE_X_ACCEL,
    serveCacheSeconds: e.LECTERN_SERVE_CACHE_SECONDS,
  };
}
