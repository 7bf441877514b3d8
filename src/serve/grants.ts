// Docs-reading grants: how a signed-in reader's browser reads private docs, whose pages run
// sandboxed (paths.ts DOCS_SANDBOX) or on a docs host, where the session cookie never goes with
// their stylesheets, images and scripts. The design, and what each form still allows, is
// docs/design/grants.md. In short, a grant reads one version (of one project) as its session's
// user, while the session lasts (signing out, idling out or a disabled user end it at once):
//
// - On a docs host (LECTERN_DOCS_DOMAIN) a grant is never in a URL a page can see. Lectern's host
//   makes a one-time ticket for that one host (issueTicket, /_/docs-access); the docs host takes it
//   once (takeTicket) at `/_/r/<ticket>/<path>` and answers with an HttpOnly, host-only cookie
//   holding grants signed for that host (cookieGrants), then sends the reader to `<path>`. A copied
//   URL names a used ticket; a page's script cannot read the cookie; another host (a preview's, a
//   sibling project's) neither receives it nor could use it.
// - Where docs share Lectern's origin (no docs domain), pages run sandboxed in opaque origins whose
//   subresource requests carry no cookie: the grant is a path segment, `<docs root>/_/r/<grant>/…`,
//   signed for the version and the reader's network address (urlGrant). It reads a version's files
//   for GRANT_SECONDS at most and from that address only, and its HTML, downloads and search only in
//   a request that also carries the grant's own session cookie (a navigation), so a copied URL opens
//   no page anywhere else, and reads no file from another network.
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type { PrismaClient } from '../db/database.ts';
import { type Cipher, hashToken } from '../secrets.ts';

/** How long a URL grant (no docs domain) reads a version's files. */
export const GRANT_SECONDS = 3600;
/** A navigation under a URL grant older than this is sent on under a fresh one, so an open page keeps at least the rest. */
export const GRANT_REFRESH_SECONDS = 600;
/** How long a docs host's grant cookie reads its versions (while the session lasts). */
export const COOKIE_GRANT_SECONDS = 8 * 3600;
/** How long a ticket may wait to be taken on its docs host. */
export const TICKET_SECONDS = 60;
/** Grants one docs host's cookie holds at most (the newest). */
const MAX_COOKIE_GRANTS = 16;

export interface Grant {
  sessionId: number;
  projectId: number;
  versionId: number;
  /** Seconds since the epoch. */
  expires: number;
}

const FORMAT = /^(\d{1,10})\.(\d{1,10})\.(\d{1,10})\.(\d{1,12})\.([\w-]{22})$/;
const payloadOf = (g: Grant) => `${g.sessionId}.${g.projectId}.${g.versionId}.${g.expires}`;

function sign(cipher: Cipher, purpose: string, g: Grant): string {
  const payload = payloadOf(g);
  return `${payload}.${cipher.mac(purpose, payload)}`;
}

function read(cipher: Cipher, purpose: string, text: string, now: number): Grant | null {
  const m = FORMAT.exec(text);
  if (!m) return null;
  const grant = { sessionId: Number(m[1]), projectId: Number(m[2]), versionId: Number(m[3]), expires: Number(m[4]) };
  if (!cipher.verifyMac(purpose, payloadOf(grant), m[5]!)) return null;
  return grant.expires * 1000 > now ? grant : null;
}

/**
 * The network a client address is in, as a URL grant is bound to it: an IPv4 address itself (an
 * IPv4-mapped IPv6 one read as IPv4), an IPv6 address's /64, the prefix one host's privacy
 * addresses rotate within (docs/design/grants.md).
 */
export function networkOf(address: string | undefined): string {
  const a = (address ?? '').toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (mapped) return mapped[1]!;
  if (isIP(a) !== 6) return a;
  const [head = '', tail = ''] = a.split('::');
  const left = head ? head.split(':') : [];
  const right = a.includes('::') ? (tail ? tail.split(':') : []) : [];
  const groups = [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/**
 * A URL grant's purpose, with the network it was issued to: a grant signed for a cookie, for
 * another setup or for another network never reads as one.
 */
const urlPurpose = (address: string | undefined) => `docs-grant:url:${networkOf(address)}`;
/** A cookie grant is signed for its host: moved to another host (a sibling project's, a preview's) it reads nothing. */
const cookiePurpose = (host: string) => `docs-grant:cookie:${host.toLowerCase()}`;

export const urlGrant = {
  /** A grant for the reader at `address` (the request's client address, express's req.ip). */
  issue(cipher: Cipher, g: Omit<Grant, 'expires'>, address: string | undefined, now = Date.now()): string {
    return sign(cipher, urlPurpose(address), { ...g, expires: Math.floor(now / 1000) + GRANT_SECONDS });
  },
  /** The grant a path segment holds for a request from `address`, or null when it is malformed, forged, of another kind or network, or expired. */
  read(cipher: Cipher, segment: string, address: string | undefined, now = Date.now()): Grant | null {
    return read(cipher, urlPurpose(address), segment, now);
  },
  /** Whether a navigation should be sent on under a fresh grant. */
  stale(g: Grant, now = Date.now()): boolean {
    return g.expires * 1000 - now < (GRANT_SECONDS - GRANT_REFRESH_SECONDS) * 1000;
  },
};

/** The grant cookie's name: `__Host-` under https, so no other host (a sibling docs host included) can set or shadow it. */
export const grantCookieName = (secure: boolean) => (secure ? '__Host-lectern_docs_grant' : 'lectern_docs_grant');

export const cookieGrants = {
  /**
   * The valid grants of a Cookie header for `host`: every cookie of that name is read (a sibling
   * host may have tossed one of its own onto the parent domain; its grants are not signed for this
   * host and are dropped), and of the rest only the newest grant's session's are kept.
   */
  read(cipher: Cipher, host: string, cookieHeader: string | undefined, secure: boolean, now = Date.now()): Grant[] {
    if (!cookieHeader) return [];
    const name = grantCookieName(secure);
    const purpose = cookiePurpose(host);
    const grants: Grant[] = [];
    for (const part of cookieHeader.split(';')) {
      const eq = part.indexOf('=');
      if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
      for (const text of part
        .slice(eq + 1)
        .trim()
        .split('~')
        .slice(0, MAX_COOKIE_GRANTS)) {
        const g = read(cipher, purpose, text, now);
        if (g) grants.push(g);
      }
    }
    const newest = grants.reduce<Grant | undefined>((a, g) => (!a || g.expires > a.expires ? g : a), undefined);
    return newest ? grants.filter((g) => g.sessionId === newest.sessionId) : [];
  },
  /** The Set-Cookie value adding a grant of `g` for `host` to those the reader holds (of the same session; another session's go). */
  add(cipher: Cipher, host: string, held: Grant[], g: Omit<Grant, 'expires'>, secure: boolean, now = Date.now()): string {
    const fresh: Grant = { ...g, expires: Math.floor(now / 1000) + COOKIE_GRANT_SECONDS };
    const kept = held.filter((h) => h.sessionId === g.sessionId && h.versionId !== g.versionId).slice(-(MAX_COOKIE_GRANTS - 1));
    const value = [...kept, fresh].map((h) => sign(cipher, cookiePurpose(host), h)).join('~');
    // Host-only (no Domain), HttpOnly, for the whole host; Lax: a link from elsewhere opens the page.
    return `${grantCookieName(secure)}=${value}; Path=/; Max-Age=${COOKIE_GRANT_SECONDS}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
  },
};

/** Makes a one-time ticket for `host` (a docs host, with any port) on behalf of a session; expired ones are removed meanwhile. */
export async function issueTicket(prisma: PrismaClient, sessionId: number, host: string, now = Date.now()): Promise<string> {
  await prisma.docsGrantTicket.deleteMany({ where: { expiresAt: { lt: new Date(now) } } });
  const code = randomBytes(32).toString('base64url');
  await prisma.docsGrantTicket.create({
    data: { codeHash: hashToken(code), sessionId, host: host.toLowerCase(), expiresAt: new Date(now + TICKET_SECONDS * 1000) },
  });
  return code;
}

/** A ticket's shape: what `/_/r/<segment>` holds on a docs host. */
export const isTicket = (segment: string) => /^[\w-]{43}$/.test(segment);

/** The session of a ticket for `host` that is still to be taken, without taking it (a redirect on the way to the page keeps it). */
export async function peekTicket(prisma: PrismaClient, code: string, host: string, now = Date.now()): Promise<number | null> {
  if (!isTicket(code)) return null;
  const row = await prisma.docsGrantTicket.findUnique({ where: { codeHash: hashToken(code) } });
  return row && row.host === host.toLowerCase() && row.expiresAt.getTime() > now ? row.sessionId : null;
}

/** Takes a ticket: true for the one request that does, whatever others race it. */
export async function takeTicket(prisma: PrismaClient, code: string, host: string, now = Date.now()): Promise<boolean> {
  const { count } = await prisma.docsGrantTicket.deleteMany({
    where: { codeHash: hashToken(code), host: host.toLowerCase(), expiresAt: { gt: new Date(now) } },
  });
  return count === 1;
}

/** `/_/r/<grant>` then the rest of a path below a docs root: where the granted reader reads it. */
export const GRANT_PATH = /^\/_\/r\/([^/]+)(\/.*)?$/;

/** The path below the docs root `root` that reads `rest` (a path below it) under `grant`. */
export const underGrant = (root: string, grant: string, rest = '') => `${root}/_/r/${grant}${rest}`;
