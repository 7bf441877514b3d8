// Step 0 of a build: its own empty directory (its user's alone, when Lectern runs as root), the
// sandbox checked (no sandbox, no build: the project's code never runs unconfined), and the
// project's variables left out of it named in its log.
import { execFile } from 'node:child_process';
import { chown, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { projectLimitsNote } from '../../domain/build-limits.ts';
import { diskUsage, formatBytes } from '../../sandbox/sandbox.ts';
import { KeptEnvironment } from '../environment.ts';
import { type BuildRun, StepFailed } from '../run.ts';

export async function prepare(r: BuildRun): Promise<void> {
  await rm(r.workdir, { recursive: true, force: true });
  await rm(r.layer, { recursive: true, force: true }); // a layer left by a worker that stopped mid-build
  await mkdir(r.home, { recursive: true, mode: 0o700 });
  if (r.uid !== null) {
    await chown(r.workdir, r.uid, r.uid);
    await chown(r.home, r.uid, r.uid);
  }
  await prepareCache(r);
  if (!r.sandbox)
    throw new StepFailed(
      'bubblewrap (bwrap) is not installed or cannot run on this machine: Lectern runs no build without its sandbox (apt-get install -y bubblewrap).',
    );
  if (r.ignored.length) {
    const output = r.ignored.map(([name, why]) => `The project's environment variable ${name} was left out of this build: ${why}\n`).join('');
    await r.note('environment variables', 'environment variables', output, 0);
  }
  const raised = projectLimitsNote(r.project, r.deps.limits);
  if (raised) await r.note('build limits', 'build limits', raised, 0);
}

/**
 * The project's cache (pip's and uv's downloads), bound at `~/.cache`: emptied when it grew past
 * LECTERN_BUILD_CACHE_MAX_BYTES (said in the log), and made this build's user's (build users
 * change from build to build).
 */
async function prepareCache(r: BuildRun): Promise<void> {
  await mkdir(path.join(r.home, '.cache'), { mode: 0o700 });
  if (r.uid !== null) await chown(path.join(r.home, '.cache'), r.uid, r.uid);
  if (!r.cache) return;
  // The environment of a version this build holds is counted with the cache, and emptied with it.
  const max = r.limits.cacheMaxBytes;
  await mkdir(r.cache, { recursive: true, mode: 0o700 });
  const used = await diskUsage(r.cache, max + 1);
  if (used > max) {
    await rm(path.join(r.cache, 'downloads'), { recursive: true, force: true });
    await KeptEnvironment.removeUnheld(r.cache, r.keptEnv);
    await r.note(
      'cache',
      'cache',
      `The project's cache (more than ${formatBytes(max)}) was emptied: it was larger than LECTERN_BUILD_CACHE_MAX_BYTES. This build downloads what it installs again.\n`,
      0,
    );
  }
  const downloads = path.join(r.cache, 'downloads');
  await mkdir(downloads, { recursive: true, mode: 0o700 });
  if (r.keptEnv) await mkdir(r.keptEnv.dir, { recursive: true, mode: 0o755 });
  if (r.uid !== null) await giveTo(r.uid, downloads, ...(r.keptEnv ? [r.keptEnv.dir] : []));
}

/**
 * Gives directories and everything under them to build user `uid` (links themselves, never what
 * they point to: chown -R without -L), as the user changes from build to build. chown(1) rather
 * than a walk in Node: an environment holds thousands of files.
 */
function giveTo(uid: number, ...dirs: string[]): Promise<void> {
  return new Promise((resolve, reject) =>
    execFile('/bin/chown', ['-R', '-P', '-h', `${uid}:${uid}`, '--', ...dirs], (e) =>
      e ? reject(new Error(`chown of the build's cache failed: ${e.message}`)) : resolve(),
    ),
  );
}
