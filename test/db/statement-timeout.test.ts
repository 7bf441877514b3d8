// A statement running past LECTERN_DB_STATEMENT_TIMEOUT_MS is cancelled by PostgreSQL with a clear
// error, and the client goes on serving. PGlite (PostgreSQL compiled to WASM) has no timer
// interrupts: it accepts `statement_timeout` and never fires it, so on the embedded database a long
// statement runs to its end (its statements take turns with the event loop instead; see
// test/bench/responsive.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { tempDirs } from '../helpers/cli-databases.ts';
import { createEmbeddedDataDir, createPostgresDatabase, dbKind } from '../helpers/db.ts';

const dirs = tempDirs();

describe(`a statement timeout of 300 ms (${dbKind()})`, () => {
  let db: Database;
  let drop = async () => {};
  beforeAll(async () => {
    if (dbKind() === 'postgres') {
      const pg = await createPostgresDatabase();
      drop = pg.drop;
      db = await openDatabase({ dataDir: dirs.make('lectern-timeout-'), databaseUrl: pg.url, statementTimeoutMs: 300 });
    } else {
      db = await openDatabase({ dataDir: createEmbeddedDataDir(), statementTimeoutMs: 300 });
    }
  });
  afterAll(async () => {
    await db.close();
    await drop();
  });

  it('cancels a longer statement on PostgreSQL with an error naming the timeout; the embedded database runs it to its end', async () => {
    const slow = db.prisma.$queryRawUnsafe('SELECT pg_sleep(1.5)::text AS slept');
    if (dbKind() === 'postgres') {
      await expect(slow).rejects.toThrow(/canceling statement due to statement timeout/);
    } else {
      await expect(slow).resolves.toEqual([{ slept: '' }]);
    }
    // The connection is usable afterwards, and short statements are untouched.
    expect(await db.prisma.$queryRawUnsafe('SELECT pg_sleep(0.05)::text AS slept, 1 AS one')).toEqual([{ slept: '', one: 1 }]);
    expect(await db.prisma.project.count()).toBe(0);
  });

  it('leaves a transaction that hits it rolled back, and the next one works', async () => {
    const tx = db.prisma.$transaction(async (p) => {
      await p.project.create({ data: { name: 'a', slug: 'a', repositoryUrl: 'https://x.org/a' } });
      await p.$queryRawUnsafe('SELECT pg_sleep(1.5)::text');
    });
    if (dbKind() === 'postgres') {
      await expect(tx).rejects.toThrow(/statement timeout/);
      expect(await db.prisma.project.count()).toBe(0);
    } else {
      await tx;
      expect(await db.prisma.project.count()).toBe(1);
    }
    await db.prisma.project.create({ data: { name: 'b', slug: 'b', repositoryUrl: 'https://x.org/b' } });
    expect(await db.prisma.project.findUnique({ where: { slug: 'b' }, select: { slug: true } })).toEqual({ slug: 'b' });
  });
});
