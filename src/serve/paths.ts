// Request paths of hosted docs, taken apart safely: every segment is decoded once and refused when
// it could mean something else to storage (`..`, an encoded `/`, a backslash, NUL), so no request
// can name a file outside the version it asks for. Storage's assertKey checks again behind this.

/**
 * The Content-Security-Policy of every docs answer where docs share the dashboard's origin (no
 * LECTERN_DOCS_DOMAIN): a project's HTML, SVG or 404 page runs as a sandboxed document in an opaque
 * origin of its own. Its scripts run, its forms and links work and popups leave the sandbox, but
 * it reads no cookie or storage of Lectern's origin, and its requests carry `Origin: null` and no
 * SameSite cookie, so they never speak for the signed-in reader (app.ts sessionCookies).
 */
export const DOCS_SANDBOX = 'sandbox allow-scripts allow-forms allow-popups allow-popups-to-escape-sandbox allow-modals allow-downloads';

/** A path below a docs root, split into decoded segments; `dir` when it ended with `/`. */
export interface DocPath {
  segments: string[];
  /** The raw (still percent-encoded) segments, for building URLs that name the same thing. */
  raw: string[];
  dir: boolean;
}

/**
 * `rest` is the raw path after the docs root: '' or '/' or '/en/latest/guide/'. Null for anything
 * that cannot be a stored file's path: empty segments (`//`, an absolute path), `.` and `..` (also
 * encoded), `%2f`, backslashes, NUL, control characters and malformed percent-encoding.
 */
export function parseDocPath(rest: string): DocPath | null {
  if (rest === '' || rest === '/') return { segments: [], raw: [], dir: true };
  if (!rest.startsWith('/')) return null;
  const raw = rest.slice(1).split('/');
  const dir = raw[raw.length - 1] === '';
  if (dir) raw.pop();
  const segments: string[] = [];
  for (const r of raw) {
    let s = r;
    // Most segments have nothing encoded: no decoding to do.
    if (r.includes('%')) {
      try {
        s = decodeURIComponent(r);
      } catch {
        return null;
      }
    }
    if (s === '' || s === '.' || s === '..' || /[/\\\x00-\x1f\x7f]/.test(s)) return null;
    segments.push(s);
  }
  return { segments, raw, dir };
}

/** A decoded path as a URL path: each segment percent-encoded, exactly one leading `/`. */
export function encodePath(decoded: string): string {
  const body = decoded.replace(/^[/\\]+/, '');
  return `/${body.split('/').map(encodeSegment).join('/')}`;
}

/** encodeURIComponent, keeping the characters that are common and harmless in paths readable. */
function encodeSegment(s: string): string {
  return encodeURIComponent(s).replace(/%(?:40|3A|2C|3B|3D|2B|24|21|27|28|29|2A)/g, decodeURIComponent);
}

/** Bytes a header value may not carry: anything outside visible ASCII is percent-encoded. */
export function headerSafe(s: string): string {
  return s.replace(/[^\x21-\x7e]/g, (c) => encodeURIComponent(c));
}

/** The query string of a request URL, with its `?`, or ''. */
export function queryOf(originalUrl: string): string {
  const q = originalUrl.indexOf('?');
  return q < 0 || q === originalUrl.length - 1 ? '' : originalUrl.slice(q);
}

/** `location` with the request's query added (after any query `location` already has), as redirects keep it. */
export function withQuery(location: string, query: string): string {
  if (!query) return location;
  const hash = location.indexOf('#');
  const [head, frag] = hash < 0 ? [location, ''] : [location.slice(0, hash), location.slice(hash)];
  return `${head}${head.includes('?') ? `&${query.slice(1)}` : query}${frag}`;
}

/** LECTERN_DOCS_DOMAIN as hosts are compared with it: lower case, no leading or trailing dots. */
export function docsDomainOf(setting: string | undefined): string | undefined {
  return setting?.toLowerCase().replace(/^\.+|\.+$/g, '') || undefined;
}

/**
 * The project label of a `<label>.<domain>` host, or null when `host` is not a docs host. `host`
 * is the request's host name (its Host header without the port), or the Host header itself when
 * the domain names a port.
 */
export function docsHostLabel(domain: string | undefined, host: string): string | null {
  if (!domain) return null;
  const h = host.toLowerCase();
  if (!h.endsWith(`.${domain}`)) return null;
  // `<project>--<number>` is a pull request's preview host (Read the Docs' external version domain):
  // the project's docs. No project slug holds `--` (slugs collapse runs of `-`).
  const label = h.slice(0, -(domain.length + 1)).replace(/--\d+$/, '');
  return /^[a-z0-9][a-z0-9-]*$/.test(label) ? label : null;
}

/**
 * The pull request's number of a preview host `<project>--<number>.<domain>` (Read the Docs'
 * external version domain), or undefined for any other host. A preview is served there and only
 * there when a docs domain is set: an origin of its own, apart from its project's docs.
 */
export function previewNumberOf(domain: string | undefined, host: string): string | undefined {
  if (!domain) return undefined;
  const h = host.toLowerCase();
  if (!h.endsWith(`.${domain}`)) return undefined;
  return /^[a-z0-9][a-z0-9-]*?--(\d{1,9})$/.exec(h.slice(0, -(domain.length + 1)))?.[1];
}

/** A Host header without its port, as express's req.hostname reads it (an IPv6 literal keeps its brackets). */
export function hostnameOf(host: string): string {
  const offset = host[0] === '[' ? host.indexOf(']') + 1 : 0;
  const colon = host.indexOf(':', offset);
  return colon < 0 ? host : host.slice(0, colon);
}
