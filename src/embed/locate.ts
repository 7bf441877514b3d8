// Which file of a version's HTML output an embed request names, and which project and version a
// docs URL names. Every name is checked here so that no `doc`, `path` or `url` reaches a file
// outside that version's output: `..`, `.` and empty segments, backslashes and NUL are refused,
// never normalized, and text is never percent-decoded twice.
import type { DocsHost } from '../urls.ts';

/** Longest document name looked up; Sphinx's are far shorter. */
const MAX_DOC = 1024;

/** `path` as the historical API turned it into a document name: `/` stripped at both ends, then a final `.html`. */
export function docFromPath(path: string): string {
  return path.replace(/^\/+|\/+$/g, '').replace(/^(.+)\.html$/s, '$1');
}

/**
 * The files below the version's HTML root that may hold document `doc`: `<doc>.html`, then
 * `<doc>/index.html` (a directory-style build). Null when `doc` could name something outside.
 */
export function candidateFiles(doc: string): string[] | null {
  // A leading `/` is the version's root (Read the Docs stripped it too); a trailing one a directory.
  const name = doc.replace(/^\/+|\/+$/g, '');
  if (name.length > MAX_DOC || /[\\\u0000]/.test(name)) return null;
  if (name === '') return ['index.html'];
  if (name.split('/').some((s) => s === '' || s === '.' || s === '..')) return null;
  return [`${name}.html`, `${name}/index.html`];
}

export interface DocsLocation {
  /** The project in the URL: its slug, or the host label under LECTERN_DOCS_DOMAIN (`_` shown as `-`). */
  project: string;
  /** Whether the project came from the host name (LECTERN_DOCS_DOMAIN) rather than the path. */
  byHost: boolean;
  /** Set for a subproject's URL: `/projects/<alias>/` below its parent. */
  alias: string | null;
  language: string;
  version: string;
  /** Below the version's root, decoded; a directory's `index.html` included. */
  filename: string;
  fragment: string;
}

function decode(s: string): string | null {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

/**
 * Where a docs URL points (`/docs/<project>/<lang>/<version>/<file>`, or `<project>.<docs-domain>/…`
 * when LECTERN_DOCS_DOMAIN is set), as docs/design/urls.md serves them; null for any other URL.
 */
export function unresolveDocsUrl({ publicUrl, docsDomain }: DocsHost, text: string): DocsLocation | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  const pub = new URL(publicUrl);
  let project: string | null = null;
  let byHost = false;
  let rest: string[];
  // Segments as sent (still percent-encoded); the URL parser has already applied `.` and `..`.
  const segments = url.pathname.split('/').slice(1);
  // A docs domain that names a port (`docs.example:8000`) is compared with the URL's host and
  // port, as the docs server compares it with the Host header; one without, with the host name.
  const domain = docsDomain?.toLowerCase().replace(/^\.+|\.+$/g, '');
  const host = domain?.includes(':') ? url.host : url.hostname;
  if (domain && host.endsWith(`.${domain}`)) {
    project = host.slice(0, -(domain.length + 1));
    if (!project || project.includes('.')) return null;
    byHost = true;
    rest = segments;
  } else {
    if (url.host !== pub.host) return null;
    const base = pub.pathname.split('/').filter(Boolean);
    if (base.some((b, i) => segments[i] !== b)) return null;
    rest = segments.slice(base.length);
    if (rest[0] !== 'docs' || !rest[1]) return null;
    project = decode(rest[1]);
    rest = rest.slice(2);
  }
  let alias: string | null = null;
  if (rest[0] === 'projects' && rest[1]) {
    alias = decode(rest[1]);
    if (alias === null) return null;
    rest = rest.slice(2);
  }
  const language = decode(rest[0] ?? '');
  const version = decode(rest[1] ?? '');
  if (!project || !language || !version) return null;
  let file = rest.slice(2).join('/');
  if (file === '' || file.endsWith('/')) file += 'index.html';
  const filename = decode(file);
  if (filename === null) return null;
  const fragment = decode(url.hash.replace(/^#/, '')) ?? '';
  return { project, byHost, alias, language, version, filename, fragment };
}
