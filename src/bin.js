#!/usr/bin/env node
// Entry point of the `lectern` command. Node 24 runs the TypeScript sources itself (type
// stripping: tsconfig's erasableSyntaxOnly and verbatimModuleSyntax keep them strippable); an
// older Node loads them through tsx.
if (!process.features.typescript) {
  const { register } = await import('tsx/esm/api');
  register();
}
const { run } = await import('./cli.ts');
await run(process.argv.slice(2));
