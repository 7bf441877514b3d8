// The command line's database commands (`user create`, `user set-password`, `token create`,
// `search reindex`) as data, and what running one does. The same code runs them in the command's
// own process, on a database it opened, and in the process that holds the embedded database when
// the command asks it over the data dir's control socket (src/control/, docs/design/startup.md
// "Commands beside a running server"). What a command prints goes to `io`, so the answer is the
// same wherever it ran. Domain code is loaded when a command runs, not when this module is.
import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import { ValidationError } from './domain/errors.ts';
import type { BegunHash } from './domain/passwords.ts';

export type DbCommand =
  | { command: 'user create'; username: string; email?: string; admin?: boolean; password?: string }
  | { command: 'user set-password'; username: string; password: string }
  | { command: 'token create'; username: string }
  | { command: 'search reindex'; project?: string };

/** Where a command writes its lines: stdout and stderr. */
export interface CommandIo {
  out(line: string): void;
  err(line: string): void;
}

/** What a command line prepared while its database opened: the hash of the password it sets, begun. */
export interface Prepared {
  begun?: BegunHash;
}

/**
 * The modules `cmd` runs, loaded, and where it sets a password, that password's hash begun first,
 * then the common passwords loaded (a command line does this while its database opens).
 */
export async function loadDbCommand(cmd: DbCommand): Promise<Prepared> {
  if (cmd.command === 'search reindex') {
    await Promise.all([import('./search/index.ts'), import('./storage/index.ts')]);
    return {};
  }
  const password = cmd.command === 'user set-password' || cmd.command === 'user create' ? cmd.password : undefined;
  if (password === undefined) {
    await import('./domain/users.ts');
    return {};
  }
  const { beginHash, passwordProblem } = await import('./domain/passwords.ts');
  const begun = beginHash(password, cmd.username);
  await import('./domain/users.ts');
  passwordProblem(password, cmd.username);
  return { begun };
}

/**
 * Runs `cmd` on `db`, with what loadDbCommand prepared (a command line's; the holder of the data dir
 * prepares nothing); returns its exit code. A ValidationError (bad input) propagates.
 */
export async function runDbCommand(cmd: DbCommand, db: Database, config: Config, io: CommandIo, prepared: Prepared = {}): Promise<number> {
  switch (cmd.command) {
    case 'user create': {
      const { createUser } = await import('./domain/users.ts');
      const { user, token } = await createUser(db.prisma, cmd.username, {
        email: cmd.email,
        password: cmd.password,
        isAdmin: cmd.admin,
        begun: prepared.begun,
      });
      io.out(`created ${user.isAdmin ? 'site admin' : 'user'} ${user.username}; API token (shown once):`);
      io.out(token);
      return 0;
    }
    case 'user set-password': {
      const { setPassword } = await import('./domain/users.ts');
      await setPassword(db.prisma, cmd.username, cmd.password, prepared.begun);
      io.out(`password of ${cmd.username} set`);
      return 0;
    }
    case 'token create': {
      const { createTokenFor } = await import('./domain/users.ts');
      const token = await createTokenFor(db.prisma, cmd.username);
      io.out(`new API token for ${cmd.username} (shown once):`);
      io.out(token);
      return 0;
    }
    case 'search reindex': {
      const [{ reindexPublished }, { openStorage }] = await Promise.all([import('./search/index.ts'), import('./storage/index.ts')]);
      if (cmd.project && !(await db.prisma.project.findUnique({ where: { slug: cmd.project }, select: { id: true } }))) {
        throw ValidationError.field('project', `No project "${cmd.project}".`);
      }
      await optimizeFromHere();
      const done = await reindexPublished(db.prisma, openStorage(config.storage), cmd.project);
      for (const d of done) {
        const skipped = d.result.skipped.length ? `, ${d.result.skipped.length} page(s) skipped` : '';
        io.out(`${d.project} ${d.version}: ${d.result.pages} pages, ${d.result.sections} sections${skipped}`);
      }
      io.out(`indexed ${done.length} version(s)`);
      return 0;
    }
  }
}

/**
 * Turns V8's optimizing compilers back on in a one-shot command (src/bin.js starts it without
 * them, for a start that does not wait on them) before work that runs for seconds: indexing every
 * page of a large corpus. The Python documentation's 498 pages took 24 s without them and 14 s
 * with (docs/design/startup.md). Nothing where they are on (a server running the command).
 */
async function optimizeFromHere(): Promise<void> {
  if (!process.execArgv.includes('--no-opt')) return;
  const { setFlagsFromString } = await import('node:v8');
  setFlagsFromString('--turbofan');
  setFlagsFromString('--maglev');
}

/** The line a person reads for a ValidationError: each field and what is wrong with it. */
export function validationMessage(e: ValidationError): string {
  return `lectern: ${e.fieldErrors.map((f) => `${f.field}: ${f.messages.join(' ')}`).join('; ')}`;
}

/** What a command sent over the control socket logs: the command and its names, never a password. */
export function describeCommand(cmd: DbCommand): Record<string, unknown> {
  switch (cmd.command) {
    case 'user create':
      return { command: cmd.command, username: cmd.username, admin: cmd.admin ?? false, withPassword: cmd.password !== undefined };
    case 'user set-password':
    case 'token create':
      return { command: cmd.command, username: cmd.username };
    case 'search reindex':
      return { command: cmd.command, project: cmd.project ?? null };
  }
}
