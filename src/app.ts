// buildApp(): the whole HTTP surface (GraphQL, health, and later REST and docs) as an express
// app that does not listen, so tests drive it in-process through the real HTTP stack.

import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type ErrorRequestHandler, type Express } from 'express';
import type { GraphQLError } from 'graphql';
import { createYoga, type Plugin, maskError as yogaMaskError } from 'graphql-yoga';
import { AnalyticsRecorder } from './analytics/recorder.ts';
import { badgeRouter } from './badges/route.ts';
import type { Config } from './config.ts';
import { dashboardRouter } from './dashboard.ts';
import { type Database, dbOwner } from './db/database.ts';
import { LiveBuilds } from './db/progress.ts';
import { DatabaseThrottle, SignInThrottle } from './db/throttle.ts';
import type { Mailer, SessionHandle, Viewer } from './domain/context.ts';
import { endSession, overTls, readSessionCookie, sessionCookieName, sessionViewer, startSession } from './domain/sessions.ts';
import { createEvents, type Events } from './events.ts';
import { GRAPHIQL_ASSETS, graphiql } from './graphiql.ts';
import { takingTurnsByCost } from './graphql/admission.ts';
import { compiledExecution } from './graphql/compiled.ts';
import { type Context, createContext, type Services } from './graphql/context.ts';
import { LecternError, toGraphQLError } from './graphql/errors.ts';
import { schema } from './graphql/schema.ts';
import type { Yoga } from './graphql/yoga.ts';
import type { Logger } from './log.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { openApiDocument } from './rest/openapi.ts';
import { restRouter } from './rest/router.ts';
import { v2Router } from './rest/v2/routes.ts';
import { v3Referenced } from './rest/v3/resources.ts';
import { v3Routes } from './rest/v3/routes.ts';
import { Cipher } from './secrets.ts';
import { ServedGeneration } from './serve/cache.ts';
import { FastPath, type TrustProxy } from './serve/fast.ts';
import { docsDomainOf, docsHostLabel } from './serve/paths.ts';
import { serveRouter } from './serve/router.ts';
import { ssoRouter } from './sso/oidc.ts';
import { openStorage, type Storage } from './storage/index.ts';
import { parseRate, Throttle } from './throttle.ts';
import { graphqlMultipart } from './uploads/multipart.ts';
import { uploadsDir } from './uploads/upload-docs.ts';
import { webhookRouter } from './webhooks/router.ts';

export interface AppDeps {
  config: Config;
  db: Database;
  log: Logger;
  secretKey: string;
  /** Defaults to the one LECTERN_STORAGE names. */
  storage?: Storage;
  /** The app's in-process signals; a new set by default. Give the same to the app's build worker. */
  events?: Events;
}

/**
 * Signed-in browsers on /graphql (domain/sessions.ts). The session cookie is HttpOnly, SameSite=Lax,
 * host-only with Path=/, and over TLS Secure and named `__Host-…` (no other host can set or shadow
 * it; a request carrying the name twice has no session). It speaks for its user only in a request
 * one of Lectern's own pages makes: a POST of JSON whose `Origin` is LECTERN_PUBLIC_URL's. A page
 * elsewhere (a project's docs on their own origin, another site) cannot make such a request
 * without a CORS grant it never gets, and cannot sign someone in either. Without
 * LECTERN_DOCS_DOMAIN, a project's pages share the dashboard's origin by URL only: they are served
 * sandboxed (serve/paths.ts DOCS_SANDBOX), so they run in an opaque origin of their own and send
 * `Origin: null`. docs/design/sessions.md has the reasons.
 */
function sessionCookies(config: Config, db: Database, log: Logger) {
  const throttle = signInThrottle(config, db, log);
  const origin = new URL(config.publicUrl).origin;
  return (req: express.Request, res: express.Response): { handle: SessionHandle; viewer: () => Promise<Viewer | null> } => {
    const tls = overTls(req, config.publicUrl);
    const name = sessionCookieName(tls);
    const cookie = { httpOnly: true, sameSite: 'lax', secure: tls, path: '/' } as const;
    const { id, shadowed } = readSessionCookie(req.headers.cookie, tls);
    const ownPage = req.method === 'POST' && req.get('origin') === origin && /^application\/json\b/i.test(req.get('content-type') ?? '');
    return {
      viewer: async () => (ownPage && id ? sessionViewer(db.prisma, id, config.sessionIdleSeconds) : null),
      handle: {
        id,
        unavailable: !ownPage ? `Sign in from Lectern's own pages: a POST of JSON from ${origin}.` : shadowed ? SHADOWED : null,
        admit: async (username) => (throttle ? throttle.admit(username, req.ip ?? '') : { wait: 0, succeeded: async () => {} }),
        start: async (userId) => {
          res.cookie(name, await startSession(db.prisma, userId), { ...cookie, maxAge: config.sessionIdleSeconds * 1000 });
        },
        end: async () => {
          if (id) await endSession(db.prisma, id);
          res.clearCookie(name, cookie);
        },
      },
    };
  };
}

const SHADOWED =
  "This browser sent more than one Lectern session cookie: another site under the same domain set one. Clear this site's cookies and sign in again; serve Lectern over https, where no other host can set its cookie.";

/** LECTERN_SIGNIN_THROTTLE's counts: in PostgreSQL, shared by every process; in memory on the embedded database (one process). */
function signInThrottle(config: Config, db: Database, log: Logger): SignInThrottle | null {
  const rate = parseRate(config.signInThrottle);
  if (!rate) return null;
  return new SignInThrottle(rate, (r) => (db.kind === 'postgres' ? new DatabaseThrottle(db.prisma, r, log, new Throttle(r)) : new Throttle(r)));
}

/**
 * Lectern's own errors (domain/errors.ts) reach the client as GraphQL errors with their code, status
 * and details (toGraphQLError), where they were raised; anything else becomes "Unexpected error."
 * with no detail, even under NODE_ENV=development (where yoga would attach the original message
 * and stack, and database messages name tables and SQL).
 */
function maskError(error: unknown, message: string): Error {
  const located = error instanceof Error && 'originalError' in error ? (error as GraphQLError) : undefined;
  const original = located?.originalError;
  if (error instanceof LecternError) return toGraphQLError(error);
  if (original instanceof LecternError) return toGraphQLError(original, located);
  // A statement cancelled at LECTERN_DB_STATEMENT_TIMEOUT_MS (SQLSTATE 57014) is the server refusing
  // work that ran too long: say so, without the SQL.
  if (/57014|canceling statement due to statement timeout/.test(describeChain(error))) {
    const timeout = new LecternError(
      'TIMEOUT',
      'The request took longer than the database allows one statement to run (LECTERN_DB_STATEMENT_TIMEOUT_MS); try a smaller request.',
    );
    return toGraphQLError(timeout, located);
  }
  return yogaMaskError(error, message, false);
}

/** The code of a LecternError a client caused (a status under 500), itself or as a GraphQL error's original; null otherwise. */
function clientsError(error: unknown): string | null {
  const lectern = error instanceof LecternError ? error : (error as { originalError?: unknown } | null)?.originalError;
  return lectern instanceof LecternError && lectern.status < 500 ? lectern.code : null;
}

/** The messages and codes of an error and its causes, for recognising a database error by its SQLSTATE. */
function describeChain(error: unknown): string {
  const parts: string[] = [];
  let e: unknown = error;
  for (let i = 0; e && i < 6; i++) {
    const x = e as { message?: unknown; code?: unknown; originalCode?: unknown; cause?: unknown; originalError?: unknown };
    parts.push(String(x.message ?? ''), String(x.code ?? ''), String(x.originalCode ?? ''));
    e = x.originalError ?? x.cause;
  }
  return parts.join(' ');
}

/** What a browser may send across origins to the APIs: Lectern authenticates by header, never by cookie. */
const CORS_METHODS = 'GET, POST, PUT, PATCH, DELETE, OPTIONS';
const CORS_HEADERS = 'Authorization, Content-Type, Accept';

/**
 * CORS for the APIs: off unless LECTERN_CORS_ORIGINS names origins. A listed Origin is answered
 * with exactly itself (and `Vary: Origin`, so a cache keeps one answer per origin); any other
 * gets no Access-Control-Allow-* header at all, and its preflight is left to the API (which grants
 * nothing). Credentials are never allowed: there are no cookies to send, tokens go in a header.
 */
export function corsFor(origins: readonly string[]): express.RequestHandler {
  const allowed = new Set(origins.map((o) => o.toLowerCase()));
  return (req, res, next) => {
    if (allowed.size === 0) return next();
    res.vary('Origin');
    const origin = req.get('origin');
    if (!origin || !allowed.has(origin.toLowerCase())) return next();
    res.set('Access-Control-Allow-Origin', origin);
    if (req.method === 'OPTIONS' && req.get('access-control-request-method')) {
      res
        .set('Access-Control-Allow-Methods', CORS_METHODS)
        .set('Access-Control-Allow-Headers', CORS_HEADERS)
        .set('Access-Control-Max-Age', '600')
        .status(204)
        .end();
      return;
    }
    res.set('Access-Control-Expose-Headers', 'Retry-After, Link');
    next();
  };
}

/**
 * The public read endpoints docs pages call from the browser (embed, the version list, search):
 * any origin may read them, as readthedocs.org allows (CORS_ALLOW_ALL_ORIGINS for its
 * CORS_URLS_REGEX), with `*` and never credentials: no cookie goes with these requests, so a page
 * elsewhere reads only what anyone may. Only idempotent methods, as Read the Docs allows.
 */
export const PUBLIC_CORS_PATHS = ['/api/v2/embed', '/api/v3/embed', '/api/v2/version', '/api/v2/search', '/api/v3/search'];
const PUBLIC_CORS_HEADERS = 'Accept, Accept-Encoding, Authorization, Content-Type, Origin, User-Agent, X-Requested-With, X-Hoverxref-Version';

export function publicCors(): express.RequestHandler {
  return (req, res, next) => {
    if (!req.get('origin')) return next();
    res.set('Access-Control-Allow-Origin', '*');
    if (req.method === 'OPTIONS' && req.get('access-control-request-method')) {
      res
        .set('Access-Control-Allow-Methods', 'GET, OPTIONS, HEAD')
        .set('Access-Control-Allow-Headers', PUBLIC_CORS_HEADERS)
        .set('Access-Control-Max-Age', '86400')
        .status(200)
        .end();
      return;
    }
    next();
  };
}

/** What every answer of Lectern's own says about framing: no page may frame it, on any origin. */
export const NOT_FRAMED = "frame-ancestors 'none'";

/**
 * Lectern's own answers (dashboard, GraphiQL, sign-in and setup, error pages, 404s, /_/docs-access:
 * everything but a docs site's) may not be framed by any page, another site's or a docs host's of
 * the same site: `Content-Security-Policy: frame-ancestors 'none'` and `X-Frame-Options: DENY`,
 * added as the headers are written, so whatever a route or library sets (its own policy,
 * finalhandler's `default-src 'none'`) the answer carries them. A policy without frame-ancestors
 * gets the directive; any other gets a second policy (a browser enforces both). `isDocs` tells a
 * docs site's requests, whose pages choose their own framing. docs/design/sessions.md.
 */
export function notFramed(isDocs: (req: express.Request) => boolean): express.RequestHandler {
  return (req, res, next) => {
    if (isDocs(req)) return next();
    const writeHead = res.writeHead;
    res.writeHead = function (this: express.Response, ...args: unknown[]) {
      const given = args.find((a): a is Record<string, unknown> => typeof a === 'object' && a !== null && !Array.isArray(a));
      const givenKey = given && Object.keys(given).find((k) => k.toLowerCase() === 'content-security-policy');
      if (given && givenKey) given[givenKey] = withoutFraming(given[givenKey]);
      else this.setHeader('Content-Security-Policy', withoutFraming(this.getHeader('Content-Security-Policy')));
      if (given) for (const k of Object.keys(given)) if (k.toLowerCase() === 'x-frame-options') delete given[k];
      this.setHeader('X-Frame-Options', 'DENY');
      return (writeHead as (...a: unknown[]) => express.Response).apply(this, args);
    } as typeof res.writeHead;
    next();
  };
}

/**
 * A docs site's request, which the docs server answers (serve/router.ts siteOf): any path of a
 * `<project>.<domain>` host, or `/docs/…` when there is no docs domain (with one, `/docs/…` on
 * Lectern's host is Lectern's own redirect there).
 */
function isDocsRequest(req: express.Request, domain: string | undefined): boolean {
  if (domain) return docsHostLabel(domain, (domain.includes(':') ? req.get('host') : req.hostname) ?? '') !== null;
  return req.path === '/docs' || req.path.startsWith('/docs/');
}

/** A Content-Security-Policy header's value(s) with frame-ancestors 'none' enforced. */
function withoutFraming(value: unknown): string | string[] {
  const policies = (Array.isArray(value) ? value : value == null ? [] : [value]).map(String).filter((p) => p.trim());
  if (policies.some((p) => /(^|;)\s*frame-ancestors\s+'none'\s*(;|$)/i.test(p))) return policies.length === 1 ? policies[0]! : policies;
  if (policies.length === 1 && !/(^|;)\s*frame-ancestors\b/i.test(policies[0]!)) return `${policies[0]!.replace(/;\s*$/, '')}; ${NOT_FRAMED}`;
  return policies.length ? [...policies, NOT_FRAMED] : NOT_FRAMED;
}

/**
 * Most tokens one GraphQL document may hold. Parsing and validating happen before the cost limit
 * can refuse anything, on the main thread: 10,000 aliases (100,000 tokens) held it for about half a
 * second per request. The largest operation the cost limit lets through is far below this.
 */
export const MAX_TOKENS = 20_000;
const limitTokens: Plugin = {
  onParse({ parseFn, setParseFn }) {
    setParseFn((source, options) => {
      try {
        return parseFn(source, { ...options, maxTokens: MAX_TOKENS });
      } catch (e) {
        // Too large a document is refused like too costly an operation: 400, code QUERY_TOO_COSTLY.
        if (e instanceof Error && /contains more th\w+ \d+ tokens/.test(e.message))
          throw new LecternError('QUERY_TOO_COSTLY', e.message, { maxTokens: MAX_TOKENS });
        throw e;
      }
    });
  },
};

/** A request listener for node:http: what `lectern serve` listens with. */
export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * `app` is the express app; `handler` the same behind the docs fast path (./serve/fast.ts), which
 * answers warm public pages before express sees them: what a server listens with.
 */
/** The installation's SMTP server as domain code sends through it (none without LECTERN_SMTP_HOST); nodemailer loads with the first email. */
function mailer(config: Config): Mailer | undefined {
  const settings = config.email;
  if (!settings) return undefined;
  return { send: async (m) => (await import('./notifications/email.ts')).sendMessage(settings, config.webhooks.timeoutSeconds, m) };
}

/** What the domain is given: everything mutable the app has is made here, for this app only (docs/design/events.md). */
function makeServices(deps: AppDeps): Services {
  const { config, db, log } = deps;
  const events = deps.events ?? createEvents();
  return {
    prisma: db.prisma,
    cipher: new Cipher(deps.secretKey),
    config,
    log,
    storage: deps.storage ?? openStorage(config.storage),
    events,
    live: new LiveBuilds(events, { databaseUrl: config.databaseUrl, log }),
    mail: mailer(config),
    analytics: config.analyticsRetentionDays > 0 ? new AnalyticsRecorder(db.prisma, log, { retentionDays: config.analyticsRetentionDays }) : undefined,
  };
}

export function buildApp(deps: AppDeps): { app: Express; handler: Handler; yoga: Yoga; storage: Storage; services: Services } {
  const { config, db, log } = deps;
  const services = makeServices(deps);
  const { storage, events } = services;
  /** What the docs server's caches check before answering: bumped by this app's `servedChanged` only. */
  const served = new ServedGeneration(events);

  const sessions = sessionCookies(config, db, log);
  const metrics = createMetrics(db.prisma);
  const yoga = graphqlServer(services, sessions, metrics);

  const app = express();
  app.disable('x-powered-by');
  // Each request's database statements take their own turns on the embedded database (src/db/database.ts).
  app.use((_req, _res, next) => dbOwner.run({}, next));
  // X-Forwarded-For/-Proto/-Host are believed only from the proxies LECTERN_TRUSTED_PROXIES names
  // (none by default, not even loopback): req.ip, req.protocol and req.hostname, and with them the
  // live-log bound per client and the docs fast path (which asks this same function), follow one rule.
  app.set('trust proxy', config.trustedProxies.length ? config.trustedProxies : false);

  // No answer of Lectern's own may be framed; docs sites' pages choose for themselves.
  const docsDomain = docsDomainOf(config.docsDomain);
  app.use(notFramed((req) => isDocsRequest(req, docsDomain)));

  // Every request counted and timed by part of the product (the docs fast path counts its own, below).
  app.use(metrics.middleware((req) => isDocsRequest(req, docsDomain)));
  app.get('/metrics', metrics.handler);

  healthChecks(app, db, log);

  // The embed API on every host, docs hosts included, at Read the Docs' `/_/api/v3/embed/`: docs
  // pages call it from their own origin. It answers public docs only (the REST route below).
  app.use((req, _res, next) => {
    if (req.path === '/_/api/v3/embed/' || req.path === '/_/api/v3/embed') req.url = `/api/v3/embed/${req.url.slice(req.path.length)}`;
    next();
  });

  // Hosted docs: `/docs/…`, and every path of a `<project>.<LECTERN_DOCS_DOMAIN>` host.
  const fast = config.serveCacheSeconds > 0 ? new FastPath(config.serveCacheSeconds, docsDomain, app.get('trust proxy fn') as TrustProxy, served) : undefined;
  app.use(serveRouter({ services, fast, served }));

  mountGraphql(app, yoga, config);

  app.use('/api/v2/webhook', webhookRouter({ maxBodyBytes: config.maxBodyBytes, services }));

  mountRest(app, yoga, config, db, log);

  // Single sign-on with OpenID Connect (docs/design/sso.md).
  app.use(ssoRouter({ services, session: (req, res) => sessions(req, res).handle }));

  app.use('/api', (_req, res) => {
    res.status(404).json({ detail: 'Not found.' });
  });

  // Build status badges for READMEs, at Read the Docs' /projects/<project>/badge/ (docs/design/badges.md).
  app.use(badgeRouter(services));

  // The dashboard at /, on the API's host (docs hosts answered every path above).
  app.use(dashboardRouter());

  app.use(errorHandler(config, log));

  return { app, handler: handlerOf(app, fast, metrics), yoga, storage, services };
}

/** The server's handler: the docs fast path first, where it is on, counted as docs; the app for the rest. */
function handlerOf(app: Express, fast: FastPath | undefined, metrics: Metrics): Handler {
  if (!fast) return (req, res) => app(req, res);
  return (req, res) => {
    const start = process.hrtime.bigint();
    if (fast.tryAnswer(req, res)) metrics.observe('docs', req.method ?? 'GET', res.statusCode, start);
    else app(req, res);
  };
}

/** The GraphQL server of /graphql, through which the REST adapter runs its operations too. */
function graphqlServer(services: Services, sessions: ReturnType<typeof sessionCookies>, metrics: Metrics): Yoga {
  const { config, log } = services;
  return createYoga<{ req: express.Request; res?: express.Response }, Context>({
    schema,
    graphqlEndpoint: '/graphql',
    // A browser's session counts on /graphql itself only (the REST adapter's operations come without `res`).
    context: ({ request, req, res }) =>
      createContext(services, request.headers.get('authorization'), res ? sessions(req, res) : undefined, {
        ip: req.ip ?? '',
        userAgent: request.headers.get('user-agent') ?? '',
      }),
    maskedErrors: { maskError, isDev: false },
    // Off here: yoga's own CORS answers any Origin with itself and credentials. corsFor() below
    // answers the origins LECTERN_CORS_ORIGINS names, for /graphql and /api/v3 alike.
    cors: false,
    plugins: [compiledExecution(schema, metrics.graphqlOperation), limitTokens, takingTurnsByCost(schema, () => config.graphql.maxComplexity)],
    // GraphiQL is Lectern's own build (./graphiql.ts), whose page below answers every
    // request yoga would have answered with its page (yoga's default loads it from a CDN).
    graphiql: false,
    landingPage: false,
    logging: {
      debug: (...a: unknown[]) => log.debug(a.map(String).join(' ')),
      info: (...a: unknown[]) => log.info(a.map(String).join(' ')),
      warn: (...a: unknown[]) => log.warn(a.map(String).join(' ')),
      // yoga logs every error it masks, a client's too (a refused token, a document too large):
      // those are the client's, at debug; the rest are the server's.
      error: (...a: unknown[]) => {
        const code = clientsError(a[0]);
        if (code) log.debug({ code }, 'graphql error of the client');
        else log.error({ err: a[0] }, 'graphql error');
      },
    },
  });
}

/** `/healthz` (the process answers) and `/readyz` (its database does, with every migration applied). */
function healthChecks(app: Express, db: AppDeps['db'], log: Logger): void {
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    try {
      const pending = await db.pending();
      if (pending.length) res.status(503).json({ status: 'migrations pending', pending });
      else res.json({ status: 'ready', database: db.kind });
    } catch (e) {
      log.warn({ err: e }, 'readiness check failed');
      res.status(503).json({ status: 'database unreachable' });
    }
  });
}

/** REST v3 (with its OpenAPI document) and the deprecated v2, both over the GraphQL server. */
function mountRest(app: Express, yoga: Yoga, config: Config, db: AppDeps['db'], log: Logger): void {
  const v3 = '/api/v3';
  // On PostgreSQL the counts are shared by every process; the embedded database has one process.
  const rate = parseRate(config.apiThrottle);
  const throttle = rate && (db.kind === 'postgres' ? new DatabaseThrottle(db.prisma, rate, log, new Throttle(rate)) : new Throttle(rate));
  let openApi: unknown;
  app.get(`${v3}/schema/`, (_req, res) => {
    openApi ??= openApiDocument(v3Routes, schema, `${config.publicUrl}${v3}`, { referenced: v3Referenced, maxLimit: config.apiMaxLimit });
    res.json(openApi);
  });
  app.use(
    v3,
    restRouter({
      yoga,
      routes: v3Routes,
      api: `${config.publicUrl}${v3}`,
      publicUrl: config.publicUrl,
      mount: v3,
      throttle,
      maxBodyBytes: config.maxBodyBytes,
      maxLimit: config.apiMaxLimit,
      uploads: { dir: uploadsDir(config.dataDir), maxBytes: config.build.uploadMaxBytes },
    }),
  );

  app.use('/api/v2', v2Router({ yoga, publicUrl: config.publicUrl, maxBodyBytes: config.maxBodyBytes, maxLimit: config.apiMaxLimit }));
}

/** The last resort for what no router answered: express's body errors, and a logged 500. */
function errorHandler(config: Config, log: Logger): ErrorRequestHandler {
  return (err, _req, res, _next) => {
    const status = typeof err?.status === 'number' && err.status >= 400 && err.status < 500 ? err.status : 500;
    if (status === 500) log.error({ err }, 'unhandled error');
    const message =
      status === 413 && err?.type === 'entity.too.large'
        ? `Request body larger than ${config.maxBodyBytes} bytes.`
        : status === 400 && err?.type === 'entity.parse.failed'
          ? 'Malformed JSON in request body.'
          : status === 500
            ? 'Internal server error.'
            : String(err?.message ?? 'Bad request.');
    const code = status === 500 ? 'INTERNAL' : status === 401 ? 'UNAUTHENTICATED' : status === 413 ? 'TOO_LARGE' : 'BAD_REQUEST';
    res.status(status).json({ errors: [{ message, extensions: { code, http: { status } } }] });
  };
}

/** GraphiQL's page and assets, CORS for the origins LECTERN_CORS_ORIGINS names, and /graphql behind bounded body parsers. */
function mountGraphql(app: Express, yoga: Yoga, config: Config): void {
  // GraphiQL's scripts, styles and fonts, on Lectern's own host (docs hosts were answered above).
  const graphiqlFiles = graphiql();
  app.use(GRAPHIQL_ASSETS, graphiqlFiles.assets);

  app.use(PUBLIC_CORS_PATHS, publicCors());
  const cors = corsFor(config.corsOrigins);
  app.use([yoga.graphqlEndpoint, '/api/v3'], cors);
  // A browser's GET /graphql: GraphiQL's page, small, compressed at build time, its assets at immutable URLs (./graphiql.ts).
  app.get(yoga.graphqlEndpoint, graphiqlFiles.page);

  // Bounded body before yoga sees it; yoga reads `req.body` when express has parsed it. JSON is
  // parsed here (so malformed JSON gets our 400); every other body yoga accepts
  // (`application/graphql`, form posts) is read here as bytes under the same limit,
  // since yoga would otherwise read the stream itself, unbounded.
  const limit = config.maxBodyBytes;
  app.use(
    yoga.graphqlEndpoint,
    // Multipart (uploads) is read first, each file written to disk as it comes (uploads/multipart.ts).
    graphqlMultipart({ dir: uploadsDir(config.dataDir), maxBytes: config.build.uploadMaxBytes, maxFieldBytes: limit }),
    express.json({ limit, type: ['application/json', 'application/*+json'] }),
    express.raw({ limit, type: () => true }),
    yoga as unknown as express.RequestHandler,
  );
}
