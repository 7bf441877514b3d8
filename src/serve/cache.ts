// What docs URLs resolve to (project rows with their redirects and relations, version rows), kept
// a short while so a page costs no database round trip. Every committed domain write that changes
// what is served emits `servedChanged`, which empties every cache in this process at once; writes
// made by another process (or straight to the database) show after the TTL at the latest.
// Bounded in entries and in (estimated) bytes, least recently used first out.
import { events } from '../domain/events.ts';

/** Bumped on every `servedChanged`: one listener for the process, however many apps it builds. */
let generation = 0;
events.on('servedChanged', () => {
  generation += 1;
});

/** How many `servedChanged` this process has seen: an answer made under another count may be stale. */
export const servedGeneration = (): number => generation;

/** The earliest expiry among the cached values a caller used: an answer made from them is no fresher. */
export interface Freshness {
  until: number;
}

interface Entry {
  value: Promise<unknown>;
  expires: number;
  bytes: number;
}

export interface TtlCacheOptions {
  ttlMs: number;
  maxEntries?: number;
  maxBytes?: number;
  now?: () => number;
}

export class TtlCache {
  readonly #ttl: number;
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  readonly #now: () => number;
  /** Insertion order is recency order: a hit moves its entry to the end, eviction takes the first. */
  readonly #map = new Map<string, Entry>();
  #bytes = 0;
  #generation = generation;

  constructor(opts: TtlCacheOptions) {
    this.#ttl = opts.ttlMs;
    this.#maxEntries = opts.maxEntries ?? 10_000;
    this.#maxBytes = opts.maxBytes ?? 16 * 1024 * 1024;
    this.#now = opts.now ?? (() => Date.now());
  }

  get size(): number {
    return this.#map.size;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /**
   * The cached value of `key`, else `load()`'s (shared by every caller asking meanwhile, so a cold
   * key under load costs one query, not one per request). The TTL counts from the start of the
   * load, so no answer is older than the TTL; a load that a write overtook is not kept. `fresh`,
   * when given, learns the value's expiry.
   */
  get<T>(key: string, load: () => Promise<T>, fresh?: Freshness): Promise<T> {
    if (this.#ttl <= 0) {
      if (fresh) fresh.until = 0;
      return load();
    }
    if (this.#generation !== generation) this.clear();
    const now = this.#now();
    const hit = this.#map.get(key);
    if (hit) {
      if (hit.expires > now) {
        this.#map.delete(key);
        this.#map.set(key, hit);
        if (fresh && hit.expires < fresh.until) fresh.until = hit.expires;
        return hit.value as Promise<T>;
      }
      this.#remove(key, hit);
    }
    const started = generation;
    const value = load();
    const entry: Entry = { value, expires: now + this.#ttl, bytes: 0 };
    if (fresh && entry.expires < fresh.until) fresh.until = entry.expires;
    this.#map.set(key, entry);
    this.#account(entry, 2 * key.length + 128);
    value.then(
      (v) => {
        if (started !== generation || this.#map.get(key) !== entry) return this.#forget(key, entry);
        this.#account(entry, estimateBytes(key, v));
      },
      () => this.#forget(key, entry),
    );
    return value;
  }

  /** Drops `key` (the next get loads it again). */
  delete(key: string): void {
    const e = this.#map.get(key);
    if (e) this.#remove(key, e);
  }

  clear(): void {
    this.#map.clear();
    this.#bytes = 0;
    this.#generation = generation;
  }

  #forget(key: string, entry: Entry): void {
    if (this.#map.get(key) === entry) this.#remove(key, entry);
  }

  #remove(key: string, entry: Entry): void {
    this.#map.delete(key);
    this.#bytes -= entry.bytes;
  }

  #account(entry: Entry, bytes: number): void {
    this.#bytes += bytes - entry.bytes;
    entry.bytes = bytes;
    while (this.#map.size > this.#maxEntries || (this.#bytes > this.#maxBytes && this.#map.size > 0)) {
      const [oldKey, oldest] = this.#map.entries().next().value as [string, Entry];
      this.#remove(oldKey, oldest);
    }
  }
}

/** Rough in-memory size: UTF-16 JSON text plus per-entry overhead. Good enough to bound memory. */
function estimateBytes(key: string, value: unknown): number {
  return 2 * (key.length + (JSON.stringify(value)?.length ?? 4)) + 128;
}
