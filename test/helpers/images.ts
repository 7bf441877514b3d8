// The build images tests run on: made once per machine by the real `lectern images build` (from
// the Debian mirror LECTERN_BUILD_DEBIAN_MIRROR names, deb.debian.org by default) into a
// directory every test process shares (LECTERN_TEST_IMAGES_DIR, else <tmp>/lectern-test-images),
// one process at a time. Making both takes a few minutes; later runs find them made.
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type ImageName, readImage } from '../../src/builds/images.ts';
import { cliEnv, runCli, show } from './cli-process.ts';

export const TEST_IMAGES_DIR = process.env.LECTERN_TEST_IMAGES_DIR ?? path.join(os.tmpdir(), 'lectern-test-images');

/** Makes `names` in TEST_IMAGES_DIR unless they are there; fails saying what is missing (mmdebstrap, the mirror). */
export async function ensureTestImages(names: ImageName[]): Promise<string> {
  mkdirSync(TEST_IMAGES_DIR, { recursive: true });
  const lock = path.join(TEST_IMAGES_DIR, '.making');
  for (const name of names) {
    if (await readImage(TEST_IMAGES_DIR, name)) continue;
    await takeLock(lock);
    try {
      if (await readImage(TEST_IMAGES_DIR, name)) continue;
      if (!existsSync('/usr/bin/mmdebstrap'))
        throw new Error('mmdebstrap is not installed: test/setup/system-deps.sh installs it (apt-get install -y mmdebstrap)');
      const args = ['images', 'build', name];
      const r = await runCli(args, cliEnv({ LECTERN_BUILD_IMAGES_DIR: TEST_IMAGES_DIR, LECTERN_DATA_DIR: path.join(TEST_IMAGES_DIR, '.data') }), 20 * 60_000);
      if (r.code !== 0) throw new Error(`the test image ${name} could not be made (is the Debian mirror reachable?): ${show(args, r)}`);
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
  return TEST_IMAGES_DIR;
}

/** A directory made as a lock (atomic), taken back when its holder has been gone 30 minutes. */
async function takeLock(lock: string): Promise<void> {
  for (;;) {
    try {
      mkdirSync(lock);
      return;
    } catch {
      try {
        if (Date.now() - statSync(lock).mtimeMs > 30 * 60_000) rmSync(lock, { recursive: true, force: true });
      } catch {}
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}
