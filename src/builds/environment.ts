// A version's Python environment kept between its builds (docs/design/images.md "Caches"): the
// venv lives in the project's cache, one per version, and a build whose image, tools, Python
// install configuration and requirements files are those of the build that made it uses it as it
// is, without making it or installing its requirements again. One build at a time holds a
// version's environment (a lock file); another build of the same version meanwhile makes a fresh
// one in its own directory.
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { PrismaClient } from '../db/database.ts';

/** What makes an environment the same: hashed, and kept beside it once its install ended well. */
export interface EnvironmentKey {
  key: string;
  /** The build that made it. */
  build: number;
}

export class KeptEnvironment {
  readonly dir: string;
  readonly #lock: string;
  readonly #keyFile: string;

  private constructor(dir: string) {
    this.dir = dir;
    this.#lock = `${dir}.lock`;
    this.#keyFile = `${dir}.key`;
  }

  /**
   * The environment of version `versionId` in project cache `cache`, held by `buildId` until
   * `release`; null while another build holds it (a lock older than `staleMs` is taken over: its
   * build's worker stopped).
   */
  static claim(cache: string, versionId: number, buildId: number, staleMs: number): KeptEnvironment | null {
    const env = new KeptEnvironment(path.join(cache, 'envs', String(versionId)));
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        mkdirSync(path.dirname(env.dir), { recursive: true, mode: 0o700 });
        closeSync(openSync(env.#lock, 'wx', 0o600));
        writeFileSync(env.#lock, String(buildId));
        return env;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') return null;
        try {
          if (Date.now() - statSync(env.#lock).mtimeMs < staleMs) return null;
          rmSync(env.#lock, { force: true });
        } catch {
          return null;
        }
      }
    }
    return null;
  }

  /** The key it was made with, when its install ended well; null otherwise. */
  kept(): EnvironmentKey | null {
    try {
      return JSON.parse(readFileSync(this.#keyFile, 'utf8')) as EnvironmentKey;
    } catch {
      return null;
    }
  }

  /** Empties it (its files are the last build's user's) and forgets its key, before it is made again. */
  async reset(): Promise<void> {
    rmSync(this.#keyFile, { force: true });
    await rm(this.dir, { recursive: true, force: true });
    await mkdir(this.dir, { recursive: true, mode: 0o755 });
  }

  /** Forgets its key while an install changes it: an install that stops halfway leaves nothing to reuse. */
  forget(): void {
    rmSync(this.#keyFile, { force: true });
  }

  /** Its install ended well: the next build with the same key uses it. */
  keep(key: EnvironmentKey): void {
    writeFileSync(this.#keyFile, JSON.stringify(key));
  }

  release(): void {
    rmSync(this.#lock, { force: true });
  }

  /**
   * Removes, in project cache `cache`, every version's environment no running build holds, and
   * `ours` (this build's, which it makes again), each with its key.
   */
  static async removeUnheld(cache: string, ours: KeptEnvironment | null): Promise<void> {
    const envs = path.join(cache, 'envs');
    const names = await readdir(envs).catch(() => [] as string[]);
    for (const name of names.filter((n) => /^\d+$/.test(n))) {
      const env = new KeptEnvironment(path.join(envs, name));
      if (env.dir !== ours?.dir && existsSync(env.#lock)) continue; // another build's, running
      env.forget();
      await rm(env.dir, { recursive: true, force: true });
    }
  }

  /** Removes the environment of version `versionId` in project cache `cache`, with its key and lock (a deleted version's: no build holds it any more). */
  static async remove(cache: string, versionId: number): Promise<void> {
    const env = new KeptEnvironment(path.join(cache, 'envs', String(versionId)));
    env.forget();
    await rm(env.dir, { recursive: true, force: true });
    env.release();
  }
}

/** The numeric entries of `dir` (project or version ids), none when it is missing. */
async function ids(dir: string): Promise<number[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  return [...new Set(names.map((n) => /^(\d+)(?:\.(?:key|lock))?$/.exec(n)?.[1]).filter((n): n is string => n !== undefined))].map(Number);
}

/**
 * What the caches of this machine hold that nothing will build with again, removed (the worker's
 * housekeeping, docs/design/images.md "Caches"): the cache of a project that was deleted, and the
 * environment of a version that was. Returns the ids whose files went.
 */
export async function pruneCaches(prisma: PrismaClient, dataDir: string): Promise<{ projects: number[]; versions: number[] }> {
  const root = path.join(dataDir, 'cache', 'projects');
  const projects = await ids(root);
  const gone = { projects: [] as number[], versions: [] as number[] };
  if (!projects.length) return gone;
  const alive = new Set((await prisma.project.findMany({ where: { id: { in: projects } }, select: { id: true } })).map((p) => p.id));
  for (const id of projects) {
    const cache = path.join(root, String(id));
    if (!alive.has(id)) {
      await rm(cache, { recursive: true, force: true });
      gone.projects.push(id);
      continue;
    }
    const versions = await ids(path.join(cache, 'envs'));
    if (!versions.length) continue;
    const kept = new Set((await prisma.version.findMany({ where: { id: { in: versions }, projectId: id }, select: { id: true } })).map((v) => v.id));
    for (const v of versions.filter((v) => !kept.has(v))) {
      await KeptEnvironment.remove(cache, v);
      gone.versions.push(v);
    }
  }
  return gone;
}
