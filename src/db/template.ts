// A new embedded database starts as a copy of a template: a PGlite data dir made once (initdb, then
// every migration), kept in node_modules/.cache/lectern, and copied file by file into the new data
// dir. Creating one from nothing takes seconds (PGlite's initdb, then the migrations); a copy
// takes a fraction of one. docs/design/startup.md says why, what the template is keyed on, and
// what happens when it cannot be made.
import { createHash, randomBytes } from 'node:crypto';
import { constants, cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { LOCAL_CACHE_DIR, packageVersion } from '../local-cache.ts';
import type { Migration } from './migrate.ts';

/** Where templates are kept: the checkout's node_modules/.cache, as other tools keep theirs. */
export const templateCacheDir = LOCAL_CACHE_DIR;

/** The PGlite version, read once: a template made by another PGlite may not be one this one reads. */
function pgliteVersion(): string {
  const dist = path.dirname(fileURLToPath(import.meta.resolve('@electric-sql/pglite')));
  return packageVersion(path.join(dist, '../package.json'));
}

/** How a template is made; a change to it (database.ts fromTemplate's `make`) changes this, so templates made before are made again. */
const RECIPE = 2;

/** The template's directory for these migrations: its name changes with PGlite's version, with any migration and with the recipe. */
export function templatePath(migrations: Migration[]): string {
  const key = createHash('sha256').update(JSON.stringify({ pglite: pgliteVersion(), migrations: migrations.map((m) => [m.name, m.checksum]), recipe: RECIPE }));
  return path.join(templateCacheDir, `pglite-${key.digest('hex').slice(0, 16)}`);
}

const copy = (from: string, to: string) => cpSync(from, to, { recursive: true, mode: constants.COPYFILE_FICLONE });

/**
 * The template for `migrations`, made now by `make(dir)` (which must leave a closed, migrated
 * PGlite data dir in `dir`) when there is none yet. Several processes may make it at once: each
 * makes its own beside it, and the first one renamed into place is the template.
 */
export async function ensureTemplate(migrations: Migration[], make: (dir: string) => Promise<void>): Promise<string> {
  const dir = templatePath(migrations);
  if (existsSync(path.join(dir, 'PG_VERSION'))) return dir;
  mkdirSync(templateCacheDir, { recursive: true });
  const tmp = `${dir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await make(tmp);
    try {
      renameSync(tmp, dir);
    } catch (e) {
      // Another process was first (ENOTEMPTY, EEXIST): theirs is the template.
      if (!existsSync(path.join(dir, 'PG_VERSION'))) throw e;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  // Templates of other migrations or PGlite versions are of no more use to this checkout.
  for (const other of readdirSync(templateCacheDir)) {
    const p = path.join(templateCacheDir, other);
    if (p !== dir && other.startsWith('pglite-') && !other.includes('.tmp-')) rmSync(p, { recursive: true, force: true });
  }
  return dir;
}

/**
 * Puts a copy of `template` at `dbDir` (which must not hold a database): copied beside it, then
 * renamed into place, so `dbDir` never holds half a copy.
 */
export function copyTemplate(template: string, dbDir: string): void {
  const tmp = `${dbDir}.new-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  try {
    copy(template, tmp);
    rmSync(dbDir, { recursive: true, force: true }); // empty: it holds no database
    renameSync(tmp, dbDir);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Whether `dbDir` is missing or empty: no database, and nothing else a copy would overwrite. */
export function isEmptyDir(dbDir: string): boolean {
  try {
    return readdirSync(dbDir).length === 0;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw e;
  }
}
