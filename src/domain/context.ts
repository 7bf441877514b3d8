// Who is asking, and the long-lived parts every call uses (database, cipher, settings, logger,
// storage, the app's events): the context of one request or job. Built fresh for every request from
// `Authorization: Token <key>` (Read the Docs' scheme; any other scheme counts as anonymous), and
// passed to domain code as an argument: there is no module-global service locator, so two apps can
// run in one process.

import type { Config } from '../config.ts';
import type { PrismaClient } from '../db/database.ts';
import type { LiveBuilds } from '../db/progress.ts';
import type { Events } from '../events.ts';
import type { Project } from '../generated/prisma/client.ts';
import type { Logger } from '../log.ts';
import { type Cipher, hashToken } from '../secrets.ts';
import type { Storage } from '../storage/index.ts';
import { projectsWithAccess } from './access.ts';
import { recordAudit } from './audit.ts';
import { UnauthenticatedError } from './errors.ts';
import { ServedProjects } from './served-projects.ts';

export interface Viewer {
  id: number;
  username: string;
  /** A site admin: manages users. False for a token limited to projects (docs/design/tokens.md). */
  isAdmin: boolean;
  /** What the token the request came with may do, when it is limited (docs/design/tokens.md); absent for a session or a full token. */
  limits?: TokenLimits;
}

/** A limited API token's limits. */
export interface TokenLimits {
  /** Every write is refused, and no project is more than read. */
  readOnly: boolean;
  /** The only projects it reaches (read or written); null: every project the user does. */
  projectIds: readonly number[] | null;
}

/** The parts an app is built from, set once when it starts. */
export interface Services {
  prisma: PrismaClient;
  cipher: Cipher;
  config: Config;
  log: Logger;
  /** Where built docs are kept (LECTERN_STORAGE). */
  storage: Storage;
  /** The app's in-process signals (builds queued, what is served changed): its own, shared with no other app. */
  events: Events;
  /** The app's live build logs: who follows how many, and the LISTEN connection that wakes them. */
  live: LiveBuilds;
  /** Sends an email now (the installation's SMTP server); absent when the installation sends none. */
  mail?: Mailer;
  /** Counts page views and searches for the projects' analytics, written later in batches; absent when the installation keeps none. */
  analytics?: AnalyticsSink;
}

/** Where page views and searches are counted (src/analytics/recorder.ts): it never waits for the database. */
export interface AnalyticsSink {
  /** `path`: the page below the version (`/install.html`), or the whole path of a 404; `versionSlug` '' when none. */
  pageView(projectId: number, versionSlug: string, path: string, status: number): void;
  search(projectId: number, versionSlug: string, query: string, results: number): void;
  /** Writes what is pending (tests read the counts at once). */
  flush(): Promise<void>;
  /** Stops counting and writes what is pending: before the database closes. */
  close(): Promise<void>;
}

/** One plain-text email to one address. */
export interface Mailer {
  send(message: { to: string; subject: string; text: string }): Promise<void>;
}

/** The browser side of signing in, given by the HTTP layer to /graphql's requests (null elsewhere). */
export interface SessionHandle {
  /** Why signing in is not offered on this installation, or null when it is. */
  unavailable: string | null;
  /** The id of the session cookie the request came with, if one did (kept when its user changes the password). */
  readonly id: string | undefined;
  /**
   * A sign-in attempt for this account from this client: `wait` is the seconds to wait before
   * another, or 0 (the attempt is counted as a failure until `succeeded` says otherwise).
   */
  admit(username: string): Promise<{ wait: number; succeeded(): Promise<void> }>;
  /** Starts a session for the user: the answer carries its cookie. */
  start(userId: number): Promise<void>;
  /** Ends the session the request came with, if any, and clears its cookie. */
  end(): Promise<void>;
}

/** Where a request came from, for the audit log (docs/design/audit.md): the address express trusts, and the browser's name. */
export interface Client {
  ip: string;
  userAgent: string;
}

export type Context = Readonly<
  Services & {
    viewer: Viewer | null;
    /** Where the request came from; null for work not started by a request (a build, the command line). */
    client: Client | null;
    /** Signing in and out, for requests that can (the HTTP layer's /graphql); null elsewhere. */
    session: SessionHandle | null;
    /** Ids of the projects the viewer maintains (domain/access.ts: admin access), read once per request. */
    maintainedProjectIds: () => Promise<ReadonlySet<number>>;
    /** Ids of the projects whose private data the viewer reads (admin or read-only access), read once per request. */
    readableProjectIds: () => Promise<ReadonlySet<number>>;
    /**
     * A project by slug, whoever may see it, read once per request: the lookup a write's
     * authorization makes (domain/access.ts) is the row the write then changes.
     */
    projectBySlug: (slug: string) => Promise<Project | null>;
    /** Where projects' docs are served, by id: primed by a query's page, else read for all the projects asked in one turn at once. */
    servedProjects: ServedProjects;
  }
>;

/** The context of a caller already identified (a viewer, or null for anonymous). */
export function contextFor(services: Services, viewer: Viewer | null, session: SessionHandle | null = null, client: Client | null = null): Context {
  // Per access level, for the viewer they were read for (actAs changes the viewer mid-request).
  const known = new Map<'read' | 'admin', { for: Viewer | null; ids: Promise<ReadonlySet<number>> }>();
  const idsWith = (level: 'read' | 'admin') => {
    const who = ctx.viewer;
    let got = known.get(level);
    if (got?.for !== who) {
      got = {
        for: who,
        ids: who
          ? services.prisma.project.findMany({ where: projectsWithAccess(who, level), select: { id: true } }).then((rows) => new Set(rows.map((r) => r.id)))
          : Promise.resolve(new Set<number>()),
      };
      known.set(level, got);
    }
    return got.ids;
  };
  const projects = new Map<string, Promise<Project | null>>();
  const ctx: Context = {
    ...services,
    viewer,
    session,
    client,
    maintainedProjectIds: () => idsWith('admin'),
    readableProjectIds: () => idsWith('read'),
    servedProjects: new ServedProjects(services.prisma),
    projectBySlug: (slug) => {
      let found = projects.get(slug);
      if (!found) projects.set(slug, (found = services.prisma.project.findUnique({ where: { slug } })));
      return found;
    },
  };
  return ctx;
}

/**
 * From here on the request acts as `viewer`: it just signed in, or made the first account, and its
 * answer is read as the browser's next request will be.
 */
export function actAs(ctx: Context, viewer: Viewer): void {
  (ctx as { viewer: Viewer | null }).viewer = viewer;
}

/** Resolves the Authorization header to a viewer; throws UnauthenticatedError for a bad token. */
export async function authenticate(prisma: PrismaClient, authorization: string | null | undefined, audit?: { client: Client | null }): Promise<Viewer | null> {
  if (!authorization) return null;
  const [scheme, ...rest] = authorization.trim().split(/\s+/);
  if (scheme?.toLowerCase() !== 'token') return null;
  if (rest.length === 0) throw new UnauthenticatedError('Invalid token header. No credentials provided.');
  if (rest.length > 1) throw new UnauthenticatedError('Invalid token header. Token string should not contain spaces.');
  // The token, its limits and its user in one statement (the token's row is found through the
  // unique hash); a disabled user's tokens are refused at once.
  const [hit] = await prisma.$queryRaw<
    (Viewer & {
      tokenId: number;
      keyPrefix: string;
      lastUsedAt: Date | null;
      expiresAt: Date | null;
      revokedAt: Date | null;
      readOnly: boolean;
      projectScoped: boolean;
      projectIds: number[] | null;
    })[]
  >`
    SELECT u.id, u.username, u."isAdmin", t.id AS "tokenId", t."keyPrefix", t."lastUsedAt", t."expiresAt", t."revokedAt", t."readOnly", t."projectScoped",
      CASE WHEN t."projectScoped" THEN scope.ids END AS "projectIds"
    FROM "public"."ApiToken" t
    JOIN "public"."User" u ON u.id = t."userId"
    LEFT JOIN LATERAL (SELECT COALESCE(array_agg(p."projectId"), '{}') AS ids FROM "public"."ApiTokenProject" p WHERE p."tokenId" = t.id) scope ON t."projectScoped"
    WHERE t."keyHash" = ${hashToken(rest[0]!)} AND u."disabledAt" IS NULL`;
  if (!hit) throw new UnauthenticatedError('Invalid token.');
  const now = Date.now();
  const refused = hit.revokedAt ? 'revoked' : hit.expiresAt && new Date(hit.expiresAt).getTime() <= now ? 'expired' : null;
  // When the token was last used, to the minute: written at most once a minute, not on every
  // request; so is the audit log's entry for a revoked or expired token's use (docs/design/audit.md).
  if (!hit.lastUsedAt || now - new Date(hit.lastUsedAt).getTime() >= TOKEN_USE_RESOLUTION_MS) {
    await prisma.apiToken.updateMany({ where: { id: hit.tokenId }, data: { lastUsedAt: new Date(now) } });
    if (refused && audit) {
      const user = { id: hit.id, username: hit.username };
      await recordAudit(prisma, { action: 'token-refused', user, method: 'token', data: { prefix: hit.keyPrefix, reason: refused } }, audit.client);
    }
  }
  if (refused === 'revoked') throw new UnauthenticatedError('Invalid token.');
  if (refused === 'expired') throw new UnauthenticatedError('This token has expired.');
  const viewer: Viewer = { id: hit.id, username: hit.username, isAdmin: hit.isAdmin };
  if (hit.readOnly || hit.projectScoped) {
    viewer.limits = { readOnly: hit.readOnly, projectIds: hit.projectScoped ? (hit.projectIds ?? []).map(Number) : null };
    // A token limited to projects acts for the user on those projects only: no site admin's powers.
    if (hit.projectScoped) viewer.isAdmin = false;
  }
  return viewer;
}

/** How precisely a token's `lastUsedAt` is kept. */
export const TOKEN_USE_RESOLUTION_MS = 60_000;

/** The context of the caller an Authorization header names (else the session's user, when a session is given). */
export async function createContext(
  services: Services,
  authorization: string | null | undefined,
  session?: { handle: SessionHandle; viewer: () => Promise<Viewer | null> },
  client: Client | null = null,
): Promise<Context> {
  const audit = { client };
  const viewer = authorization || !session ? await authenticate(services.prisma, authorization, audit) : await session.viewer();
  return contextFor(services, viewer, session?.handle ?? null, client);
}

export const anonymousContext = (services: Services): Context => contextFor(services, null);
