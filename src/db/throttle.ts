// The REST throttle (LECTERN_API_THROTTLE) counted in PostgreSQL, so that every `lectern serve` on
// one database counts the same requests and together they allow the rate, not once each. The rule
// is the in-memory Throttle's (src/throttle.ts): DRF's sliding window of the times of the
// requests let through (the ApiThrottle model of prisma/schema.prisma). The sign-in throttle
// (SignInThrottle, below) is made of such counts too.
import type { Logger } from '../log.ts';
import type { Rate, RequestThrottle } from '../throttle.ts';
import type { PrismaClient } from './database.ts';

/** How often a process deletes the rows whose window has passed (callers that stopped calling). */
const SWEEP_EVERY_MS = 60_000;
/** A database that keeps failing is logged once per this, with how many checks failed meanwhile. */
const LOG_FAILURES_EVERY_MS = 60_000;

export class DatabaseThrottle implements RequestThrottle {
  #lastSweep = Date.now();
  #failed = 0;
  #lastFailureLog = -Infinity;

  /**
   * `fallback` answers when the database does not (an error, a statement timeout): this process's
   * own count, as before the counts moved to the database. Letting such requests through instead
   * would turn the throttle off exactly when the database is overloaded; failing them would turn
   * a throttle problem into 500s.
   */
  private readonly prisma: PrismaClient;
  readonly rate: Rate;
  private readonly log: Logger;
  private readonly fallback: RequestThrottle;
  constructor(prisma: PrismaClient, rate: Rate, log: Logger, fallback: RequestThrottle) {
    this.prisma = prisma;
    this.rate = rate;
    this.log = log;
    this.fallback = fallback;
  }

  async check(key: string): Promise<number> {
    let row: { admitted: boolean; waitMs: number | null } | undefined;
    try {
      [row] = await this.#count(key);
    } catch (err) {
      this.#failure(err);
      return this.fallback.check(key);
    }
    if (Date.now() - this.#lastSweep > SWEEP_EVERY_MS) this.#sweep();
    if (!row || row.admitted) return 0;
    return Math.max(1, Math.ceil((row.waitMs ?? 0) / 1000));
  }

  /**
   * One statement, so it is atomic across processes: the upsert locks the caller's row, and under
   * READ COMMITTED a conflicting upsert that waited for that lock updates the row as the first one
   * left it. The times are the database's (statement_timestamp()), so the processes' clocks don't
   * matter. The times still in the window are kept; the request is let through, and its time
   * appended, when fewer than `requests` remain. `admitted` records that decision for RETURNING
   * (which sees only the new row). When refused, the wait is until the oldest time leaves the
   * window. A new caller's first request is always let through (`requests` >= 1, parseRate).
   */
  #count(key: string) {
    const { requests, seconds } = this.rate;
    return this.prisma.$queryRaw<{ admitted: boolean; waitMs: number | null }[]>`
      INSERT INTO "ApiThrottle" AS t ("key", "times", "admitted", "expiresAt")
      VALUES (${key}, ARRAY[statement_timestamp()], true, statement_timestamp() + ${seconds}::int * interval '1 second')
      ON CONFLICT ("key") DO UPDATE SET ("times", "admitted", "expiresAt") = (
        SELECT CASE WHEN cardinality(w.kept) < ${requests}::int THEN w.kept || statement_timestamp() ELSE w.kept END,
               cardinality(w.kept) < ${requests}::int,
               statement_timestamp() + ${seconds}::int * interval '1 second'
        FROM (
          SELECT ARRAY(
            SELECT x FROM unnest(t."times") AS x
            WHERE x > statement_timestamp() - ${seconds}::int * interval '1 second'
            ORDER BY x
          ) AS kept
        ) AS w
      )
      RETURNING t."admitted",
        (extract(epoch FROM t."times"[1] + ${seconds}::int * interval '1 second' - statement_timestamp()) * 1000)::float8 AS "waitMs"`;
  }

  /** Drops the caller's latest counted time, in one statement (in the fallback's count when the database does not answer). */
  async release(key: string): Promise<void> {
    try {
      await this.prisma.$executeRaw`UPDATE "ApiThrottle" SET "times" = "times"[1:cardinality("times") - 1] WHERE "key" = ${key} AND cardinality("times") > 0`;
    } catch (err) {
      this.#failure(err);
      await this.fallback.release(key);
    }
  }

  /** Deletes the rows of callers whose every time has left the window; in the background. */
  #sweep(): void {
    this.#lastSweep = Date.now();
    this.prisma.$executeRaw`DELETE FROM "ApiThrottle" WHERE "expiresAt" < statement_timestamp()`.catch((err: unknown) =>
      this.log.debug({ err }, 'throttle: deleting expired counts failed'),
    );
  }

  #failure(err: unknown): void {
    this.#failed++;
    const now = Date.now();
    if (now - this.#lastFailureLog < LOG_FAILURES_EVERY_MS) return;
    this.log.warn({ err, failedChecks: this.#failed }, 'throttle: the database did not answer; requests are counted by this process alone until it does');
    this.#lastFailureLog = now;
    this.#failed = 0;
  }
}

/** A sign-in attempt let through: counted as a failure unless `succeeded` is called. */
export interface SignInAttempt {
  /** Seconds to wait before trying again, or 0 (the attempt may go ahead). */
  wait: number;
  /** The attempt signed in: none of its counts stand (only failures count). */
  succeeded(): Promise<void>;
}

/** Tries a client gets at an account that is under attack, when it has not failed at it itself. */
export const FRESH_CLIENT_TRIES = 3;

/**
 * Sign-in throttling that slows an attacker without locking the owner out (docs/design/sessions.md).
 * Only failed attempts count, in sliding windows of the rate's length (LECTERN_SIGNIN_THROTTLE,
 * N per window):
 * - per client address, over every account: 10 N (people behind one address share it);
 * - per account from one client address: N;
 * - per account from every address: N. Past that the account is under attack, and each client
 *   gets FRESH_CLIENT_TRIES more tries at it in the window: the owner, from a client that has not
 *   failed, still signs in; an attacker spread over many addresses gets that many per address.
 * `make` gives a throttle for a rate: in memory, or counted in PostgreSQL for every process.
 */
export class SignInThrottle {
  readonly #perAddress: RequestThrottle;
  readonly #perPair: RequestThrottle;
  readonly #perAccount: RequestThrottle;
  readonly #fresh: RequestThrottle;
  constructor(rate: Rate, make: (rate: Rate) => RequestThrottle) {
    this.#perAddress = make({ requests: rate.requests * 10, seconds: rate.seconds });
    this.#perPair = make(rate);
    this.#perAccount = make(rate);
    this.#fresh = make({ requests: FRESH_CLIENT_TRIES, seconds: rate.seconds });
  }

  /** An attempt at `account` (lowercased) from `address`. */
  async admit(account: string, address: string): Promise<SignInAttempt> {
    const counted: [RequestThrottle, string][] = [];
    const undo = async () => {
      for (const [throttle, key] of counted) await throttle.release(key);
    };
    const refused = async (wait: number): Promise<SignInAttempt> => {
      await undo();
      return { wait, succeeded: async () => {} };
    };
    const steps: [RequestThrottle, string][] = [
      [this.#perAddress, `signin:address:${address}`],
      [this.#perPair, `signin:pair:${account}:${address}`],
    ];
    for (const [throttle, key] of steps) {
      const wait = await throttle.check(key);
      if (wait > 0) return refused(wait);
      counted.push([throttle, key]);
    }
    const accountKey = `signin:user:${account}`;
    if ((await this.#perAccount.check(accountKey)) === 0) counted.push([this.#perAccount, accountKey]);
    else {
      const freshKey = `signin:fresh:${account}:${address}`;
      const wait = await this.#fresh.check(freshKey);
      if (wait > 0) return refused(wait);
      counted.push([this.#fresh, freshKey]);
    }
    return { wait: 0, succeeded: undo };
  }
}
