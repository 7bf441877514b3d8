// Prisma's query compiler, WebAssembly, ships as a 4.5 MB JavaScript module holding it as one
// base64 string (@prisma/client/runtime/query_compiler_fast_bg.postgresql.wasm-base64.mjs): V8
// parses all of it in every process that queries, about 0.2 s of CPU (more than the compile
// cache saves). This load hook answers that module with a small one whose `wasm` is the compiler's
// bytes, decoded once per installed version and kept in the local cache (3.4 MB): reading the
// string out of the file and decoding it took 0.03 s more of every command. Prisma's client passes
// `wasm` to `Buffer.from(wasm, 'base64')`: given an ArrayBuffer, that is a view of it (the second
// argument, a byte offset there, is not a number and counts as 0), where a Buffer would be copied
// (3.4 MB of new memory, 0.035 s). A file not shaped as expected is imported as shipped. The
// command line installs the hook (src/bin.js), for the sources; the server's bundle holds the
// small module itself (src/setup/server-bundle.ts).
// docs/design/startup.md has the figures.
import { readFileSync } from 'node:fs';
// A namespace import: Node before 22.15 has no registerHooks (the hook is then left out).
import * as nodeModule from 'node:module';
import { wholeBuffer } from './bytes.ts';
import { cachedBytes, packageVersion } from './local-cache.ts';

const COMPILER = /\/@prisma\/client\/runtime\/query_compiler_fast_bg\.[a-z]+\.wasm-base64\.mjs$/;
const AS_SHIPPED = '#as-shipped';

const HEAD = 'const wasm = "';

/** Where the base64 string lies in the shipped module's text, or null where the text is not shaped as expected. */
export function wasmSpan(text: string): [number, number] | null {
  const end = text.indexOf('"', HEAD.length);
  const shaped = text.startsWith(HEAD) && end > 0 && text.slice(end).replace(/\s+/g, ' ').trim() === '"; export { wasm }';
  return shaped ? [HEAD.length, end] : null;
}

/** Whether `url` is the query compiler's module. */
export const isCompilerModule = (url: string): boolean => COMPILER.test(url);

/**
 * The query compiler's WebAssembly held by the module at `url` (a file URL), or undefined where the
 * file is not shaped as expected. Kept in the local cache under a name carrying @prisma/client's
 * version and the compiler's name; decoded each time where the version can't be read.
 */
export function compilerWasm(url: string): ArrayBuffer | undefined {
  const bytes = compilerBytes(url);
  return bytes && wholeBuffer(bytes);
}

function compilerBytes(url: string): Buffer | undefined {
  const decode = () => {
    const text = readFileSync(new URL(url), 'latin1');
    const span = wasmSpan(text);
    return span ? Buffer.from(text.slice(...span), 'base64') : undefined;
  };
  let version: string | undefined;
  try {
    version = packageVersion(new URL('../package.json', url));
  } catch {}
  if (!version || !/^[\w.+-]+$/.test(version)) return decode();
  return cachedBytes(`prisma-${version}-${url.slice(url.lastIndexOf('/') + 1).replace('.wasm-base64.mjs', '')}.wasm`, decode, isWasm);
}

/** Whether `bytes` begin as a WebAssembly module does (`\0asm`, version 1): a kept copy cut short or overwritten is not used. */
const isWasm = (bytes: Buffer): boolean => bytes.length > 8 && bytes.readUInt32BE(0) === 0x0061736d && bytes.readUInt32LE(4) === 1;

/** The small module answering the one at `url`. */
const source = (url: string): string => `import { compilerWasm } from ${JSON.stringify(import.meta.url)};
export const wasm = compilerWasm(${JSON.stringify(url)}) ?? (await import(${JSON.stringify(url + AS_SHIPPED)})).wasm;
`;

export function installPrismaWasmHook(): void {
  nodeModule.registerHooks?.({
    load(url, context, nextLoad) {
      if (!isCompilerModule(url)) return nextLoad(url, context);
      return { format: 'module', source: source(url), shortCircuit: true };
    },
  });
}
