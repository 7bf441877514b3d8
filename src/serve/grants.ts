// Docs-reading grants: how a signed-in reader's browser reads private docs, whose pages run
// sandboxed (paths.ts DOCS_SANDBOX) or on a docs host, where the session cookie never goes with
// their stylesheets, images and scripts. A grant is a path segment, `<docs root>/_/r/<grant>/…`, so
// every relative URL of a page carries it: `<session row id>.<project id>.<expiry>.<mac>`, signed
// with the installation's secret key. It reads the docs of that one project (and what is served
// under its root: its subprojects and translations) as the session's user, while the session
// lasts (signing out, idling out or a disabled user end it at once) and for GRANT_SECONDS at most.
// It is handed over by a redirect: a navigation to a private page with the session cookie (docs on
// Lectern's origin), or /_/docs-access?next=<docs URL> on Lectern's host (docs on their own hosts).
import type { Cipher } from '../secrets.ts';

export const GRANT_SECONDS = 8 * 3600;
const PURPOSE = 'docs-grant';

export interface Grant {
  sessionId: number;
  projectId: number;
  /** Seconds since the epoch. */
  expires: number;
}

export function issueGrant(cipher: Cipher, sessionId: number, projectId: number, now = Date.now()): string {
  const payload = `${sessionId}.${projectId}.${Math.floor(now / 1000) + GRANT_SECONDS}`;
  return `${payload}.${cipher.mac(PURPOSE, payload)}`;
}

/** The grant a path segment holds, or null when it is malformed, forged or expired. */
export function readGrant(cipher: Cipher, segment: string, now = Date.now()): Grant | null {
  const m = /^(\d{1,10})\.(\d{1,10})\.(\d{1,12})\.([\w-]{22})$/.exec(segment);
  if (!m || !cipher.verifyMac(PURPOSE, `${m[1]}.${m[2]}.${m[3]}`, m[4]!)) return null;
  const grant = { sessionId: Number(m[1]), projectId: Number(m[2]), expires: Number(m[3]) };
  return grant.expires * 1000 > now ? grant : null;
}

/** `/_/r/<grant>` then the rest of a path below a docs root: where the granted reader reads it. */
export const GRANT_PATH = /^\/_\/r\/([^/]+)(\/.*)?$/;

/** The path below the docs root `root` that reads `rest` (a path below it) under `grant`. */
export const underGrant = (root: string, grant: string, rest = '') => `${root}/_/r/${grant}${rest}`;
