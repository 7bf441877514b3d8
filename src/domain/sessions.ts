// Signed-in browsers (the dashboard's). A session's id is 32 random bytes in an HttpOnly cookie;
// the database keeps only its SHA-256 hash, so a copy of the table signs no one in. A session ends
// when its user signs out, after LECTERN_SESSION_IDLE_SECONDS unused, or at once when its user is
// disabled. Cookies authenticate /graphql only, for Lectern's own pages (app.ts sessionCookies); a
// project's HTML runs on an origin of its own (LECTERN_DOCS_DOMAIN) or sandboxed in an opaque one.
import { randomBytes } from 'node:crypto';
import type { PrismaClient } from '../db/database.ts';
import { Prisma } from '../generated/prisma/client.ts';
import { hashToken } from '../secrets.ts';
import type { Viewer } from './context.ts';

export const SESSION_COOKIE = 'lectern_session';

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

/** Ends a session (signing out): its cookie signs no one in any more, in any process. */
export async function endSession(db: PrismaClient, id: string): Promise<void> {
  await db.session.deleteMany({ where: { idHash: hashToken(id) } });
}
