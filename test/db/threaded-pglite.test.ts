// The command line's embedded database runs PGlite on a worker thread (src/db/threaded-pglite.ts,
// docs/design/startup.md): what a command reads and writes through it must be what it would be
// with PGlite in the process. Each test opens copies of one migrated data dir both ways and compares
// what a person would see: the same values of every type Lectern stores, the same refusals
// (a taken username), transactions that commit or roll back as they do in PGlite, and a data dir
// PGlite cannot start on failing with PostgreSQL's message and leaving the data dir free.
// Embedded only (vitest.config.ts): PostgreSQL has no PGlite.
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { lockDataDir } from '../../src/db/lock.ts';
import { createUser } from '../../src/domain/users.ts';
import { createEmbeddedDataDir } from '../helpers/db.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const template = createEmbeddedDataDir();
dirs.push(template);

/** A copy of the migrated data dir, opened on PGlite's thread (`thread`) or in this process. */
async function open(thread: boolean): Promise<{ db: Database; dataDir: string }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lectern-thread-'));
  dirs.push(dataDir);
  cpSync(path.join(template, 'db'), path.join(dataDir, 'db'), { recursive: true });
  return { db: await openDatabase({ dataDir, thread, shortLived: thread }), dataDir };
}

/** Both ways, each on its own copy; closed after `fn`. */
async function both<T>(fn: (db: Database) => Promise<T>): Promise<{ threaded: T; inProcess: T }> {
  const out: Partial<{ threaded: T; inProcess: T }> = {};
  for (const thread of [true, false]) {
    const { db } = await open(thread);
    try {
      out[thread ? 'threaded' : 'inProcess'] = await fn(db);
    } finally {
      await db.close();
    }
  }
  return out as { threaded: T; inProcess: T };
}

describe('PGlite on its own thread', () => {
  it('returns every type Lectern stores as PGlite in the process does', async () => {
    const { threaded, inProcess } = await both(
      (db) => db.prisma.$queryRaw`
        SELECT 1::int AS int4, 9007199254740993::bigint AS int8, 1.25::numeric AS numeric, 0.5::float8 AS float8,
               true AS bool, 'é "quoted" \\ text'::text AS text, 'x'::varchar(3) AS varchar,
               '2026-11-26 10:00:00.123+00'::timestamptz AS timestamptz, '2026-11-26'::date AS date,
               '{a,"b c",NULL}'::text[] AS texts, ARRAY['2026-01-01 00:00:00+00'::timestamptz] AS times,
               '{"a":[1,{"b":null}]}'::jsonb AS jsonb, '\\x00ff10'::bytea AS bytea,
               'a-uuid'::text AS uuid_text, NULL::text AS nothing`,
    );
    expect(threaded).toEqual(inProcess);
    const row = (threaded as Record<string, unknown>[])[0];
    expect(row.int8).toBe(9007199254740993n);
    expect(row.texts).toEqual(['a', 'b c', null]);
    expect(row.timestamptz).toEqual(new Date('2026-11-26T10:00:00.123Z'));
  });

  it('reads and writes models, arrays and dates through Prisma the same way', async () => {
    const work = async (db: Database) => {
      const { user } = await createUser(db.prisma, 'thread-alice', { email: 'alice@example.com' });
      const found = await db.prisma.user.findUniqueOrThrow({ where: { id: user.id }, include: { tokens: true } });
      return { username: found.username, email: found.email, tokens: found.tokens.length, created: found.createdAt instanceof Date };
    };
    const { threaded, inProcess } = await both(work);
    expect(threaded).toEqual(inProcess);
    expect(threaded).toEqual({ username: 'thread-alice', email: 'alice@example.com', tokens: 1, created: true });
  });

  it('refuses a taken username with the same message: PostgreSQL errors keep their code', async () => {
    const work = async (db: Database) => {
      await createUser(db.prisma, 'taken');
      const e = await createUser(db.prisma, 'taken').catch((err) => err);
      return { name: e.constructor.name, message: e.message };
    };
    const { threaded, inProcess } = await both(work);
    expect(threaded).toEqual(inProcess);
    expect(threaded.message).toMatch(/already exists/);
  });

  it('commits a transaction, rolls back one that throws, and holds outside statements until it ends', async () => {
    const work = async (db: Database) => {
      const users = () => db.prisma.user.count({ where: { username: { startsWith: 'tx-' } } });
      await db.prisma.$transaction(async (tx) => {
        await tx.user.create({ data: { username: 'tx-kept', email: null } });
      });
      const failed = await db.prisma
        .$transaction(async (tx) => {
          await tx.user.create({ data: { username: 'tx-dropped', email: null } });
          throw new Error('changed my mind');
        })
        .catch((e: Error) => e.message);
      // A count sent while a transaction is open answers after it commits, as one connection does.
      let counted: Promise<number> | undefined;
      await db.prisma.$transaction(async (tx) => {
        await tx.user.create({ data: { username: 'tx-late', email: null } });
        counted = users();
        await new Promise((r) => setTimeout(r, 50));
      });
      return { failed, after: await users(), countedDuring: await counted };
    };
    const { threaded, inProcess } = await both(work);
    expect(threaded).toEqual(inProcess);
    expect(threaded).toEqual({ failed: 'changed my mind', after: 2, countedDuring: 2 });
  });

  it("takes a migration's worth of locks in one transaction: 300 tables with their indexes", async () => {
    // PGlite starts with its shared memory sized for one backend (src/db/database.ts
    // extraStartParams), which sizes the lock table too: a transaction holds a lock on every
    // table and index it creates, and Lectern's largest migration creates a few dozen.
    const { threaded, inProcess } = await both(async (db) => {
      await db.prisma.$executeRawUnsafe(`DO $$ BEGIN FOR i IN 1..300 LOOP
        EXECUTE format('CREATE TABLE many_%s (id int PRIMARY KEY, name text)', i);
        EXECUTE format('CREATE INDEX ON many_%s (name)', i);
      END LOOP; END $$`);
      const [{ n }] = await db.prisma.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_class WHERE relname LIKE 'many\_%'`;
      return n;
    });
    // Each table, its primary key's index and its index on name (its TOAST table, and that one's
    // index, are named after it by number).
    expect(threaded).toBe(900);
    expect(inProcess).toBe(900);
  });

  it('keeps what a command wrote after it closes', async () => {
    const { db, dataDir } = await open(true);
    await createUser(db.prisma, 'persisted');
    await db.close();
    const again = await openDatabase({ dataDir, thread: true, shortLived: true });
    try {
      expect(await again.prisma.user.count({ where: { username: 'persisted' } })).toBe(1);
    } finally {
      await again.close();
    }
  });

  it('fails to open a data dir PGlite cannot start on, with its reason, and leaves the data dir free', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lectern-thread-bad-'));
    dirs.push(dataDir);
    cpSync(path.join(template, 'db'), path.join(dataDir, 'db'), { recursive: true });
    writeFileSync(path.join(dataDir, 'db', 'PG_VERSION'), '9\n');
    const threaded = await openDatabase({ dataDir, thread: true, shortLived: true }).catch((e: Error) => e);
    // Nothing holds the data dir: the lock is free again, and the in-process PGlite fails the same way.
    lockDataDir(dataDir)();
    const inProcess = await openDatabase({ dataDir }).catch((e: Error) => e);
    expect(threaded).toBeInstanceOf(Error);
    expect((threaded as Error).message).toBe((inProcess as Error).message);
    expect((threaded as Error).message).toMatch(/PGlite/);
    lockDataDir(dataDir)();
  });
});
