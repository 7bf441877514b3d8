// Bad text is refused where it enters (issue 21): a NUL or another character no text may hold (C0
// controls but tab, line feed and carriage return; DEL; C1 controls; unpaired surrogates) in any
// GraphQL string argument or input field, written in the query or sent as a variable, nested in
// input objects and lists, is a validation error naming the argument and the path, before any
// resolver runs; every REST route (v3, v2, embed, search) answers 400 for one in a path segment,
// a query parameter or any JSON body field, and writes nothing. The arguments and routes are
// walked from the schema and the route tables, not listed. docs/design/deliveries.md, "Input".
import {
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  getNamedType,
  isCompositeType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schema } from '../../src/graphql/schema.ts';
import type { Route } from '../../src/rest/route.ts';
import { v2Routes } from '../../src/rest/v2/routes.ts';
import type { TestApp } from '../helpers/app.ts';
import { bodyFor, pathFor, rowCounts, send, v3Routes, worldApp } from '../rest/v3-calls.ts';

let t: TestApp;
let token: string;
beforeAll(async () => {
  t = await worldApp();
  token = await t.user('prober');
}, 120_000);
afterAll(() => t?.close());

/** An enum value, printed bare in a query and as a string in variables. */
class Enum {
  readonly name: string;
  constructor(name: string) {
    this.name = name;
  }
}
/** A value no literal can be (an Upload): left out of the query, null as a variable. */
const NONE = Symbol('none');

function literal(v: unknown): string {
  if (v instanceof Enum) return v.name;
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v))
    return `[${v
      .filter((x) => x !== NONE)
      .map(literal)
      .join(', ')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.entries(v)
      .filter(([, x]) => x !== NONE)
      .map(([k, x]) => `${k}: ${literal(x)}`)
      .join(', ')}}`;
  return String(v);
}
const json = (v: unknown): unknown =>
  v instanceof Enum
    ? v.name
    : v === NONE
      ? null
      : Array.isArray(v)
        ? v.map(json)
        : v !== null && typeof v === 'object'
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, json(x)]))
          : v;

/** A valid value of a type: required fields only. */
function valid(type: GraphQLInputType, depth = 0): unknown {
  if (isNonNullType(type)) return valid(type.ofType, depth);
  if (isListType(type)) return [valid(type.ofType, depth)];
  if (isEnumType(type)) return new Enum(type.getValues()[0]!.name);
  if (isInputObjectType(type)) {
    const out: Record<string, unknown> = {};
    for (const f of Object.values(type.getFields())) if (isNonNullType(f.type) && f.defaultValue === undefined) out[f.name] = valid(f.type, depth + 1);
    return out;
  }
  const scalar: Record<string, unknown> = { Int: 1, Float: 1.5, Boolean: true, DateTime: '2026-01-01T00:00:00.000Z', JSON: {}, Upload: NONE };
  return type.name in scalar ? scalar[type.name] : 'x';
}

/** Scalars whose values may be text: every one but numbers, booleans and files. */
const textual = (name: string) => !['Int', 'Float', 'Boolean', 'Upload'].includes(name);

/** Every place a string can be given in a value of `type`: `['repository', 'url']`, `[0]` for a list's item. */
function places(type: GraphQLInputType, seen: Set<string> = new Set()): (string | number)[][] {
  if (isNonNullType(type)) return places(type.ofType, seen);
  if (isListType(type)) return places(type.ofType, seen).map((p) => [0, ...p]);
  if (isScalarType(type)) return textual(type.name) ? [[]] : [];
  if (isInputObjectType(type) && !seen.has(type.name)) {
    const inner = new Set(seen).add(type.name);
    return Object.values(type.getFields()).flatMap((f) => places(f.type, inner).map((p) => [f.name, ...p]));
  }
  return [];
}

/** A valid value of `type` with `text` at `place`. */
function withText(type: GraphQLInputType, place: (string | number)[], text: string): unknown {
  if (isNonNullType(type)) return withText(type.ofType, place, text);
  if (place.length === 0) return text;
  const [head, ...rest] = place;
  if (isListType(type)) return [withText(type.ofType, rest, text)];
  if (isInputObjectType(type)) {
    const out = valid(type) as Record<string, unknown>;
    out[head as string] = withText(type.getFields()[head as string]!.type, rest, text);
    return out;
  }
  throw new Error(`no place ${place.join('.')} in ${type}`);
}

const pathText = (arg: string, place: (string | number)[]) => place.reduce<string>((p, s) => (typeof s === 'number' ? `${p}[${s}]` : `${p}.${s}`), arg);

interface Probe {
  root: 'query' | 'mutation';
  field: GraphQLField<unknown, unknown>;
  arg: GraphQLArgument;
  place: (string | number)[];
}
const probes: Probe[] = [];
for (const [root, type] of [
  ['query', schema.getQueryType()],
  ['mutation', schema.getMutationType()],
] as const) {
  for (const field of Object.values(type!.getFields())) {
    for (const arg of field.args) for (const place of places(arg.type)) probes.push({ root, field, arg, place });
  }
}

function operation(p: Probe, text: string, asVariables: boolean) {
  const selection = isCompositeType(getNamedType(p.field.type)) ? ' { __typename }' : '';
  const values = new Map(
    p.field.args.filter((a) => a === p.arg || isNonNullType(a.type)).map((a) => [a, a === p.arg ? withText(a.type, p.place, text) : valid(a.type)]),
  );
  if (!asVariables) {
    const args = [...values].filter(([, v]) => v !== NONE).map(([a, v]) => `${a.name}: ${literal(v)}`);
    return { query: `${p.root} { ${p.field.name}(${args.join(', ')})${selection} }`, variables: {} };
  }
  const defs = [...values.keys()].map((a) => `$${a.name}: ${a.type}`);
  const args = [...values.keys()].map((a) => `${a.name}: $${a.name}`);
  return {
    query: `${p.root}(${defs.join(', ')}) { ${p.field.name}(${args.join(', ')})${selection} }`,
    variables: Object.fromEntries([...values].map(([a, v]) => [a.name, json(v)])),
  };
}

type Gql = Awaited<ReturnType<TestApp['gql']>>;
const codes = (r: Gql) => (r.errors ?? []).map((e) => e.extensions?.code);

describe('GraphQL: every string argument and input field, literal or variable', () => {
  it(`walks the schema: ${probes.length} places a string is given, each with a NUL as a literal and as a variable`, async () => {
    expect(probes.length).toBeGreaterThan(50);
    const failures: string[] = [];
    for (const p of probes) {
      for (const asVariables of [false, true]) {
        const { query, variables } = operation(p, 'a\u0000b', asVariables);
        const r = await t.gql(query, variables, token);
        const mine = (r.errors ?? []).find((e) => e.extensions?.code === 'BAD_USER_INPUT') as
          | { message: string; extensions: Record<string, unknown> }
          | undefined;
        const expected = asVariables ? pathText(`$${p.arg.name}`, p.place) : pathText(p.arg.name, p.place);
        const what = `${p.field.name}(${p.arg.name}) at ${expected} ${asVariables ? 'variable' : 'literal'}`;
        if (!mine) failures.push(`${what}: no BAD_USER_INPUT, got ${JSON.stringify(r.errors ?? r.data).slice(0, 300)}`);
        else if (mine.extensions.argument !== p.arg.name || mine.extensions.path !== expected || mine.extensions.character !== 'U+0000')
          failures.push(`${what}: names ${JSON.stringify(mine.extensions)}`);
        else if (!mine.message.includes(`"${p.arg.name}"`)) failures.push(`${what}: the message does not name the argument: ${mine.message}`);
        if (codes(r).includes('INTERNAL_SERVER_ERROR')) failures.push(`${what}: INTERNAL_SERVER_ERROR`);
        if (r.data && Object.values(r.data).some((v) => v !== null)) failures.push(`${what}: ran (${JSON.stringify(r.data).slice(0, 200)})`);
      }
    }
    expect(failures).toEqual([]);
  }, 300_000);

  it('the cases issue 21 found (project(slug:), a filter, a search) answer a validation error, not INTERNAL_SERVER_ERROR', async () => {
    for (const [query, variables] of [
      ['{ project(slug: "a\\u0000b") { id } }', {}],
      ['query($s: String!) { project(slug: $s) { id } }', { s: 'a\u0000b' }],
      ['query($f: ProjectFilter) { projects(filter: $f) { totalCount } }', { f: { slugExact: 'x\u0000' } }],
      ['{ searchPages(query: "a\\u0000b") { totalCount } }', {}],
    ] as const) {
      const r = await t.gql(query, variables, token);
      expect(codes(r), query).toContain('BAD_USER_INPUT');
      expect(codes(r), query).not.toContain('INTERNAL_SERVER_ERROR');
    }
  });

  it('refuses the other controls, DEL, C1 controls and unpaired surrogates; takes tab, newline, carriage return and any other text', async () => {
    const ask = (slug: string) => t.gql('query($s: String!) { project(slug: $s) { id } }', { s: slug }, token);
    for (const c of [
      '\u0001',
      '\u0008',
      '\u000b',
      '\u000c',
      '\u001b',
      '\u001f',
      '\u007f',
      '\u0080',
      '\u0085',
      '\u009b',
      '\u009f',
      '\ud800',
      '\udfff',
      'x\ud83d',
    ]) {
      const r = await ask(`a${c}b`);
      expect(codes(r), JSON.stringify(c)).toEqual(['BAD_USER_INPUT']);
      expect(r.errors![0]!.extensions).toMatchObject({
        character: `U+${c
          .charCodeAt(c.length - 1)
          .toString(16)
          .toUpperCase()
          .padStart(4, '0')}`,
      });
    }
    for (const c of ['\t', '\n', '\r', ' ', '\u00a0', '\u2028', '\ud83d\udcda', '\u00e9', '\ufffd']) {
      const r = await ask(`a${c}b`);
      expect(r.errors, JSON.stringify(c)).toBeUndefined();
      expect(r.data.project).toBeNull();
    }
  });

  it('reports a variable used twice once, and a NUL nested 20,000 lists deep without a server error', async () => {
    const r = await t.gql('query($s: String!) { a: project(slug: $s) { id } b: project(slug: $s) { id } }', { s: '\u0000' }, token);
    expect(r.errors).toHaveLength(1);
    expect(r.errors![0]!.message).toMatch(/^Variable "\$s", given as argument "slug" of "project", holds U\+0000 at \$s/);
    // A value nested 20,000 deep is walked without recursion: a validation error, not a server error.
    const deep = `${'['.repeat(20_000)}"a\\u0000"${']'.repeat(20_000)}`;
    const raw = await t.http
      .post('/graphql')
      .set('content-type', 'application/json')
      .set('authorization', `Token ${token}`)
      .send(`{"query": "query($f: ProjectFilter) { projects(filter: $f) { totalCount } }", "variables": {"f": {"slugExact": ${deep}}}}`);
    const d = { errors: JSON.parse(raw.text).errors } as Gql;
    expect(codes(d)).toEqual(['BAD_USER_INPUT']);
    expect(d.errors![0]!.extensions).toMatchObject({ argument: 'filter', path: `$f.slugExact${'[0]'.repeat(20_000)}` });
  });
});

/** Every REST route, v3 and v2 (embed and search included), with the world's parameters. */
const routes: { api: string; route: Route }[] = [
  ...v3Routes.map((route) => ({ api: '/api/v3', route })),
  ...v2Routes.map((route) => ({ api: '/api/v2', route })),
];

/** Every string in a JSON value replaced in turn by `text`, and a field no route reads. */
function bodiesWith(value: unknown, text: string): unknown[] {
  if (typeof value === 'string') return [text];
  if (Array.isArray(value)) return value.flatMap((v, i) => bodiesWith(v, text).map((b) => value.map((x, j) => (i === j ? b : x))));
  if (value !== null && typeof value === 'object')
    return [...Object.entries(value).flatMap(([k, v]) => bodiesWith(v, text).map((b) => ({ ...value, [k]: b }))), { ...value, unread_field: text }];
  return [];
}

describe('REST: every route refuses a NUL with 400, in a path segment, a query parameter or a JSON body field', () => {
  // v2's routes name their object by id: the world's first of each.
  const fullPath = (api: string, route: Route, params: Record<string, string> = {}) => `${api}${pathFor(route, { id: '1', ...params })}`;

  it(`walks the route tables: ${routes.length} routes`, async () => {
    const counts = await rowCounts(t);
    const failures: string[] = [];
    const expect400 = async (what: string, method: string, path: string, body?: unknown) => {
      const res = await send(t, method, path, 'me', body);
      if (res.status !== 400) failures.push(`${what}: ${res.status} ${res.text.slice(0, 200)}`);
      else if (!/^application\/json/.test(res.headers['content-type'] ?? '')) failures.push(`${what}: not JSON`);
    };
    for (const { api, route } of routes) {
      const name = `${api} ${route.method} ${route.name}`;
      for (const param of route.path.match(/\{(\w+)\}/g) ?? []) {
        const p = param.slice(1, -1);
        await expect400(`${name} path {${p}}`, route.method, fullPath(api, route, { [p]: 'a\u0000b' }), route.upload ? undefined : bodyFor(route));
      }
      const base = fullPath(api, route);
      const queryNames = ['q', 'format', 'fields', 'expand', 'limit', 'page', 'anything', ...Object.keys(route.filters ?? {})];
      for (const q of queryNames) await expect400(`${name} ?${q}=`, route.method, `${base}?${q}=a%00b`, route.upload ? undefined : bodyFor(route));
      await expect400(`${name} a parameter's name`, route.method, `${base}?a%00b=1`);
      if (route.input) {
        for (const body of bodiesWith(bodyFor(route), 'a\u0000b')) await expect400(`${name} body ${JSON.stringify(body)}`, route.method, base, body);
      }
    }
    expect(failures).toEqual([]);
    expect(await rowCounts(t)).toEqual(counts);
  }, 300_000);

  it('names the field, as DRF does, and refuses the other characters GraphQL refuses', async () => {
    const res = await send(t, 'POST', '/projects/project/redirects/', 'me', { from_url: '/a/', to_url: '/b/\u001b[2J', type: 'page' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ to_url: ['Control characters are not allowed: U+001B.'] });
    const nested = await send(t, 'POST', '/projects/', 'me', { name: 'x', repository: { url: 'https://example.com/\u0000', type: 'git' } });
    expect(nested.body).toEqual({ repository: { url: ['Null characters are not allowed.'] } });
    const query = await send(t, 'GET', '/api/v3/search/?q=a%7Fb', 'me');
    expect([query.status, query.body]).toEqual([400, { q: ['Control characters are not allowed: U+007F.'] }]);
    const v2 = await send(t, 'GET', '/api/v2/search/?q=a%C2%85b&project=project&version=latest', undefined);
    expect([v2.status, v2.body]).toEqual([400, { q: ['Control characters are not allowed: U+0085.'] }]);
    const path = await send(t, 'GET', '/projects/pro%0Aject/', 'me');
    expect([path.status, path.body]).toEqual([400, { detail: 'The path holds U+000A: Control characters are not allowed: U+000A.' }]);
    const surrogate = await send(t, 'PATCH', '/projects/project/', 'me', '{"description": "half \\udc00"}');
    expect([surrogate.status, surrogate.body]).toEqual([400, { description: ['Surrogate characters are not allowed: U+DC00.'] }]);
    // Text with tabs and newlines is text.
    const fine = await send(t, 'GET', '/api/v3/search/?q=a%09b%0Ac', 'me');
    expect(fine.status).toBe(200);
  });
});
