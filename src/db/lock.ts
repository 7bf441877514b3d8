// PGlite is a single-process database: two processes opening one directory silently work on
// their own copies and corrupt it. A lock file with the owner's pid makes the second refuse.
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';

/** Where Lectern keeps its data when LECTERN_DATA_DIR does not say (README "Configuration"). */
export const DEFAULT_DATA_DIR = './.lectern';

export class DataDirInUseError extends Error {
  override name = 'DataDirInUseError';
  readonly dataDir: string;
  readonly pid: number;
  constructor(dataDir: string, pid: number) {
    super(
      `the embedded database in ${dataDir} is in use by another Lectern process (pid ${pid}). ` +
        'Only one process may open it: stop that process first, or point this one at another ' +
        'LECTERN_DATA_DIR, or run every process against a PostgreSQL server with DATABASE_URL.',
    );
    this.dataDir = dataDir;
    this.pid = pid;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Lock files this process holds. A file naming our pid that is not in here was left by an earlier
 * process that had the same pid: in a container, Lectern is pid 1 (or another low pid) again
 * after every restart, so "same pid" alone must not mean "in use". The process's, not an app's: a
 * lock file names the process (docs/design/events.md "What stays the process's"). */
const held = new Set<string>();

/** Creates the lock file with our pid in it, atomically: a lock file never exists empty, so a
 * reader never mistakes a lock being written for one left behind. EEXIST when it exists. */
function create(file: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, String(process.pid));
  try {
    linkSync(tmp, file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw e;
    // No hard links on this file system: exclusive create, then write.
    const fd = openSync(file, 'wx');
    writeSync(fd, String(process.pid));
    closeSync(fd);
  } finally {
    rmSync(tmp, { force: true });
  }
}

/** The pid of another live process that holds the data dir's lock; null when none does. */
export function dataDirHolder(dataDir: string): number | null {
  let content: string;
  try {
    content = readFileSync(path.resolve(dataDir, 'lectern.pid'), 'utf8');
  } catch {
    return null;
  }
  const pid = Number.parseInt(content, 10);
  return Number.isInteger(pid) && pid !== process.pid && alive(pid) ? pid : null;
}

/**
 * Throws DataDirInUseError when another live process holds the data dir's lock, without taking it:
 * the command line asks this before it loads the database, so a refusal is answered at once.
 */
export function checkDataDirFree(dataDir: string): void {
  const pid = dataDirHolder(dataDir);
  if (pid !== null) throw new DataDirInUseError(dataDir, pid);
}

/** Takes the data dir's lock or throws DataDirInUseError; returns the release function. */
export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const file = path.resolve(dataDir, 'lectern.pid');
  for (let attempt = 0; attempt < 3; attempt++) {
    if (held.has(file)) throw new DataDirInUseError(dataDir, process.pid);
    try {
      create(file);
      held.add(file);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        held.delete(file);
        rmSync(file, { force: true });
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      let content: string;
      try {
        content = readFileSync(file, 'utf8');
      } catch (e2) {
        if ((e2 as NodeJS.ErrnoException).code === 'ENOENT') continue; // released meanwhile
        throw e2;
      }
      const pid = Number.parseInt(content, 10);
      if (Number.isInteger(pid) && pid !== process.pid && alive(pid)) throw new DataDirInUseError(dataDir, pid);
      rmSync(file, { force: true }); // a crashed owner left it behind
    }
  }
  throw new Error(`could not take the lock ${file}`);
}
