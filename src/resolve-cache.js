// Where each `import` and `require` of a package resolved, kept between runs (docs/design/startup.md,
// "Module resolution remembered"). `lectern serve` loads about 1,400 modules, and Node resolves each
// one again in every process: it reads package.json files up the tree (`exports`, `type`), stats
// each candidate file and the symlinks on its path, 0.3-0.4 s of a start in a profile. This
// resolve hook answers what was resolved before from a file in node_modules/.cache/lectern, and
// asks Node for the rest.
//
// What it remembers cannot go stale unnoticed: only resolutions that depend on node_modules alone
// (a package named from anywhere, or any specifier from a module inside node_modules; never a
// relative import between Lectern's own files, which change as people work), in a file whose name
// is a hash of Node's version, this checkout's path and npm's record of what is installed
// (node_modules/.package-lock.json: its size and modification time change with every `npm
// install`, so another install starts another file). Where the cache cannot be read or written,
// modules resolve as Node resolves them.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { fileURLToPath } from 'node:url';

const ROOT = new URL('../', import.meta.url);
const NODE_MODULES = new URL('node_modules/', ROOT).href;

/** The cache file for this Node, checkout and installed packages; null where npm's record is missing. */
function cacheFile() {
  try {
    const lock = statSync(fileURLToPath(new URL('node_modules/.package-lock.json', ROOT)));
    const key = createHash('sha256')
      .update(JSON.stringify([process.version, ROOT.href, lock.size, lock.mtimeMs]))
      .digest('hex')
      .slice(0, 16);
    return fileURLToPath(new URL(`node_modules/.cache/lectern/resolve-${key}.json`, ROOT));
  } catch {
    return null;
  }
}

/** Whether resolving `specifier` from `parentURL` depends only on what is installed. */
function cacheable(specifier, parentURL) {
  if (specifier.startsWith('node:')) return false; // built in: nothing to look up
  if (parentURL?.startsWith(NODE_MODULES)) return true;
  return !specifier.startsWith('.') && !specifier.startsWith('/') && !specifier.startsWith('file:') && !specifier.startsWith('#');
}

/** Installs the hook (Node 22.15 and later: module.registerHooks; else nothing). */
export function installResolveCache() {
  if (!nodeModule.registerHooks) return;
  const file = cacheFile();
  if (!file) return;
  /** @type {Record<string, { url: string, format?: string }>} */
  let known = {};
  try {
    known = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    // none yet, or unreadable: made again
  }
  let added = 0;
  nodeModule.registerHooks({
    resolve(specifier, context, nextResolve) {
      if (!cacheable(specifier, context.parentURL)) return nextResolve(specifier, context);
      const key = `${context.parentURL}\0${specifier}\0${context.conditions?.join(',') ?? ''}\0${context.importAttributes?.type ?? ''}`;
      const hit = known[key];
      if (hit) return hit.format ? { url: hit.url, format: hit.format, shortCircuit: true } : { url: hit.url, shortCircuit: true };
      const resolved = nextResolve(specifier, context);
      if (resolved.url.startsWith('file:')) {
        known[key] = resolved.format ? { url: resolved.url, format: resolved.format } : { url: resolved.url };
        added++;
      }
      return resolved;
    },
  });
  // Written once the process ends (a command's exit, a server's shutdown), when it learned something.
  process.once('exit', () => {
    if (!added) return;
    try {
      mkdirSync(new URL('.', `file://${file}`), { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(known));
      renameSync(tmp, file);
    } catch {
      // a read-only node_modules: resolved by Node next time too
    }
  });
}
