// A REST resource as a table: each JSON field names the GraphQL fields it needs and how to write
// its value from them. From a request's fields/omit/expand the same table yields both the
// GraphQL selection set and the JSON object, so the two can never disagree.
import { expands, type FlexParams, includes, nested } from './flex.ts';

export interface RestEnv {
  /** Absolute base of the API, e.g. `https://docs.example.com/api/v3`. */
  api: string;
  publicUrl: string;
}

// GraphQL results are plain JSON objects.
// biome-ignore lint/suspicious/noExplicitAny: GraphQL results are read by path, their shape is the operation's
export type Node = Record<string, any>;

/** A JSON Schema (OpenAPI 3.1) of a field's value, for the OpenAPI document (openapi.ts). */
export type JsonSchema = Record<string, unknown>;

export interface Field {
  /** GraphQL selection this field needs (may overlap other fields'; duplicates merge). */
  select: string;
  value: (node: Node, env: RestEnv) => unknown;
  /** The GraphQL field whose type the value's schema is derived from (its scalar, enum and nullability). */
  graphql?: string;
  /** The value's schema where it is not the GraphQL field's own; merged over the derived one when both are given. */
  schema?: JsonSchema;
}

export interface Expandable {
  /** Selection for the expanded field, given the parameters one level down. */
  select: (flex: FlexParams) => string;
  value: (node: Node, env: RestEnv, flex: FlexParams) => unknown;
  /** The expanded value's schema (a `$ref` to another resource, usually). */
  schema?: JsonSchema;
}

export interface Resource {
  name: string;
  /** The GraphQL object type its fields are read from, whose field types give the schemas. */
  graphqlType: string;
  fields: Record<string, Field>;
  expandable?: Record<string, Expandable>;
}

export const field = (select: string, value: Field['value'], schema?: JsonSchema): Field => ({ select, value, schema });
/** A field that is one GraphQL field of the same value: its schema is that field's type. */
export const plain = (graphqlName: string): Field => ({ select: graphqlName, value: (n) => n[graphqlName] ?? null, graphql: graphqlName });
/** A field made from one GraphQL field: its nullability is that field's, `schema` says the rest. */
export const derived = (graphqlName: string, value: Field['value'], schema: JsonSchema): Field => ({
  select: graphqlName,
  value,
  graphql: graphqlName,
  schema,
});

export function selection(resource: Resource, flex: FlexParams, permitted?: ReadonlySet<string>): string {
  const parts = new Set<string>(['__typename']);
  for (const [name, f] of Object.entries(resource.fields)) if (includes(flex, name)) parts.add(f.select);
  for (const [name, e] of Object.entries(resource.expandable ?? {})) {
    if (expands(flex, name, permitted)) parts.add(e.select(nested(flex, name)));
  }
  return [...parts].join(' ');
}

export function serialize(resource: Resource, node: Node, env: RestEnv, flex: FlexParams, permitted?: ReadonlySet<string>): Node {
  const out: Node = {};
  for (const [name, f] of Object.entries(resource.fields)) if (includes(flex, name)) out[name] = f.value(node, env);
  for (const [name, e] of Object.entries(resource.expandable ?? {})) {
    if (expands(flex, name, permitted)) out[name] = e.value(node, env, nested(flex, name));
  }
  return out;
}

/** A nested resource expanded inside another: its own parameters one level down. */
export function expandInto(resource: Resource, graphqlField: string, many: boolean): Expandable {
  const ref = { $ref: `#/components/schemas/${resource.name}` };
  return {
    schema: many ? { type: 'array', items: ref } : { oneOf: [ref, { type: 'null' }] },
    select: (flex) => `${graphqlField} { ${selection(resource, flex)} }`,
    value: (node, env, flex) => {
      const v = node[graphqlField];
      if (v === null || v === undefined) return null;
      return many ? (v as Node[]).map((x) => serialize(resource, x, env, flex)) : serialize(resource, v, env, flex);
    },
  };
}
