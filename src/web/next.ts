// Where the dashboard goes after signing in: the `next` of `/sign-in?next=…` (client.ts signInUrl
// writes it; the docs server's /_/docs-access sends readers there too). It is followed only when,
// parsed as a URL against Lectern's origin, it stays on that origin; anything else goes to `/`.
// What a URL parser would drop or reinterpret (tabs, newlines and other control characters, spaces,
// backslashes, `//`, `/./`) and their percent-encoded forms are refused, not cleaned up: a
// cleaned-up `/\t/evil.example/` is `//evil.example/`, another site. docs/design/sessions.md.

/** Characters a next never holds: controls, spaces (the URL parser strips or rewrites them), backslashes. */
const UNSAFE = /[\u0000-\u0020\u007f-\u00a0\\\u1680\u2000-\u200f\u2028\u2029\u202f\u205f\u3000\ufeff]/;

/** How many times a path is percent-decoded to look for what a decoding server or router would see. */
const DECODINGS = 4;

/**
 * The path (with query and fragment) to go to after signing in: `next` when it is a path of
 * `origin` (or a URL of exactly that origin, with no user info), else `/`.
 */
export function nextTarget(next: string | null | undefined, origin: string): string {
  if (!next || next.length > 4096 || UNSAFE.test(next)) return '/';
  const own = new URL(origin).origin;
  // A path of this origin, or an absolute URL of it: never a scheme-relative `//host` or another scheme.
  if (!(next.startsWith('/') && !next.startsWith('//')) && !next.toLowerCase().startsWith(`${own.toLowerCase()}/`)) return '/';
  let url: URL;
  try {
    url = new URL(next, `${own}/`);
  } catch {
    return '/';
  }
  if (url.origin !== own || url.username || url.password) return '/';
  // The path as the parser normalized it (`/.//x` is `//x`), and decoded as a server might.
  let path = url.pathname;
  for (let i = 0; i <= DECODINGS; i++) {
    if (/^\/[/\\]/.test(path) || UNSAFE.test(path)) return '/';
    let decoded: string;
    try {
      decoded = decodeURIComponent(path);
    } catch {
      return '/';
    }
    if (decoded === path) break;
    path = decoded;
  }
  return `${url.pathname}${url.search}${url.hash}`;
}
