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

/**
 * The keys of an object in sorted order, each already written as JSON (`"name":`), by the object's
 * own key order: objects of one shape (every project, every version) are sorted once. Bounded, as
 * some keys are data (version slugs in `active_versions`).
 */
const ORDERS_MAX = 2000;
const orders = new Map<string, { key: string; written: string }[]>();
function sortedKeys(o: Record<string, unknown>): { key: string; written: string }[] {
  const keys = Object.keys(o);
  const shape = keys.join('\u0000');
  let order = orders.get(shape);
  if (!order) {
    if (orders.size >= ORDERS_MAX) orders.clear();
    order = [...keys].sort(byCodePoint).map((key) => ({ key, written: `${JSON.stringify(key)}:` }));
    orders.set(shape, order);
  }
  return order;
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
  let out = '{';
  let first = true;
  for (const { key, written } of sortedKeys(o)) {
    const v = sortedJson(o[key], false);
    if (v === undefined) continue;
    out += first ? written + v : `,${written}${v}`;
    first = false;
  }
  return `${out}}`;
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
