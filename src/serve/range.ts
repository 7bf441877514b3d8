// Range requests (RFC 9110 §14), so a large download resumes where it stopped: which part of a
// representation a GET asks for, read by range-parser (the parser express and `send` use), with
// If-Range (§13.1.5) deciding whether the part asked for is still of the representation held.
// Both the kept answers (./send.ts respond(), which the fast path uses too) and the answers
// streamed from storage decide here, so every docs file and download answers a Range alike.
// @see https://www.rfc-editor.org/rfc/rfc9110#section-14
import parseRange from 'range-parser';
import type { ByteRange } from '../storage/index.ts';

/**
 * What a GET gets of a `size`-byte representation whose validators are `etag` (quoted, strong) and
 * `lastModifiedHttp`: null for all of it (200), one range (206), or 'unsatisfiable' (416).
 * All of it when there is no Range, a Range in another unit or not well formed (ignored, as
 * §14.2 allows), an If-Range naming another representation, several ranges (RFC 9110 lets a
 * server answer those whole; `send` does too), or an empty representation. Overlapping and
 * adjacent ranges are combined first, so `bytes=0-99,100-199` is one range.
 */
export function rangeOf(
  range: string | undefined,
  ifRange: string | undefined,
  size: number,
  etag: string,
  lastModifiedHttp: string,
): ByteRange | 'unsatisfiable' | null {
  if (range === undefined || size === 0 || !BYTES_UNIT.test(range)) return null;
  // If-Range is only looked at with a Range (§13.1.5).
  if (ifRange !== undefined && !ifRangeHolds(ifRange, etag, lastModifiedHttp)) return null;
  const ranges = parseRange(size, range, { combine: true });
  if (ranges === -2) return null;
  // range-parser 1.3.0 drops a suffix range longer than the representation (`bytes=-1000` of 500
  // bytes), which §14.1.3 says stands for all of it: when one is asked for, so is every byte.
  if (hasLongSuffix(range.slice(range.indexOf('=') + 1), size)) return { start: 0, end: size - 1 };
  if (ranges === -1) return 'unsatisfiable';
  return ranges.length === 1 ? ranges[0]! : null;
}

const BYTES_UNIT = /^\s*bytes\s*=/i;

/** Whether the comma-separated range-specs hold a suffix (`-N`) of at least `size` bytes. */
function hasLongSuffix(specs: string, size: number): boolean {
  return specs.split(',').some((spec) => {
    const m = /^\s*-\s*(\d+)\s*$/.exec(spec);
    return m !== null && Number(m[1]) >= size;
  });
}

/**
 * Whether If-Range still names the representation: an entity tag compared strongly (a weak one
 * never matches), or an HTTP date equal to its Last-Modified (to the second, as dates are).
 */
function ifRangeHolds(ifRange: string, etag: string, lastModifiedHttp: string): boolean {
  const v = ifRange.trim();
  if (v.startsWith('"') || v.startsWith('W/')) return v === etag;
  const date = Date.parse(v);
  return !Number.isNaN(date) && date === Date.parse(lastModifiedHttp);
}

/** The Content-Range of a 206 carrying `r` of `size` bytes. */
export const contentRangeOf = (r: ByteRange, size: number): string => `bytes ${r.start}-${r.end}/${size}`;

/** The Content-Range of a 416: the representation's length, so the client can ask again. */
export const unsatisfiedRangeOf = (size: number): string => `bytes */${size}`;
