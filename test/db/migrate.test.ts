// The SQL migration runner (src/db/migrate.ts) on the project's database: fresh installs, repeated
// and concurrent starts, edited and failing migrations. Every test gets its own EMPTY database (a
// new PGlite dir, or a new database on the PostgreSQL server), except where it says "migrated".
import { createHash } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type OpenOptions, openDatabase } from '../../src/db/database.ts';
import { DataDirInUseError } from '../../src/db/lock.ts';
import { type Migration, MigrationError, migrate, pendingMigrations, readMigrations, type SqlRunner } from '../../src/db/migrate.ts';
import { emptyEmbeddedDataDir, emptyPostgresDatabase, pgliteSession, pgSession, tempDirs } from '../helpers/cli-databases.ts';
import { cliEnv, killChildren, runCli, show } from '../helpers/cli-process.ts';
import { createEmbeddedDataDir, createPostgresDatabase, dbKind } from '../helpers/db.ts';

const kind = dbKind();
const dirs = tempDirs();
const cleanups: (() => Promise<void>)[] = [];

afterAll(async () => {
  await killChildren();
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
  dirs.cleanup();
});

type Session = SqlRunner & { close: () => Promise<void> };

interface Fresh {
  /** For openDatabase(). */
  opts: OpenOptions;
  /** A raw SQL session on it. On the embedded database, close it before openDatabase(). */
  session(): Promise<Session>;
}

/**
 * A new, empty database of the project's kind. On the embedded database, a data dir holding an
 * empty cluster (PGlite's initdb takes seconds, so it is a copy of one made once), or, with
 * `newDataDir`, nothing at all: what `lectern serve` meets on a first start.
 */
async function fresh(newDataDir = false): Promise<Fresh> {
  if (kind === 'postgres') {
    const { url, drop } = await emptyPostgresDatabase();
    cleanups.push(drop);
    return { opts: { dataDir: dirs.make('lectern-migrate-'), databaseUrl: url }, session: () => pgSession(url) };
  }
  const dataDir = newDataDir ? dirs.make('lectern-migrate-') : emptyEmbeddedDataDir('lectern-migrate-');
  if (!newDataDir) cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  return { opts: { dataDir }, session: () => pgliteSession(path.join(dataDir, 'db')) };
}

/** A database with the real migrations applied (a copy of the suite's template). */
async function migrated(): Promise<Fresh> {
  if (kind === 'postgres') {
    const { url, drop } = await createPostgresDatabase();
    cleanups.push(drop);
    return { opts: { dataDir: dirs.make('lectern-migrate-'), databaseUrl: url }, session: () => pgSession(url) };
  }
  const dataDir = createEmbeddedDataDir();
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  return { opts: { dataDir }, session: () => pgliteSession(path.join(dataDir, 'db')) };
}

async function using<T>(open: Promise<Session>, fn: (s: Session) => Promise<T>): Promise<T> {
  const s = await open;
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

const sha = (sql: string) => createHash('sha256').update(sql).digest('hex');
const m = (name: string, sql: string): Migration => ({ name, sql, checksum: sha(sql) });

const recorded = (s: SqlRunner) => s.query<{ name: string; checksum: string }>('SELECT "name", "checksum" FROM "_lectern_migrations" ORDER BY "name"');
const tableExists = async (s: SqlRunner, table: string) =>
  (await s.query<{ t: string | null }>(`SELECT to_regclass('public."${table}"')::text AS t`))[0]!.t !== null;

const realNames = async () => (await readMigrations()).map((x) => x.name);

describe(`migrate() on a new, empty ${kind} database`, () => {
  it('applies every migration in order, then none on the next run', async () => {
    const all = await readMigrations();
    expect(all.length).toBeGreaterThan(0);
    const db = await fresh();
    await using(db.session(), async (s) => {
      expect(await tableExists(s, 'User')).toBe(false);
      expect(await pendingMigrations(s)).toEqual(all.map((x) => x.name));
      expect(await migrate(s)).toEqual(all.map((x) => x.name));
      expect(await migrate(s)).toEqual([]);
      expect(await recorded(s)).toEqual(all.map((x) => ({ name: x.name, checksum: x.checksum })));
      for (const table of ['User', 'ApiToken', 'Project', 'Version', 'Build']) expect(await tableExists(s, table), table).toBe(true);
      expect(await pendingMigrations(s)).toEqual([]);
    });
  });

  it('db.pending() lists the unapplied migrations; openDatabase() applies them once', async () => {
    const all = await realNames();
    const db = await fresh();
    const unmigrated = await openDatabase({ ...db.opts, migrate: false });
    try {
      expect(unmigrated.applied).toEqual([]);
      expect(await unmigrated.pending()).toEqual(all);
    } finally {
      await unmigrated.close();
    }
    const first = await openDatabase(db.opts);
    try {
      expect(first.applied).toEqual(all);
      expect(await first.pending()).toEqual([]);
      expect(await first.prisma.user.count()).toBe(0); // the client works on the migrated schema
    } finally {
      await first.close();
    }
    const second = await openDatabase(db.opts);
    try {
      expect(second.applied).toEqual([]);
      expect(await second.pending()).toEqual([]);
    } finally {
      await second.close();
    }
  });

  it('pendingMigrations() names exactly the ones not applied, in order', async () => {
    const a = m('001_a', 'CREATE TABLE t_a (id int)');
    const b = m('002_b', 'CREATE TABLE t_b (id int)');
    const c = m('003_c', 'CREATE TABLE t_c (id int)');
    const db = await fresh();
    await using(db.session(), async (s) => {
      expect(await pendingMigrations(s, [a, b, c])).toEqual(['001_a', '002_b', '003_c']);
      expect(await migrate(s, [a])).toEqual(['001_a']);
      expect(await pendingMigrations(s, [a, b, c])).toEqual(['002_b', '003_c']);
      expect(await migrate(s, [a, b, c])).toEqual(['002_b', '003_c']);
      expect(await pendingMigrations(s, [a, b, c])).toEqual([]);
    });
  });

  it('applies a migration with $$ bodies and many statements as one script', async () => {
    const fn = m(
      '001_fn',
      `CREATE TABLE t_fn (id int);
CREATE FUNCTION lectern_test_fn() RETURNS int LANGUAGE plpgsql AS $$
DECLARE n int;
BEGIN
  SELECT count(*) INTO n FROM t_fn; -- a ; inside the body
  RETURN n + 41;
END
$$;
INSERT INTO t_fn VALUES (1);
-- a trailing comment without a newline`,
    );
    const db = await fresh();
    await using(db.session(), async (s) => {
      expect(await migrate(s, [fn])).toEqual(['001_fn']);
      expect(await s.query('SELECT lectern_test_fn() AS v')).toEqual([{ v: 42 }]);
    });
  });
});

describe('edited and unknown migrations', () => {
  it('refuses a migration whose checksum changed after it was applied, and applies nothing', async () => {
    const a = m('001_a', 'CREATE TABLE t_a (id int);');
    const b = m('002_b', 'CREATE TABLE t_b (id int);');
    const db = await fresh();
    await using(db.session(), async (s) => {
      await migrate(s, [a]);
      const edited = m('001_a', 'CREATE TABLE t_a (id int, extra text);');
      const err = await migrate(s, [edited, b]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MigrationError);
      expect((err as Error).message).toMatch(/migration 001_a was changed after it was applied \(checksum differs\)/);
      expect(await tableExists(s, 't_b')).toBe(false);
      expect((await recorded(s)).map((r) => r.name)).toEqual(['001_a']);
      // The original list still works: the refusal left no lock or transaction behind.
      expect(await migrate(s, [a, b])).toEqual(['002_b']);
    });
  });

  it('refuses a database that has a migration this Lectern does not know', async () => {
    const a = m('001_a', 'CREATE TABLE t_a (id int);');
    const b = m('002_b', 'CREATE TABLE t_b (id int);');
    const db = await fresh();
    await using(db.session(), async (s) => {
      await migrate(s, [a, b]);
      await expect(migrate(s, [a])).rejects.toThrow(
        new MigrationError('the database has migration 002_b, which this Lectern does not know: is it older than the database?'),
      );
    });
  });

  it('openDatabase() on a migrated database whose recorded checksum differs fails with a MigrationError, and releases everything', async () => {
    const [init] = await readMigrations();
    const db = await migrated();
    await using(db.session(), (s) => s.exec(`UPDATE "_lectern_migrations" SET "checksum" = '${'0'.repeat(64)}' WHERE "name" = '${init!.name}'`));
    const err = await openDatabase(db.opts).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MigrationError);
    expect((err as Error).message).toContain(`migration ${init!.name} was changed after it was applied`);
    if (kind === 'embedded') {
      // The failed open closed its PGlite and gave the data dir back.
      expect(existsSync(path.join(db.opts.dataDir, 'lectern.pid'))).toBe(false);
      const again = await openDatabase({ ...db.opts, migrate: false });
      await again.close();
    }
  });
});

describe('a failing migration', () => {
  const ok = m('001_ok', 'CREATE TABLE t_ok (id int); INSERT INTO t_ok VALUES (1);');
  const bad = m('002_bad', 'CREATE TABLE t_partial (id int);\nINSERT INTO t_ok VALUES (2);\nINSERT INTO t_missing VALUES (1);');
  const fixed = m('002_bad', 'CREATE TABLE t_partial (id int);\nINSERT INTO t_ok VALUES (2);');
  const after = m('003_after', 'CREATE TABLE t_after (id int);');

  it('is rolled back: not recorded, its partial effects gone, later ones not run', async () => {
    const db = await fresh();
    await using(db.session(), async (s) => {
      const err = await migrate(s, [ok, bad, after]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MigrationError);
      expect((err as Error).message).toMatch(/^migration 002_bad failed: .*t_missing/);
      expect((await recorded(s)).map((r) => r.name)).toEqual(['001_ok']);
      expect(await tableExists(s, 't_partial')).toBe(false);
      expect(await s.query('SELECT id FROM t_ok ORDER BY id')).toEqual([{ id: 1 }]);
      expect(await tableExists(s, 't_after')).toBe(false);
      expect(await pendingMigrations(s, [ok, bad, after])).toEqual(['002_bad', '003_after']);
      // The session is usable and unlocked: the corrected migration and the next one apply.
      expect(await migrate(s, [ok, fixed, after])).toEqual(['002_bad', '003_after']);
      expect(await s.query('SELECT id FROM t_ok ORDER BY id')).toEqual([{ id: 1 }, { id: 2 }]);
    });
  });

  it('leaves the migration lock free for other starters', async () => {
    const db = await fresh();
    await using(db.session(), async (s) => {
      await expect(migrate(s, [ok, bad])).rejects.toThrow(MigrationError);
      if (kind === 'postgres') {
        // Another session (another process) must get the advisory lock at once.
        await using(db.session(), async (other) => {
          let timer: NodeJS.Timeout | undefined;
          const timeout = new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error('the advisory lock is still held after a failed migration')), 10_000);
          });
          try {
            expect(await Promise.race([migrate(other, [ok, fixed]), timeout])).toEqual(['002_bad']);
          } finally {
            clearTimeout(timer);
          }
        });
      } else {
        expect(await migrate(s, [ok, fixed])).toEqual(['002_bad']);
      }
    });
  });
});

describe('concurrent starters', () => {
  if (kind === 'postgres') {
    it('4 sessions migrating one empty database at once: every migration applied by exactly one, recorded once', async () => {
      const all = await realNames();
      const db = await fresh();
      const sessions = await Promise.all([1, 2, 3, 4].map(() => db.session()));
      try {
        const results = await Promise.all(sessions.map((s) => migrate(s)));
        expect(results.flat().sort()).toEqual([...all].sort());
        expect(results.filter((r) => r.length > 0)).toHaveLength(1); // the first in applies all
        const counts = await sessions[0]!.query<{ name: string; n: number }>(
          'SELECT "name", count(*)::int AS n FROM "_lectern_migrations" GROUP BY "name" ORDER BY "name"',
        );
        expect(counts).toEqual(all.map((name) => ({ name, n: 1 })));
      } finally {
        await Promise.all(sessions.map((s) => s.close()));
      }
    });

    it('4 openDatabase() calls at once on one empty database all succeed', async () => {
      const all = await realNames();
      const db = await fresh();
      const dbs = await Promise.all([1, 2, 3, 4].map(() => openDatabase({ ...db.opts, dataDir: dirs.make('lectern-migrate-') })));
      try {
        expect(dbs.flatMap((d) => d.applied).sort()).toEqual([...all].sort());
        for (const d of dbs) {
          expect(await d.pending()).toEqual([]);
          expect(await d.prisma.user.count()).toBe(0);
        }
      } finally {
        await Promise.all(dbs.map((d) => d.close()));
      }
    });

    it('3 `lectern migrate` processes at once: all exit 0, one reports the migrations, each recorded once', async () => {
      const all = await realNames();
      const db = await fresh();
      const env = cliEnv({ DATABASE_URL: db.opts.databaseUrl, LECTERN_DATA_DIR: db.opts.dataDir });
      const results = await Promise.all([1, 2, 3].map(() => runCli(['migrate'], env)));
      for (const r of results) expect(r.code, show(['migrate'], r)).toBe(0);
      const reports = results.map((r) => r.stdout.trim().split('\n').at(-1));
      expect(reports.filter((l) => l === `applied ${all.length} migration(s): ${all.join(', ')}`)).toHaveLength(1);
      expect(reports.filter((l) => l === 'the database is up to date')).toHaveLength(2);
      await using(db.session(), async (s) => {
        expect((await recorded(s)).map((r) => r.name)).toEqual(all);
      });
    });
  } else {
    it('4 openDatabase() calls at once on one new data dir: one opens and migrates, the others are refused', async () => {
      const all = await realNames();
      const db = await fresh(true);
      const results = await Promise.allSettled([1, 2, 3, 4].map(() => openDatabase(db.opts)));
      const opened = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
      try {
        expect(opened).toHaveLength(1);
        expect(opened[0]!.applied).toEqual(all);
        expect(refused).toHaveLength(3);
        for (const e of refused) expect(e).toBeInstanceOf(DataDirInUseError);
      } finally {
        await Promise.all(opened.map((d) => d.close()));
      }
      const again = await openDatabase(db.opts);
      try {
        expect(again.applied).toEqual([]);
        expect(await again.pending()).toEqual([]);
      } finally {
        await again.close();
      }
      await using(db.session(), async (s) => {
        expect((await recorded(s)).map((r) => r.name)).toEqual(all);
      });
    });
  }
});
