// Running the real `lectern` command (`node src/bin.js`) as a child process, the way an operator
// does: one-shot commands, and `serve` started, measured and stopped. Every child is tracked so a
// test file can kill whatever is left in afterAll (killChildren()).
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { TEST_NETWORK } from './git.ts';
import { freePort } from './net.ts';

export const root = path.resolve(import.meta.dirname, '../..');
const bin = path.join(root, 'src/bin.js');
const live = new Set<ChildProcess>();

/**
 * How a child runs `lectern <args>`: `node src/bin.js …` (as `npm start` does), or, with `shell`, as
 * a shell runs `lectern …` with node_modules/.bin first on PATH (the README's way): src/bin.js
 * started by its shebang.
 */
function lecternCommand(args: string[], env: NodeJS.ProcessEnv, shell: boolean): [string, string[], NodeJS.ProcessEnv] {
  if (!shell) return [process.execPath, [bin, ...args], env];
  return [bin, args, { ...env, PATH: `${path.join(root, 'node_modules/.bin')}:${env.PATH ?? ''}` }];
}

/** The parent's environment without any Lectern setting, plus `env` (undefined removes a key). */
export function cliEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('LECTERN_') || ['DATABASE_URL', 'PORT', 'HOST'].includes(k)) continue;
    out[k] = v;
  }
  // Builds may reach the test host that serves git (test/helpers/git.ts).
  out.LECTERN_BUILD_NETWORK_ALLOW = TEST_NETWORK;
  out.LECTERN_BUILD_UID_BASE = String(1_600_000_000 + Math.floor(Math.random() * 20_000) * 100_000);
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete out[k];
    else out[k] = v;
  }
  return out;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function describe(args: string[], r: Pick<CliResult, 'stdout' | 'stderr'>) {
  return `lectern ${args.join(' ')}\n--- stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}`;
}

/**
 * Runs `lectern <args>` to completion (killed, and the promise rejected, after `timeoutMs`);
 * `stdin` is piped to it when given (a password), else stdin is empty; `shell`: see lecternCommand.
 */
export function runCli(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000, stdin?: string, shell = false): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const [file, argv, childEnv] = lecternCommand(args, env, shell);
    const child = spawn(file, argv, { cwd: root, env: childEnv, stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    if (stdin !== undefined) child.stdin!.end(stdin);
    live.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`timed out after ${timeoutMs} ms: ${describe(args, { stdout, stderr })}`));
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      live.delete(child);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      live.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Formats a result for an assertion message. */
export function show(args: string[], r: CliResult): string {
  return `exit ${r.code}${r.signal ? ` (${r.signal})` : ''}: ${describe(args, r)}`;
}

export interface Served {
  child: ChildProcess;
  url: string;
  /** From spawn to the first 200 of /healthz, as an operator would measure it. */
  startupMs: number;
  /** The pino "listening" line, parsed. */
  listening: Record<string, unknown>;
  stdout: () => string;
  stderr: () => string;
  /** Sends `signal` and waits for the exit. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts `lectern serve` (`shell`: see lecternCommand) on a free port of 127.0.0.1 and waits until
 * /healthz answers 200 and the "listening" log line (JSON, from pino) is on stdout. Rejects, with everything the process
 * printed, when it exits first or is not up within `timeoutMs`.
 */
export async function startServe(env: NodeJS.ProcessEnv, timeoutMs = 90_000, shell = false): Promise<Served> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const started = performance.now();
  const served = { ...env, HOST: '127.0.0.1', PORT: String(port), LECTERN_LOG_LEVEL: env.LECTERN_LOG_LEVEL ?? 'info' };
  const [file, argv, childEnv] = lecternCommand(['serve'], served, shell);
  const child = spawn(file, argv, { cwd: root, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let stdout = '';
  let stderr = '';
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('close', (code, signal) => {
      live.delete(child);
      exited = { code, signal };
      resolve(exited);
    });
  });
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const output = () => `--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`;

  const listeningLine = () => {
    for (const line of stdout.split('\n')) {
      if (!line.trim().startsWith('{')) continue;
      try {
        const rec = JSON.parse(line) as Record<string, unknown>;
        if (typeof rec.msg === 'string' && /listening/i.test(rec.msg)) return rec;
      } catch {
        // a partial line: read again later
      }
    }
    return undefined;
  };

  let startupMs: number | undefined;
  try {
    while (startupMs === undefined || !listeningLine()) {
      if (exited) throw new Error(`lectern serve exited (code ${exited.code}, ${exited.signal}) before answering /healthz\n${output()}`);
      if (performance.now() - started > timeoutMs) throw new Error(`lectern serve did not answer /healthz within ${timeoutMs} ms\n${output()}`);
      if (startupMs === undefined) {
        const ok = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) }).then(
          (r) => r.status === 200,
          () => false,
        );
        if (ok) startupMs = performance.now() - started;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  } catch (e) {
    child.kill('SIGKILL');
    await exit;
    throw e;
  }

  return {
    child,
    url,
    startupMs,
    listening: listeningLine()!,
    stdout: () => stdout,
    stderr: () => stderr,
    stop: async (signal = 'SIGTERM', stopTimeoutMs = 20_000) => {
      if (exited) return exited;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), stopTimeoutMs);
      try {
        return await exit;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** Kills every child started through this module that is still running (for afterAll). */
export async function killChildren(): Promise<void> {
  await Promise.all(
    [...live].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('close', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
  live.clear();
}

/** POSTs a GraphQL query to a running server. */
export async function gql(
  url: string,
  query: string,
  token?: string,
  variables?: Record<string, unknown>,
): Promise<{ status: number; body: { data?: Record<string, any> | null; errors?: { message: string; extensions?: Record<string, unknown> }[] } }> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (token !== undefined) headers.authorization = `Token ${token}`;
  const res = await fetch(`${url}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
  return { status: res.status, body: (await res.json()) as never };
}
