// Prisma's query compiler as the command line and the server's bundle load it (src/prisma-wasm-hook.ts):
// the bytes kept in the local cache are the WebAssembly the shipped module holds (made again where
// the kept copy was damaged), and a module not shaped as expected gives none (it is then imported
// as shipped).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { LOCAL_CACHE_DIR } from '../../src/local-cache.ts';
import { compilerWasm, isCompilerModule } from '../../src/prisma-wasm-hook.ts';

const shipped = createRequire(import.meta.url).resolve('@prisma/client/runtime/query_compiler_fast_bg.postgresql.wasm-base64.mjs');
const temp = mkdtempSync(path.join(os.tmpdir(), 'lectern-wasm-hook-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

describe("Prisma's query compiler", () => {
  it('is the WebAssembly the shipped module holds, kept in the local cache under its version', async () => {
    const url = pathToFileURL(shipped).href;
    expect(isCompilerModule(url)).toBe(true);
    const { wasm } = (await import(url)) as { wasm: string };
    const expected = Buffer.from(wasm, 'base64');
    const first = compilerWasm(url);
    expect(first).toBeInstanceOf(ArrayBuffer);
    expect(Buffer.from(first!).equals(expected)).toBe(true);
    expect(WebAssembly.validate(new Uint8Array(first!))).toBe(true);
    const { version } = JSON.parse(readFileSync(path.join(path.dirname(shipped), '../package.json'), 'utf8')) as { version: string };
    const kept = readFileSync(path.join(LOCAL_CACHE_DIR, `prisma-${version}-query_compiler_fast_bg.postgresql.wasm`));
    expect(kept.equals(expected)).toBe(true);
    // What Prisma's generated client does with it: Buffer.from(wasm, 'base64') is a view of the
    // same bytes, not a copy.
    const wasm2 = compilerWasm(url)!;
    const seen = Buffer.from(wasm2 as unknown as string, 'base64');
    expect(seen.equals(expected)).toBe(true);
    expect(seen.buffer).toBe(wasm2);
  });

  it('is made again where the kept copy was damaged (cut short, emptied)', () => {
    const url = pathToFileURL(shipped).href;
    const expected = Buffer.from(compilerWasm(url)!);
    const { version } = JSON.parse(readFileSync(path.join(path.dirname(shipped), '../package.json'), 'utf8')) as { version: string };
    const kept = path.join(LOCAL_CACHE_DIR, `prisma-${version}-query_compiler_fast_bg.postgresql.wasm`);
    for (const damaged of [Buffer.alloc(0), Buffer.from('not webassembly at all'), expected.subarray(0, 4)]) {
      writeFileSync(kept, damaged);
      expect(Buffer.from(compilerWasm(url)!).equals(expected)).toBe(true);
      expect(readFileSync(kept).equals(expected)).toBe(true);
    }
  });

  it('is none where the module is not shaped as expected, and nothing is kept for it', () => {
    const file = path.join(temp, 'runtime', 'query_compiler_fast_bg.postgresql.wasm-base64.mjs');
    for (const text of ['export const wasm = "AGFzbQ"; export const other = 1;', 'const wasm = "AGFzbQ" + more; export { wasm }', '']) {
      rmSync(path.dirname(file), { recursive: true, force: true });
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, text);
      writeFileSync(path.join(temp, 'package.json'), JSON.stringify({ version: `0.0.0-test-${process.pid}` }));
      expect(compilerWasm(pathToFileURL(file).href), text).toBeUndefined();
    }
    expect(() => readFileSync(path.join(LOCAL_CACHE_DIR, `prisma-0.0.0-test-${process.pid}-query_compiler_fast_bg.postgresql.wasm`))).toThrow();
  });
});
