// The build log is bounded whatever a command prints: per command (its first part, its last few
// KiB and a line saying what was left out) and per build (later commands keep a note and their
// last words), with the recorder's memory not growing with the output, secrets never stored in
// part where the output was cut, and the command left running to its end.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MASK, Recorder } from '../../src/builds/record.ts';
import { createEvents } from '../../src/events.ts';
import { type TestDatabase, testDatabase } from '../helpers/db.ts';

let t: TestDatabase;
let projectId: number;

beforeAll(async () => {
  t = await testDatabase();
  projectId = (await t.db.prisma.project.create({ data: { name: 'Chatty', slug: 'chatty', repositoryUrl: 'https://example.com/chatty.git' } })).id;
});
afterAll(() => t.drop());

const KiB = 1024;
const limits = { maxCommandBytes: 64 * KiB, maxBuildBytes: 256 * KiB };
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' };
const opts = { cwd: '/', env, timeoutMs: 120_000 };

async function newBuild() {
  return (await t.db.prisma.build.create({ data: { projectId, state: 'building' } })).id;
}

const stored = (id: number) => t.db.prisma.buildCommand.findUniqueOrThrow({ where: { id } });
const bytes = (s: string) => Buffer.byteLength(s);

/** A full garbage collection, so heap figures are what is still held. */
function collect(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

describe('one command printing far more than its bound', () => {
  it('keeps its first part, its last KiB and a line saying what was left out; memory does not follow the output', async () => {
    const buildId = await newBuild();
    const recorder = new Recorder({ prisma: t.db.prisma, events: createEvents() }, buildId, [], [], limits);
    collect();
    const before = process.memoryUsage().heapUsed;
    // What is held while it runs: measured after a full collection, up to four times a second.
    // A collection takes as long as the heap is large (a test process that ran other files before
    // this one holds more), so the next waits at least three times as long as the last took: the
    // recorder keeps three quarters of the thread to read the output.
    let peak = before;
    let sampler: NodeJS.Timeout | undefined;
    const sample = () => {
      const started = performance.now();
      collect();
      peak = Math.max(peak, process.memoryUsage().heapUsed);
      sampler = setTimeout(sample, Math.max(250, 3 * (performance.now() - started)));
    };
    sampler = setTimeout(sample, 250);
    // 100 MiB of output, then a last line.
    const r = await recorder
      .run('chatty', ['sh', '-c', "head -c 100M /dev/zero | tr '\\0' a; echo; echo the-last-line"], opts)
      .finally(() => clearTimeout(sampler));
    collect();
    const after = process.memoryUsage().heapUsed;

    // The command ran to its end: its exit code, and everything was counted.
    expect(r.exitCode).toBe(0);
    const row = await stored(r.commandId);
    expect(row.exitCode).toBe(0);
    expect(row.output).toBe(r.output);
    expect(bytes(row.output)).toBeLessThanOrEqual(limits.maxCommandBytes + 512);
    expect(row.output.startsWith('a'.repeat(56 * KiB))).toBe(true);
    expect(row.output).toMatch(
      /\n\[Lectern: output of this command past 56 KiB was not kept but for its last 8 KiB \(99\.9 MiB left out, 100 MiB in all\): a command's log is limited to 64 KiB \(LECTERN_BUILD_LOG_COMMAND_BYTES\)\]\na{8000,}\nthe-last-line\n$/,
    );
    expect(row.output.endsWith('aaaa\nthe-last-line\n')).toBe(true);
    // Memory: neither held after the run nor grown with the output while it ran (100 MiB went by;
    // the command's runner keeps its own last 2 MiB).
    expect(after - before).toBeLessThan(16 * 1024 * KiB);
    expect(peak - before).toBeLessThan(24 * 1024 * KiB);
  }, 180_000);

  it('writes while it runs, below the bound and past it', async () => {
    const buildId = await newBuild();
    const recorder = new Recorder({ prisma: t.db.prisma, events: createEvents() }, buildId, [], [], limits);
    const seen = new Set<string>();
    let watching = true;
    const watch = (async () => {
      while (watching) {
        for (const c of await t.db.prisma.buildCommand.findMany({ where: { buildId } })) if (c.endTime === null) seen.add(c.output);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    // Some output, a pause (a write happens), far more than the bound, a pause (another), the end.
    const r = await recorder.run(
      'slow',
      ['sh', '-c', "echo first; sleep 1.2; echo second; head -c 200K /dev/zero | tr '\\0' b; sleep 1.2; echo third; sleep 1.2; echo fourth"],
      opts,
    );
    watching = false;
    await watch;
    expect([...seen].some((s) => s === 'first\n')).toBe(true);
    expect(
      [...seen].some(
        (s) =>
          s.startsWith('first\nsecond\nbbbb') &&
          s.endsWith('\n[Lectern: output of this command past 56 KiB is not being kept; its last lines are shown when it ends]\n'),
      ),
    ).toBe(true);
    expect(r.output.startsWith('first\nsecond\nbbbb')).toBe(true);
    expect(r.output).toMatch(
      /\n\[Lectern: output of this command past 56 KiB was not kept but for its last 8 KiB \(\d+(\.\d)? KiB left out, 200 KiB in all\): a command's log is limited to 64 KiB \(LECTERN_BUILD_LOG_COMMAND_BYTES\)\]\nb+third\nfourth\n$/,
    );
  });
});

describe('the build as a whole', () => {
  it('later commands keep a note and their last words once the build has used its bound', async () => {
    const buildId = await newBuild();
    const recorder = new Recorder({ prisma: t.db.prisma, events: createEvents() }, buildId, [], [], limits);
    const outputs: string[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await recorder.run(`step ${i}`, ['sh', '-c', `head -c 1M /dev/zero | tr '\\0' ${'cdefgh'[i]}; echo; echo end of step ${i}`], opts);
      expect(r.exitCode).toBe(0);
      outputs.push((await stored(r.commandId)).output);
    }
    // The first four fill the build's 256 KiB, each within its own 64 KiB.
    for (const o of outputs.slice(0, 4)) {
      expect(bytes(o)).toBeLessThanOrEqual(64 * KiB + 512);
      expect(o).toContain("a command's log is limited to 64 KiB (LECTERN_BUILD_LOG_COMMAND_BYTES)]");
    }
    // Then only a note and the end.
    for (const [i, o] of outputs.slice(4).entries()) {
      expect(o).toMatch(
        /^\[Lectern: output of this command was not kept but for its last 512 bytes \(\d+(\.\d)? KiB left out, 1 MiB in all\): this build's log is limited to 256 KiB in all \(LECTERN_BUILD_LOG_BYTES\)\]\n[gh]+\nend of step \d\n$/,
      );
      expect(o.endsWith(`end of step ${i + 4}\n`)).toBe(true);
    }
    const total = (await t.db.prisma.buildCommand.findMany({ where: { buildId } })).reduce((n, c) => n + bytes(c.output), 0);
    expect(total).toBeLessThanOrEqual(limits.maxBuildBytes + 6 * 1024);

    // A short command past the bound still shows all it printed (the commit, read from it).
    const short = await recorder.run('git rev-parse', ['sh', '-c', 'echo 0123456789abcdef0123456789abcdef01234567'], opts);
    expect(short.output).toBe('0123456789abcdef0123456789abcdef01234567\n');
  });

  it('a command below its bound is stored whole, as before', async () => {
    const recorder = new Recorder({ prisma: t.db.prisma, events: createEvents() }, await newBuild(), [], [], limits);
    const r = await recorder.run('echo', ['sh', '-c', 'printf "one\\ntwo\\n"; printf "no newline"'], opts);
    expect((await stored(r.commandId)).output).toBe('one\ntwo\nno newline');
  });

  it('without limits given, uses the defaults (1 MiB per command)', async () => {
    const recorder = new Recorder({ prisma: t.db.prisma, events: createEvents() }, await newBuild(), []);
    const r = await recorder.run('chatty', ['sh', '-c', "head -c 3M /dev/zero | tr '\\0' z"], opts);
    expect(bytes(r.output)).toBeLessThanOrEqual(1024 * KiB + 512);
    expect(r.output).toContain("a command's log is limited to 1 MiB (LECTERN_BUILD_LOG_COMMAND_BYTES)]");
  });
});

describe('secrets where the output was cut', () => {
  // 24 bytes: its base64 has no padding, every character of it is the value's alone.
  const secret = 'hunter2-very-secret-24ch';
  const b64 = Buffer.from(secret).toString('base64');

  /** A command printing `before` bytes of x, `text`, then `after` bytes of y. */
  const printing = (before: number, _text: string, after: number) => [
    'sh',
    '-c',
    `head -c ${before} /dev/zero | tr '\\0' x; printf '%s' "$TEXT"; head -c ${after} /dev/zero | tr '\\0' y`,
  ];

  it.each([
    ['the value across the end of the first part', 56 * KiB - 7, secret],
    ['its base64 across the end of the first part', 56 * KiB - 9, b64],
    ['the value across the start of the last part', 100 * KiB, secret],
    ['its base64 across the start of the last part', 100 * KiB, b64],
  ])('%s: never stored in part', async (what, before, text) => {
    const recorder = new Recorder({ prisma: t.db.prisma, events: createEvents() }, await newBuild(), [secret], [], limits);
    // Across the start of the last part: the last 8 KiB begin 7 characters before the text's end.
    const after = what.includes('last part') ? 8 * KiB - 7 : 100 * KiB;
    const r = await recorder.run('leaky', printing(before, text, after), { ...opts, env: { ...env, TEXT: text } });
    const out = (await stored(r.commandId)).output;
    expect(out).toContain('[Lectern: output of this command past');
    for (const form of [secret, b64]) {
      for (let k = 4; k <= form.length; k++) {
        expect(out, `${what}: ${form.slice(0, k)}`).not.toContain(`x${form.slice(0, k)}`);
        expect(out, `${what}: ${form.slice(-k)}`).not.toContain(`${form.slice(-k)}y`);
      }
    }
    // What was kept around the cut is the ordinary text.
    expect(out).toMatch(/^x+\n\[Lectern: /);
    expect(out).toMatch(/\]\ny+$/);
  });

  it('whole secrets in the first and last parts are masked, in every form', async () => {
    const recorder = new Recorder({ prisma: t.db.prisma, events: createEvents() }, await newBuild(), [secret], [], limits);
    const forms = `${secret} ${b64} ${encodeURIComponent(secret)} ${JSON.stringify(secret)}\n`;
    const r = await recorder.run('leaky', ['sh', '-c', `printf '%s' "$TEXT"; head -c 200K /dev/zero | tr '\\0' x; echo; printf '%s' "$TEXT"`], {
      ...opts,
      env: { ...env, TEXT: forms },
    });
    expect(r.output.startsWith(`${MASK} ${MASK} ${MASK} "${MASK}"\n`)).toBe(true);
    expect(r.output.endsWith(`x\n${MASK} ${MASK} ${MASK} "${MASK}"\n`)).toBe(true);
    expect(r.output).not.toContain('hunter');
  });
});

describe('a file Lectern shows as read (`cat -- <file>`, Recorder.shown)', () => {
  it('is bounded and masked as a command printing it would be, and counts toward the build', async () => {
    const buildId = await newBuild();
    const recorder = new Recorder({ prisma: t.db.prisma, events: createEvents() }, buildId, ['hunter2-secret'], [], limits);
    // A configuration file of 200 KiB with a secret in its first lines and in its last.
    const text = `# hunter2-secret\n${'x'.repeat(200 * KiB)}\n# hunter2-secret\n`;
    await recorder.shown('cat', ['cat', '--', '.readthedocs.yaml'], text);
    const [row] = await t.db.prisma.buildCommand.findMany({ where: { buildId } });
    expect(row).toMatchObject({ command: 'cat -- .readthedocs.yaml', exitCode: 0 });
    expect(row!.endTime).not.toBeNull();
    expect(row!.output.startsWith(`# ${MASK}\nxxx`)).toBe(true);
    expect(row!.output).toMatch(/\[Lectern: output of this command past \d+ KiB was not kept but for its last \d+ KiB .*LECTERN_BUILD_LOG_COMMAND_BYTES\)\]/);
    expect(row!.output.endsWith(`# ${MASK}\n`)).toBe(true);
    expect(row!.output).not.toContain('hunter2');
    expect(bytes(row!.output)).toBeLessThan(limits.maxCommandBytes + 1024);
    // What it kept is taken from the build's bound: five more such files: the build's 256 KiB are used by the fourth, and the last gets a note and its last words only.
    for (let i = 0; i < 5; i++) await recorder.shown('cat', ['cat', '--', `f${i}`], text);
    const rows = await t.db.prisma.buildCommand.findMany({ where: { buildId }, orderBy: { id: 'asc' } });
    expect(rows.at(-1)!.output).toMatch(/this build's log is limited to 256 KiB in all/);
  });
});
