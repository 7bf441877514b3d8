#!/usr/bin/env -S node --liftoff-only --no-opt --no-maglev --wasm-lazy-validation --max-semi-space-size=2
// Entry point of the `lectern` command. Node 24 runs the TypeScript sources itself (type
// stripping: tsconfig's erasableSyntaxOnly and verbatimModuleSyntax keep them strippable); an
// older Node hands the command to node_modules/.bin's Node 24 (below), or, where there is none,
// loads them through tsx.
// Production unless the environment says otherwise, set before anything is loaded: graphql-js and
// Pothos read it once, and drop their development checks (graphql-js's cross-realm instanceof
// check, Pothos's unused-Prisma-selection check, which Lectern's tests keep on). The API answers a
// few percent faster (test/bench/rest-vs-graphql.ts, nested project read, three interleaved runs:
// GraphQL 260 req/s against 239).
process.env.NODE_ENV ??= 'production';
// Node keeps the compiled code of every module it loads (its type-stripped TypeScript too) in a
// cache on disk (os.tmpdir()/node-compile-cache, or NODE_COMPILE_CACHE), checked against each
// file's content: the next command parses and compiles none of them again, nor loads the
// TypeScript stripper. On before anything else loads (the check for a server holding the data dir
// below loads TypeScript). It does nothing where the cache can't be written. docs/design/startup.md
// has the figures.
const { enableCompileCache } = await import('node:module');
enableCompileCache?.();
// Where each package import resolved, remembered between runs (src/resolve-cache.js).
const { installResolveCache } = await import('./resolve-cache.js');
installResolveCache();
// A command that runs once and exits runs its WebAssembly (PGlite's PostgreSQL, Prisma's query
// compiler) with V8's baseline compiler only (--liftoff-only, a V8 flag, which Node takes only on
// its command line). By default V8 also compiles them with its optimizing compiler, on the other
// core, work a process of a second never uses: `token create` took 4.7 s of CPU and 3.4-5.4 s,
// and takes 1.5 s of CPU and 1.3-2.5 s (docs/design/startup.md). Its JavaScript likewise runs
// without V8's optimizing compilers (--no-opt --no-maglev), and a WebAssembly function is checked
// when first compiled, not all 9 MB of PostgreSQL's at load (--wasm-lazy-validation). Its young
// generation stays at 2 MB a half (--max-semi-space-size=2): V8 grows it to 16 MB while modules
// load, all of which survive, and each new page costs the machine a fault (0.1 s of the command's
// CPU). Work that runs for seconds turns the optimizing compilers back on (`search reindex`,
// src/commands.ts optimizeFromHere). The shebang
// passes the flags, so `lectern token create` starts once; `node src/bin.js token create` starts
// Node again with them and waits. `serve` and `worker` keep the optimized code for the long run:
// started with the flags (`lectern serve`), they start Node again without them.
// Not for a command sent to the process holding the embedded data dir (src/control/): it runs no
// WebAssembly, and needs no second start.
// Started by an older Node (the shebang's `node` where node_modules/.bin is not on PATH, or `node
// src/bin.js`), the command starts again on the Node 24 that npm put in node_modules/.bin.
const ONE_SHOT = new Set(['migrate', 'user', 'token', 'search']);
const LONG_RUNNING = new Set(['serve', 'worker']);
const command = process.argv.slice(2).find((a) => !a.startsWith('-'));
const ONE_SHOT_FLAGS = ['--liftoff-only', '--no-opt', '--no-maglev', '--wasm-lazy-validation', '--max-semi-space-size=2'];
const oneShotFlags = ONE_SHOT_FLAGS.every((f) => process.execArgv.includes(f));
const held = ONE_SHOT.has(command) && (await sentToHolder());
const wantOneShotFlags = ONE_SHOT.has(command) ? oneShotFlags || !held : LONG_RUNNING.has(command) ? false : oneShotFlags;
const node = (await ownNode()) ?? process.execPath;
const again =
  node !== process.execPath || wantOneShotFlags !== oneShotFlags
    ? [node, [...(wantOneShotFlags ? ONE_SHOT_FLAGS : []), ...process.execArgv.filter((a) => !ONE_SHOT_FLAGS.includes(a)), ...process.argv.slice(1)]]
    : null;
if (again) {
  const { spawn } = await import('node:child_process');
  const child = spawn(again[0], again[1], { stdio: 'inherit' });
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const s of signals) process.on(s, () => child.kill(s));
  const [code, signal] = await new Promise((resolve) => child.on('exit', (c, sig) => resolve([c, sig])));
  for (const s of signals) process.removeAllListeners(s);
  if (signal) process.kill(process.pid, signal);
  process.exit(code ?? 1);
}
// A database command on the embedded database starts PGlite's thread now, before its own modules
// load, and PostgreSQL on it where the data dir exists: it starts while this thread loads the
// configuration, Prisma and the command (src/db/database.ts startEmbeddedEarly).
if (ONE_SHOT.has(command) && !held && !process.env.DATABASE_URL && process.features.typescript) {
  const [{ startEmbeddedEarly }, { DEFAULT_DATA_DIR }] = await Promise.all([import('./db/database.ts'), import('./db/lock.ts')]);
  startEmbeddedEarly(process.env.LECTERN_DATA_DIR || DEFAULT_DATA_DIR);
}
if (!process.features.typescript) {
  const { register } = await import('tsx/esm/api');
  register();
}
// `serve` and `worker` load the server's modules as one file where `npm start` bundled them from
// the sources as they are (src/server-bundle.ts); every other command, and a changed source, loads
// the sources. The bundle answers Prisma's query compiler itself; the sources, through the hook.
const bundle = LONG_RUNNING.has(command) ? (await import('./server-bundle.ts')).currentBundle() : null;
if (!bundle) {
  const { installPrismaWasmHook } = await import('./prisma-wasm-hook.ts');
  installPrismaWasmHook();
}
const { run } = await import(bundle ?? './cli.ts');
await run(process.argv.slice(2));

/** Whether the command will be sent to the process holding the embedded data dir (Node 24 only: an older Node cannot load the lock's TypeScript yet). */
async function sentToHolder() {
  if (!process.features.typescript || process.env.DATABASE_URL) return false;
  const { dataDirHolder, DEFAULT_DATA_DIR } = await import('./db/lock.ts');
  return dataDirHolder(process.env.LECTERN_DATA_DIR || DEFAULT_DATA_DIR) !== null;
}

/** node_modules/.bin's Node, where this Node cannot run Lectern's TypeScript and that one exists. */
async function ownNode() {
  if (process.features.typescript) return null;
  const [{ existsSync }, { fileURLToPath }] = await Promise.all([import('node:fs'), import('node:url')]);
  const node = fileURLToPath(new URL('../node_modules/.bin/node', import.meta.url));
  return existsSync(node) ? node : null;
}
