// Applies prisma/migrations/*/migration.sql in name order, each in its own transaction, and
// records them with a checksum. Prisma's `migrate deploy` needs a native engine that cannot be
// installed here; this runner is small, and an advisory lock makes it safe when several
// processes start at once against one PostgreSQL server.
// @see docs/design/toolchain.md "Migrations without the native engine"
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

/** The raw SQL a migration needs: multi-statement scripts, and simple parameterless queries. */
export interface SqlRunner {
  exec(sql: string): Promise<void>;
  query<T>(sql: string): Promise<T[]>;
}

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export const migrationsDir = path.resolve(import.meta.dirname, '../../prisma/migrations');
// Any constant shared by every Lectern process: pg_advisory_lock takes a bigint key.
const LOCK_KEY = 7_411_235_001;

export async function readMigrations(dir = migrationsDir): Promise<Migration[]> {
  const names = (await readdir(dir, { withFileTypes: true }))
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

export class MigrationError extends Error {
  override name = 'MigrationError';
}

const quote = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** Applies what is pending; returns the names applied. */
export async function migrate(db: SqlRunner, migrations?: Migration[]): Promise<string[]> {
  const all = migrations ?? (await readMigrations());
  // The usual case, a database already current, is answered by one read, without the lock or the
  // CREATE TABLE (a statement that costs a command line tens of ms on PGlite); anything else takes
  // the lock and checks again.
  if (await current(db, all)) return [];
  await db.exec(`SELECT pg_advisory_lock(${LOCK_KEY})`);
  try {
    await db.exec(`CREATE TABLE IF NOT EXISTS "_lectern_migrations" (
      "name" TEXT PRIMARY KEY,
      "checksum" CHAR(64) NOT NULL,
      "applied_at" TIMESTAMPTZ NOT NULL DEFAULT now()
    )`);
    const applied = new Map(
      (await db.query<{ name: string; checksum: string }>('SELECT "name", "checksum" FROM "_lectern_migrations"')).map((r) => [r.name, r.checksum]),
    );
    for (const [name, checksum] of applied) {
      const m = all.find((x) => x.name === name);
      if (!m) throw new MigrationError(`the database has migration ${name}, which this Lectern does not know: is it older than the database?`);
      if (m.checksum !== checksum) throw new MigrationError(`migration ${name} was changed after it was applied (checksum differs)`);
    }
    const done: string[] = [];
    for (const m of all) {
      if (applied.has(m.name)) continue;
      try {
        await db.exec(`BEGIN;\n${m.sql}\n;INSERT INTO "_lectern_migrations" ("name", "checksum") VALUES (${quote(m.name)}, ${quote(m.checksum)});\nCOMMIT;`);
      } catch (e) {
        await db.exec('ROLLBACK').catch(() => {});
        throw new MigrationError(`migration ${m.name} failed: ${(e as Error).message}`);
      }
      done.push(m.name);
    }
    return done;
  } finally {
    await db.exec(`SELECT pg_advisory_unlock(${LOCK_KEY})`);
  }
}

/** Whether exactly `all` are applied, each with its checksum (false when the table is missing). docs/design/startup.md */
async function current(db: SqlRunner, all: Migration[]): Promise<boolean> {
  const [exists] = await db.query<{ t: string | null }>(`SELECT to_regclass('"_lectern_migrations"')::text AS t`);
  if (!exists?.t) return false;
  const rows = await db.query<{ name: string; checksum: string }>('SELECT "name", "checksum" FROM "_lectern_migrations"');
  const applied = new Map(rows.map((r) => [r.name, r.checksum]));
  return applied.size === all.length && all.every((m) => applied.get(m.name) === m.checksum);
}

/** Names of migrations not yet applied (for /readyz). */
export async function pendingMigrations(db: SqlRunner, migrations?: Migration[]): Promise<string[]> {
  const all = migrations ?? (await readMigrations());
  const rows = await db.query<{ name: string }>('SELECT "name" FROM "_lectern_migrations"').catch(() => [] as { name: string }[]);
  const applied = new Set(rows.map((r) => r.name));
  return all.filter((m) => !applied.has(m.name)).map((m) => m.name);
}
