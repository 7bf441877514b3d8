// What a build's log keeps of a command's output (src/sandbox/subprocess.ts): all of it up to the
// limit, else its last `maxOutputBytes` characters under a note saying so, while every chunk still
// reaches the live log as it comes. A real bash, no sandbox (that is the sandbox tests' part).
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { runCommand } from '../../src/sandbox/subprocess.ts';

const run = (script: string, maxOutputBytes: number, live: string[] = []) =>
  runCommand(['bash', '-c', script], {
    cwd: os.tmpdir(),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    timeoutMs: 30_000,
    maxOutputBytes,
    onOutput: (c) => live.push(c),
  });

describe("a command's output in the build log", () => {
  it('is kept whole when it fits, with the exit code', async () => {
    const r = await run('printf "one\\ntwo\\n"; exit 3', 100);
    expect(r).toMatchObject({ exitCode: 3, output: 'one\ntwo\n', timedOut: false, aborted: false });
  });

  it('keeps the last bytes of a longer one, says so, and still streams every chunk', async () => {
    const live: string[] = [];
    // 5,000 numbered lines, in many chunks: the tail is what a person reads to see why it failed.
    const r = await run('for i in $(seq 1 5000); do echo "line $i"; done', 1000, live);
    expect(r.exitCode).toBe(0);
    expect(r.output.startsWith('[output truncated to its last 1000 bytes]\n')).toBe(true);
    const kept = r.output.slice('[output truncated to its last 1000 bytes]\n'.length);
    expect(kept).toHaveLength(1000);
    expect(kept.endsWith('line 4999\nline 5000\n')).toBe(true);
    expect(live.join('')).toHaveLength(Array.from({ length: 5000 }, (_, i) => `line ${i + 1}\n`).join('').length);
  });
});
