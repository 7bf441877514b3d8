// Databases that start EMPTY (no tables, no migrations applied), for tests of the migration runner
// and of start-up on a new install. test/helpers/db.ts hands out already-migrated copies instead.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { inject } from 'vitest';
import type { SqlRunner } from '../../src/db/migrate.ts';
import { withDatabase } from '../setup/postgres.ts';
import { copyEmbeddedDataDir } from './db.ts';

/** A new, empty database on the test PostgreSQL server (postgres project only). */
export async function emptyPostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const adminUrl = inject('pgAdminUrl');
  if (!adminUrl) throw new Error('no PostgreSQL server: pgAdminUrl is provided by test/setup/postgres.ts (postgres project only)');
  const name = `lectern_empty_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return {
    url: withDatabase(adminUrl, name),
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/**
 * A new data dir whose database PGlite's initdb made, empty (embedded project only): a copy of the
 * suite's empty cluster (test/setup/embedded.ts), as a first start leaves it before it migrates.
 */
export function emptyEmbeddedDataDir(prefix?: string): string {
  return copyEmbeddedDataDir(inject('pgliteEmpty'), prefix);
}

/** A SqlRunner on its own PostgreSQL session (advisory locks are per session). */
export async function pgSession(url: string): Promise<SqlRunner & { close: () => Promise<void> }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    exec: async (sql) => void (await client.query(sql)),
    query: async <T>(sql: string) => (await client.query(sql)).rows as T[],
    close: () => client.end(),
  };
}

/** A SqlRunner on a PGlite opened directly on `dir` (no data-dir lock: the caller owns `dir`). */
export async function pgliteSession(dir: string): Promise<SqlRunner & { close: () => Promise<void> }> {
  const db = await PGlite.create(dir);
  return {
    exec: async (sql) => void (await db.exec(sql)),
    query: async <T>(sql: string) => (await db.query<T>(sql)).rows,
    close: () => db.close(),
  };
}

/** A raw session on an empty embedded database (emptyEmbeddedDataDir); `drop` removes it once the session is closed. */
export async function emptyEmbeddedSession(prefix?: string): Promise<{ session: SqlRunner & { close: () => Promise<void> }; drop: () => Promise<void> }> {
  const dataDir = emptyEmbeddedDataDir(prefix);
  return { session: await pgliteSession(path.join(dataDir, 'db')), drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
}

/** Temporary directories removed by cleanup(). */
export function tempDirs() {
  const dirs: string[] = [];
  return {
    make(prefix = 'lectern-test-'): string {
      const d = mkdtempSync(path.join(os.tmpdir(), prefix));
      dirs.push(d);
      return d;
    },
    cleanup(): void {
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    },
  };
}
