// Slugs as Read the Docs makes them, so projects imported from readthedocs.org keep their URLs.
// @see docs/design/rest-api.md "Slugs"

/** Django's slugify, then runs of `-`/`_` collapsed to one `-` and trimmed: "Test Project" -> "test-project". */
export function projectSlug(name: string): string {
  const ascii = name.normalize('NFKD').replace(/[^\x00-\x7f]/g, '');
  const django = ascii
    .toLowerCase()
    .replace(/[^\w\s-]/g, '')
    .replace(/[-\s]+/g, '-')
    .replace(/^[-_]+|[-_]+$/g, '');
  return django.replace(/[-_]+/g, '-').replace(/^-+|-+$/g, '');
}

/**
 * A version slug from a branch or tag name (`builds/version_slug.py`): `/ % ! ?` become `-`, then
 * unicode-slugify with `ok="-._"`, `only_ascii`, `lower`: letters, numbers and `-._` are kept,
 * spaces become `-`, anything else is dropped (not replaced), runs of `-` and spaces collapse to one
 * `-`; finally leading `-._` are stripped. (unidecode is approximated by NFKD without accents.)
 */
export function versionSlug(name: string, taken: ReadonlySet<string> = new Set()): string {
  let kept = '';
  for (const ch of name.replace(/[/%!?]/g, '-').normalize('NFKC')) {
    if (/[\p{L}\p{N}]/u.test(ch) || ch === '-' || ch === '.' || ch === '_') kept += ch;
    else if (/\p{Z}/u.test(ch)) kept += ' ';
  }
  let slug = kept
    .trim()
    .normalize('NFKD')
    .replace(/[^\x00-\x7f]/g, '')
    .replace(/[-\s]+/g, '-')
    .toLowerCase()
    .replace(/[^a-z0-9\-._]/g, '')
    .replace(/^[-._]+/, '');
  if (!slug) slug = 'unknown';
  if (!taken.has(slug)) return slug;
  for (let i = 0; ; i++) {
    const candidate = `${slug}_${suffix(i)}`;
    if (!taken.has(candidate)) return candidate;
  }
}

/** a, b, … z, ba, bb, … as Read the Docs numbers colliding slugs. */
function suffix(n: number): string {
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  let out = '';
  do {
    out = letters[n % 26] + out;
    n = Math.floor(n / 26);
  } while (n > 0);
  return out;
}

export const VERSION_SLUG_PATTERN = /^(?:[a-z0-9][-._a-z0-9]*?)$/;
