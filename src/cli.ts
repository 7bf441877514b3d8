// The `lectern` command: serve, migrate, user/token management, and uploads of built docs.
// README "Command line" lists the commands.

// Each command loads only what it uses, when it runs (import()): the API's schema, the docs
// server and the build worker take seconds to load, and `user create` or `token create` need none
// of them (test/bench/cli.ts measures it). What `run` recognizes in a failure loads at once.
// node:http too: importing it as a module evaluates its lazy exports, which load undici, http2
// and tls, about 0.15 s (docs/design/startup.md).
import type { Server } from 'node:http';
import { parseArgs } from 'node:util';
import type { Worker } from './builds/worker.ts';
import { loadDbCommand, runDbCommand, validationMessage } from './commands.ts';
import { type Config, ConfigError, loadConfig } from './config.ts';
import type { ControlRequest } from './control/client.ts';
import type { ControlServer } from './control/server.ts';
import type { Database } from './db/database.ts';
import { checkDataDirFree, DataDirInUseError } from './db/lock.ts';
import { MigrationError } from './db/migrate.ts';
import { ValidationError } from './domain/errors.ts';
import type { Events } from './events.ts';
import { packageVersion } from './local-cache.ts';
import type { Logger } from './log.ts';
import type { Storage } from './storage/index.ts';

const USAGE = `usage: lectern <command>

  serve                               API, GraphiQL and docs on HOST:PORT, and a build worker (migrates first)
  worker                              a build worker only (LECTERN_BUILD_CONCURRENCY builds at once, and version syncs)
  migrate                             apply pending database migrations and exit
  user create <username> [--email E] [--admin] [--password P | --password-stdin]
                                      create a user (a site admin with --admin; with a password, they
                                      can sign in to the dashboard); prints an API token on the last line
  user set-password <username> [--password P | --password-stdin]
                                      set a user's password (read from stdin unless --password is given)
  token create <username>             print a new API token for a user
  search reindex [project]            index again what every published version (of one project) serves
  images list                         the build images on this machine (LECTERN_BUILD_IMAGES_DIR)
  images build <name>...              make build images (debian-12, debian-13) from LECTERN_BUILD_DEBIAN_MIRROR
  images update [name...]             make the images again with Debian's current packages (all installed ones by default)
  images remove <name>...             remove build images
  upload --url URL <project> <version> <dir|archive>
                                      publish built docs (a directory, .zip, .tar.gz or .tar) as a version
                                      of a project on a Lectern server; the token is read from
                                      LECTERN_TOKEN (or --token T); needs no database

  --help, -h                          this text
  --version, -V                       Lectern's version

Configuration is read from the environment (see README.md).`;

class UsageError extends Error {}

/** The options of the database commands. */
interface Options {
  email?: string;
  admin?: boolean;
  password?: string;
  'password-stdin'?: boolean;
}

/** A password piped to the command (its first line), so it appears in no command line or shell history. */
async function passwordFromStdin(): Promise<string> {
  if (process.stdin.isTTY) throw new UsageError('give the password on stdin (echo "$PASSWORD" | lectern ...), or with --password');
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  return text.split(/\r?\n/)[0] ?? '';
}

/**
 * Opens the database; `alongside` starts once the database has begun to open (PGlite's thread
 * spawned, where `thread`), to load what the command needs meanwhile.
 */
async function open(config: Config, o: { shortLived?: boolean; thread?: boolean; alongside?: () => Promise<unknown> } = {}): Promise<Database> {
  // Refused while a server holds the embedded data dir, before the database code is loaded.
  if (!config.databaseUrl) checkDataDirFree(config.dataDir);
  const { openDatabase } = await import('./db/database.ts');
  const opening = openDatabase({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    statementTimeoutMs: config.dbStatementTimeoutMs,
    shortLived: o.shortLived,
    thread: o.thread,
  });
  const loading = o.alongside?.();
  const db = await opening;
  try {
    await loading;
  } catch (e) {
    await db.close();
    throw e;
  }
  return db;
}

/** Defined by the server's bundle (src/setup/server-bundle.ts); undefined when the sources run. */
declare const LECTERN_BUNDLED: boolean | undefined;
/** What this process runs: the server's bundle or the sources (src/server-bundle.ts says when each). */
const MODULES = typeof LECTERN_BUNDLED === 'undefined' ? 'sources' : 'bundle';

async function serve(config: Config): Promise<void> {
  const started = performance.now();
  // The database opens while the API's modules load: PGlite's start waits on reading its files and
  // on WebAssembly compiled on other threads, time the loading fills (docs/design/startup.md).
  const [db, { createServer }, { createLogger }, { buildApp }, { loadSecretKey }, { firstRunSetupCode }, { docsRoot }] = await Promise.all([
    open(config),
    import('node:http'),
    import('./log.ts'),
    import('./app.ts'),
    import('./secrets.ts'),
    import('./domain/users.ts'),
    import('./urls.ts'),
  ]);
  const log = createLogger(config.logLevel);
  const secret = loadSecretKey(config.dataDir, config.secretKey);
  if (secret.generated) log.info({ dataDir: config.dataDir }, 'generated a new secret key in the data dir');
  if (secret.generated && config.databaseUrl) {
    log.warn('LECTERN_SECRET_KEY is not set: every process sharing this database must use the same key; set it');
  }
  const { handler, storage, services } = buildApp({ config, db, log, secretKey: secret.key });
  const control = await listenForCommands(config, db, log, `lectern serve (pid ${process.pid})`);
  const server: Server = await new Promise((resolve, reject) => {
    const s = createServer(handler).listen(config.port, config.host, () => resolve(s));
    s.once('error', reject);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  // Where a person goes next: the public URL (0.0.0.0 is no address to open), and where docs are.
  const docs = `${docsRoot(config, '<project>')}/`;
  log.info(
    { port, database: db.kind, modules: MODULES, startupMs: Math.round(performance.now() - started), url: `${config.publicUrl}/`, docs },
    `Lectern listening on ${config.host}:${port}: open ${config.publicUrl}/ (GraphiQL at /graphql); each project's docs at ${docs}`,
  );
  // The build worker starts once the server listens: its start and first look at the queue (0.1 s,
  // and the first queries Prisma compiles) are not what a person waits for (docs/design/startup.md).
  // The app's own events: a build queued through the API wakes this worker at once.
  const worker = config.buildConcurrency > 0 ? startWorker(config, db, log, secret.key, storage, services.events) : Promise.resolve(null);
  // From the listen on, SIGTERM shuts down cleanly, a worker still starting included; what fails
  // here because the database closed under it is the shutdown's doing, not an error.
  let stopping = false;
  const unlessStopping = (e: unknown) => {
    if (stopping) return null;
    throw e;
  };
  stopOnSignals(log, 'shutting down', async () => {
    stopping = true;
    // Running builds get a while to finish; those still running are given back to the queue.
    const closed = new Promise((resolve) => server.close(resolve));
    server.closeIdleConnections();
    const started = await worker.catch(() => null);
    await Promise.all([closed, control?.close(), started?.stop(WORKER_GRACE_MS)]);
    // The last page views and searches counted, before the database goes.
    await services.analytics?.close();
    await db.close();
  });
  await worker.catch(unlessStopping);
  // An empty installation must not be an open door, nor need the command line: its first account
  // is made with this one-time code (a secret until used, shown to whoever runs the server).
  const setupCode = await firstRunSetupCode(db.prisma).catch(unlessStopping);
  if (setupCode) {
    log.warn(
      { setupUrl: `${config.publicUrl}/setup?code=${setupCode}` },
      'no users yet: create the first account (a site admin) at setupUrl, or with the setUpFirstAdmin mutation and this code; it works once',
    );
  }
}

/**
 * SIGTERM or SIGINT runs `shutdown` once, then exits 0 (1 when it fails); a shutdown that hangs
 * is cut off after a minute.
 */
function stopOnSignals(log: Logger, message: string, shutdown: () => Promise<void>): void {
  // What one build or request left unhandled is logged; the process serves everyone else on.
  process.on('unhandledRejection', (err) => log.error({ err }, 'unhandled rejection'));
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, message);
    setTimeout(() => process.exit(1), 60_000).unref();
    shutdown().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

const WORKER_GRACE_MS = 20_000;

/** A build worker; `events` are the app's when it serves beside one (`lectern serve`), so it hears what the app queues. */
async function startWorker(config: Config, db: Database, log: Logger, secretKey: string, storage: Storage, events: Events): Promise<Worker> {
  const [{ Worker }, { Cipher }, { fileStorageDir }, { syncProjectVersions }] = await Promise.all([
    import('./builds/worker.ts'),
    import('./secrets.ts'),
    import('./storage/index.ts'),
    import('./domain/version-sync.ts'),
  ]);
  const worker = new Worker(
    {
      prisma: db.prisma,
      storage,
      cipher: new Cipher(secretKey),
      log,
      dataDir: config.dataDir,
      hidden: [fileStorageDir(config.storage)].filter((d): d is string => d !== null),
      publicUrl: config.publicUrl,
      syncVersions: (projectId, url) => syncProjectVersions({ prisma: db.prisma, config, events, storage }, projectId, url),
      limits: config.build,
      notify: config,
      previewRetentionDays: config.previewRetentionDays,
      auditRetentionDays: config.auditRetentionDays,
      events,
    },
    { concurrency: Math.max(config.buildConcurrency, 1), databaseUrl: config.databaseUrl, leaseSeconds: config.buildLeaseSeconds },
  );
  await worker.start();
  log.info({ worker: worker.id, concurrency: config.buildConcurrency, modules: MODULES }, 'build worker started (builds and version syncs)');
  return worker;
}

/** `lectern worker`: builds only, no HTTP. */
async function workerOnly(config: Config): Promise<void> {
  const [{ createLogger }, { loadSecretKey }, { openStorage }, { createEvents }] = await Promise.all([
    import('./log.ts'),
    import('./secrets.ts'),
    import('./storage/index.ts'),
    import('./events.ts'),
  ]);
  const log = createLogger(config.logLevel);
  const db = await open(config);
  const secret = loadSecretKey(config.dataDir, config.secretKey);
  const storage = openStorage(config.storage);
  // No app in this process: the worker's events are its own (builds queued elsewhere come by NOTIFY, or the poll).
  const worker = await startWorker(config, db, log, secret.key, storage, createEvents());
  const control = await listenForCommands(config, db, log, `lectern worker (pid ${process.pid})`);
  stopOnSignals(log, 'worker shutting down', async () => {
    await Promise.all([control?.close(), worker.stop(WORKER_GRACE_MS)]);
    await db.close();
  });
}

/**
 * Where this process holds the embedded database: the data dir's control socket, on which the
 * command line's database commands run here (src/control/); null on PostgreSQL, where they open
 * their own connection.
 */
async function listenForCommands(config: Config, db: Database, log: Logger, holder: string): Promise<ControlServer | null> {
  if (config.databaseUrl) return null;
  const { listenControl } = await import('./control/server.ts');
  return listenControl(config.dataDir, { db, config, log, holder });
}

/**
 * Runs `fn` on the database, opened for a command that exits after it: PGlite starts on a thread of
 * its own while this one loads Prisma and `prepare` (the command's modules), side by side
 * (docs/design/startup.md); `fn` gets what `prepare` made.
 */
async function withDatabase<T, P>(config: Config, fn: (db: Database, prepared: P) => Promise<T>, prepare: () => Promise<P>): Promise<T> {
  let prepared: P | undefined;
  const alongside = async () => {
    prepared = await prepare();
  };
  const db = await open(config, { shortLived: true, thread: true, alongside });
  try {
    return await fn(db, prepared as P);
  } finally {
    await db.close();
  }
}

/** The command line's words and options; a usage error when an option is unknown or malformed. */
function parseCommandLine(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        email: { type: 'string' },
        admin: { type: 'boolean' },
        password: { type: 'string' },
        'password-stdin': { type: 'boolean' },
        url: { type: 'string' },
        token: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'V' },
      },
    });
  } catch (e) {
    // An unknown or malformed option is a usage error, not a crash with a stack trace.
    throw new UsageError(`${(e as Error).message}\n\n${USAGE}`);
  }
}

/** `lectern upload`: talks to a server over HTTP, with no configuration or database of its own. */
async function uploadCommand(positionals: string[], values: { url?: string; token?: string }): Promise<number> {
  const [, project, version, source] = positionals;
  const token = values.token ?? process.env.LECTERN_TOKEN;
  if (!values.url || !project || !version || !source || positionals.length !== 4) {
    throw new UsageError('usage: lectern upload --url URL [--token T] <project> <version> <dir|archive>   (the token from LECTERN_TOKEN by default)');
  }
  if (!token) throw new UsageError('lectern upload: give an API token in LECTERN_TOKEN (or --token)');
  const { upload, UploadFailed } = await import('./uploads/client.ts');
  try {
    const build = await upload({ url: values.url, token, project, version, source });
    if (!build.success) {
      console.error(`lectern: build #${build.id} failed: ${build.error}`);
      return 1;
    }
    console.log(`build #${build.id}: ${build.message}`);
    return 0;
  } catch (e) {
    if (e instanceof UploadFailed) {
      console.error(`lectern: ${e.message}`);
      return 1;
    }
    throw e;
  }
}

export async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseCommandLine(argv);
  const [command, sub, name] = positionals;
  if (values.version) {
    console.log(`lectern ${packageVersion(new URL('../package.json', import.meta.url))}`);
    return 0;
  }
  if (values.help || !command) {
    console.log(USAGE);
    return command || values.help ? 0 : 2;
  }
  if (command === 'upload') return uploadCommand(positionals, values);
  // Build images live on this machine's disk: no database.
  if (command === 'images') return images(loadConfig(), sub, positionals.slice(2));
  if (command === 'serve' || command === 'worker') {
    const config = loadConfig();
    // Refused at once while another process holds the embedded data dir, before loading anything.
    if (!config.databaseUrl) checkDataDirFree(config.dataDir);
    if (command === 'serve') await serve(config);
    else await workerOnly(config);
    return -1; // keeps running
  }
  const request = await readRequest(command, sub, name, values);
  const config = loadConfig();
  // While another process holds the embedded data dir, it runs the command (src/control/), before
  // this one loads the database code; where none answers, the refusal says who holds it.
  if (!config.databaseUrl) {
    try {
      checkDataDirFree(config.dataDir);
    } catch (e) {
      if (!(e instanceof DataDirInUseError)) throw e;
      const { askControl } = await import('./control/client.ts');
      const answer = await askControl(config.dataDir, request);
      if (!answer) throw e;
      process.stdout.write(answer.stdout);
      process.stderr.write(answer.stderr);
      return answer.code;
    }
  }
  if (request.command === 'migrate') {
    // What this process applied: with several starters on one server, the others report none.
    const db = await open(config, { shortLived: true, thread: true });
    await db.close();
    console.log(db.applied.length ? `applied ${db.applied.length} migration(s): ${db.applied.join(', ')}` : 'the database is up to date');
    return 0;
  }
  const io = { out: (l: string) => console.log(l), err: (l: string) => console.error(l) };
  return withDatabase(
    config,
    (db, prepared) => runDbCommand(request, db, config, io, prepared),
    () => loadDbCommand(request),
  );
}

const IMAGES_USAGE =
  'usage: lectern images list\n       lectern images build <name>...\n       lectern images update [name...]\n       lectern images remove <name>...';

/** `lectern images ...`: the build images of this machine (docs/design/images.md). */
async function images(config: Config, sub: string | undefined, names: string[]): Promise<number> {
  const { IMAGE_NAMES, isImageName, listImages, buildImage, removeImage, ImageError } = await import('./builds/images.ts');
  const settings = config.build.images;
  const unknown = names.find((n) => !isImageName(n));
  if (unknown !== undefined) throw new UsageError(`lectern images: unknown image "${unknown}"; the images are ${IMAGE_NAMES.join(', ')}`);
  const chosen = names.filter(isImageName);
  if (sub === 'list' && !chosen.length) {
    const installed = await listImages(settings.dir);
    if (!installed.length) console.log(`no build images in ${settings.dir}; make one with: lectern images build ${IMAGE_NAMES.join(' ')}`);
    for (const i of installed) {
      const tools = Object.entries(i.tools)
        .filter(([, v]) => v)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');
      console.log(`${i.name}\tDebian ${i.suite}\tmade ${i.created}\t${tools}`);
    }
    return 0;
  }
  const usable = sub === 'update' || ((sub === 'build' || sub === 'remove') && chosen.length > 0);
  if (!usable) throw new UsageError(IMAGES_USAGE);
  if (sub === 'remove') {
    let code = 0;
    for (const name of chosen) {
      if (await removeImage(settings.dir, name)) console.log(`removed ${name}`);
      else {
        console.error(`lectern: ${name} is not installed`);
        code = 1;
      }
    }
    return code;
  }
  const targets = chosen.length ? chosen : (await listImages(settings.dir)).map((i) => i.name);
  if (!targets.length) {
    console.error(`lectern: no build images to update; make one with: lectern images build ${IMAGE_NAMES.join(' ')}`);
    return 1;
  }
  for (const name of targets) {
    console.log(`making ${name} from ${settings.mirror}`);
    try {
      const made = await buildImage(name, settings, (line) => console.log(`  ${line}`));
      console.log(`${made.name}: Python ${made.tools.python}, in ${made.rootfs}`);
    } catch (e) {
      if (!(e instanceof ImageError)) throw e;
      console.error(`lectern: ${name}: ${e.message}`);
      return 1;
    }
  }
  return 0;
}

/** The database command `argv` names, its password read from stdin where it comes from there. */
async function readRequest(command: string, sub: string | undefined, name: string | undefined, values: Options): Promise<ControlRequest> {
  switch (command) {
    case 'migrate':
      return { command: 'migrate' };
    case 'user':
      if (sub === 'create' && name) {
        const password = values['password-stdin'] ? await passwordFromStdin() : values.password;
        return { command: 'user create', username: name, email: values.email, admin: values.admin, password };
      }
      if (sub === 'set-password' && name) return { command: 'user set-password', username: name, password: values.password ?? (await passwordFromStdin()) };
      throw new UsageError(
        'usage: lectern user create <username> [--email E] [--admin] [--password P | --password-stdin]\n       lectern user set-password <username> [--password P | --password-stdin]',
      );
    case 'token':
      if (sub !== 'create' || !name) throw new UsageError('usage: lectern token create <username>');
      return { command: 'token create', username: name };
    case 'search':
      if (sub !== 'reindex') throw new UsageError('usage: lectern search reindex [project]');
      return { command: 'search reindex', project: name };
    default:
      throw new UsageError(`unknown command "${command}"\n\n${USAGE}`);
  }
}

/** An output stream's error: EPIPE (the reader has gone) is let go; any other is thrown on. */
function droppedOnClosedPipe(e: NodeJS.ErrnoException): void {
  if (e.code !== 'EPIPE') throw e;
}

export async function run(argv: string[]): Promise<void> {
  // A reader that stops early (`lectern token create alice | head -c 0`) closes the pipe: the rest
  // of the output is dropped, as other command-line tools drop it, and the command still finishes
  // its work (its database closed) and exits with its own code, instead of dying on an unhandled
  // EPIPE with a stack trace.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', droppedOnClosedPipe);
  try {
    const code = await main(argv);
    if (code >= 0) process.exit(code);
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(e.message);
      process.exit(2);
    }
    if (e instanceof ConfigError || e instanceof DataDirInUseError || e instanceof MigrationError) {
      console.error(`lectern: ${e.message}`);
      process.exit(1);
    }
    if (e instanceof ValidationError) {
      console.error(validationMessage(e));
      process.exit(1);
    }
    console.error('lectern: unexpected error:', e);
    process.exit(1);
  }
}
