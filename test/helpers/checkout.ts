// A checkout of its own, for the tests of how Lectern loads its modules (the resolve cache, the
// server's bundle): a temporary directory standing for the repository's root, removed after the
// test file, into which a test writes the sources, packages and records it needs.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

/** The Node 24 that npm put in node_modules/.bin, which runs Lectern. */
export const NODE = path.resolve(import.meta.dirname, '../../node_modules/.bin/node');

/** A new temporary checkout, removed after the file's tests, and `write(file, text)` into it (its folders made). */
export function tempCheckout(prefix: string): { root: string; write: (file: string, text: string) => void } {
  const root = mkdtempSync(path.join(os.tmpdir(), prefix));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (file: string, text: string) => {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  };
  return { root, write };
}
