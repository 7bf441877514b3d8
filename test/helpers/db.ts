// A fresh database for one test file, on whichever database this vitest project tests:
// a copy of the migrated PGlite template (`embedded`) or a clone of the PostgreSQL template.
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { TEMPLATE, withDatabase } from '../setup/postgres.ts';

export type DbKind = 'embedded' | 'postgres';

export function dbKind(): DbKind {
  const kind = process.env.LECTERN_TEST_DB;
  if (kind !== 'embedded' && kind !== 'postgres') throw new Error('LECTERN_TEST_DB must be embedded or postgres (run through vitest.config.ts)');
  return kind;
}

export interface TestDatabase {
  db: Database;
  dataDir: string;
  databaseUrl: string | undefined;
  /** Closes the connection and removes the data. */
  drop(): Promise<void>;
}

/** An empty, migrated PostgreSQL database cloned from the template; returns its URL. */
export async function createPostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const adminUrl = inject('pgAdminUrl');
  const name = `lectern_t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE}`);
  } finally {
    await admin.end();
  }
  return {
    url: withDatabase(adminUrl, name),
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** A new data dir holding a copy of the PGlite cluster of the data dir `from`. */
export function copyEmbeddedDataDir(from: string, prefix = 'lectern-test-'): string {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), prefix));
  cpSync(path.join(from, 'db'), path.join(dataDir, 'db'), { recursive: true });
  return dataDir;
}

/** A copy of the migrated PGlite template in a new data dir. */
export function createEmbeddedDataDir(): string {
  return copyEmbeddedDataDir(inject('pgliteTemplate'));
}

export async function testDatabase(opts: { onQuery?: (sql: string) => void } = {}): Promise<TestDatabase> {
  if (dbKind() === 'postgres') {
    const { url, drop } = await createPostgresDatabase();
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lectern-test-'));
    const db = await openDatabase({ dataDir, databaseUrl: url, onQuery: opts.onQuery });
    return {
      db,
      dataDir,
      databaseUrl: url,
      drop: async () => {
        await db.close();
        await drop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const dataDir = createEmbeddedDataDir();
  const db = await openDatabase({ dataDir, onQuery: opts.onQuery });
  return {
    db,
    dataDir,
    databaseUrl: undefined,
    drop: async () => {
      await db.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
