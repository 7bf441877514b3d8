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

export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/** The JSON text of a v3 body: keys sorted alphabetically at every level. */
export function v3Json(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

export function titleCase(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
