// Runs one build command: its output captured (bounded) and streamed to a callback as it comes,
// a time limit, and an AbortSignal that kills the whole process group.
// @see docs/design/sandbox.md
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import type { LimitHit, SandboxRun } from './sandbox.ts';

export interface RunOptions {
  cwd: string;
  env: Record<string, string>;
  signal?: AbortSignal;
  timeoutMs: number;
  /** Output kept at most (the tail is kept when it is longer). */
  maxOutputBytes?: number;
  onOutput?: (chunk: string) => void;
  /** Run inside this prepared sandbox (its argv replaces `argv`'s spawn; `argv` is what runs inside). */
  sandbox?: SandboxRun;
}

export interface RunResult {
  exitCode: number;
  output: string;
  timedOut: boolean;
  aborted: boolean;
  /** A bound of the sandbox that stopped the command. */
  limit?: LimitHit | null;
}

const DEFAULT_MAX_OUTPUT = 2 * 1024 * 1024;

/**
 * The last `max` characters of a command's output, kept as chunks with a running length: whole
 * chunks leave from the front, and the text is joined once at the end, so a command printing
 * gigabytes costs no copying per chunk.
 */
class Tail {
  readonly #max: number;
  readonly #chunks: string[] = [];
  #kept = 0;
  #truncated = false;
  constructor(max: number) {
    this.#max = max;
  }
  push(text: string): void {
    this.#chunks.push(text);
    this.#kept += text.length;
    while (this.#kept - this.#chunks[0]!.length >= this.#max) {
      this.#kept -= this.#chunks.shift()!.length;
      this.#truncated = true;
    }
  }
  /** The text kept, headed by a note when some was dropped. */
  text(): string {
    let output = this.#chunks.join('');
    let truncated = this.#truncated;
    if (output.length > this.#max) {
      output = output.slice(output.length - this.#max);
      truncated = true;
    }
    return truncated ? `[output truncated to its last ${this.#max} bytes]\n${output}` : output;
  }
}

/** What happened while a command ran: set by its timer, its abort signal and its sandbox, read when it ends. */
interface Outcome {
  /** A bound of the sandbox that stopped the command. */
  limit: LimitHit | null;
  /** Why the sandbox could not be set up (the command was then killed). */
  setupError: string | null;
  /** The next look at the sandbox's bounds, while the command runs. */
  watching: NodeJS.Timeout | undefined;
  timedOut: boolean;
  aborted: boolean;
}

export function runCommand(argv: string[], opts: RunOptions): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const box = opts.sandbox;
    const [cmd, ...args] = box ? box.argv : argv;
    // Node looks a bare name up in the child's PATH (opts.env), and a build's starts with its own
    // venv/bin: what runs on the host to make the sandbox is named by its absolute path only.
    if (box && !path.isAbsolute(cmd!)) {
      reject(new Error(`the sandbox must be started by an absolute path, not ${JSON.stringify(cmd)}`));
      return;
    }
    const child = spawn(cmd!, args, {
      cwd: opts.cwd,
      env: opts.env,
      detached: true,
      stdio: box ? ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'] : ['ignore', 'pipe', 'pipe'],
    });
    const outcome: Outcome = { limit: null, setupError: null, watching: undefined, timedOut: false, aborted: false };
    const tail = new Tail(opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT);
    const kill = () => killGroup(child);
    const onData = (data: Buffer | string) => {
      const text = typeof data === 'string' ? data : data.toString('utf8');
      tail.push(text);
      opts.onOutput?.(text);
    };
    // Decoded by the streams, so a character split between two reads arrives whole.
    child.stdout!.setEncoding('utf8').on('data', onData);
    child.stderr!.setEncoding('utf8').on('data', onData);
    if (box) {
      for (const note of box.notes) onData(Buffer.from(`[Lectern: ${note}]\n`));
      startSandbox(box, child, outcome, kill);
    }
    const timer = setTimeout(() => {
      outcome.timedOut = true;
      kill();
    }, opts.timeoutMs);
    const onAbort = () => {
      outcome.aborted = true;
      kill();
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.once('error', (e) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
        resolve({ exitCode: 127, output: `${cmd}: command not found\n`, timedOut: false, aborted: false });
      } else reject(e);
    });
    child.once('close', async (code, signal) => {
      clearTimeout(timer);
      clearTimeout(outcome.watching);
      opts.signal?.removeEventListener('abort', onAbort);
      const stopped = box ? await box.stop(code).catch(() => null) : null;
      outcome.limit ??= stopped;
      resolve(endedResult(tail.text(), code, signal, outcome, opts));
    });
  });
}

/** Kills the command's whole process group (it was started detached, as a group's leader), else the command alone. */
function killGroup(child: ChildProcess): void {
  try {
    if (child.pid) process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

/**
 * Lets the sandboxed command run (`box.start`), then looks at the sandbox's bounds every second
 * while it runs: a bound hit is kept in `outcome` and the command killed. A sandbox that could
 * not be set up kills the command too, and says why in `outcome`.
 */
function startSandbox(box: SandboxRun, child: ChildProcess, outcome: Outcome, kill: () => void): void {
  box.start(child).then(
    () => {
      const check = async () => {
        const hit = await box.watch().catch(() => null);
        if (hit && !outcome.limit) {
          outcome.limit = hit;
          kill();
        } else if (child.exitCode === null && child.signalCode === null) outcome.watching = setTimeout(check, 1000);
      };
      outcome.watching = setTimeout(check, 1000);
    },
    (e: Error) => {
      outcome.setupError = e.message;
      kill();
    },
  );
}

/**
 * The result of a command that has ended: its output followed by Lectern's notes on why it was
 * stopped (each streamed to `onOutput` too), and its exit code: 125 when the sandbox could not be
 * set up, 137 for a command stopped by a bound that still exited 0.
 */
function endedResult(kept: string, code: number | null, signal: NodeJS.Signals | null, outcome: Outcome, opts: RunOptions): RunResult {
  const { timedOut, aborted, limit, setupError } = outcome;
  let output = kept;
  const note = (text: string) => {
    output += `\n${text}\n`;
    opts.onOutput?.(`\n${text}\n`);
  };
  if (timedOut) note(`[killed: the command ran longer than ${Math.round(opts.timeoutMs / 1000)} s]`);
  if (limit) note(`[Lectern stopped this command: ${limit.message}]`);
  if (setupError) note(`[Lectern could not set up the sandbox: ${setupError}]`);
  const exitCode = setupError ? 125 : (code ?? (signal ? 128 + 9 : 1));
  return { exitCode: limit && exitCode === 0 ? 137 : exitCode, output, timedOut, aborted, limit };
}
