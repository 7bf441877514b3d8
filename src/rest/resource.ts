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

export interface Field {
  /** GraphQL selection this field needs (may overlap other fields'; duplicates merge). */
  select: string;
  value: (node: Node, env: RestEnv) => unknown;
}

export interface Expandable {
  /** Selection for the expanded field, given the parameters one level down. */
  select: (flex: FlexParams) => string;
  value: (node: Node, env: RestEnv, flex: FlexParams) => unknown;
}

export interface Resource {
  name: string;
  fields: Record<string, Field>;
  expandable?: Record<string, Expandable>;
}

export const field = (select: string, value: Field['value']): Field => ({ select, value });
/** A field that is one GraphQL field of the same value. */
export const plain = (graphqlName: string): Field => field(graphqlName, (n) => n[graphqlName] ?? null);

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
  return {
    select: (flex) => `${graphqlField} { ${selection(resource, flex)} }`,
    value: (node, env, flex) => {
      const v = node[graphqlField];
      if (v === null || v === undefined) return null;
      return many ? (v as Node[]).map((x) => serialize(resource, x, env, flex)) : serialize(resource, v, env, flex);
    },
  };
}
