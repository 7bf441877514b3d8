// REST v3 bodies are written with their keys sorted at every level, as Python's
// json.dumps(sort_keys=True) writes Read the Docs' (by code point), whatever order the object has.
import { describe, expect, it } from 'vitest';
import { v3Json } from '../../src/rest/format.ts';

describe('v3Json', () => {
  it('sorts keys at every level, integer-like keys (version slugs) among the others as text', () => {
    const body = { slug: 'p', active_versions: { latest: { id: 1 }, '10': { id: 3 }, '9': { id: 2 } }, _links: { z: 1, a: [{ b: 1, a: 2 }] } };
    expect(v3Json(body)).toBe('{"_links":{"a":[{"a":2,"b":1}],"z":1},"active_versions":{"10":{"id":3},"9":{"id":2},"latest":{"id":1}},"slug":"p"}');
  });

  it('orders by code point beyond the BMP, as Python does, not by UTF-16 unit', () => {
    expect(v3Json({ '\u{1F600}': 1, '\uFFFF': 2 })).toBe('{"\uFFFF":2,"\u{1F600}":1}');
  });

  it('writes each object by its own keys, also when many objects share or differ in shape', () => {
    const shapes = Array.from({ length: 2500 }, (_, i) => ({ [`k${i}`]: i, a: null, skip: undefined }));
    const text = v3Json(shapes);
    expect(JSON.parse(text)).toEqual(shapes.map((_shape, i) => ({ a: null, [`k${i}`]: i })));
    expect(text.startsWith('[{"a":null,"k0":0},{"a":null,"k1":1}')).toBe(true);
    // The same shape again, after the bound on remembered shapes was passed, still sorted.
    expect(v3Json({ k0: 0, a: null })).toBe('{"a":null,"k0":0}');
  });
});
