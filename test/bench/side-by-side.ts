// What the benchmarks that run this checkout's command line beside another revision's share
// (test/bench/cli.ts, test/bench/reindex.ts): their arguments (`[rounds] [--base <rev>]`), the
// other revision's checkout, temporary directories, medians.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * A checkout of `rev` in `parent` (a temporary directory), sharing this checkout's installed
 * packages and generated Prisma client, with a node_modules/.cache of its own, as another install
 * has: each revision keeps its own PGlite template (a revision removes templates it did not make),
 * bundle and resolutions. `pruneWorktrees` forgets it once `parent` is removed.
 */
export function worktree(rev: string, parent: string): string {
  const dir = path.join(parent, 'tree');
  execFileSync('git', ['-C', ROOT, 'worktree', 'add', '--detach', dir, rev], { stdio: 'ignore' });
  mkdirSync(path.join(dir, 'node_modules'));
  for (const entry of readdirSync(path.join(ROOT, 'node_modules'))) {
    if (entry !== '.cache') symlinkSync(path.join(ROOT, 'node_modules', entry), path.join(dir, 'node_modules', entry));
  }
  cpSync(path.join(ROOT, 'src/generated'), path.join(dir, 'src/generated'), { recursive: true });
  return dir;
}

/** Forgets the worktrees whose directories are gone. */
function pruneWorktrees(): void {
  execFileSync('git', ['-C', ROOT, 'worktree', 'prune'], { stdio: 'ignore' });
}

/** `[rounds] [--base <rev>]` from the command line; prints `usage` and exits 2 when they are not that. */
export function benchArgs(usage: string, defaultRounds: number): { rounds: number; base: string | undefined } {
  const args = process.argv.slice(2);
  const baseAt = args.indexOf('--base');
  const base = baseAt >= 0 ? args.splice(baseAt, 2)[1] : undefined;
  const rounds = Number(args[0] ?? defaultRounds);
  if (!Number.isInteger(rounds) || rounds < 1 || (baseAt >= 0 && !base)) {
    console.error(usage);
    process.exit(2);
  }
  return { rounds, base };
}

const temp: string[] = [];

/** A new temporary directory, removed by `cleanUp`. */
export function tempDir(prefix: string): string {
  const d = mkdtempSync(path.join(os.tmpdir(), prefix));
  temp.push(d);
  return d;
}

/** Removes the temporary directories, then forgets the worktrees that were in them. */
export function cleanUp(): void {
  for (const d of temp.splice(0)) rmSync(d, { recursive: true, force: true });
  pruneWorktrees();
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
