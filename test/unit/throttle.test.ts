// The throttle's arithmetic, with the clock passed in (docs/design/read-the-docs.md §1.3: DRF's
// SimpleRateThrottle, a sliding window of the request times that were let through), and what the
// PostgreSQL throttle does with its database's answers and failures (the count itself is tested on
// a real server in test/postgres/throttle-processes.test.ts).
import { describe, expect, it } from 'vitest';
import type { PrismaClient } from '../../src/db/database.ts';
import { DatabaseThrottle } from '../../src/db/throttle.ts';
import type { Logger } from '../../src/log.ts';
import { parseRate, Throttle } from '../../src/throttle.ts';

describe('parseRate', () => {
  it.each([
    ['60/minute', { requests: 60, seconds: 60 }],
    ['5/min', { requests: 5, seconds: 60 }],
    ['5/m', { requests: 5, seconds: 60 }],
    ['2/second', { requests: 2, seconds: 1 }],
    ['2/s', { requests: 2, seconds: 1 }],
    ['1000/hour', { requests: 1000, seconds: 3600 }],
    ['10/day', { requests: 10, seconds: 86400 }],
    ['3/MINUTE', { requests: 3, seconds: 60 }],
  ])('%j', (text, rate) => {
    expect(parseRate(text)).toEqual(rate);
  });

  it.each(['0', 'off', '0/minute', '0/s'])('%j turns throttling off', (text) => {
    expect(parseRate(text)).toBeNull();
  });

  it.each(['', 'x', '5', '5/fortnight', '-1/minute', '1.5/minute', 'minute/5'])('%j is refused', (text) => {
    expect(() => parseRate(text)).toThrow(/invalid rate/);
  });
});

describe('Throttle', () => {
  const T0 = 1_000_000;

  it('off lets everything through', () => {
    const t = new Throttle(null);
    for (let i = 0; i < 1000; i++) expect(t.check('k', T0)).toBe(0);
  });

  it('lets `requests` through per window, then says how many seconds to wait', () => {
    const t = new Throttle({ requests: 3, seconds: 60 });
    expect(t.check('k', T0)).toBe(0);
    expect(t.check('k', T0 + 10_000)).toBe(0);
    expect(t.check('k', T0 + 20_000)).toBe(0);
    // The oldest counted request leaves the window at T0 + 60 s.
    expect(t.check('k', T0 + 30_000)).toBe(30);
    expect(t.check('k', T0 + 59_001)).toBe(1);
    expect(t.check('k', T0 + 59_999)).toBe(1);
    expect(t.check('k', T0 + 60_001)).toBe(0);
    // Now the one at T0 + 10 s is the oldest.
    expect(t.check('k', T0 + 60_002)).toBe(10);
  });

  it('refused requests are not counted', () => {
    const t = new Throttle({ requests: 2, seconds: 1 });
    expect(t.check('k', T0)).toBe(0);
    expect(t.check('k', T0 + 1)).toBe(0);
    for (let ms = 2; ms < 1000; ms += 7) expect(t.check('k', T0 + ms)).toBe(1);
    expect(t.check('k', T0 + 1001)).toBe(0);
    expect(t.check('k', T0 + 1002)).toBe(0);
    expect(t.check('k', T0 + 1003)).toBe(1);
  });

  it('the wait is at least one second and rounds up', () => {
    const t = new Throttle({ requests: 1, seconds: 10 });
    expect(t.check('k', T0)).toBe(0);
    expect(t.check('k', T0 + 1)).toBe(10);
    expect(t.check('k', T0 + 8_500)).toBe(2);
    expect(t.check('k', T0 + 9_999)).toBe(1);
  });

  it('keys are counted apart', () => {
    const t = new Throttle({ requests: 1, seconds: 60 });
    expect(t.check('user:1', T0)).toBe(0);
    expect(t.check('user:1', T0)).toBeGreaterThan(0);
    expect(t.check('user:2', T0)).toBe(0);
  });

  it('keeps a bounded number of keys', () => {
    const t = new Throttle({ requests: 1, seconds: 60 });
    for (let i = 0; i < 100_050; i++) t.check(`k${i}`, T0);
    // The oldest keys were forgotten, so they are let through again; the newest are not.
    expect(t.check('k0', T0 + 1)).toBe(0);
    expect(t.check('k100049', T0 + 1)).toBeGreaterThan(0);
  });
});

describe('DatabaseThrottle', () => {
  const rate = { requests: 2, seconds: 60 };
  const logger = () => {
    const warnings: { obj: Record<string, unknown>; msg: string }[] = [];
    const log = { warn: (obj: Record<string, unknown>, msg: string) => warnings.push({ obj, msg }), debug: () => {} } as unknown as Logger;
    return { log, warnings };
  };
  /** A client whose statement answers `rows` (or throws it when it is an Error). */
  const answering = (...answers: (unknown[] | Error)[]) =>
    ({
      $queryRaw: async () => {
        const a = answers.shift();
        if (a instanceof Error) throw a;
        return a;
      },
      $executeRaw: async () => 0,
    }) as unknown as PrismaClient;

  it('turns the database’s answer into the wait: 0 when let through, else whole seconds, at least 1', async () => {
    const { log } = logger();
    const t = new DatabaseThrottle(
      answering(
        [{ admitted: true, waitMs: null }],
        [{ admitted: false, waitMs: 59_000.4 }],
        [{ admitted: false, waitMs: 3 }],
        [{ admitted: false, waitMs: -2 }],
      ),
      rate,
      log,
      new Throttle(rate),
    );
    expect(await t.check('k')).toBe(0);
    expect(await t.check('k')).toBe(60);
    expect(await t.check('k')).toBe(1);
    expect(await t.check('k')).toBe(1);
  });

  it('when the database fails, counts in this process instead (never throws), and logs once, not per request', async () => {
    const { log, warnings } = logger();
    const failing = { $queryRaw: async () => Promise.reject(new Error('connection refused')), $executeRaw: async () => 0 } as unknown as PrismaClient;
    const t = new DatabaseThrottle(failing, rate, log, new Throttle(rate));
    expect(await t.check('k')).toBe(0);
    expect(await t.check('k')).toBe(0);
    expect(await t.check('k')).toBe(60);
    expect(await t.check('other')).toBe(0);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.msg).toMatch(/counted by this process alone/);
    expect((warnings[0]!.obj.err as Error).message).toBe('connection refused');
  });
});
