// schema.graphql is the contract frontends and the REST adapter are written against; it is
// generated from the code and committed, and this test fails when the two drift apart.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { printedSchema } from '../../src/graphql/schema.ts';

const committedFile = path.resolve(import.meta.dirname, '../../schema.graphql');

describe('schema.graphql', () => {
  it('is the schema the code builds', () => {
    const committed = readFileSync(committedFile, 'utf8');
    expect(printedSchema(), 'schema.graphql is stale: run `npm run schema:print` and commit the result').toBe(committed);
  });
});
