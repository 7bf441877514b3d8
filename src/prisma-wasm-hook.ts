// Prisma's query compiler, WebAssembly, ships as a 4.5 MB JavaScript module holding it as one
// base64 string (@prisma/client/runtime/query_compiler_fast_bg.postgresql.wasm-base64.mjs): V8
// parses all of it in every process that queries, about 0.2 s of CPU (more than the compile
// cache saves). This load hook answers that module with a small one that reads the string out of
// the same file (0.06 s); a file not shaped as expected is imported as shipped. The command line
// installs it (src/bin.js); docs/design/startup.md has the figures.
// A namespace import: Node before 22.15 has no registerHooks (the hook is then left out).
import * as nodeModule from 'node:module';

const COMPILER = /\/@prisma\/client\/runtime\/query_compiler_fast_bg\.[a-z]+\.wasm-base64\.mjs$/;
const AS_SHIPPED = '#as-shipped';

const source = (url) => `import { readFileSync } from 'node:fs';
const text = readFileSync(new URL(${JSON.stringify(url)}), 'latin1');
const head = 'const wasm = "';
const end = text.indexOf('"', head.length);
const shaped = text.startsWith(head) && text.slice(end).replace(/\\s+/g, ' ').trim() === '"; export { wasm }';
export const wasm = shaped ? text.slice(head.length, end) : (await import(${JSON.stringify(url + AS_SHIPPED)})).wasm;
`;

export function installPrismaWasmHook() {
  nodeModule.registerHooks?.({
    load(url, context, nextLoad) {
      if (!COMPILER.test(url)) return nextLoad(url, context);
      return { format: 'module', source: source(url), shortCircuit: true };
    },
  });
}
