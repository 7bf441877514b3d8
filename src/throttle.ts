// Rate limits per caller (user, else client address), as DRF's SimpleRateThrottle counts them: a
// sliding window of the times of requests let through (refused ones are not counted). This file
// holds the rule, in memory, for one process (the embedded database); on PostgreSQL the counts
// live in the database (src/db/throttle.ts), so several processes together allow the rate.

export interface Rate {
  requests: number;
  seconds: number;
}

const UNITS: Record<string, number> = { s: 1, sec: 1, second: 1, m: 60, min: 60, minute: 60, h: 3600, hour: 3600, d: 86400, day: 86400 };

/** `60/minute`, `5/min`, `1000/hour`, `0` (off; so is `0/minute`, as it always behaved). */
export function parseRate(text: string): Rate | null {
  if (text === '0' || text === 'off') return null;
  const m = /^(\d+)\/(\w+)$/.exec(text.trim());
  const seconds = m ? UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || !seconds) throw new Error(`invalid rate "${text}": use N/second, N/minute, N/hour or N/day`);
  const requests = Number(m[1]);
  return requests === 0 ? null : { requests, seconds };
}

/** What the REST router asks after permission: whether the caller `key` must wait. */
export interface RequestThrottle {
  /** Seconds to wait when `key` is over the rate (and the request is not counted), else 0 (counted). */
  check(key: string): number | Promise<number>;
  /**
   * Forgets the last request `check` counted for `key`: it was refused by permission after all
   * (the operation's own rule answered 401, 403, or the 404 of a maintainers' route's project),
   * and DRF checks permission before it counts.
   */
  release(key: string): void | Promise<void>;
}

/** The rule in this process's memory. */
export class Throttle implements RequestThrottle {
  readonly #history = new Map<string, number[]>();
  readonly rate: Rate | null;
  constructor(rate: Rate | null) {
    this.rate = rate;
  }

  /** Seconds to wait when `key` is over the rate (and the request is not counted), else 0. */
  check(key: string, now = Date.now()): number {
    if (!this.rate) return 0;
    const windowMs = this.rate.seconds * 1000;
    const times = (this.#history.get(key) ?? []).filter((t) => t > now - windowMs);
    if (times.length >= this.rate.requests) {
      this.#history.set(key, times);
      return Math.max(1, Math.ceil((windowMs - (now - times[0]!)) / 1000));
    }
    times.push(now);
    this.#history.set(key, times);
    if (this.#history.size > 100_000) this.#history.delete(this.#history.keys().next().value!);
    return 0;
  }

  release(key: string): void {
    this.#history.get(key)?.pop();
  }
}
