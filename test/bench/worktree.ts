// A checkout of another revision beside this one, for benchmarks that compare it side by side
// (`--base <rev>`): test/bench/cli.ts, test/bench/reindex.ts.

import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
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
export function pruneWorktrees(): void {
  execFileSync('git', ['-C', ROOT, 'worktree', 'prune'], { stdio: 'ignore' });
}
