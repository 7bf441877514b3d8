// Which user redirect answers a request for hosted docs: the seed's five types matched as Read the
// Docs' legacy code did, and its current names for the clean-URL pair matched as their old names
// (docs/design/rest-api.md; docs/design/read-the-docs.md §4.7), first match in position order. Pure: the router decides when to ask (forced ones before files, others on a miss).
// @see docs/design/rest-api.md "Redirects"
import { REDIRECT_KIND } from '../domain/redirects.ts';
import type { RedirectType } from '../generated/prisma/client.ts';

export interface RedirectRule {
  type: RedirectType;
  fromUrl: string;
  toUrl: string;
  httpStatus: number;
  force: boolean;
}

export interface RedirectRequest {
  /** Decoded path below the docs root, e.g. `/en/latest/install.html` or `/dev/install.html`. */
  path: string;
  /** Decoded path inside the version (`/install.html`, `/guide/`), or null when the path names no version. */
  filename: string | null;
  /** The language and version a target "inside the current language and version" lands in. */
  language: string;
  version: string;
}

export interface RedirectMatch {
  /** A decoded path below the docs root (starts with `/`), or an absolute http(s) URL the project set. */
  target: string;
  absolute: boolean;
  status: 301 | 302;
}

const isAbsolute = (url: string) => /^https?:\/\//i.test(url);
const stripSlash = (p: string) => (p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p);

/** `from_url` against `subject`: exact, or with a trailing `*` a prefix whose rest is the splat. */
function wildcard(fromUrl: string, subject: string): { splat: string } | null {
  if (fromUrl.endsWith('*')) {
    const head = fromUrl.slice(0, -1);
    return subject.startsWith(head) ? { splat: subject.slice(head.length) } : null;
  }
  return stripSlash(subject) === fromUrl ? { splat: '' } : null;
}

/**
 * `to_url` with `:splat` filled in. An absolute URL must keep the host the project wrote: a splat
 * such as `@evil.example` after `https://docs.example.com` would otherwise move it elsewhere.
 */
function fill(toUrl: string, splat: string): { target: string; absolute: boolean } | null {
  const target = toUrl.replace(':splat', splat);
  if (!isAbsolute(toUrl)) return { target, absolute: false };
  try {
    const wanted = new URL(toUrl.replace(':splat', ''));
    const got = new URL(target);
    if (got.host !== wanted.host || got.protocol !== wanted.protocol || got.username || got.password) return null;
    return { target: got.href, absolute: true };
  } catch {
    return null;
  }
}

/** The target of one rule for this request, or null when it does not apply. */
function targetOf(rule: RedirectRule, req: RedirectRequest): { target: string; absolute: boolean } | null {
  const inside = (p: string) => `/${req.language}/${req.version}${p.startsWith('/') ? p : `/${p}`}`;
  const { filename } = req;
  switch (REDIRECT_KIND[rule.type]) {
    case 'prefix': {
      // The request's path starts with from_url; what follows is kept, inside the language and version.
      const from = stripSlash(rule.fromUrl);
      if (!from || from === '/') return null;
      if (req.path !== from && !req.path.startsWith(`${from}/`)) return null;
      return { target: inside(req.path.slice(from.length) || '/'), absolute: false };
    }
    case 'page':
    case 'exact': {
      const subject = rule.type === 'page' ? filename : req.path;
      if (subject === null || !rule.fromUrl) return null;
      const m = wildcard(rule.fromUrl, subject);
      if (!m) return null;
      // Read the Docs' loop guard: `/dir/*` -> `/dir/sub/:splat` must not match what it produced
      // (a target the rule itself matches, reached already).
      const toHead = rule.toUrl.split(':splat')[0]!;
      if (rule.toUrl.includes(':splat') && !isAbsolute(rule.toUrl) && toHead.startsWith(rule.fromUrl.replace(/\*$/, '')) && subject.startsWith(toHead))
        return null;
      const filled = fill(rule.toUrl, m.splat);
      if (!filled) return null;
      return rule.type === 'page' && !filled.absolute ? { target: inside(filled.target), absolute: false } : filled;
    }
    case 'clean_url_to_html': {
      // `foo/` or `foo/index.html` -> `foo.html`; never the root page.
      if (filename === null || filename === '/' || filename === '/index.html') return null;
      const base = filename.endsWith('/index.html') ? filename.slice(0, -'/index.html'.length) : filename.endsWith('/') ? filename.slice(0, -1) : null;
      return base ? { target: inside(`${base}.html`), absolute: false } : null;
    }
    case 'html_to_clean_url': {
      // `foo.html` -> `foo/`; `index.html` pages already are the directory.
      if (filename === null || !filename.endsWith('.html') || filename === '/index.html' || filename.endsWith('/index.html')) return null;
      return { target: inside(`${filename.slice(0, -'.html'.length)}/`), absolute: false };
    }
  }
}

/**
 * The first rule (in the given order, which is position order) that matches and would not send
 * the reader back where they are. Without a version in the path only `exact` and `prefix` can
 * match, as Read the Docs does.
 */
export function matchRedirect(rules: readonly RedirectRule[], req: RedirectRequest, which: (r: RedirectRule) => boolean): RedirectMatch | null {
  for (const rule of rules) {
    if (!which(rule)) continue;
    if (req.filename === null && rule.type !== 'exact' && rule.type !== 'prefix') continue;
    const t = targetOf(rule, req);
    if (!t) continue;
    // A target that is the page asked for would loop.
    if (!t.absolute && t.target.split(/[?#]/)[0] === req.path) continue;
    return { ...t, status: rule.httpStatus === 301 ? 301 : 302 };
  }
  return null;
}
