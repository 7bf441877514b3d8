// `npm run schema:print`: writes schema.graphql from the code, so the committed file is never
// edited by hand. test/graphql/schema.test.ts fails when it is stale.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { printedSchema } from './schema.ts';

const file = path.resolve(import.meta.dirname, '../../schema.graphql');
writeFileSync(file, printedSchema());
console.log(`wrote ${file}`);
