// The dashboard's typed documents (gql.tada) read the schema from src/web/graphql-env.ts, made here
// from schema.graphql (itself printed from the code): a field a page asks for that the schema no
// longer has fails `tsc -p src/web`. The same introspection tells the normalized cache which
// types have no id (keyless.ts). Run by `npm run web:build`; the file is not committed.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { outputIntrospectionFile } from '@gql.tada/internal';
import { buildSchema, GraphQLInterfaceType, GraphQLObjectType, GraphQLUnionType, introspectionFromSchema } from 'graphql';

const root = path.resolve(import.meta.dirname, '../..');
const schema = buildSchema(readFileSync(path.join(root, 'schema.graphql'), 'utf8'));
const out = path.join(import.meta.dirname, 'graphql-env.ts');
writeFileSync(out, outputIntrospectionFile(introspectionFromSchema(schema, { descriptions: false }), { fileType: '.ts' }));
// Object types without an id are kept inside their parent's entry by the cache (graphcache keys).
const keyless = Object.values(schema.getTypeMap())
  .filter((t): t is GraphQLObjectType => t instanceof GraphQLObjectType && !t.name.startsWith('__') && !('id' in t.getFields()))
  .filter((t) => ![schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].includes(t))
  .map((t) => t.name)
  .sort();
// The members of each interface and union: without them the cache matches `... on Error { message }`
// only by guessing from fields it already holds, and a mutation's error came back without its message.
const possibleTypes = Object.fromEntries(
  Object.values(schema.getTypeMap())
    .filter(
      (t): t is GraphQLInterfaceType | GraphQLUnionType => (t instanceof GraphQLInterfaceType || t instanceof GraphQLUnionType) && !t.name.startsWith('__'),
    )
    .map((t) => [
      t.name,
      schema
        .getPossibleTypes(t)
        .map((m) => m.name)
        .sort(),
    ])
    .sort(([a], [b]) => String(a).localeCompare(String(b))),
);
writeFileSync(
  path.join(import.meta.dirname, 'keyless.ts'),
  `// Made by generate-types.ts from schema.graphql.\nexport const KEYLESS = ${JSON.stringify(keyless)};\nexport const POSSIBLE_TYPES: Record<string, string[]> = ${JSON.stringify(possibleTypes)};\n`,
);
console.log(`wrote ${path.relative(root, out)} and src/web/keyless.ts`);
