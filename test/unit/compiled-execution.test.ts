// Compiled execution (src/graphql/compiled.ts) on small schemas of its own: what graphql-js
// promises resolvers holds once compiled, and operations graphql-jit cannot compile safely run
// interpreted.
import { createRequire } from 'node:module';
import { buildSchema, type GraphQLResolveInfo, type ResponsePath } from 'graphql';
import { createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { compiledExecution, MAX_COMPILED_FIELDS } from '../../src/graphql/compiled.ts';

function server(sdl: string, resolvers: Record<string, Record<string, (...a: never[]) => unknown>>) {
  const schema = buildSchema(sdl);
  for (const [type, fields] of Object.entries(resolvers)) {
    const object = schema.getType(type) as { getFields(): Record<string, { resolve?: unknown }> };
    for (const [name, resolve] of Object.entries(fields)) object.getFields()[name]!.resolve = resolve;
  }
  const runs: string[] = [];
  const yoga = createYoga({ schema, plugins: [compiledExecution(schema, (executor) => runs.push(executor))], logging: false });
  const send = async (query: string, variables?: object) => {
    const res = await yoga.fetch('http://lectern.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    return (await res.json()) as { data?: Record<string, unknown>; errors?: { message: string }[] };
  };
  return { send, runs };
}

describe('compiled execution', () => {
  // First: graphql-jit must not be loaded yet in this file's process.
  it('loads graphql-jit at the first compiling, not with the server', async () => {
    const loaded = () => Object.hasOwn(createRequire(import.meta.url).cache, createRequire(import.meta.url).resolve('graphql-jit'));
    const { send, runs } = server('type Query { a: Int }', { Query: { a: () => 1 } });
    await send('{ a }');
    expect(loaded()).toBe(false);
    await send('{ a }');
    expect(runs).toEqual(['interpreted', 'compiled']);
    expect(loaded()).toBe(true);
  });

  it("hands an object field's resolver the very path its parent's resolver was given, as graphql-js does", async () => {
    const seen: { parent?: ResponsePath; same: boolean[] } = { same: [] };
    const { send, runs } = server('type Detail { n: String } type Item { detail: Detail } type Query { items: [Item!]! }', {
      Query: {
        items: (_p: never, _a: never, _c: never, info: GraphQLResolveInfo) => {
          seen.parent = info.path;
          return [{ n: 'a' }, { n: 'b' }];
        },
      },
      Item: {
        detail: (p: { n: string }, _a: never, _c: never, info: GraphQLResolveInfo) => {
          seen.same.push(info.path.prev?.prev === seen.parent);
          return p;
        },
      },
    });
    for (let i = 0; i < 3; i++) expect(await send('{ items { detail { n } } }')).toEqual({ data: { items: [{ detail: { n: 'a' } }, { detail: { n: 'b' } }] } });
    expect(runs).toEqual(['interpreted', 'compiled', 'compiled']);
    expect(seen.same).toEqual([true, true, true, true, true, true]);
  });

  it('runs an operation with a variable of an input type that holds itself interpreted (graphql-jit would never stop compiling it)', async () => {
    const { send, runs } = server('input Tree { name: String, children: [Tree!] } type Query { count(tree: Tree): Int }', {
      Query: { count: (_p: never, a: { tree?: { children?: unknown[] } }) => a.tree?.children?.length ?? 0 },
    });
    const query = 'query($t: Tree) { count(tree: $t) }';
    for (let i = 0; i < 3; i++) expect(await send(query, { t: { name: 'x', children: [{ name: 'y' }, { name: 'z' }] } })).toEqual({ data: { count: 2 } });
    expect(runs).toEqual(['interpreted', 'interpreted', 'interpreted']);
  });

  it('leaves a document of more than MAX_COMPILED_FIELDS fields interpreted (compiling one holds the event loop)', async () => {
    const { send, runs } = server('type Query { a: Int }', { Query: { a: () => 1 } });
    const within = `{ ${Array.from({ length: MAX_COMPILED_FIELDS }, (_, i) => `f${i}: a`).join(' ')} }`;
    const over = `{ ${Array.from({ length: MAX_COMPILED_FIELDS + 1 }, (_, i) => `f${i}: a`).join(' ')} }`;
    for (let i = 0; i < 2; i++) expect((await send(within)).data?.[`f${MAX_COMPILED_FIELDS - 1}`]).toBe(1);
    for (let i = 0; i < 2; i++) expect((await send(over)).data?.[`f${MAX_COMPILED_FIELDS}`]).toBe(1);
    expect(runs).toEqual(['interpreted', 'compiled', 'interpreted', 'interpreted']);
  });

  it('answers a field aliased __proto__, and reads an input object keyed __proto__, as graphql-js does (graphql-jit would set prototypes with them)', async () => {
    const { send, runs } = server('scalar JSON type P { slug: String, p: P } type Query { project: P, keys(f: JSON): String }', {
      Query: { project: () => ({ slug: 'a', p: { slug: 'b' } }), keys: (_p: never, a: { f: object }) => Object.keys(a.f).join() },
    });
    for (let i = 0; i < 3; i++) {
      const res = await send('{ project { __proto__: slug x: p { __proto__: slug } } }');
      expect(JSON.stringify(res)).toBe('{"data":{"project":{"__proto__":"a","x":{"__proto__":"b"}}}}');
      expect(await send('{ keys(f: { __proto__: 1 }) }')).toEqual({ data: { keys: '__proto__' } });
    }
    expect(runs).toEqual(Array(6).fill('interpreted'));
    expect(({} as { slug?: unknown }).slug).toBeUndefined();
  });

  it('leaves mutations to graphql-js', async () => {
    const { send, runs } = server('type Query { a: Int } type Mutation { bump: Int }', { Mutation: { bump: () => 1 } });
    for (let i = 0; i < 3; i++) expect(await send('mutation { bump }')).toEqual({ data: { bump: 1 } });
    expect(runs).toEqual(['interpreted', 'interpreted', 'interpreted']);
  });
});
