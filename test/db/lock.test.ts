// The embedded database belongs to one process (docs/design/settings.md): a second opener, in this process
// or another, is refused with a message saying what to do, and never touches the files; a lock left
// by a dead process is taken over. Only the embedded database has a data-dir lock, so both vitest
// projects run these tests on an explicit embedded (PGlite) data dir.
import { spawn } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { DataDirInUseError, lockDataDir } from '../../src/db/lock.ts';
import { tempDirs } from '../helpers/cli-databases.ts';
import { cliEnv, killChildren, runCli, show } from '../helpers/cli-process.ts';
import { createEmbeddedDataDir, dbKind } from '../helpers/db.ts';

const dirs = tempDirs();
const extra: string[] = [];
let template: string;

/** A migrated embedded data dir of its own, copied from `template`. */
function dataDir(): string {
  const dir = dirs.make('lectern-lock-');
  cpSync(path.join(template, 'db'), path.join(dir, 'db'), { recursive: true });
  return dir;
}

const lockFile = (dir: string) => path.join(dir, 'lectern.pid');

/** A process that is certainly dead: started, and waited for. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  const pid = child.pid!;
  await new Promise((resolve) => child.once('close', resolve));
  return pid;
}

/** Every file under `dir` with its size and modification time. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    const st = statSync(file);
    out[path.relative(dir, file)] = `${st.size}:${st.mtimeMs}`;
  }
  return out;
}

beforeAll(async () => {
  if (dbKind() === 'embedded') {
    template = createEmbeddedDataDir();
    extra.push(template);
  } else {
    // The postgres project has no PGlite template: make (and migrate) one.
    template = dirs.make('lectern-lock-template-');
    const db = await openDatabase({ dataDir: template });
    await db.close();
  }
});

afterAll(async () => {
  await killChildren();
  dirs.cleanup();
  for (const d of extra) rmSync(d, { recursive: true, force: true });
});

describe('in one process', () => {
  it('a second openDatabase() on the same data dir throws DataDirInUseError; after close() it opens again', async () => {
    const dir = dataDir();
    const first = await openDatabase({ dataDir: dir });
    try {
      expect(readFileSync(lockFile(dir), 'utf8').trim()).toBe(String(process.pid));
      const err = await openDatabase({ dataDir: dir }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DataDirInUseError);
      expect((err as DataDirInUseError).dataDir).toBe(dir);
      expect((err as Error).message).toContain(dir);
      expect((err as Error).message).toContain(`pid ${process.pid}`);
      // The refused open did not take the lock from the first.
      expect(await first.prisma.user.count()).toBe(0);
      expect(readFileSync(lockFile(dir), 'utf8').trim()).toBe(String(process.pid));
    } finally {
      await first.close();
    }
    expect(() => statSync(lockFile(dir))).toThrow(); // released
    const again = await openDatabase({ dataDir: dir });
    await again.close();
  });

  it('lockDataDir(): held until released, release is idempotent', () => {
    const dir = dirs.make('lectern-lock-');
    const release = lockDataDir(dir);
    expect(() => lockDataDir(dir)).toThrow(DataDirInUseError);
    expect(() => lockDataDir(path.join(dir, '.'))).toThrow(DataDirInUseError); // the same dir, spelled differently
    release();
    release();
    const again = lockDataDir(dir);
    again();
  });
});

describe('a second process', () => {
  let dir: string;
  let holder: Database;

  beforeAll(async () => {
    dir = dataDir();
    holder = await openDatabase({ dataDir: dir });
    await holder.prisma.user.create({ data: { username: 'keeper', email: 'keeper@example.com' } });
  });
  afterAll(async () => {
    await holder?.close().catch(() => {});
  });

  it('`lectern migrate` and `lectern serve` on the held data dir exit 1, say what to do, and never open the files', async () => {
    const before = snapshot(path.join(dir, 'db'));
    const env = cliEnv({ LECTERN_DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1' });
    const [migrate, serve] = await Promise.all([runCli(['migrate'], env), runCli(['serve'], env)]);
    for (const [args, r] of [
      [['migrate'], migrate],
      [['serve'], serve],
    ] as const) {
      expect(r.code, show([...args], r)).toBe(1);
      expect(r.stderr, show([...args], r)).toContain(`the embedded database in ${dir} is in use by another Lectern process (pid ${process.pid})`);
      expect(r.stderr).toMatch(/stop that process first/);
      expect(r.stderr).toMatch(/LECTERN_DATA_DIR/);
      expect(r.stderr).toMatch(/DATABASE_URL/);
      expect(r.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
    }
    expect(snapshot(path.join(dir, 'db'))).toEqual(before);
    expect(readFileSync(lockFile(dir), 'utf8').trim()).toBe(String(process.pid));
  });

  it('the data is intact, for the holder and after it closes', async () => {
    expect((await holder.prisma.user.findUniqueOrThrow({ where: { username: 'keeper' } })).email).toBe('keeper@example.com');
    await holder.close();
    const reopened = await openDatabase({ dataDir: dir });
    try {
      expect(reopened.applied).toEqual([]);
      expect(await reopened.pending()).toEqual([]);
      expect((await reopened.prisma.user.findMany()).map((u) => u.username)).toEqual(['keeper']);
    } finally {
      await reopened.close();
    }
  });
});

describe('a lock file left behind', () => {
  it('by a process that is still alive is respected; once it is dead, it is taken over', async () => {
    const dir = dataDir();
    const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
    try {
      writeFileSync(lockFile(dir), String(sleeper.pid));
      const err = await openDatabase({ dataDir: dir }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DataDirInUseError);
      expect((err as DataDirInUseError).pid).toBe(sleeper.pid);
    } finally {
      const closed = new Promise((resolve) => sleeper.once('close', resolve));
      sleeper.kill('SIGKILL');
      await closed;
    }
    const db = await openDatabase({ dataDir: dir });
    try {
      expect(readFileSync(lockFile(dir), 'utf8').trim()).toBe(String(process.pid));
    } finally {
      await db.close();
    }
  });

  it('by a dead pid is taken over', async () => {
    const dir = dataDir();
    writeFileSync(lockFile(dir), String(await deadPid()));
    const db = await openDatabase({ dataDir: dir });
    try {
      expect(readFileSync(lockFile(dir), 'utf8').trim()).toBe(String(process.pid));
      expect(await db.pending()).toEqual([]);
    } finally {
      await db.close();
    }
    expect(() => statSync(lockFile(dir))).toThrow();
  });

  it('empty or unreadable (a crash while writing it) is taken over', async () => {
    for (const content of ['', 'garbage\n']) {
      const dir = dirs.make('lectern-lock-');
      writeFileSync(lockFile(dir), content);
      const release = lockDataDir(dir);
      expect(readFileSync(lockFile(dir), 'utf8').trim()).toBe(String(process.pid));
      release();
    }
  });

  it('naming our own pid, by an earlier process (a container restarts with the same pid), is taken over', () => {
    const dir = dirs.make('lectern-lock-');
    writeFileSync(lockFile(dir), String(process.pid));
    const release = lockDataDir(dir);
    try {
      expect(() => lockDataDir(dir)).toThrow(DataDirInUseError); // but now it is ours, and held
    } finally {
      release();
    }
  });

  it('a stale lock does not stop `lectern migrate` in another process', async () => {
    const dir = dataDir();
    writeFileSync(lockFile(dir), String(await deadPid()));
    const r = await runCli(['migrate'], cliEnv({ LECTERN_DATA_DIR: dir }));
    expect(r.code, show(['migrate'], r)).toBe(0);
    expect(r.stdout).toContain('the database is up to date');
    expect(() => statSync(lockFile(dir))).toThrow(); // released on exit
  });
});
