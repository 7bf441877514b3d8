// Rate limits per caller (user, else client address), as DRF's SimpleRateThrottle counts them: a
// sliding window of request times. In memory, per process: with several processes behind a load
// balancer each allows the rate, which is the usual trade for not touching the database here.

export interface Rate {
  requests: number;
  seconds: number;
}

const UNITS: Record<string, number> = { s: 1, sec: 1, second: 1, m: 60, min: 60, minute: 60, h: 3600, hour: 3600, d: 86400, day: 86400 };

/** `60/minute`, `5/min`, `1000/hour`, `0` (off). */
export function parseRate(text: string): Rate | null {
  if (text === '0' || text === 'off') return null;
  const m = /^(\d+)\/(\w+)$/.exec(text.trim());
  const seconds = m ? UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || !seconds) throw new Error(`invalid rate "${text}": use N/second, N/minute, N/hour or N/day`);
  return { requests: Number(m[1]), seconds };
}

export class Throttle {
  readonly #history = new Map<string, number[]>();
  constructor(readonly rate: Rate | null) {}

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
}
