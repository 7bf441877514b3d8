// How v3 writes values: datetimes as Django REST framework does (UTC, `Z`, microseconds only
// when not zero), keys sorted at every level, links absolute on the configured public URL.

/** `2019-04-29T10:00:00Z`, or `2019-04-29T10:00:00.123000Z` when there are fractions. */
export function drfDateTime(iso: string | null | undefined): string | null {
  if (!iso) return null;
  const d = new Date(iso);
  const ms = d.getUTCMilliseconds();
  const base = d.toISOString().slice(0, 19);
  return ms ? `${base}.${String(ms).padStart(3, '0')}000Z` : `${base}Z`;
}

/** v2 writes datetimes without an offset, with fractional seconds. */
export function v2DateTime(iso: string | null | undefined): string | null {
  if (!iso) return null;
  return `${new Date(iso).toISOString().slice(0, 23)}000`;
}

/** Python's order for `sort_keys=True`: by code point (JavaScript's default sort is by UTF-16 unit). */
const SURROGATE = /[\uD800-\uDFFF]/;
function byCodePoint(a: string, b: string): number {
  // UTF-16 order is code-point order unless a character beyond U+FFFF is involved.
  if (!SURROGATE.test(a) && !SURROGATE.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d) return d;
  }
  return x.length - y.length;
}

/** JSON text with every object's keys in sorted order, as JSON.stringify writes values otherwise. */
function sortedJson(value: unknown, inArray: boolean): string | undefined {
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON: () => unknown }).toJSON();
  }
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return inArray ? 'null' : undefined;
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((v) => sortedJson(v, true)).join(',')}]`;
  const o = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const k of Object.keys(o).sort(byCodePoint)) {
    const v = sortedJson(o[k], false);
    if (v !== undefined) parts.push(`${JSON.stringify(k)}:${v}`);
  }
  return `{${parts.join(',')}}`;
}

/**
 * The JSON text of a v3 body: keys sorted at every level, as Python's `json.dumps(sort_keys=True)`.
 * Written key by key rather than by rebuilding objects, since a JavaScript object puts integer-like
 * keys (a version slug such as "10" in `active_versions`) first in numeric order, whatever order
 * they were inserted in.
 */
export function v3Json(value: unknown): string {
  return sortedJson(value, false) ?? 'null';
}

export function titleCase(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
