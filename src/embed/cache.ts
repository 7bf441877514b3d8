// Parsed pages kept between embeds, so repeated embeds of one page (a tooltip per reference on a
// page of docs) parse it once. Keyed by storage key and checked by ETag on every use, so a page
// replaced in storage is parsed again. Bounded by count and by an estimate of memory, least
// recently used first out (lru-cache's `max` and `maxSize`); one cache per storage, since two
// storages may hold the same keys.
// @see https://github.com/isaacs/node-lru-cache
import { LRUCache } from 'lru-cache';
import type { Storage } from '../storage/index.ts';
import type { ParsedPage } from './sphinx.ts';

export const MAX_PAGES = 200;
/** Parsed DOMs take several times their HTML; ParsedPage.size estimates that. */
export const MAX_BYTES = 256 * 1024 * 1024;

interface Entry {
  etag: string;
  page: ParsedPage;
}

export class PageCache {
  readonly #entries: LRUCache<string, Entry>;
  hits = 0;
  misses = 0;

  readonly maxPages: number;
  readonly maxBytes: number;
  constructor(maxPages = MAX_PAGES, maxBytes = MAX_BYTES) {
    this.maxPages = maxPages;
    this.maxBytes = maxBytes;
    // A page larger than maxBytes is not kept at all (lru-cache's maxEntrySize defaults to maxSize).
    this.#entries = new LRUCache<string, Entry>({
      max: maxPages,
      maxSize: maxBytes,
      sizeCalculation: (e) => Math.max(1, Math.ceil(e.page.size)),
    });
  }

  /** The entry for `key`, whatever its ETag (the caller asks storage whether it still holds). */
  peek(key: string): Entry | undefined {
    return this.#entries.peek(key);
  }

  /** The page parsed from `key` at `etag`, marked as just used. */
  get(key: string, etag: string): ParsedPage | undefined {
    const e = this.#entries.peek(key);
    if (!e || e.etag !== etag) {
      this.misses += 1;
      return undefined;
    }
    this.#entries.get(key);
    this.hits += 1;
    return e.page;
  }

  set(key: string, etag: string, page: ParsedPage): void {
    this.#entries.set(key, { etag, page });
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }

  get size(): number {
    return this.#entries.size;
  }
}

const caches = new WeakMap<Storage, PageCache>();

export function pageCache(storage: Storage): PageCache {
  let c = caches.get(storage);
  if (!c) caches.set(storage, (c = new PageCache()));
  return c;
}
