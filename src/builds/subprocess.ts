// Runs one build command: its output captured (bounded) and streamed to a callback as it comes,
// a time limit, and an AbortSignal that kills the whole process group.
import { spawn } from 'node:child_process';

export interface RunOptions {
  cwd: string;
  env: Record<string, string>;
  signal?: AbortSignal;
  timeoutMs: number;
  /** Output kept at most (the tail is kept when it is longer). */
  maxOutputBytes?: number;
  onOutput?: (chunk: string) => void;
}

export interface RunResult {
  exitCode: number;
  output: string;
  timedOut: boolean;
  aborted: boolean;
}

const DEFAULT_MAX_OUTPUT = 2 * 1024 * 1024;

export function runCommand(argv: string[], opts: RunOptions): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const [cmd, ...args] = argv;
    const child = spawn(cmd!, args, { cwd: opts.cwd, env: opts.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const max = opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
    let output = '';
    let truncated = false;
    let timedOut = false;
    let aborted = false;
    const kill = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const onData = (buf: Buffer) => {
      const text = buf.toString('utf8');
      output += text;
      if (output.length > max) {
        output = output.slice(output.length - max);
        truncated = true;
      }
      opts.onOutput?.(text);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, opts.timeoutMs);
    const onAbort = () => {
      aborted = true;
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
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (truncated) output = `[output truncated to its last ${max} bytes]\n${output}`;
      if (timedOut) output += `\n[killed: the command ran longer than ${Math.round(opts.timeoutMs / 1000)} s]\n`;
      resolve({ exitCode: code ?? (signal ? 128 + 9 : 1), output, timedOut, aborted });
    });
  });
}
