// Every setting Lectern reads from the environment, validated once at start-up so a typo fails
// loudly with every bad key listed, instead of surfacing later as odd behaviour.
// README "Configuration" lists them.
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { DEFAULT_DATA_DIR } from './db/lock.ts';

const intFrom = (def: number, min: number, max: number) => z.coerce.number().int().min(min).max(max).default(def);
/** A whole number whose default depends on another setting (worked out once the others are read). */
const optionalInt = (min: number, max: number) => z.coerce.number().int().min(min).max(max).optional();

const schema = z.object({
  LECTERN_DATA_DIR: z.string().min(1).default(DEFAULT_DATA_DIR),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  LECTERN_STORAGE: z.string().optional(),
  HOST: z.string().min(1).default('0.0.0.0'),
  PORT: intFrom(8000, 0, 65535),
  LECTERN_PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  /**
   * Docs are served on `<project>.<this>`; `off` serves them sandboxed under `/docs/` of Lectern's own
   * origin. Unset: `localhost:<port>` when the public URL is on localhost, else off (docsDomainFor).
   */
  LECTERN_DOCS_DOMAIN: z
    .string()
    .regex(/^(off|[A-Za-z0-9.-]+(:\d{1,5})?)$/, 'must be a domain such as docs.example.org (a port may follow: docs.example:8000), or off')
    .optional(),
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
  /**
   * Largest page a list answers (REST's and GraphQL's `limit`). Read the Docs' v3 has no maximum and
   * clients rely on it (`lftools rtd project-list` asks for 999 and never follows `next`): the
   * default is one no real client reaches, a bound against abuse only.
   */
  LECTERN_API_MAX_LIMIT: intFrom(10_000, 100, 1_000_000),
  /** REST v3 requests per user: `N/second|minute|hour|day`, or `0` for no limit (RTD: 60/minute). */
  LECTERN_API_THROTTLE: z
    .string()
    .regex(/^(0|off|\d+\/(s|sec|second|m|min|minute|h|hour|d|day))$/, 'must be N/second, N/minute, N/hour, N/day or 0')
    .default('60/minute'),
  /**
   * Failed sign-ins (`N/minute|hour|…`, or `0`): N per account from one client address, 10 N per address, and N per account
   * from all, past which each client gets 3 more tries (db/throttle.ts SignInThrottle): guessing is slow, the owner is not locked out.
   */
  LECTERN_SIGNIN_THROTTLE: z
    .string()
    .regex(/^(0|off|\d+\/(s|sec|second|m|min|minute|h|hour|d|day))$/, 'must be N/second, N/minute, N/hour, N/day or 0')
    .default('30/hour'),
  /** A signed-in session unused for this long is over (seconds; 7 days by default). */
  LECTERN_SESSION_IDLE_SECONDS: intFrom(604_800, 60, 31_536_000),
  /** Docs server behind nginx: answer with `X-Accel-Redirect: <prefix><storage key>` instead of the bytes (file: storage only). */
  LECTERN_SERVE_X_ACCEL: z
    .string()
    .regex(/^\/(?:[A-Za-z0-9._~-]+\/)*$/, 'must be a path that starts and ends with /, such as /_lectern_files/')
    .refine((v) => !v.split('/').some((s) => s === '.' || s === '..'), 'must not contain . or .. segments')
    .optional(),
  /** Seconds the docs server keeps what a URL resolves to (project, redirects, version); `0` looks up every request. */
  LECTERN_SERVE_CACHE_SECONDS: intFrom(2, 0, 300),
  /** Origins (`https://docs.example.com`, comma-separated) allowed to call /graphql and /api/v3 from a browser; unset: none. */
  LECTERN_CORS_ORIGINS: z
    .string()
    .refine((v) => list(v).every((o) => /^https?:\/\/[^/\s]+$/.test(o)), 'must be comma-separated origins such as https://docs.example.com')
    .optional(),
  /** Proxies (IP addresses or CIDR ranges, comma-separated) whose X-Forwarded-For and X-Forwarded-Proto are believed; unset: none. */
  LECTERN_TRUSTED_PROXIES: z
    .string()
    .refine((v) => list(v).every(isCidr), 'must be comma-separated IP addresses or CIDR ranges')
    .optional(),
  /** Private IPv4 ranges (CIDR, comma-separated) that builds' network steps may reach; loopback, link-local and this machine's addresses never. */
  LECTERN_BUILD_NETWORK_ALLOW: z
    .string()
    .refine((v) => list(v).every(isCidr), 'must be comma-separated IPv4 CIDR ranges')
    .optional(),
  /**
   * Directories (absolute paths, comma-separated) whose repositories builds may clone as
   * `file:///…` or a plain path; each is mounted read-only into the clone's sandbox only. Unset: none.
   */
  LECTERN_BUILD_LOCAL_REPOSITORIES: z.string().optional(),
  /** Output of one build command kept in its log, and of all of a build's commands together (bytes). */
  LECTERN_BUILD_LOG_COMMAND_BYTES: intFrom(1_048_576, 1024, 1024 ** 3),
  LECTERN_BUILD_LOG_BYTES: intFrom(10 * 1_048_576, 1024, 1024 ** 3),
  /** What one build may publish: bytes and files. */
  LECTERN_BUILD_MAX_PUBLISH_BYTES: intFrom(1024 ** 3, 1024, 1024 ** 4),
  LECTERN_BUILD_MAX_PUBLISH_FILES: intFrom(50_000, 1, 10_000_000),
  /** Disk a build may use while it runs (checkout, environment, output), in bytes. */
  LECTERN_BUILD_MAX_DISK_BYTES: intFrom(5 * 1024 ** 3, 1_048_576, 1024 ** 4),
  /** Memory of a build's sandbox (bytes) and processes it may run at once. */
  LECTERN_BUILD_MAX_MEMORY_BYTES: intFrom(4 * 1024 ** 3, 64 * 1_048_576, 1024 ** 4),
  LECTERN_BUILD_MAX_PROCESSES: intFrom(512, 16, 100_000),
  /** Seconds a build may run (a project's own, set by a site admin, may differ). */
  LECTERN_BUILD_TIME_LIMIT_SECONDS: intFrom(900, 10, 86_400),
  /**
   * How far a site admin may raise one project's limits (docs/design/builds.md "Per-project
   * limits"); unset: 4 times the default each. Never below the default (buildCeilingIssues).
   */
  LECTERN_BUILD_PROJECT_MAX_TIME_SECONDS: optionalInt(10, 4 * 86_400),
  LECTERN_BUILD_PROJECT_MAX_MEMORY_BYTES: optionalInt(64 * 1_048_576, 4 * 1024 ** 4),
  LECTERN_BUILD_PROJECT_MAX_PROCESSES: optionalInt(16, 400_000),
  /** First of the user ids builds run as when Lectern runs as root (build N runs as base + N mod 100000). */
  LECTERN_BUILD_UID_BASE: intFrom(1_500_000_000, 1000, 4_000_000_000),
  /** What one project's download cache (pip's, uv's) may grow to between builds before it is emptied (bytes). */
  LECTERN_BUILD_CACHE_MAX_BYTES: intFrom(1024 ** 3, 0, 1024 ** 4),
  /** Where build images are kept (default: the data dir's images/); every build worker machine has its own. */
  LECTERN_BUILD_IMAGES_DIR: z
    .string()
    .refine((v) => path.isAbsolute(v), 'must be an absolute path')
    .optional(),
  /**
   * A directory of relocatable Pythons for `build.tools.python` versions no image has: each an
   * extracted python-build-standalone `install_only` archive at python/<version>/ (docs/design/images.md "Tools").
   */
  LECTERN_BUILD_TOOLS_DIR: z
    .string()
    .refine((v) => path.isAbsolute(v), 'must be an absolute path')
    .optional(),
  /** Debian's archive that build images are made from and `build.apt_packages` come from (docs/design/images.md). */
  LECTERN_BUILD_DEBIAN_MIRROR: z
    .string()
    .regex(/^https?:\/\/[^\s,]+$/, 'must be an http or https URL')
    .default('http://deb.debian.org/debian'),
  /** Debian's security archive for the images, or `none`. */
  LECTERN_BUILD_DEBIAN_SECURITY_MIRROR: z
    .string()
    .regex(/^(https?:\/\/[^\s,]+|none)$/, 'must be an http or https URL, or none')
    .default('http://deb.debian.org/debian-security'),
  /** More Debian packages every build image holds (comma-separated names). */
  LECTERN_BUILD_IMAGE_PACKAGES: z
    .string()
    .refine((v) => list(v).every((p) => /^[a-z0-9][a-z0-9+.-]+$/.test(p)), 'must be comma-separated Debian package names')
    .optional(),
  /** Largest archive of built docs one upload may send (bytes); what it expands to is LECTERN_BUILD_MAX_PUBLISH_*'s. */
  LECTERN_UPLOAD_MAX_BYTES: intFrom(2 * 1024 ** 3, 1024, 1024 ** 4),
  /** How many times its own size an uploaded archive may expand to (zip bombs). */
  LECTERN_UPLOAD_MAX_RATIO: intFrom(100, 2, 100_000),
  /** Loopback, private or reserved ranges (CIDR, comma-separated) outgoing webhooks may reach; none by default. */
  LECTERN_WEBHOOK_ALLOW: z
    .string()
    .refine((v) => list(v).every(isCidr), 'must be comma-separated CIDR ranges')
    .optional(),
  /** Days a pull request's preview is kept after the pull request closes (Read the Docs: 90). */
  LECTERN_PREVIEW_RETENTION_DAYS: intFrom(90, 0, 3650),
  /** How long a webhook receiver has to answer (seconds). */
  LECTERN_WEBHOOK_TIMEOUT_SECONDS: intFrom(10, 1, 120),
  /** Longest one SQL statement may run (ms) on either database; 0: no limit. */
  LECTERN_DB_STATEMENT_TIMEOUT_MS: intFrom(10_000, 0, 3_600_000),
  /** Days page views and searches are kept for the projects' analytics (docs/design/analytics.md); 0 keeps none. */
  LECTERN_ANALYTICS_RETENTION_DAYS: intFrom(90, 0, 3650),
  /** Days the audit log keeps its entries (docs/design/audit.md). */
  LECTERN_AUDIT_RETENTION_DAYS: intFrom(90, 1, 3650),
  /** The SMTP server email goes through (docs/design/email.md); unset: Lectern sends no email. */
  LECTERN_SMTP_HOST: z
    .string()
    .regex(/^[A-Za-z0-9.:[\]-]+$/, 'must be a host name or address')
    .optional(),
  LECTERN_SMTP_PORT: intFrom(587, 1, 65535),
  /** `starttls` (required: no email goes in clear), `tls` (implicit TLS, port 465), or `none` (a relay on this machine or network). */
  LECTERN_SMTP_SECURITY: z.enum(['starttls', 'tls', 'none']).default('starttls'),
  LECTERN_SMTP_USER: z.string().optional(),
  LECTERN_SMTP_PASSWORD: z.string().optional(),
  /** The sender: an address, optionally with a name (`Docs <docs@example.com>`). Required with LECTERN_SMTP_HOST. */
  LECTERN_SMTP_FROM: z
    .string()
    .regex(/^([^<>\r\n]*<[^@\s<>]+@[^@\s<>]+>|[^@\s<>]+@[^@\s<>]+)$/, 'must be an email address, optionally with a name: Docs <docs@example.com>')
    .optional(),
  /** A PEM file of the certificate authorities the SMTP server's certificate is checked against (an internal CA); the system's by default. */
  LECTERN_SMTP_CA_FILE: z.string().optional(),
  /** An OpenID Connect provider to sign in with (docs/design/sso.md): its issuer URL; with the client id and secret below. */
  LECTERN_OIDC_ISSUER: z.string().optional(),
  LECTERN_OIDC_CLIENT_ID: z.string().max(255).optional(),
  LECTERN_OIDC_CLIENT_SECRET: z.string().max(2000).optional(),
  /** What the sign-in page's button says: `Sign in with <name>`. */
  LECTERN_OIDC_NAME: z.string().max(100).default('single sign-on'),
  LECTERN_OIDC_SCOPES: z.string().max(255).default('openid email profile'),
  /** The ID token's claim listing the person's groups, which teams' SSO groups follow; unset: none. */
  LECTERN_OIDC_GROUPS_CLAIM: z.string().max(100).default(''),
  /** Whether a person with no account gets one at their first sign-in. */
  LECTERN_OIDC_ALLOW_SIGN_UP: z.enum(['true', 'false']).default('true'),
});

function list(v: string): string[] {
  return v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function isCidr(v: string): boolean {
  const [addr, bits, ...rest] = v.split('/');
  if (rest.length || !addr) return false;
  const kind = isIP(addr);
  if (!kind) return false;
  return bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (kind === 4 ? 32 : 128));
}

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
  /** Largest page a list answers (`limit`), REST and GraphQL alike. */
  apiMaxLimit: number;
  /** REST v3 rate per user, as `N/unit`; `0` turns it off. */
  apiThrottle: string;
  signInThrottle: string;
  sessionIdleSeconds: number;
  /** nginx internal location that maps to the file storage's objects/ directory; unset: Lectern sends the bytes. */
  serveXAccel: string | undefined;
  /** How long the docs server may answer from what it looked up before (other processes' writes show after this); 0: no cache. */
  serveCacheSeconds: number;
  /** Origins allowed to call /graphql and /api/v3 from a browser (empty: none). */
  corsOrigins: string[];
  /** Proxies (addresses or CIDR ranges) whose X-Forwarded-* headers are believed (empty: none). */
  trustedProxies: string[];
  build: BuildLimits;
  /** Outgoing webhooks: the private ranges they may reach, and how long a receiver has to answer. */
  webhooks: { allow: string[]; timeoutSeconds: number };
  /** Days a closed pull request's preview is kept. */
  previewRetentionDays: number;
  /** Longest one SQL statement may run, ms (0: no limit). */
  dbStatementTimeoutMs: number;
  /** Where email goes out; null: none is sent. */
  email: EmailSettings | null;
  /** Days analytics are kept; 0: none are counted. */
  analyticsRetentionDays: number;
  /** Days the audit log keeps its entries, and revoked tokens' hashes (LECTERN_AUDIT_RETENTION_DAYS). */
  auditRetentionDays: number;
  /** The identity provider of the LECTERN_OIDC_* settings (docs/design/sso.md), or null. */
  oidc: OidcSettings | null;
}

/** LECTERN_SMTP_*: the SMTP server and the sender (docs/design/email.md). */
export interface EmailSettings {
  host: string;
  port: number;
  security: 'starttls' | 'tls' | 'none';
  user: string | undefined;
  password: string | undefined;
  from: string;
  /** The CA certificates (PEM) the server's certificate is checked against; undefined: the system's. */
  ca: string | undefined;
}

/** What a build may use and reach. @see README "Security model" */
export interface BuildLimits {
  /** Private IPv4 CIDR ranges network steps may reach besides the public internet. */
  networkAllow: string[];
  /** Directories (real paths) whose repositories builds may clone (LECTERN_BUILD_LOCAL_REPOSITORIES). */
  localRepositories: string[];
  logCommandBytes: number;
  logBytes: number;
  maxPublishBytes: number;
  maxPublishFiles: number;
  maxDiskBytes: number;
  maxMemoryBytes: number;
  maxProcesses: number;
  /** Seconds a build may run (LECTERN_BUILD_TIME_LIMIT_SECONDS). These three are every build's unless its project's are set. */
  timeLimitSeconds: number;
  /** The most a site admin may raise one project's limits to (LECTERN_BUILD_PROJECT_MAX_*; domain/build-limits.ts). */
  projectMax: { timeSeconds: number; memoryBytes: number; processes: number };
  /**
   * Where the time, memory and processes limits come from, as a build stopped by one is told: the
   * installation's settings, or a project's own limits (domain/build-limits.ts buildLimitsFor).
   */
  limitSources: Record<'time' | 'memory' | 'processes', string>;
  uidBase: number;
  /** What a project's download cache may grow to (LECTERN_BUILD_CACHE_MAX_BYTES). */
  cacheMaxBytes: number;
  /** Where build images come from and what more they hold (docs/design/images.md). */
  images: { dir: string; mirror: string; securityMirror: string | null; packages: string[]; toolsDir: string | null };
  /** Uploaded archives of built docs: their size, and how far they may expand. */
  uploadMaxBytes: number;
  uploadMaxRatio: number;
}

export const DEFAULT_BUILD_LIMITS: BuildLimits = buildLimits(schema.parse({}));

function buildLimits(e: z.infer<typeof schema>): BuildLimits {
  return {
    networkAllow: list(e.LECTERN_BUILD_NETWORK_ALLOW ?? ''),
    localRepositories: [],
    logCommandBytes: e.LECTERN_BUILD_LOG_COMMAND_BYTES,
    logBytes: e.LECTERN_BUILD_LOG_BYTES,
    maxPublishBytes: e.LECTERN_BUILD_MAX_PUBLISH_BYTES,
    maxPublishFiles: e.LECTERN_BUILD_MAX_PUBLISH_FILES,
    maxDiskBytes: e.LECTERN_BUILD_MAX_DISK_BYTES,
    maxMemoryBytes: e.LECTERN_BUILD_MAX_MEMORY_BYTES,
    maxProcesses: e.LECTERN_BUILD_MAX_PROCESSES,
    timeLimitSeconds: e.LECTERN_BUILD_TIME_LIMIT_SECONDS,
    limitSources: { time: 'LECTERN_BUILD_TIME_LIMIT_SECONDS', memory: 'LECTERN_BUILD_MAX_MEMORY_BYTES', processes: 'LECTERN_BUILD_MAX_PROCESSES' },
    projectMax: {
      timeSeconds: e.LECTERN_BUILD_PROJECT_MAX_TIME_SECONDS ?? 4 * e.LECTERN_BUILD_TIME_LIMIT_SECONDS,
      memoryBytes: e.LECTERN_BUILD_PROJECT_MAX_MEMORY_BYTES ?? 4 * e.LECTERN_BUILD_MAX_MEMORY_BYTES,
      processes: e.LECTERN_BUILD_PROJECT_MAX_PROCESSES ?? 4 * e.LECTERN_BUILD_MAX_PROCESSES,
    },
    uidBase: e.LECTERN_BUILD_UID_BASE,
    cacheMaxBytes: e.LECTERN_BUILD_CACHE_MAX_BYTES,
    images: {
      dir: path.resolve(e.LECTERN_BUILD_IMAGES_DIR ?? path.join(e.LECTERN_DATA_DIR, 'images')),
      mirror: e.LECTERN_BUILD_DEBIAN_MIRROR,
      securityMirror: e.LECTERN_BUILD_DEBIAN_SECURITY_MIRROR === 'none' ? null : e.LECTERN_BUILD_DEBIAN_SECURITY_MIRROR,
      packages: list(e.LECTERN_BUILD_IMAGE_PACKAGES ?? ''),
      toolsDir: e.LECTERN_BUILD_TOOLS_DIR ? path.resolve(e.LECTERN_BUILD_TOOLS_DIR) : null,
    },
    uploadMaxBytes: e.LECTERN_UPLOAD_MAX_BYTES,
    uploadMaxRatio: e.LECTERN_UPLOAD_MAX_RATIO,
  };
}

/** Each ceiling a project may be raised to, with the default every build gets: the setting of each. */
const BUILD_CEILINGS = [
  ['LECTERN_BUILD_PROJECT_MAX_TIME_SECONDS', 'LECTERN_BUILD_TIME_LIMIT_SECONDS'],
  ['LECTERN_BUILD_PROJECT_MAX_MEMORY_BYTES', 'LECTERN_BUILD_MAX_MEMORY_BYTES'],
  ['LECTERN_BUILD_PROJECT_MAX_PROCESSES', 'LECTERN_BUILD_MAX_PROCESSES'],
] as const;

/** A ceiling set below its default: a raised project would get less than any other (names both settings, never a value). */
function buildCeilingIssues(e: z.infer<typeof schema>): { path: string[]; message: string }[] {
  return BUILD_CEILINGS.filter(([ceiling, def]) => e[ceiling] !== undefined && e[ceiling] < e[def]).map(([ceiling, def]) => ({
    path: [ceiling],
    message: `must not be below ${def} (the limit every build gets): it is how far a site admin may raise one project's builds`,
  }));
}

/**
 * LECTERN_BUILD_LOCAL_REPOSITORIES as real paths, or why not: each an absolute path to an existing
 * directory, never `/`, nor one holding or inside Lectern's data dir or its file storage (a
 * clone's sandbox would see the database, the secret key and every build). A path is not a secret:
 * the message names it.
 */
function localRepositories(value: string | undefined, dataDirSetting: string | undefined, storage: string | undefined): string[] | string {
  const out: string[] = [];
  if (!value) return out;
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  const dataDir = real(path.resolve(dataDirSetting ?? DEFAULT_DATA_DIR));
  const storageDir = storage?.startsWith('file:') ? real(storage.startsWith('file://') ? fileURLToPath(storage) : storage.slice(5)) : null;
  const protectedDirs = [dataDir, ...(storageDir ? [storageDir] : [])];
  const under = (p: string, d: string) => p === d || d === '/' || p.startsWith(`${d}/`);
  for (const item of list(value)) {
    if (!path.isAbsolute(item)) return `${item} is not an absolute path`;
    let dir: string;
    try {
      dir = realpathSync(item);
      if (!statSync(dir).isDirectory()) return `${item} is not a directory`;
    } catch {
      return `${item} does not exist`;
    }
    if (dir === '/') return `${item} is the whole file system; name the directories that hold repositories`;
    const clash = protectedDirs.find((d) => under(d, dir) || under(dir, d));
    if (clash) return `${item} overlaps Lectern's own data (${clash}), which builds must never read`;
    out.push(dir);
  }
  return [...new Set(out)];
}

/**
 * Where docs are served (docs/design/docs-origins.md). A set domain wins, and `off` means none
 * (docs sandboxed under `/docs/`). Unset, docs on a localhost public URL get an origin of their own
 * per project, `<project>.localhost:<port>`: browsers resolve every `*.localhost` name to this
 * machine without DNS, and each such host is a site of its own. Any other public URL has no names
 * Lectern could count on: unset means none there.
 */
export function docsDomainFor(setting: string | undefined, publicUrl: string): string | undefined {
  if (setting?.toLowerCase() === 'off') return undefined;
  if (setting) return setting;
  const url = new URL(publicUrl);
  return url.hostname === 'localhost' ? url.host : undefined;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Reads the settings; throws a ConfigError that names every invalid variable. */
export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  name: string;
  scopes: string;
  groupsClaim: string;
  allowSignUp: boolean;
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const known = Object.fromEntries(Object.keys(schema.shape).map((k) => [k, env[k] === '' ? undefined : env[k]]));
  const parsed = schema.safeParse(known);
  // nginx can only be handed files it can read itself: X-Accel-Redirect needs local (file:) storage.
  const xAccelIssue =
    known.LECTERN_SERVE_X_ACCEL && known.LECTERN_STORAGE && !known.LECTERN_STORAGE.startsWith('file:')
      ? [{ path: ['LECTERN_SERVE_X_ACCEL'], message: 'needs LECTERN_STORAGE=file:… (nginx must read the files itself)' }]
      : [];
  const local = localRepositories(known.LECTERN_BUILD_LOCAL_REPOSITORIES, known.LECTERN_DATA_DIR, known.LECTERN_STORAGE);
  const localIssue = typeof local === 'string' ? [{ path: ['LECTERN_BUILD_LOCAL_REPOSITORIES'], message: local }] : [];
  const email = emailSettings(known);
  const emailIssue = typeof email === 'string' ? [{ path: ['LECTERN_SMTP_HOST'], message: email }] : [];
  const oidcIssue = oidcProblem(known);
  const oidcIssues = oidcIssue ? [{ path: ['LECTERN_OIDC_ISSUER'], message: oidcIssue }] : [];
  const ceilingIssues = parsed.success ? buildCeilingIssues(parsed.data) : [];
  if (!parsed.success || xAccelIssue.length || localIssue.length || emailIssue.length || oidcIssues.length || ceilingIssues.length) {
    // Name the variable and the rule, never the value: it may be a secret.
    const issues = [...(parsed.success ? [] : parsed.error.issues), ...xAccelIssue, ...localIssue, ...emailIssue, ...oidcIssues, ...ceilingIssues];
    const lines = issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const dataDir = path.resolve(e.LECTERN_DATA_DIR);
  const publicUrl = (e.LECTERN_PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, '');
  return {
    dataDir,
    databaseUrl: e.DATABASE_URL,
    storage: e.LECTERN_STORAGE ?? `file:${path.join(dataDir, 'storage')}`,
    host: e.HOST,
    port: e.PORT,
    publicUrl,
    docsDomain: docsDomainFor(e.LECTERN_DOCS_DOMAIN, publicUrl),
    secretKey: e.LECTERN_SECRET_KEY,
    buildConcurrency: e.LECTERN_BUILD_CONCURRENCY,
    buildLeaseSeconds: e.LECTERN_BUILD_LEASE_SECONDS,
    logLevel: e.LECTERN_LOG_LEVEL,
    maxBodyBytes: e.LECTERN_MAX_BODY_BYTES,
    graphql: { maxDepth: e.LECTERN_GRAPHQL_MAX_DEPTH, maxComplexity: e.LECTERN_GRAPHQL_MAX_COMPLEXITY },
    apiMaxLimit: e.LECTERN_API_MAX_LIMIT,
    apiThrottle: e.LECTERN_API_THROTTLE,
    signInThrottle: e.LECTERN_SIGNIN_THROTTLE,
    sessionIdleSeconds: e.LECTERN_SESSION_IDLE_SECONDS,
    serveXAccel: e.LECTERN_SERVE_X_ACCEL,
    serveCacheSeconds: e.LECTERN_SERVE_CACHE_SECONDS,
    corsOrigins: list(e.LECTERN_CORS_ORIGINS ?? ''),
    trustedProxies: list(e.LECTERN_TRUSTED_PROXIES ?? ''),
    build: { ...buildLimits(e), localRepositories: local as string[] },
    webhooks: { allow: list(e.LECTERN_WEBHOOK_ALLOW ?? ''), timeoutSeconds: e.LECTERN_WEBHOOK_TIMEOUT_SECONDS },
    previewRetentionDays: e.LECTERN_PREVIEW_RETENTION_DAYS,
    dbStatementTimeoutMs: e.LECTERN_DB_STATEMENT_TIMEOUT_MS,
    analyticsRetentionDays: e.LECTERN_ANALYTICS_RETENTION_DAYS,
    auditRetentionDays: e.LECTERN_AUDIT_RETENTION_DAYS,
    email: email && typeof email !== 'string' ? { ...email, port: e.LECTERN_SMTP_PORT, security: e.LECTERN_SMTP_SECURITY } : null,
    oidc: e.LECTERN_OIDC_ISSUER
      ? {
          issuer: e.LECTERN_OIDC_ISSUER,
          clientId: e.LECTERN_OIDC_CLIENT_ID!,
          clientSecret: e.LECTERN_OIDC_CLIENT_SECRET!,
          name: e.LECTERN_OIDC_NAME,
          scopes: e.LECTERN_OIDC_SCOPES,
          groupsClaim: e.LECTERN_OIDC_GROUPS_CLAIM,
          allowSignUp: e.LECTERN_OIDC_ALLOW_SIGN_UP === 'true',
        }
      : null,
  };
}

/**
 * The SMTP settings when LECTERN_SMTP_HOST is set (null when not), or what is wrong with them: a
 * sender is needed, a user and a password go together, and the CA file must be readable.
 */
/** Why an OpenID issuer URL is refused: https only, or http on this machine (a provider run beside Lectern, or in a test). */
export function issuerProblem(issuer: string | null | undefined): string | undefined {
  if (!issuer) return undefined;
  let u: URL;
  try {
    u = new URL(issuer);
  } catch {
    return 'Enter a valid URL.';
  }
  if (u.protocol === 'https:' && u.hostname) return undefined;
  if (u.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname)) return undefined;
  return 'The issuer must be an https URL (http only for a provider on this machine).';
}

/** What is wrong with the LECTERN_OIDC_* settings, or undefined. */
function oidcProblem(known: Record<string, string | undefined>): string | undefined {
  if (!known.LECTERN_OIDC_ISSUER) return known.LECTERN_OIDC_CLIENT_ID ? 'LECTERN_OIDC_CLIENT_ID is set without LECTERN_OIDC_ISSUER' : undefined;
  if (!known.LECTERN_OIDC_CLIENT_ID || !known.LECTERN_OIDC_CLIENT_SECRET) return 'needs LECTERN_OIDC_CLIENT_ID and LECTERN_OIDC_CLIENT_SECRET';
  return issuerProblem(known.LECTERN_OIDC_ISSUER);
}

function emailSettings(known: Record<string, string | undefined>): Omit<EmailSettings, 'port' | 'security'> | string | null {
  const host = known.LECTERN_SMTP_HOST;
  if (!host) return null;
  if (!known.LECTERN_SMTP_FROM) return 'needs LECTERN_SMTP_FROM, the address email is sent from';
  if (!known.LECTERN_SMTP_USER !== !known.LECTERN_SMTP_PASSWORD) return 'LECTERN_SMTP_USER and LECTERN_SMTP_PASSWORD go together';
  let ca: string | undefined;
  if (known.LECTERN_SMTP_CA_FILE) {
    try {
      ca = readFileSync(known.LECTERN_SMTP_CA_FILE, 'utf8');
    } catch {
      return 'LECTERN_SMTP_CA_FILE cannot be read';
    }
  }
  return { host, user: known.LECTERN_SMTP_USER, password: known.LECTERN_SMTP_PASSWORD, from: known.LECTERN_SMTP_FROM, ca };
}
