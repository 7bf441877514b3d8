// What docs URLs resolve to (project rows with their redirects and relations, version rows), kept
// a short while so a page costs no database round trip. Every committed domain write that changes
// what is served emits its app's `servedChanged`, which empties every cache of that app at once
// (through the app's ServedGeneration); writes made by another app or process (or straight to the
// database) show after the TTL at the latest.
// The keeping is lru-cache's (TTL, bounds in entries and in estimated bytes, least recently used
// first out, one load shared by every caller asking meanwhile); what is Lectern's own is when an
// answer counts as fresh (the TTL from the start of the load, `Freshness`) and `servedChanged`.
// @see https://github.com/isaacs/node-lru-cache (fetchMethod, ttl, maxSize)
// @see docs/design/events.md
import { LRUCache } from 'lru-cache';
import type { Events } from '../events.ts';

/**
 * How many `servedChanged` one app has emitted: a cached answer made under another count may be
 * stale. Made by buildApp from the app's events and handed to each of its docs caches; one counter
 * for the app, however many caches it has (a cache compares when it is next used, no listener each).
 */
export class ServedGeneration {
  #value = 0;

  /** Without `events`, a counter only bump() moves (a cache on its own, in tests). */
  constructor(events?: Events) {
    events?.on('servedChanged', () => this.bump());
  }

  get value(): number {
    return this.#value;
  }

  bump(): void {
    this.#value += 1;
  }
}

/** The earliest expiry among the cached values a caller used: an answer made from them is no fresher. */
export interface Freshness {
  until: number;
}

/** One loaded value (lru-cache keeps no null or undefined, which lookups return), with when it goes stale. */
interface Box {
  value: unknown;
  expires: number;
  /** The value already resolved, handed to every hit: a hit makes no promise of its own. */
  settled: Promise<unknown>;
}

/** What a get() asks the cache to load, when it is the first to ask. */
type Load = () => Promise<unknown>;

export interface TtlCacheOptions {
  ttlMs: number;
  maxEntries?: number;
  maxBytes?: number;
  now?: () => number;
  /** The app's count of `servedChanged`: a change empties the cache. A counter of its own by default. */
  generation?: ServedGeneration;
}

export class TtlCache {
  readonly #ttl: number;
  readonly #lru: LRUCache<string, Box, Load> | undefined;
  readonly #served: ServedGeneration;
  #generation: number;

  constructor(opts: TtlCacheOptions) {
    this.#ttl = opts.ttlMs;
    this.#served = opts.generation ?? new ServedGeneration();
    this.#generation = this.#served.value;
    const now = opts.now ?? (() => Date.now());
    if (this.#ttl <= 0) return;
    this.#lru = new LRUCache<string, Box, Load>({
      max: opts.maxEntries ?? 10_000,
      maxSize: opts.maxBytes ?? 16 * 1024 * 1024,
      sizeCalculation: (box, key) => estimateBytes(key, box.value),
      ttl: this.#ttl,
      // Our clock (Date, so a test's fake Date moves it), read on every check: the default caches
      // it for 1 ms behind a timer per read.
      perf: { now },
      ttlResolution: 0,
      // A load whose entry was dropped meanwhile (cleared by a write, evicted) still answers the
      // callers waiting for it, and is not kept.
      ignoreFetchAbort: true,
      fetchMethod: async (_key, _stale, { options, context: load }) => {
        const started = now();
        const value = await load();
        const expires = started + this.#ttl;
        // The TTL counts from the start of the load, so no answer is older than the TTL.
        options.ttl = Math.max(1, expires - now());
        return { value, expires, settled: Promise.resolve(value) };
      },
    });
  }

  get size(): number {
    return this.#lru?.size ?? 0;
  }

  get bytes(): number {
    return this.#lru?.calculatedSize ?? 0;
  }

  /**
   * The cached value of `key`, else `load()`'s (shared by every caller asking meanwhile, so a cold
   * key under load costs one query, not one per request). The TTL counts from the start of the
   * load, so no answer is older than the TTL; a load that a write overtook is not kept. `fresh`,
   * when given, learns the value's expiry.
   */
  get<T>(key: string, load: () => Promise<T>, fresh?: Freshness): Promise<T> {
    const lru = this.#lru;
    if (!lru) {
      if (fresh) fresh.until = 0;
      return load();
    }
    // A write since this cache was last used: whatever it holds (or is loading) may be of before.
    if (this.#generation !== this.#served.value) this.clear();
    const hit = lru.get(key);
    if (hit) {
      if (fresh && hit.expires < fresh.until) fresh.until = hit.expires;
      return hit.settled as Promise<T>;
    }
    return lru.fetch(key, { context: load }).then((box) => {
      // Never undefined: the load always gives a Box, and an aborted one is still handed over.
      if (fresh && box!.expires < fresh.until) fresh.until = box!.expires;
      return box!.value as T;
    });
  }

  /** Drops `key` (the next get loads it again). */
  delete(key: string): void {
    this.#lru?.delete(key);
  }

  clear(): void {
    this.#lru?.clear();
    this.#generation = this.#served.value;
  }
}

/** Rough in-memory size: UTF-16 JSON text plus per-entry overhead. Good enough to bound memory. */
function estimateBytes(key: string, value: unknown): number {
  return 2 * (key.length + (JSON.stringify(value)?.length ?? 4)) + 128;
}
