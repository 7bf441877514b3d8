#!/usr/bin/env node
// Entry point of the `lectern` command. Node 24 runs the TypeScript sources itself (type
// stripping: tsconfig's erasableSyntaxOnly and verbatimModuleSyntax keep them strippable); an
// older Node loads them through tsx.
// Production unless the environment says otherwise, set before anything is loaded: graphql-js and
// Pothos read it once, and drop their development checks (graphql-js's cross-realm instanceof
// check, Pothos's unused-Prisma-selection check, which Lectern's tests keep on). The API answers a
// few percent faster (test/bench/rest-vs-graphql.ts, nested project read, three interleaved runs:
// GraphQL 260 req/s against 239).
process.env.NODE_ENV ??= 'production';
// Node keeps the compiled code of every module it loads (its type-stripped TypeScript too) in a
// cache on disk (os.tmpdir()/node-compile-cache, or NODE_COMPILE_CACHE), checked against each
// file's content: the next command parses and compiles none of them again. It does nothing where
// the cache can't be written. docs/design/startup.md has the figures.
const { enableCompileCache } = await import('node:module');
enableCompileCache?.();
const { installPrismaWasmHook } = await import('./prisma-wasm-hook.js');
installPrismaWasmHook();
if (!process.features.typescript) {
  const { register } = await import('tsx/esm/api');
  register();
}
const { run } = await import('./cli.ts');
await run(process.argv.slice(2));
