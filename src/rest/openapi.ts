// An OpenAPI 3.1 document for /api/v3, made from the same route table the router runs, so it
// cannot drift from what the server answers. Read the Docs publishes none. A resource's properties
// take their schemas from the GraphQL output types they are read from (scalar, enum, list,
// nullability); values a resource computes (links, `{code, name}` pairs) declare theirs beside it.
import type { GraphQLInputType, GraphQLObjectType, GraphQLOutputType, GraphQLSchema } from 'graphql';
import { isEnum, isInputObject, isList, isNonNull, snake } from './input.ts';
import { requiresMaintainer } from './pre-checks.ts';
import type { Field, JsonSchema, Resource } from './resource.ts';
import type { Route } from './route.ts';

type Schema = Record<string, unknown>;

function inputSchema(type: GraphQLInputType): Schema {
  if (isNonNull(type)) return inputSchema(type.ofType);
  if (isList(type)) return { type: 'array', items: inputSchema(type.ofType) };
  if (isEnum(type)) return { type: 'string', enum: type.getValues().map((v) => v.name) };
  if (isInputObject(type)) {
    return {
      type: 'object',
      properties: Object.fromEntries(
        Object.values(type.getFields()).map((f) => [snake(f.name), { ...inputSchema(f.type), ...(f.description ? { description: f.description } : {}) }]),
      ),
    };
  }
  const scalar = (type as { name: string }).name;
  return { type: scalar === 'Int' ? 'integer' : scalar === 'Boolean' ? 'boolean' : 'string' };
}

const SCALARS: Record<string, JsonSchema> = {
  Int: { type: 'integer' },
  Float: { type: 'number' },
  String: { type: 'string' },
  ID: { type: 'string' },
  Boolean: { type: 'boolean' },
  DateTime: { type: 'string', format: 'date-time' },
  JSON: { type: 'object' },
};

/** A GraphQL output type as JSON Schema: null allowed unless it is non-null. */
function outputSchema(type: GraphQLOutputType): JsonSchema {
  const t = type as unknown as GraphQLInputType;
  if (isNonNull(t)) return required(outputSchema(t.ofType as GraphQLOutputType));
  const inner = isList(t)
    ? { type: 'array', items: outputSchema(t.ofType as GraphQLOutputType) }
    : isEnum(t)
      ? { type: 'string', enum: t.getValues().map((v) => v.value ?? v.name) }
      : (SCALARS[(t as { name: string }).name] ?? { type: 'object' });
  return { oneOf: [inner, { type: 'null' }] };
}
const required = (s: JsonSchema): JsonSchema => (Array.isArray(s.oneOf) && s.oneOf.length === 2 ? (s.oneOf[0] as JsonSchema) : s);
const isNullable = (s: JsonSchema) => Array.isArray(s.oneOf) && (s.oneOf as JsonSchema[]).some((x) => x.type === 'null');

/** A field's schema: its GraphQL field's type, with what the resource declares merged over it (nullability kept). */
function fieldSchema(f: Field, type: GraphQLObjectType | undefined, where: string): JsonSchema {
  const gql = f.graphql ? type?.getFields()[f.graphql] : undefined;
  if (f.graphql && !gql) throw new Error(`${where}: no GraphQL field ${type?.name}.${f.graphql}`);
  const derived = gql ? outputSchema(gql.type) : undefined;
  const description = gql?.description ? { description: gql.description } : {};
  if (!f.schema) {
    if (!derived) throw new Error(`${where}: a computed field declares its schema`);
    return { ...derived, ...description };
  }
  if (derived && isNullable(derived)) return { oneOf: [{ ...required(derived), ...f.schema }, { type: 'null' }], ...description };
  return { ...(derived ? required(derived) : {}), ...f.schema, ...description };
}

function resourceSchema(resource: Resource, schema: GraphQLSchema): Schema {
  const type = schema.getType(resource.graphqlType) as GraphQLObjectType | undefined;
  const expandable = Object.entries(resource.expandable ?? {});
  const properties: Record<string, JsonSchema> = {};
  for (const [name, f] of Object.entries(resource.fields)) properties[name] = fieldSchema(f, type, `${resource.name}.${name}`);
  for (const [name, e] of expandable) {
    if (!e.schema) throw new Error(`${resource.name}.${name}: an expandable field declares its schema`);
    properties[name] = { ...e.schema, description: `${(e.schema.description as string | undefined) ?? ''} Present with \`expand=${name}\`.`.trim() };
  }
  return {
    type: 'object',
    ...(expandable.length ? { description: `Expandable with \`expand\`: ${expandable.map(([k]) => k).join(', ')}.` } : {}),
    properties: Object.fromEntries(Object.entries(properties).sort(([a], [b]) => a.localeCompare(b))),
  };
}

/** The resources a route table answers with, and those they refer to, by component name. */
function resourcesOf(routes: Route[], extra: Resource[]): Resource[] {
  const byName = new Map<string, Resource>();
  for (const r of [...routes.flatMap((x) => (x.resource ? [x.resource] : [])), ...extra]) if (!byName.has(r.name)) byName.set(r.name, r);
  return [...byName.values()];
}

const errorBody = { type: 'object', properties: { detail: { type: 'string' } } };

/**
 * `referenced`: resources other resources point to with `$ref` (a subproject's child, a version's
 * last build) that no route answers with directly.
 */
export function openApiDocument(routes: Route[], schema: GraphQLSchema, serverUrl: string, opts: { referenced?: Resource[]; maxLimit?: number } = {}): Schema {
  const referenced = opts.referenced ?? [];
  const paths: Record<string, Record<string, unknown>> = {};
  const components: Record<string, Schema> = { Error: errorBody };
  for (const resource of resourcesOf(routes, referenced)) components[resource.name] = resourceSchema(resource, schema);
  for (const route of routes) {
    const params = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: ['build', 'redirect', 'environmentvariable'].includes(m[1]!) ? 'integer' : 'string' },
    }));
    const query: unknown[] = [];
    if (route.envelope === 'page') {
      query.push(
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, ...(opts.maxLimit ? { maximum: opts.maxLimit } : {}), default: 10 } },
        { name: 'offset', in: 'query', schema: { type: 'integer', minimum: 0, default: 0 } },
      );
    }
    for (const [name, f] of Object.entries(route.filters ?? {})) query.push({ name, in: 'query', schema: { type: f.type } });
    if (route.method === 'GET') {
      for (const name of ['fields', 'omit', 'expand']) {
        query.push({ name, in: 'query', description: 'Comma-separated field paths (drf-flex-fields).', schema: { type: 'string' } });
      }
    }
    const ref = route.resource ? { $ref: `#/components/schemas/${route.resource.name}` } : { type: 'object' };
    const body =
      route.envelope === 'page'
        ? {
            type: 'object',
            properties: {
              count: { type: 'integer' },
              next: { type: ['string', 'null'] },
              previous: { type: ['string', 'null'] },
              results: { type: 'array', items: ref },
            },
          }
        : ref;
    const responses: Record<string, unknown> = {
      [route.status]: route.status === 204 ? { description: 'Done; no body.' } : { description: 'Success.', content: { 'application/json': { schema: body } } },
      401: { description: 'No valid token.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      404: { description: 'Not found (or not visible to the caller).', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      429: { description: 'Throttled.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
    };
    if (requiresMaintainer(schema, route)) responses[403] = { description: 'The caller does not maintain the project.' };
    if (route.input || route.filters || route.variables) responses[400] = { description: 'Invalid input: `{"field": ["message"]}`.' };
    const input = route.input ? schema.getType(route.input) : undefined;
    paths[route.path] ??= {};
    paths[route.path]![route.method.toLowerCase()] = {
      operationId: route.name,
      summary: route.summary,
      parameters: [...params, ...query],
      ...(input ? { requestBody: { required: true, content: { 'application/json': { schema: inputSchema(input as GraphQLInputType) } } } } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Lectern REST API v3 (Read the Docs compatible)', version: '3' },
    servers: [{ url: serverUrl }],
    components: { schemas: components, securitySchemes: { token: { type: 'apiKey', in: 'header', name: 'Authorization', description: '`Token <key>`' } } },
    security: [{ token: [] }],
    paths,
  };
}
