// Bundles the server's modules into one file for `lectern serve` and `lectern worker`
// (src/server-bundle.ts says when it is used; docs/design/startup.md, "The server bundled", why and
// what it saves). `npm start` and `npm test` run it first (`npm run server:bundle`); it takes about
// two seconds, and does nothing when the bundle is current.
//
// esbuild, because it is the bundler the field uses for Node servers, fast enough to run before
// every start, and already installed (tsx and vite run on it). What stays out of the bundle, and why:
// - PGlite: it finds its WebAssembly and data files beside its own modules (import.meta.url);
// - the packages src/lazy-module.ts loads when first used (cheerio, archiver, pg, …): they load
//   from node_modules then, so the bundle must not hold a second copy of one (pg's type parsers are
//   its module's state);
// Code that finds files beside itself keeps finding them beside its source file: each module's
// import.meta.url, import.meta.dirname and import.meta.filename (and a CommonJS module's __dirname and
// __filename) are written into it as the source file's.
//
//   node src/setup/server-bundle.ts [--force]
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as Esbuild from 'esbuild';
import { isCompilerModule, wasmSpan } from '../prisma-wasm-hook.ts';
import { BUNDLE_DIR, currentBundle, fileState, MANIFEST, ROOT } from '../server-bundle.ts';

const ENTRY = 'src/cli.ts';
const BUILDER = 'src/setup/server-bundle.ts';
const LOCK = 'node_modules/.package-lock.json';
/** How long a replaced bundle (or a build's leftover) is kept. */
const KEEP_OLD_MS = 10 * 60_000;
/** Loaded from node_modules at run time: see above. */
const EXTERNAL = [
  '@electric-sql/pglite',
  '@electric-sql/pglite/*',
  'cheerio',
  'tar-stream',
  'yauzl',
  'archiver',
  'pg',
  're2js',
  'openid-client',
  'graphql-jit',
];

/** Every file under `dir` (relative to `root`), with its size and modification time, read before the build reads them. */
function statesUnder(root: string, dir: string): Map<string, [number, number]> {
  const states = new Map<string, [number, number]>();
  for (const entry of readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.relative(root, path.join(entry.parentPath, entry.name));
    const state = fileState(file, root);
    if (state) states.set(file, state);
  }
  return states;
}

/** Writes each module's own location into it (see above). */
const originPaths: Esbuild.Plugin = {
  name: 'origin-paths',
  setup(build) {
    // Prisma's query compiler: the small module src/prisma-wasm-hook.ts answers for it, here in the
    // bundle, so that a process running the bundle needs no load hook (with one, Node decodes every
    // module's text itself: 0.08 s for the bundle). A file not shaped as expected stays outside,
    // named by its URL, and loads as shipped.
    build.onResolve({ filter: /\.wasm-base64\.mjs$/ }, async (args) => {
      if (args.pluginData?.inner) return undefined;
      const found = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: { inner: true } });
      if (found.errors.length) return { errors: found.errors };
      const url = pathToFileURL(found.path).href;
      const span = isCompilerModule(url) ? wasmSpan(readFileSync(found.path, 'latin1')) : null;
      return span ? { path: found.path, namespace: 'query-compiler', pluginData: { url } } : { path: url, external: true };
    });
    build.onLoad({ filter: /./, namespace: 'query-compiler' }, (args) => {
      const { url } = args.pluginData as { url: string };
      const hook = path.resolve(import.meta.dirname, '../prisma-wasm-hook.ts');
      const contents = `import { compilerWasm } from ${JSON.stringify(hook)};\nexport const wasm = compilerWasm(${JSON.stringify(url)});\n`;
      return { contents, loader: 'js', resolveDir: path.dirname(hook) };
    });
    build.onLoad({ filter: /\.(ts|js|mjs|cjs)$/ }, (args) => {
      let text = readFileSync(args.path, 'utf8');
      const dir = path.dirname(args.path);
      if (text.includes('import.meta.')) {
        text = text
          .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href))
          .replaceAll('import.meta.dirname', JSON.stringify(dir))
          .replaceAll('import.meta.filename', JSON.stringify(args.path));
      }
      if (/\b__(dirname|filename)\b/.test(text) && !/\b(var|let|const)\s+__(dirname|filename)\b/.test(text)) {
        text = `var __dirname = ${JSON.stringify(dir)}, __filename = ${JSON.stringify(args.path)};\n${text}`;
      }
      return { contents: text, loader: args.path.endsWith('.ts') ? 'ts' : 'js' };
    });
  },
};

/**
 * Bundles src/cli.ts into `root`'s node_modules/.cache/lectern/server unless the bundle there is
 * current (or `force`); returns the bundle's file. The bundle is written under a name of its own
 * content before the manifest naming it is renamed into place, so a process starting meanwhile
 * loads the old bundle or the new one, whole; older bundles are removed.
 */
export async function bundleServer(root = ROOT, { force = false } = {}): Promise<string> {
  const current = force ? null : currentBundle(root);
  if (current) return current;
  const esbuild = await import('esbuild');
  const before = statesUnder(root, 'src');
  const lock = fileState(LOCK, root);
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [ENTRY],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    write: false,
    outfile: path.join(BUNDLE_DIR, 'cli.mjs'),
    external: EXTERNAL,
    plugins: [originPaths],
    metafile: true,
    logLevel: 'warning',
    // How the server tells that it runs the bundle (its listen log says which: src/cli.ts).
    define: { LECTERN_BUNDLED: 'true' },
    // Bundled CommonJS modules call require() for Node's own modules.
    banner: { js: "import { createRequire as lecternCreateRequire } from 'node:module';\nconst require = lecternCreateRequire(import.meta.url);" },
  });
  const code = result.outputFiles.find((f) => f.path.endsWith('.mjs'));
  if (!code) throw new Error('esbuild wrote no bundle');
  const inputs: Record<string, [number, number]> = {};
  for (const input of Object.keys(result.metafile.inputs)) {
    // npm's record stands for node_modules' files, and for the query compiler's module made from one.
    if (input.startsWith('node_modules/') || input.startsWith('query-compiler:')) continue;
    const state = before.get(input);
    if (!state) throw new Error(`${input} was bundled but is not a file under src/`);
    inputs[input] = state;
  }
  const builder = before.get(BUILDER);
  if (builder) inputs[BUILDER] = builder;
  if (lock) inputs[LOCK] = lock;
  const dir = path.join(root, BUNDLE_DIR);
  mkdirSync(dir, { recursive: true });
  const file = `cli-${createHash('sha256').update(code.contents).digest('hex').slice(0, 16)}.mjs`;
  const tmp = `.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  writeFileSync(path.join(dir, tmp), code.contents);
  renameSync(path.join(dir, tmp), path.join(dir, file));
  writeFileSync(path.join(dir, tmp), JSON.stringify({ version: 1, file, inputs }));
  renameSync(path.join(dir, tmp), path.join(root, MANIFEST));
  // Older bundles go once no process can still be about to load one: a running process has read
  // all of its bundle, and one starting now read the manifest a moment ago at most.
  for (const other of readdirSync(dir)) {
    const stale = other !== file && other !== 'manifest.json' && Date.now() - (fileState(path.join(BUNDLE_DIR, other), root)?.[1] ?? 0) > KEEP_OLD_MS;
    if (stale) rmSync(path.join(dir, other), { force: true });
  }
  return pathToFileURL(path.join(dir, file)).href;
}

if (import.meta.main) {
  // A bundle that cannot be made (a read-only node_modules, a full disk, no esbuild binary for this
  // platform) costs only speed: `npm start` goes on, and serve loads the sources.
  try {
    await bundleServer(ROOT, { force: process.argv.includes('--force') });
  } catch (e) {
    console.warn(
      `lectern: the server's modules were not bundled (${(e as Error).message.split('\n')[0]}); lectern serve will load the sources, which starts more slowly`,
    );
  }
}
