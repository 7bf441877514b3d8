// Signed-in browsers (the dashboard's). A session's id is 32 random bytes in an HttpOnly cookie;
// the database keeps only its SHA-256 hash, so a copy of the table signs no one in. A session ends
// when its user signs out, after LECTERN_SESSION_IDLE_SECONDS unused, when its user's password is
// changed (every session but the one that changed it), and for good when its user is disabled.
// Cookies authenticate /graphql only, for Lectern's own pages (app.ts sessionCookies); a project's
// HTML runs on an origin of its own (LECTERN_DOCS_DOMAIN) or sandboxed in an opaque one.
// The cookie is host-bound: see docs/design/sessions.md.
import { randomBytes } from 'node:crypto';
import type { PrismaClient } from '../db/database.ts';
import { Prisma } from '../generated/prisma/client.ts';
import { hashToken } from '../secrets.ts';
import type { Viewer } from './context.ts';

/**
 * The session cookie's name over plain http (localhost, tests): host-only (no Domain), Path=/. The
 * `__Host-` prefix needs Secure, which a browser refuses over http.
 */
export const PLAIN_SESSION_COOKIE = 'lectern_session';
/**
 * Its name over TLS: a browser keeps a `__Host-` cookie only when it is Secure, has Path=/ and no
 * Domain, so no other host (a docs host under the same parent domain) can set or shadow it.
 */
export const HOST_SESSION_COOKIE = '__Host-lectern_session';

/** The cookie's name for a request made over TLS or not. */
export const sessionCookieName = (tls: boolean) => (tls ? HOST_SESSION_COOKIE : PLAIN_SESSION_COOKIE);

/**
 * Whether the browser reached Lectern over TLS: the request came over https, or through a proxy
 * LECTERN_TRUSTED_PROXIES names that says so (X-Forwarded-Proto, read by express as `req.secure`),
 * or the public URL the browser uses is https (a TLS proxy that is not named still talks https to
 * the browser).
 */
export function overTls(req: { secure: boolean }, publicUrl: string): boolean {
  return req.secure || publicUrl.startsWith('https:');
}

/** What a request's Cookie header holds of the session. */
export interface SessionCookie {
  /** The session id, when exactly one cookie of the session's name came. */
  id: string | undefined;
  /**
   * More than one came: one was set for another scope (the parent domain, another path), and
   * which is Lectern's own cannot be told (browsers send the longer path first, and cookie parsers
   * take the first). None counts, so a planted cookie never speaks as the session.
   */
  shadowed: boolean;
}

/**
 * The session cookie of a Cookie header. Over TLS only the `__Host-` cookie is read (a plain
 * `lectern_session` there may come from any host of the parent domain); over http, the plain one.
 */
export function readSessionCookie(header: string | undefined, tls: boolean): SessionCookie {
  const name = sessionCookieName(tls);
  const values: string[] = [];
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq >= 0 && part.slice(0, eq).trim() === name) values.push(part.slice(eq + 1).trim());
  }
  return { id: values.length === 1 ? values[0] : undefined, shadowed: values.length > 1 };
}

/** The session id a request carries (see readSessionCookie), for the docs server's readers. */
export function sessionIdOf(req: { secure: boolean; headers: { cookie?: string } }, publicUrl: string): string | undefined {
  return readSessionCookie(req.headers.cookie, overTls(req, publicUrl)).id;
}

/** How precisely `lastSeenAt` is kept: written at most once a minute per session. */
const SEEN_RESOLUTION_MS = 60_000;

/** Starts a session for the user; returns the id for the cookie (stored nowhere else). */
export async function startSession(db: PrismaClient, userId: number): Promise<string> {
  const id = randomBytes(32).toString('base64url');
  await db.session.create({ data: { idHash: hashToken(id), userId } });
  return id;
}

/** The signed-in user of a session id, or null when there is no such session, it went unused too long, or its user is disabled. */
export async function sessionViewer(db: PrismaClient, id: string, idleSeconds: number, now = Date.now()): Promise<Viewer | null> {
  return (await signedIn(db, { cookie: id }, idleSeconds, now))?.viewer ?? null;
}

/**
 * The session (by its cookie's id, or by its row's id for a docs-reading grant) and its user, or
 * null when there is no such session, it went unused too long, or its user is disabled. Using it
 * counts as using the session.
 */
export async function signedIn(
  db: PrismaClient,
  by: { cookie: string } | { sessionId: number },
  idleSeconds: number,
  now = Date.now(),
): Promise<{ viewer: Viewer; sessionId: number } | null> {
  if ('cookie' in by && !/^[\w-]{43}$/.test(by.cookie)) return null;
  const where = 'cookie' in by ? Prisma.sql`s."idHash" = ${hashToken(by.cookie)}` : Prisma.sql`s.id = ${by.sessionId}`;
  const [hit] = await db.$queryRaw<(Viewer & { sessionId: number; lastSeenAt: Date })[]>`
    SELECT u.id, u.username, u."isAdmin", s.id AS "sessionId", s."lastSeenAt" FROM "public"."Session" s
    JOIN "public"."User" u ON u.id = s."userId" WHERE ${where} AND u."disabledAt" IS NULL`;
  if (!hit) return null;
  const idle = now - new Date(hit.lastSeenAt).getTime();
  if (idle > idleSeconds * 1000) {
    await db.session.deleteMany({ where: { id: hit.sessionId } });
    return null;
  }
  if (idle >= SEEN_RESOLUTION_MS) await db.session.updateMany({ where: { id: hit.sessionId }, data: { lastSeenAt: new Date(now) } });
  return { viewer: { id: hit.id, username: hit.username, isAdmin: hit.isAdmin }, sessionId: hit.sessionId };
}

/**
 * Ends every session of the user but `keep` (the cookie's id of the session that asked, if any): a
 * password change. `db` may be a transaction's client.
 */
export async function endOtherSessions(db: Pick<PrismaClient, 'session'>, userId: number, keep?: string): Promise<void> {
  await db.session.deleteMany({ where: { userId, ...(keep ? { idHash: { not: hashToken(keep) } } : {}) } });
}

/** Ends a session (signing out): its cookie signs no one in any more, in any process. */
export async function endSession(db: PrismaClient, id: string): Promise<void> {
  await db.session.deleteMany({ where: { idHash: hashToken(id) } });
}
