// The server's modules as one file (docs/design/startup.md, "The server bundled"): `lectern serve`
// loads about 1,350 modules, and each costs Node a file read, a compile-cache lookup, a module
// record and its links, however small it is. `npm start` and `npm test` bundle them first
// (src/setup/server-bundle.ts, esbuild) into node_modules/.cache/lectern; `serve` and `worker` load
// that one file when it is current, and the sources when it is not.
//
// Current means made from the files as they are now: the bundle's manifest holds the size and
// modification time of every Lectern source file it was made from, of the builder, and of npm's
// record of what is installed (node_modules/.package-lock.json), and each is checked (a stat each,
// about 170: a millisecond or two). Someone who changes a file and runs `lectern serve` runs their
// change, from the sources, until the next `npm start` bundles again.
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** Where bundles are kept, relative to the checkout. */
export const BUNDLE_DIR = 'node_modules/.cache/lectern/server';
export const MANIFEST = `${BUNDLE_DIR}/manifest.json`;

/** A file's size and modification time, as the manifest keeps them; null where it is missing. */
export function fileState(file: string, root = ROOT): [number, number] | null {
  try {
    const s = statSync(path.join(root, file));
    return [s.size, s.mtimeMs];
  } catch {
    return null;
  }
}

/**
 * The URL of the bundle of src/cli.ts made from the files as they are now, or null: none was made,
 * or a file it was made from has changed since (or is gone), or the manifest cannot be read.
 */
export function currentBundle(root = ROOT): string | null {
  let manifest: { version?: unknown; file?: unknown; inputs?: Record<string, [number, number]> };
  try {
    manifest = JSON.parse(readFileSync(path.join(root, MANIFEST), 'utf8'));
  } catch {
    return null;
  }
  if (manifest?.version !== 1 || typeof manifest.file !== 'string' || !/^cli-[0-9a-f]+\.mjs$/.test(manifest.file)) return null;
  for (const [file, state] of Object.entries(manifest.inputs ?? {})) {
    const now = fileState(file, root);
    if (!now || now[0] !== state[0] || now[1] !== state[1]) return null;
  }
  const bundle = path.join(root, BUNDLE_DIR, manifest.file);
  return fileState(path.join(BUNDLE_DIR, manifest.file), root) ? pathToFileURL(bundle).href : null;
}
