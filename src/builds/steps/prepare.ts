// Step 0 of a build: its own empty directory (its user's alone, when Lectern runs as root), the
// sandbox checked (no sandbox, no build: the project's code never runs unconfined), and the
// project's variables left out of it named in its log.
import { chown, mkdir, rm } from 'node:fs/promises';
import { type BuildRun, StepFailed } from '../run.ts';

export async function prepare(r: BuildRun): Promise<void> {
  await rm(r.workdir, { recursive: true, force: true });
  await mkdir(r.home, { recursive: true, mode: 0o700 });
  if (r.uid !== null) {
    await chown(r.workdir, r.uid, r.uid);
    await chown(r.home, r.uid, r.uid);
  }
  if (!r.sandbox)
    throw new StepFailed(
      'bubblewrap (bwrap) is not installed or cannot run on this machine: Lectern runs no build without its sandbox (apt-get install -y bubblewrap).',
    );
  if (r.ignored.length) {
    const output = r.ignored.map(([name, why]) => `The project's environment variable ${name} was left out of this build: ${why}\n`).join('');
    await r.note('environment variables', 'environment variables', output, 0);
  }
}
