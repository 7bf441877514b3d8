// The server's bundle (src/setup/server-bundle.ts makes it, src/server-bundle.ts says whether it is
// current): in a checkout of its own (a temporary directory with src/cli.ts, modules it imports, a
// package in node_modules and npm's record of what is installed), the bundle runs what the sources
// run, each module still finding the files beside its source; it is current until a file it was
// made from changes, npm installs, or the manifest is not one the builder wrote.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { currentBundle, MANIFEST } from '../../src/server-bundle.ts';
import { bundleServer } from '../../src/setup/server-bundle.ts';
import { NODE, tempCheckout } from '../helpers/checkout.ts';

const { root, write } = tempCheckout('lectern-server-bundle-');

write('node_modules/.package-lock.json', '{"lockfileVersion": 3}');
write('node_modules/pkg/package.json', '{"name": "pkg", "main": "index.js"}');
// A CommonJS package reading a file beside itself, as pino and thread-stream find their workers.
write('node_modules/pkg/index.js', `module.exports = () => require('node:fs').readFileSync(require('node:path').join(__dirname, 'data.txt'), 'utf8');`);
write('node_modules/pkg/data.txt', 'from the package');
write('src/beside.txt', 'from beside the source');
write(
  'src/where.ts',
  `import { readFileSync } from 'node:fs';
import path from 'node:path';
export const beside = (): string => readFileSync(new URL('./beside.txt', import.meta.url), 'utf8');
export const dir = (): string => path.basename(import.meta.dirname) + '/' + path.basename(import.meta.filename);
export const version = 1;`,
);
write('src/later.ts', `export const later = 'loaded when asked';`);
write(
  'src/cli.ts',
  `import pkg from 'pkg';
import { beside, dir, version } from './where.ts';
declare const LECTERN_BUNDLED: boolean | undefined;
export async function run(): Promise<void> {
  const { later } = await import('./later.ts');
  console.log(JSON.stringify({ pkg: pkg(), beside: beside(), dir: dir(), version, later, bundled: typeof LECTERN_BUNDLED !== 'undefined' }));
}`,
);

/** What the module at `url` (the bundle, or the sources) prints when run. */
const run = (url: string) =>
  JSON.parse(execFileSync(NODE, ['--input-type=module', '-e', `const { run } = await import(${JSON.stringify(url)}); await run();`], { encoding: 'utf8' }));
const sources = `file://${path.join(root, 'src/cli.ts')}`;
const bundles = () => readdirSync(path.join(root, 'node_modules/.cache/lectern/server')).filter((f) => f.endsWith('.mjs'));

describe("the server's bundle", () => {
  let first: string;

  it('runs what the sources run, each module finding the files beside its own source', async () => {
    expect(currentBundle(root), 'none made yet').toBeNull();
    first = await bundleServer(root);
    expect(first).toMatch(/\/node_modules\/\.cache\/lectern\/server\/cli-[0-9a-f]{16}\.mjs$/);
    expect(currentBundle(root)).toBe(first);
    const expected = { pkg: 'from the package', beside: 'from beside the source', dir: 'src/where.ts', version: 1, later: 'loaded when asked' };
    expect(run(first)).toEqual({ ...expected, bundled: true });
    expect(run(sources)).toEqual({ ...expected, bundled: false });
    // One file: the module imported when asked is in it, and the bundle names no file of src/ to load.
    expect(bundles()).toEqual([path.basename(fileURLToPath(first))]);
    expect(readFileSync(fileURLToPath(first), 'utf8')).not.toMatch(/import\(["'][^"']*later/);
  });

  it('is not made again while current; a file added that nothing imports leaves it current', async () => {
    write('src/unrelated.ts', 'export const x = 1;');
    expect(currentBundle(root)).toBe(first);
    expect(await bundleServer(root)).toBe(first);
  });

  it('is no longer current once a source it holds changes; made again, it runs the change', async () => {
    write('src/where.ts', readFileSync(path.join(root, 'src/where.ts'), 'utf8').replace('version = 1', 'version = 2'));
    expect(currentBundle(root)).toBeNull();
    const second = await bundleServer(root);
    expect(second).not.toBe(first);
    expect(run(second).version).toBe(2);
    // The replaced bundle stays a while, for a process that read the manifest just before.
    expect(bundles().sort()).toEqual([path.basename(fileURLToPath(first)), path.basename(fileURLToPath(second))].sort());
  });

  it('is no longer current after an npm install (npm rewrote its record), or when a source it holds is gone', async () => {
    await bundleServer(root);
    const lock = path.join(root, 'node_modules/.package-lock.json');
    utimesSync(lock, new Date(), new Date(Date.now() + 5_000));
    expect(currentBundle(root)).toBeNull();
    await bundleServer(root);
    expect(currentBundle(root)).not.toBeNull();
    rmSync(path.join(root, 'src/later.ts'));
    expect(currentBundle(root)).toBeNull();
    write('src/later.ts', `export const later = 'loaded when asked';`);
  });

  it('is not loaded from a manifest the builder did not write: unreadable, another version, or a file outside its directory', async () => {
    await bundleServer(root);
    const manifestFile = path.join(root, MANIFEST);
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
    expect(currentBundle(root)).not.toBeNull();
    for (const bad of [
      'not json',
      JSON.stringify({ ...manifest, version: 2 }),
      JSON.stringify({ ...manifest, file: '../../../../src/cli.ts' }),
      JSON.stringify({ ...manifest, file: 'cli-0000000000000000.mjs' }),
    ]) {
      writeFileSync(manifestFile, bad);
      expect(currentBundle(root), bad.slice(0, 60)).toBeNull();
    }
    writeFileSync(manifestFile, JSON.stringify(manifest));
    expect(currentBundle(root)).not.toBeNull();
  });
});
