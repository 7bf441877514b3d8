// What Lectern derives from its installed packages once and keeps between processes, in the
// checkout's node_modules/.cache/lectern (where other tools keep theirs): PGlite templates
// (src/db/template.ts), the common-passwords list as text (src/domain/passwords.ts), Prisma's query
// compiler as WebAssembly bytes (src/prisma-wasm-hook.ts). An entry's name carries what it was made
// from (a package's version, a hash), so an install makes new ones.
// docs/design/startup.md says what each saves.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const LOCAL_CACHE_DIR = path.resolve(import.meta.dirname, '../node_modules/.cache/lectern');

/** The version a package.json at `file` gives (a package's, or Lectern's own); throws where it gives none. */
export function packageVersion(file: string | URL): string {
  const { version } = JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown };
  if (typeof version !== 'string') throw new Error(`${String(file)} gives no version`);
  return version;
}

/**
 * The text kept as `name`, or, when there is none, `make()`'s, kept for the next process. Written
 * beside and renamed into place, so no reader sees half of it; where it cannot be read or written
 * (a read-only node_modules, a full disk), `make()`'s text is used as it is.
 */
export function cachedText(name: string, make: () => string): string {
  try {
    return readFileSync(path.join(LOCAL_CACHE_DIR, name), 'utf8');
  } catch {}
  const text = make();
  keep(name, text);
  return text;
}

/**
 * The bytes kept as `name` where `usable` takes them, or `make()`'s, kept the same way (nothing is
 * kept for undefined): an entry damaged outside Lectern is made again.
 */
export function cachedBytes(name: string, make: () => Buffer | undefined, usable: (bytes: Buffer) => boolean = () => true): Buffer | undefined {
  try {
    const kept = readFileSync(path.join(LOCAL_CACHE_DIR, name));
    if (usable(kept)) return kept;
  } catch {}
  const bytes = make();
  if (bytes) keep(name, bytes);
  return bytes;
}

/** Writes `data` as the entry `name`: beside it, then renamed into place; nothing where it cannot. */
function keep(name: string, data: string | Buffer): void {
  const file = path.join(LOCAL_CACHE_DIR, name);
  const tmp = `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    mkdirSync(LOCAL_CACHE_DIR, { recursive: true });
    writeFileSync(tmp, data);
    renameSync(tmp, file);
  } catch {
    rmSync(tmp, { force: true });
  }
}
