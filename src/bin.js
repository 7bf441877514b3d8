#!/usr/bin/env node
// Entry point of the `lectern` command: loads the TypeScript sources through tsx (Node 20 cannot
// strip types itself) and runs the command line.
import { register } from 'tsx/esm/api';

register();
const { run } = await import('./cli.ts');
await run(process.argv.slice(2));
