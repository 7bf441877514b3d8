// bubblewrap sometimes cannot set a sandbox up when several start at once (`bwrap: loopback: Failed
// RTM_NEWADDR: No child processes`, seen in the suite with two files building side by side): that
// is the machine's trouble, so the command runs again instead of failing the build or the sync. A
// command that itself fails, even one printing something like it, is not run again.
import { describe, expect, it } from 'vitest';
import { retryingSandboxSetup, SANDBOX_SETUP_FAILED } from '../../src/sandbox/sandbox.ts';

const SETUP = { exitCode: 1, output: 'bwrap: loopback: Failed RTM_NEWADDR: No child processes\n' };
const OK = { exitCode: 0, output: 'done\n' };

function attempts(...results: { exitCode: number; output: string }[]) {
  let calls = 0;
  return { run: async () => results[Math.min(calls++, results.length - 1)]!, calls: () => calls };
}

describe('a sandbox bubblewrap could not set up', () => {
  it('is tried again, and the command answers as if it had worked the first time', async () => {
    const a = attempts(SETUP, OK);
    expect(await retryingSandboxSetup(a.run)).toEqual(OK);
    expect(a.calls()).toBe(2);
  });

  it('hands each attempt tried again to the caller to discard (a build drops its recorded command)', async () => {
    const a = attempts(SETUP, SETUP, OK);
    const discarded: unknown[] = [];
    expect(await retryingSandboxSetup(a.run, undefined, async (failed) => discarded.push(failed))).toEqual(OK);
    expect(discarded).toEqual([SETUP, SETUP]);
  });

  it('is tried three times at most, then answered with its failure', async () => {
    const a = attempts(SETUP, SETUP, SETUP, OK);
    expect(await retryingSandboxSetup(a.run)).toEqual(SETUP);
    expect(a.calls()).toBe(3);
  });

  it('is not tried again when the caller says no more (a cancelled build, one past its time limit)', async () => {
    const a = attempts(SETUP, OK);
    expect(await retryingSandboxSetup(a.run, () => false)).toEqual(SETUP);
    expect(a.calls()).toBe(1);
  });

  it('never reruns a command that failed on its own, even one whose output mentions bwrap', async () => {
    for (const failure of [
      { exitCode: 2, output: 'sphinx-build: error\n' },
      { exitCode: 1, output: 'making docs\nbwrap: loopback: Failed RTM_NEWADDR: No child processes\n' },
    ]) {
      const a = attempts(failure, OK);
      expect(await retryingSandboxSetup(a.run)).toEqual(failure);
      expect(a.calls()).toBe(1);
    }
    expect(SANDBOX_SETUP_FAILED.test('bwrap: Creating new namespace failed: No space left on device')).toBe(true);
  });
});
