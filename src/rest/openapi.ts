// An OpenAPI 3.1 document for /api/v3, made from the same route table the router runs, so it
// cannot drift from what the server answers. Read the Docs publishes none.
import type { GraphQLInputType, GraphQLSchema } from 'graphql';
import { isEnum, isInputObject, isList, isNonNull, snake } from './input.ts';
import type { Resource } from './resource.ts';
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

function resourceSchema(resource: Resource): Schema {
  const expandable = Object.keys(resource.expandable ?? {});
  return {
    type: 'object',
    description: expandable.length ? `Expandable with \`expand\`: ${expandable.join(', ')}.` : undefined,
    properties: Object.fromEntries([...Object.keys(resource.fields), ...expandable].sort().map((k) => [k, {}])),
  };
}

const errorBody = { type: 'object', properties: { detail: { type: 'string' } } };

export function openApiDocument(routes: Route[], schema: GraphQLSchema, serverUrl: string): Schema {
  const paths: Record<string, Record<string, unknown>> = {};
  const components: Record<string, Schema> = { Error: errorBody };
  for (const route of routes) {
    if (route.resource) components[route.resource.name] ??= resourceSchema(route.resource);
    const params = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: ['build', 'redirect', 'environmentvariable'].includes(m[1]!) ? 'integer' : 'string' },
    }));
    const query: unknown[] = [];
    if (route.envelope === 'page') {
      query.push(
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 10 } },
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
    if (route.auth === 'maintainer') responses[403] = { description: 'The caller does not maintain the project.' };
    if (route.input || route.filters) responses[400] = { description: 'Invalid input: `{"field": ["message"]}`.' };
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
