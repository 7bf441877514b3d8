// The command line's side of the data dir's control socket (docs/design/startup.md "Commands
// beside a running server"): when another process holds the embedded database, a database command
// is sent to it and its answer printed, instead of a refusal. Loads node:net only, so asking costs
// Node's start and a round trip.
import { connect } from 'node:net';
import path from 'node:path';
import type { DbCommand } from '../commands.ts';

/** The socket's name in the data dir. */
export const CONTROL_SOCKET = 'lectern.sock';
/** Bumped when a request or answer changes shape: a server of another version refuses. */
export const CONTROL_VERSION = 1;
/** Linux's limit on a socket path (sun_path, 108 bytes with its NUL). */
export const MAX_SOCKET_PATH = 107;

export type ControlRequest = DbCommand | { command: 'migrate' };

/** What the server answers: the command's exit code and what it printed. */
export interface ControlAnswer {
  code: number;
  stdout: string;
  stderr: string;
}

export function controlSocketPath(dataDir: string): string {
  return path.resolve(dataDir, CONTROL_SOCKET);
}

/**
 * Sends `request` to the process that holds `dataDir` and resolves with its answer; null when no
 * process answers there (no socket, or one left by a process that is gone), so the caller refuses.
 */
export function askControl(dataDir: string, request: ControlRequest): Promise<ControlAnswer | null> {
  const file = controlSocketPath(dataDir);
  if (Buffer.byteLength(file) > MAX_SOCKET_PATH) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const socket = connect(file);
    let text = '';
    let connected = false;
    socket.setEncoding('utf8');
    socket.on('connect', () => {
      connected = true;
      socket.end(`${JSON.stringify({ version: CONTROL_VERSION, request })}\n`);
    });
    socket.on('data', (d: string) => (text += d));
    socket.on('error', (e: NodeJS.ErrnoException) => {
      if (!connected && (e.code === 'ENOENT' || e.code === 'ECONNREFUSED' || e.code === 'EACCES')) resolve(null);
      else reject(new Error(`the control socket ${file} failed: ${e.message}`));
    });
    socket.on('close', () => {
      if (!connected) return;
      try {
        const answer = JSON.parse(text) as ControlAnswer;
        if (typeof answer.code !== 'number' || typeof answer.stdout !== 'string' || typeof answer.stderr !== 'string') throw new Error('not an answer');
        resolve(answer);
      } catch {
        reject(new Error(`the process holding ${dataDir} answered its control socket with something other than an answer`));
      }
    });
  });
}
