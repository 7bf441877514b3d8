// The holder's side of the data dir's control socket (docs/design/startup.md "Commands beside a
// running server"). The process that holds the embedded database (`lectern serve`, `lectern
// worker`) listens on `<data dir>/lectern.sock` and runs the command line's database commands on
// its own database, one request per connection. The socket is the operator's: mode 0600, in the
// data dir beside the database files and the secret key, which whoever may connect can read
// anyway. Builds never see it (their sandbox binds their own directory, not the data dir).
import { chmodSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { z } from 'zod';
import { type CommandIo, type DbCommand, describeCommand, runDbCommand, validationMessage } from '../commands.ts';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import { ValidationError } from '../domain/errors.ts';
import type { Logger } from '../log.ts';
import { CONTROL_VERSION, type ControlAnswer, type ControlRequest, controlSocketPath, MAX_SOCKET_PATH } from './client.ts';

/** A request is a few hundred bytes; anything longer is not one. */
const MAX_REQUEST_BYTES = 64 * 1024;
/** A client that connects and sends nothing is dropped after this. */
const REQUEST_TIMEOUT_MS = 10_000;

const name = z.string().min(1).max(200);
const requestSchema = z.strictObject({
  version: z.literal(CONTROL_VERSION),
  request: z.discriminatedUnion('command', [
    z.strictObject({ command: z.literal('migrate') }),
    z.strictObject({
      command: z.literal('user create'),
      username: name,
      email: z.string().max(1000).optional(),
      admin: z.boolean().optional(),
      password: z.string().max(10_000).optional(),
    }),
    z.strictObject({ command: z.literal('user set-password'), username: name, password: z.string().max(10_000) }),
    z.strictObject({ command: z.literal('token create'), username: name }),
    z.strictObject({ command: z.literal('search reindex'), project: name.optional() }),
  ]),
});

export interface ControlServer {
  close(): Promise<void>;
}

interface Holder {
  db: Database;
  config: Config;
  log: Logger;
  /** What the refusal of `migrate` names: `lectern serve (pid 12)`. */
  holder: string;
}

/** Runs one request; every failure is an answer, never a thrown error. */
async function answer(raw: string, h: Holder): Promise<ControlAnswer> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return { code: 2, stdout: '', stderr: 'lectern: the control socket expects one JSON request\n' };
  }
  const checked = requestSchema.safeParse(parsed);
  if (!checked.success) {
    const other = (parsed as { version?: unknown } | null)?.version;
    const why =
      other !== CONTROL_VERSION
        ? `${h.holder} is another version of Lectern: run this command from the same checkout as the server`
        : 'the request is malformed';
    return { code: 2, stdout: '', stderr: `lectern: ${why}\n` };
  }
  const request = checked.data.request as ControlRequest;
  if (request.command === 'migrate') return migrate(h);
  const cmd = request as DbCommand;
  const out: string[] = [];
  const err: string[] = [];
  const io: CommandIo = { out: (l) => out.push(l), err: (l) => err.push(l) };
  h.log.info(describeCommand(cmd), 'command from the command line');
  let code: number;
  try {
    code = await runDbCommand(cmd, h.db, h.config, io);
  } catch (e) {
    if (!(e instanceof ValidationError)) {
      h.log.error({ err: e, ...describeCommand(cmd) }, 'a command from the command line failed');
      err.push(`lectern: ${h.holder} failed to run the command; its log has the error`);
    } else err.push(validationMessage(e));
    code = 1;
  }
  const text = (lines: string[]) => lines.map((l) => `${l}\n`).join('');
  return { code, stdout: text(out), stderr: text(err) };
}

/** `migrate` beside a running holder: it migrated when it started; what it has not applied needs a restart. */
async function migrate(h: Holder): Promise<ControlAnswer> {
  const pending = await h.db.pending();
  if (!pending.length) return { code: 0, stdout: 'the database is up to date\n', stderr: '' };
  return {
    code: 1,
    stdout: '',
    stderr:
      `lectern: ${pending.length} migration(s) are not applied (${pending.join(', ')}), and ${h.holder} holds the embedded database: ` +
      'restart it (it migrates when it starts), or stop it and run lectern migrate\n',
  };
}

function serveConnection(socket: Socket, h: Holder): void {
  let raw = '';
  let done = false;
  socket.setEncoding('utf8');
  socket.setTimeout(REQUEST_TIMEOUT_MS, () => socket.destroy());
  const reply = (a: ControlAnswer) => {
    if (socket.writable) socket.end(`${JSON.stringify(a)}\n`);
  };
  const run = () => {
    if (done) return;
    done = true;
    socket.setTimeout(0);
    answer(raw.split('\n')[0] ?? '', h).then(reply, (e: unknown) => {
      h.log.error({ err: e }, 'the control socket failed to answer');
      reply({ code: 1, stdout: '', stderr: `lectern: ${h.holder} failed to run the command; its log has the error\n` });
    });
  };
  socket.on('data', (d: string) => {
    if (done) return;
    raw += d;
    if (raw.length > MAX_REQUEST_BYTES) {
      done = true;
      reply({ code: 2, stdout: '', stderr: 'lectern: the request is too long\n' });
    } else if (raw.includes('\n')) run();
  });
  socket.on('end', run);
  socket.on('error', () => socket.destroy());
}

/**
 * Listens on the data dir's control socket for `holder` (which holds the data dir's lock: a socket
 * file there was left by a process that is gone). Null, and a log line, where it cannot: a data dir
 * whose path is too long for a socket, say. The command line then refuses as it did without one.
 */
export async function listenControl(dataDir: string, holder: Holder): Promise<ControlServer | null> {
  const file = controlSocketPath(dataDir);
  if (Buffer.byteLength(file) > MAX_SOCKET_PATH) {
    holder.log.info({ socket: file }, 'no control socket: the data dir path is too long for one; the command line refuses while this process runs');
    return null;
  }
  rmSync(file, { force: true });
  // Half-open: the command line ends its side once the request is sent, and reads the answer after.
  const server: Server = createServer({ allowHalfOpen: true }, (s) => serveConnection(s, holder));
  // Created 0600 and set so again: only the operator's user connects. The bind happens within
  // listen(), synchronously, so the umask is the process's own again before anything else runs.
  const listening = new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.once('listening', resolve);
  });
  const umask = process.umask(0o177);
  try {
    server.listen(file);
  } finally {
    process.umask(umask);
  }
  try {
    await listening;
  } catch (e) {
    holder.log.warn({ err: e, socket: file }, 'no control socket; the command line refuses while this process runs');
    return null;
  }
  chmodSync(file, 0o600);
  server.unref();
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        rmSync(file, { force: true });
      }),
  };
}
