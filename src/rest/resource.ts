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
  /**
   * Selection for the expanded field; where it expands into a resource (`nested`), around that
   * resource's own selection, `inner` (`lastBuild { ${inner} }`).
   */
  select: (inner: string) => string;
  /** The resource the expansion holds, whose fields and expansions the request's parameters one level down choose. */
  nested?: Resource;
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

/** The selection a request with `flex` needs, written out: for the routes that select a resource whole (NO_FLEX). */
export function selection(resource: Resource, flex: FlexParams, permitted?: ReadonlySet<string>): string {
  const parts = new Set<string>(['__typename']);
  for (const [name, f] of Object.entries(resource.fields)) if (includes(flex, name)) parts.add(f.select);
  for (const [name, e] of Object.entries(resource.expandable ?? {})) {
    if (expands(flex, name, permitted)) parts.add(e.select(e.nested ? selection(e.nested, nested(flex, name)) : ''));
  }
  return [...parts].join(' ');
}

/**
 * A resource's selection for every request at once (docs/design/rest-api.md, "One document per
 * route"): each JSON field's GraphQL fields inside `... @include(if: $f_<field>) { … }`, each
 * expansion inside `... @include(if: $x_<field>) { … }` around its nested resource's own (whose
 * variables are prefixed with the expansion's name). A route's document holds it, built and
 * validated once; a request only sets its variables (`variables`) from its fields, omit and
 * expand, and GraphQL and Pothos's Prisma selections skip what they exclude.
 */
export class ResourceSelection {
  /** The selection's text, with its @include directives. */
  readonly text: string;
  /** Every variable it declares (all `Boolean!`). */
  readonly variableNames: readonly string[];
  readonly #fields: { name: string; variable: string | null }[] = [];
  readonly #expands: { name: string; variable: string | null; nested: ResourceSelection | null }[] = [];

  constructor(resource: Resource, prefix = '') {
    const parts = ['__typename'];
    const names: string[] = [];
    const declare = (variable: string) => {
      if (names.includes(variable)) throw new Error(`resource ${resource.name}: two selections are named $${variable}`);
      names.push(variable);
      return variable;
    };
    for (const [name, f] of Object.entries(resource.fields)) {
      // A field that needs no GraphQL field (its value is constant) needs no variable.
      const variable = f.select.trim() ? declare(`${prefix}f_${name}`) : null;
      if (variable) parts.push(`... @include(if: $${variable}) { ${f.select} }`);
      this.#fields.push({ name, variable });
    }
    for (const [name, e] of Object.entries(resource.expandable ?? {})) {
      const inner = e.nested ? new ResourceSelection(e.nested, `${prefix}${name}__`) : null;
      const select = e.select(inner?.text ?? '');
      const variable = select.trim() ? declare(`${prefix}x_${name}`) : null;
      for (const v of inner?.variableNames ?? []) declare(v);
      if (variable) parts.push(`... @include(if: $${variable}) { ${select} }`);
      this.#expands.push({ name, variable, nested: inner });
    }
    this.text = parts.join(' ');
    this.variableNames = names;
  }

  /** The variables of a request with `flex` (`permitted`: the expansions a list allows). */
  variables(flex: FlexParams, permitted?: ReadonlySet<string>, out: Record<string, boolean> = {}): Record<string, boolean> {
    for (const f of this.#fields) if (f.variable) out[f.variable] = includes(flex, f.name);
    for (const e of this.#expands) {
      const on = expands(flex, e.name, permitted);
      if (e.variable) out[e.variable] = on;
      // Below an expansion left out, every variable is false: declared non-null, they must be given.
      if (e.nested) e.nested.variables(on ? nested(flex, e.name) : NOTHING, undefined, out);
    }
    return out;
  }
}

/** Parameters that include nothing: `fields` naming no field. */
const NOTHING: FlexParams = { fields: [], omit: [], expand: [] };

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
    select: (inner) => `${graphqlField} { ${inner} }`,
    nested: resource,
    value: (node, env, flex) => {
      const v = node[graphqlField];
      if (v === null || v === undefined) return null;
      return many ? (v as Node[]).map((x) => serialize(resource, x, env, flex)) : serialize(resource, v, env, flex);
    },
  };
}
