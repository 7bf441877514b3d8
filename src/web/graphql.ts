// Typed documents: gql.tada reads the schema's introspection (graphql-env.ts, made from
// schema.graphql by generate-types.ts), so each query's result and variables are typed, and a
// page asking for a field the schema lacks fails the type check (`tsc -p src/web`, run by npm test).
import { initGraphQLTada } from 'gql.tada';
import type { introspection } from './graphql-env.ts';

export const graphql = initGraphQLTada<{
  introspection: typeof introspection;
  scalars: { DateTime: string; JSON: unknown };
}>();

export type { FragmentOf, ResultOf, VariablesOf } from 'gql.tada';
export { readFragment } from 'gql.tada';
