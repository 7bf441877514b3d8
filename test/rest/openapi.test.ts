// The OpenAPI document of /api/v3 (GET /api/v3/schema/): its schemas come from the GraphQL output
// types, and every GET route's real answer, with every expansion, validates against the schema the
// document gives for it. A small JSON Schema validator of the subset the document uses (type, enum,
// oneOf, $ref, properties, required, items, additionalProperties, the date-time and uri formats).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { v3Routes } from '../../src/rest/v3/routes.ts';
import type { TestApp } from '../helpers/app.ts';
import { pathFor, send, worldApp } from './v3-calls.ts';

type Schema = Record<string, unknown>;
let t: TestApp;
let doc: {
  components: { schemas: Record<string, Schema> };
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>>;
};

beforeAll(async () => {
  t = await worldApp();
  doc = (await t.http.get('/api/v3/schema/')).body;
});
afterAll(() => t?.close());

function resolve(s: Schema): Schema {
  const ref = s.$ref as string | undefined;
  return ref ? resolve(doc.components.schemas[ref.replace('#/components/schemas/', '')]!) : s;
}

/** The ways `value` does not fit `schema`, each with its JSON path. */
function problems(value: unknown, schema: Schema, at = '$'): string[] {
  const s = resolve(schema);
  if (Array.isArray(s.oneOf)) {
    const fits = (s.oneOf as Schema[]).filter((o) => problems(value, o, at).length === 0).length;
    return fits === 1 ? [] : [`${at}: fits ${fits} of oneOf (${JSON.stringify(value)?.slice(0, 80)})`];
  }
  const types = s.type === undefined ? undefined : ([] as string[]).concat(s.type as string | string[]);
  const kind = value === null ? 'null' : Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value;
  if (types && !types.some((type) => kind === type || (type === 'number' && kind === 'integer'))) return [`${at}: ${kind}, not ${types.join(' or ')}`];
  if (s.enum && !(s.enum as unknown[]).includes(value)) return [`${at}: ${JSON.stringify(value)} is not one of ${JSON.stringify(s.enum)}`];
  if (s.format === 'date-time' && (typeof value !== 'string' || Number.isNaN(Date.parse(value)))) return [`${at}: not a date-time`];
  if (s.format === 'uri' && (typeof value !== 'string' || !/^https?:\/\//.test(value))) return [`${at}: not a URI`];
  const out: string[] = [];
  if (kind === 'array' && s.items) for (const [i, v] of (value as unknown[]).entries()) out.push(...problems(v, s.items as Schema, `${at}[${i}]`));
  if (kind === 'object') {
    const o = value as Record<string, unknown>;
    const props = (s.properties ?? {}) as Record<string, Schema>;
    for (const k of (s.required ?? []) as string[]) if (!(k in o)) out.push(`${at}.${k}: missing`);
    for (const [k, v] of Object.entries(o)) {
      if (props[k]) out.push(...problems(v, props[k], `${at}.${k}`));
      else if (s.additionalProperties) out.push(...problems(v, s.additionalProperties as Schema, `${at}.${k}`));
      else if (s.properties) out.push(`${at}.${k}: not in the schema`);
    }
  }
  return out;
}

/** Every property schema in `s`, recursively, with its path. */
function* propertySchemas(s: Schema, at: string): Generator<[string, Schema]> {
  for (const [k, v] of Object.entries((s.properties ?? {}) as Record<string, Schema>)) {
    yield [`${at}.${k}`, v];
    yield* propertySchemas(v, `${at}.${k}`);
  }
}

describe('the OpenAPI document', () => {
  it('gives every property of every component a schema (a type, a $ref or a choice of them), none empty', () => {
    const empty: string[] = [];
    for (const [name, schema] of Object.entries(doc.components.schemas)) {
      for (const [at, s] of propertySchemas(schema, name)) if (!s.type && !s.$ref && !s.oneOf) empty.push(at);
    }
    expect(Object.keys(doc.components.schemas).sort()).toEqual(
      [
        'Build',
        'ChildProject',
        'EnvironmentVariable',
        'Error',
        'Organization',
        'Project',
        'Redirect',
        'RedirectWritten',
        'Subproject',
        'Team',
        'Version',
      ].sort(),
    );
    expect(empty).toEqual([]);
  });

  it('takes types and choices from GraphQL: ids are integers, privacy levels and redirect types enums naming every value', () => {
    const { Project, Redirect, Build } = doc.components.schemas as Record<string, { properties: Record<string, Schema> }>;
    expect(Project!.properties.id).toMatchObject({ type: 'integer' });
    expect(Project!.properties.privacy_level).toMatchObject({ type: 'string', enum: ['private', 'public'] });
    expect((Redirect!.properties.type as { enum: string[] }).enum.sort()).toEqual(
      ['clean_url_to_html', 'exact', 'html_to_clean_url', 'page', 'prefix', 'sphinx_html', 'sphinx_htmldir'].sort(),
    );
    // A nullable GraphQL field stays nullable, with the format the resource writes.
    expect(Build!.properties.finished).toMatchObject({ oneOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }] });
    const post = doc.paths['/projects/{project}/redirects/']!.post as unknown as { requestBody: { content: { 'application/json': { schema: Schema } } } };
    const body = post.requestBody.content['application/json'].schema as { properties: Record<string, { enum?: string[] }> };
    expect(body.properties.type!.enum).toHaveLength(7);
  });

  it('describes what every GET route answers: each real answer, with every expansion, validates', async () => {
    const checked: string[] = [];
    for (const route of v3Routes.filter((r) => r.method === 'GET')) {
      const expand = [...new Set([...(route.permitExpand ?? []), ...Object.keys(route.resource?.expandable ?? {})])];
      const path = `${pathFor(route)}${expand.length ? `?expand=${expand.join(',')}` : ''}`;
      const res = await send(t, 'GET', path, 'me');
      const documented = doc.paths[route.path]!.get!.responses[String(res.status)];
      expect(documented, `${path}: ${res.status} is documented`).toBeDefined();
      const schema = documented!.content?.['application/json']?.schema;
      if (res.status >= 300 || !schema) continue;
      expect(problems(res.body, schema), path).toEqual([]);
      checked.push(route.name);
    }
    expect(checked.length).toBeGreaterThan(10);
  });
});
