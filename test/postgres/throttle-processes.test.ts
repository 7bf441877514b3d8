// The REST throttle holds across processes on PostgreSQL (README "Configuration",
// LECTERN_API_THROTTLE): two `lectern serve` on one database together let through the rate, not
// twice it, with DRF's 429 answer from either; the count is atomic under concurrent requests; and
// a database that fails the throttle's statement never turns a request into a 500.
// PostgreSQL only: the embedded database has one process, and counts in memory (throttle.test.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { DatabaseThrottle } from '../../src/db/throttle.ts';
import { createUser } from '../../src/domain/users.ts';
import { createLogger } from '../../src/log.ts';
import type { RequestThrottle } from '../../src/throttle.ts';
import { TEST_SECRET_KEY, type TestApp, testApp } from '../helpers/app.ts';
import { cliEnv, killChildren, type Served, startServe } from '../helpers/cli-process.ts';
import { createPostgresDatabase } from '../helpers/db.ts';

const THROTTLED = /^Request was throttled\. Expected available in (\d+) seconds?\.$/;

/** A fallback that must not be asked: the database answers in these tests. */
const NO_FALLBACK: RequestThrottle = {
  check: () => {
    throw new Error('the fallback was used: the database did not answer');
  },
  release: () => {
    throw new Error('the fallback was used: the database did not answer');
  },
};

describe('throttle on PostgreSQL', () => {
  describe('two `lectern serve` processes on one database', () => {
    let dropDatabase: () => Promise<void>;
    let db: Database;
    const dirs: string[] = [];
    const servers: Served[] = [];
    const tokens: Record<string, string> = {};

    beforeAll(async () => {
      const created = await createPostgresDatabase();
      dropDatabase = created.drop;
      const dir = () => {
        const d = mkdtempSync(path.join(os.tmpdir(), 'lectern-throttle-'));
        dirs.push(d);
        return d;
      };
      db = await openDatabase({ dataDir: dir(), databaseUrl: created.url });
      for (const name of ['alice', 'bob']) tokens[name] = (await createUser(db.prisma, name)).token;
      const env = (dataDir: string) =>
        cliEnv({
          DATABASE_URL: created.url,
          LECTERN_DATA_DIR: dataDir,
          LECTERN_SECRET_KEY: TEST_SECRET_KEY,
          LECTERN_API_THROTTLE: '5/minute',
          LECTERN_BUILD_CONCURRENCY: '0',
        });
      servers.push(...(await Promise.all([startServe(env(dir())), startServe(env(dir()))])));
    }, 120_000);

    afterAll(async () => {
      await Promise.all(servers.map((s) => s.stop('SIGKILL')));
      await killChildren();
      await db?.close();
      await dropDatabase?.();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });

    const projects = (server: Served, user: string) => fetch(`${server.url}/api/v3/projects/`, { headers: { authorization: `Token ${tokens[user]}` } });

    it('together they let 5/minute through, then both answer 429 as DRF does', async () => {
      const [a, b] = servers as [Served, Served];
      // Alternating, as a load balancer would send them: each process alone would allow 5.
      const started = Date.now();
      for (const [i, server] of [a, b, a, b, a].entries()) {
        const res = await projects(server, 'alice');
        expect(res.status, `request ${i + 1}`).toBe(200);
      }
      for (const server of [b, a, b]) {
        const res = await projects(server, 'alice');
        expect(res.status).toBe(429);
        const body = (await res.json()) as { detail: string };
        expect(Object.keys(body)).toEqual(['detail']);
        const n = Number(THROTTLED.exec(body.detail)?.[1]);
        // Until the first request leaves the window (fresh processes may answer their first requests slowly).
        expect(n, body.detail).toBeGreaterThanOrEqual(Math.floor(60 - (Date.now() - started) / 1000));
        expect(n).toBeLessThanOrEqual(60);
        expect(res.headers.get('retry-after')).toBe(String(n));
      }
      // The refused requests were not counted: exactly the 5 let through are in the window.
      const rows = await db.prisma.$queryRaw<{ n: number }[]>`SELECT cardinality("times") AS n FROM "ApiThrottle"`;
      expect(rows).toEqual([{ n: 5 }]);
    });

    it('a burst of concurrent requests to both lets exactly 5 through', async () => {
      const [a, b] = servers as [Served, Served];
      const statuses = await Promise.all(Array.from({ length: 24 }, (_, i) => projects(i % 2 ? a : b, 'bob').then((r) => r.status)));
      expect(statuses.filter((s) => s === 200)).toHaveLength(5);
      expect(statuses.filter((s) => s === 429)).toHaveLength(19);
    });
  });

  describe('the count itself', () => {
    let t: TestApp;
    let other: Database;
    let otherDir: string;

    beforeAll(async () => {
      t = await testApp();
      // A second connection pool on the same database, as a second process has.
      otherDir = mkdtempSync(path.join(os.tmpdir(), 'lectern-throttle-'));
      other = await openDatabase({ dataDir: otherDir, databaseUrl: t.databaseUrl });
    });

    afterAll(async () => {
      await other?.close();
      await t?.close();
      rmSync(otherDir, { recursive: true, force: true });
    });

    const log = createLogger('silent');

    it('is kept in the database: a second client sees the first one’s requests', async () => {
      const rate = { requests: 3, seconds: 60 };
      const one = new DatabaseThrottle(t.db.prisma, rate, log, NO_FALLBACK);
      const two = new DatabaseThrottle(other.prisma, rate, log, NO_FALLBACK);
      expect(await one.check('user:1')).toBe(0);
      expect(await two.check('user:1')).toBe(0);
      expect(await one.check('user:1')).toBe(0);
      const wait = await two.check('user:1');
      expect(wait).toBeGreaterThanOrEqual(59);
      expect(wait).toBeLessThanOrEqual(60);
      expect(await one.check('user:1')).toBe(wait);
      // Another caller has its own count.
      expect(await two.check('user:2')).toBe(0);
    });

    it('concurrent checks from two pools let exactly `requests` through', async () => {
      const rate = { requests: 7, seconds: 60 };
      const throttles = [new DatabaseThrottle(t.db.prisma, rate, log, NO_FALLBACK), new DatabaseThrottle(other.prisma, rate, log, NO_FALLBACK)];
      const waits = await Promise.all(Array.from({ length: 40 }, (_, i) => throttles[i % 2]!.check('user:burst')));
      expect(waits.filter((w) => w === 0)).toHaveLength(7);
      for (const w of waits.filter((w) => w !== 0)) {
        expect(w).toBeGreaterThanOrEqual(59);
        expect(w).toBeLessThanOrEqual(60);
      }
    });

    it('slides: a time leaves the window after `seconds`, and the caller is let in again', async () => {
      const rate = { requests: 2, seconds: 1 };
      const throttle = new DatabaseThrottle(t.db.prisma, rate, log, NO_FALLBACK);
      let wait = await throttle.check('user:slide');
      for (let i = 0; i < 20 && wait === 0; i++) wait = await throttle.check('user:slide');
      expect(wait).toBe(1);
      // A fixed wait on purpose: the time passing is what is tested (the 1 s window slides past).
      await new Promise((r) => setTimeout(r, 1100));
      expect(await throttle.check('user:slide')).toBe(0);
    });

    it('rows of callers whose window has passed are deleted in the background', async () => {
      await t.db.prisma.$executeRaw`
        INSERT INTO "ApiThrottle" ("key", "times", "admitted", "expiresAt")
        VALUES ('user:gone', ARRAY[now() - interval '2 hours'], true, now() - interval '1 hour')`;
      // A process sweeps a minute after its throttle was made: this one was made 61 s ago.
      const realNow = Date.now;
      Date.now = () => realNow() - 61_000;
      const throttle = new DatabaseThrottle(t.db.prisma, { requests: 5, seconds: 60 }, log, NO_FALLBACK);
      Date.now = realNow;
      await throttle.check('user:here');
      await expect.poll(async () => (await t.db.prisma.$queryRaw<{ key: string }[]>`SELECT "key" FROM "ApiThrottle" WHERE "key" = 'user:gone'`).length).toBe(0);
    });
  });

  describe('a database that fails the throttle’s statement', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await testApp({ LECTERN_API_THROTTLE: '3/minute' });
    });
    afterAll(() => t?.close());

    it('does not fail the request: the process counts alone until the database answers again', async () => {
      const token = await t.user('carol');
      const get = () => t.http.get('/api/v3/projects/').set('authorization', `Token ${token}`);
      expect((await get()).status).toBe(200);
      // The table is gone: every check now fails in the database.
      await t.db.prisma.$executeRawUnsafe('ALTER TABLE "ApiThrottle" RENAME TO "ApiThrottleAway"');
      try {
        for (let i = 0; i < 3; i++) expect((await get()).status).toBe(200);
        const refused = await get();
        expect(refused.status).toBe(429);
        expect(refused.body.detail).toMatch(THROTTLED);
      } finally {
        await t.db.prisma.$executeRawUnsafe('ALTER TABLE "ApiThrottleAway" RENAME TO "ApiThrottle"');
      }
      // Back in the database, which counted one request before it failed.
      for (let i = 0; i < 2; i++) expect((await get()).status).toBe(200);
      expect((await get()).status).toBe(429);
    });
  });
});
