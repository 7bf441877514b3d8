// Prisma's query compiler, WebAssembly, ships as a 4.5 MB JavaScript module holding it as one
// base64 string (@prisma/client/runtime/query_compiler_fast_bg.postgresql.wasm-base64.mjs): V8
// parses all of it in every process that queries, about 0.2 s of CPU (more than the compile
// cache saves). This load hook answers that module with a small one that reads the string out of
// the same file (0.06 s); a file not shaped as expected is imported as shipped. The command line
// installs it (src/bin.js), for the sources; the server's bundle holds the small module itself
// (src/setup/server-bundle.ts). docs/design/startup.md has the figures.
// A namespace import: Node before 22.15 has no registerHooks (the hook is then left out).
import * as nodeModule from 'node:module';

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

/** The small module answering the one at `url`. */
const source = (url: string): string => `import { readFileSync } from 'node:fs';
import { wasmSpan } from ${JSON.stringify(import.meta.url)};
const text = readFileSync(new URL(${JSON.stringify(url)}), 'latin1');
const span = wasmSpan(text);
export const wasm = span ? text.slice(...span) : (await import(${JSON.stringify(url + AS_SHIPPED)})).wasm;
`;

export function installPrismaWasmHook(): void {
  nodeModule.registerHooks?.({
    load(url, context, nextLoad) {
      if (!isCompilerModule(url)) return nextLoad(url, context);
      return { format: 'module', source: source(url), shortCircuit: true };
    },
  });
}
