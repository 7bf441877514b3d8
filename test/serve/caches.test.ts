// The rules the docs server's and embed's caches keep on top of lru-cache, checked without a
// server: one load per key however many ask meanwhile, the TTL counted from the start of the load,
// `servedChanged` emptying the resolution cache (a load it overtook is not kept), and the bounds.
import { describe, expect, it } from 'vitest';
import { PageCache } from '../../src/embed/cache.ts';
import type { ParsedPage } from '../../src/embed/sphinx.ts';
import { createEvents } from '../../src/events.ts';
import { type Freshness, ServedGeneration, TtlCache } from '../../src/serve/cache.ts';

/** A load that resolves when told, counting its calls. */
function gate<T>(value: T) {
  let calls = 0;
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return {
    load: async () => {
      calls += 1;
      await opened;
      return value;
    },
    open,
    calls: () => calls,
  };
}

describe('TtlCache (what docs URLs resolve to)', () => {
  it('loads a key once for every caller asking meanwhile, and answers later ones without loading', async () => {
    const cache = new TtlCache({ ttlMs: 1000 });
    const g = gate({ slug: 'p' });
    const asked = Array.from({ length: 5 }, () => cache.get('slug:p', g.load));
    g.open();
    const got = await Promise.all(asked);
    expect(g.calls()).toBe(1);
    expect(new Set(got).size).toBe(1);
    expect(await cache.get('slug:p', g.load)).toBe(got[0]);
    expect(g.calls()).toBe(1);
  });

  it('counts the TTL from the start of the load, and tells each caller when its value goes stale', async () => {
    let now = 1_000_000;
    const cache = new TtlCache({ ttlMs: 2000, now: () => now });
    const g = gate('row');
    const fresh: Freshness = { until: Infinity };
    const first = cache.get('k', g.load, fresh);
    now += 1500; // a slow query
    g.open();
    expect(await first).toBe('row');
    expect(fresh.until).toBe(1_000_000 + 2000);
    const later: Freshness = { until: Infinity };
    now += 400;
    expect(await cache.get('k', g.load, later)).toBe('row');
    expect([g.calls(), later.until]).toEqual([1, 1_000_000 + 2000]);
    // An earlier expiry already known is kept.
    const earlier: Freshness = { until: 5 };
    await cache.get('k', g.load, earlier);
    expect(earlier.until).toBe(5);
    now += 101;
    await cache.get('k', g.load);
    expect(g.calls()).toBe(2);
  });

  it('empties on servedChanged, and does not keep a load that a write overtook', async () => {
    const events = createEvents();
    const cache = new TtlCache({ ttlMs: 60_000, generation: new ServedGeneration(events) });
    let n = 0;
    const load = async () => ++n;
    expect(await cache.get('k', load)).toBe(1);
    events.emit('servedChanged', {});
    expect(await cache.get('k', load)).toBe(2);

    const g = gate('before the write');
    const pending = cache.get('slow', g.load);
    events.emit('servedChanged', {});
    // The next use sees the write: what was loading is dropped, though its callers still get it.
    expect(await cache.get('k', load)).toBe(3);
    g.open();
    expect(await pending).toBe('before the write');
    const after = gate('after the write');
    after.open();
    expect(await cache.get('slow', after.load)).toBe('after the write');
  });

  it("keeps what it holds on another app's servedChanged", async () => {
    const mine = createEvents();
    const theirs = createEvents();
    const cache = new TtlCache({ ttlMs: 60_000, generation: new ServedGeneration(mine) });
    let n = 0;
    const load = async () => ++n;
    expect(await cache.get('k', load)).toBe(1);
    theirs.emit('servedChanged', {});
    expect(await cache.get('k', load)).toBe(1);
    mine.emit('servedChanged', {});
    expect(await cache.get('k', load)).toBe(2);
  });

  it('forgets a failed load and a deleted key; with a TTL of 0 loads every time', async () => {
    const cache = new TtlCache({ ttlMs: 60_000 });
    await expect(cache.get('k', () => Promise.reject(new Error('database down')))).rejects.toThrow('database down');
    expect(await cache.get('k', async () => 'ok')).toBe('ok');
    cache.delete('k');
    expect(await cache.get('k', async () => 'again')).toBe('again');

    const off = new TtlCache({ ttlMs: 0 });
    let n = 0;
    const fresh: Freshness = { until: Infinity };
    await off.get('k', async () => ++n, fresh);
    await off.get('k', async () => ++n);
    expect([n, fresh.until, off.size]).toEqual([2, 0, 0]);
  });

  it('is bounded in entries and in bytes, least recently used first out', async () => {
    const cache = new TtlCache({ ttlMs: 60_000, maxEntries: 3 });
    for (const k of ['a', 'b', 'c']) await cache.get(k, async () => k);
    await cache.get('a', async () => 'reloaded');
    await cache.get('d', async () => 'd');
    expect(cache.size).toBe(3);
    expect(await cache.get('a', async () => 'reloaded')).toBe('a');
    expect(await cache.get('b', async () => 'reloaded')).toBe('reloaded');

    const small = new TtlCache({ ttlMs: 60_000, maxBytes: 4096 });
    for (let i = 0; i < 20; i++) await small.get(`k${i}`, async () => 'x'.repeat(500));
    expect(small.bytes).toBeLessThanOrEqual(4096);
    expect(small.size).toBeLessThan(20);
  });
});

describe('PageCache (parsed pages for embeds)', () => {
  const page = (size: number) => ({ size }) as ParsedPage;

  it('gives a page only under the ETag it was parsed from, counting hits and misses', () => {
    const cache = new PageCache();
    const p = page(100);
    cache.set('a.html', '"1"', p);
    expect(cache.get('a.html', '"1"')).toBe(p);
    expect(cache.get('a.html', '"2"')).toBeUndefined();
    expect(cache.peek('a.html')).toEqual({ etag: '"1"', page: p });
    expect([cache.hits, cache.misses]).toEqual([1, 1]);
    cache.delete('a.html');
    expect(cache.peek('a.html')).toBeUndefined();
  });

  it('is bounded in pages and in estimated bytes, least recently used first out; a page over the budget is not kept', () => {
    const byCount = new PageCache(2, 1_000_000);
    byCount.set('a', '"a"', page(10));
    byCount.set('b', '"b"', page(10));
    byCount.get('a', '"a"');
    byCount.set('c', '"c"', page(10));
    expect([byCount.peek('a') !== undefined, byCount.peek('b') !== undefined, byCount.size]).toEqual([true, false, 2]);

    const byBytes = new PageCache(100, 1000);
    byBytes.set('a', '"a"', page(400));
    byBytes.set('b', '"b"', page(400));
    byBytes.set('c', '"c"', page(400));
    expect([byBytes.peek('a'), byBytes.size]).toEqual([undefined, 2]);
    byBytes.set('b', '"b2"', page(5000));
    expect(byBytes.peek('b')).toBeUndefined();
    byBytes.clear();
    expect(byBytes.size).toBe(0);
  });
});
