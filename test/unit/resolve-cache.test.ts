// Module resolution remembered between runs (src/resolve-cache.js): in a checkout of its own (a
// temporary directory holding src/resolve-cache.js, a package in node_modules and npm's record of
// what is installed), a process that imports the package writes where it resolved; the next one
// resolves it from there; an `npm install` (npm's record rewritten) starts again from Node's own
// resolution; Lectern's own relative imports are never remembered.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE, tempCheckout } from '../helpers/checkout.ts';

const { root, write } = tempCheckout('lectern-resolve-cache-');

mkdirSync(path.join(root, 'src'), { recursive: true });
copyFileSync(path.resolve(import.meta.dirname, '../../src/resolve-cache.js'), path.join(root, 'src/resolve-cache.js'));
write('node_modules/.package-lock.json', '{"lockfileVersion": 3}');
write('node_modules/pkg/package.json', '{"name": "pkg", "main": "one.js"}');
write('node_modules/pkg/one.js', 'module.exports = "one";');
write('node_modules/pkg/two.js', 'module.exports = "two";');
write('src/own-a.js', 'export default "own a";');
write(
  'src/main.js',
  `import { installResolveCache } from './resolve-cache.js';
installResolveCache();
const { default: pkg } = await import('pkg');
const { default: own } = await import(process.env.OWN);
console.log(JSON.stringify({ pkg, own }));`,
);

const run = (own = './own-a.js') =>
  JSON.parse(execFileSync(NODE, [path.join(root, 'src/main.js')], { env: { ...process.env, OWN: own }, encoding: 'utf8' })) as { pkg: string; own: string };
const cacheFiles = () => readdirSync(path.join(root, 'node_modules/.cache/lectern')).filter((f) => f.startsWith('resolve-'));

describe('module resolution remembered', () => {
  it('is written by the first process and used by the next', () => {
    expect(run()).toEqual({ pkg: 'one', own: 'own a' });
    expect(cacheFiles()).toHaveLength(1);
    const cached = readFileSync(path.join(root, 'node_modules/.cache/lectern', cacheFiles()[0]!), 'utf8');
    expect(cached).toContain('node_modules/pkg/one.js');
    // The package now says another file: a process that resolved it again would load "two".
    write('node_modules/pkg/package.json', '{"name": "pkg", "main": "two.js"}');
    expect(run().pkg, 'resolved from the cache').toBe('one');
  });

  it('starts again after an install, which rewrites npm’s record of what is installed', () => {
    const later = new Date(Date.now() + 60_000);
    utimesSync(path.join(root, 'node_modules/.package-lock.json'), later, later);
    expect(run().pkg).toBe('two');
    expect(cacheFiles()).toHaveLength(2);
  });

  it("never remembers Lectern's own relative imports, which change as people work", () => {
    write('src/own-b.js', 'export default "own b";');
    expect(run('./own-b.js').own).toBe('own b');
    for (const f of cacheFiles()) expect(readFileSync(path.join(root, 'node_modules/.cache/lectern', f), 'utf8')).not.toContain('own-');
  });
});
