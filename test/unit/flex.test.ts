// `fields`, `omit` and `expand` as drf-flex-fields 1.0.2 reads them (docs/design/read-the-docs.md §3.7), on the
// parsed query object express gives the router (a repeated parameter is an array).
import { describe, expect, it } from 'vitest';
import { expands, type FlexParams, includes, NO_FLEX, nested, parseFlex, permit, RecursiveExpansionError } from '../../src/rest/flex.ts';

const flex = (query: Record<string, string | string[]>) => parseFlex(query);
/** The top-level fields of `names` that are written. */
const kept = (f: FlexParams, names: string[]) => names.filter((n) => includes(f, n));
const PROJECT = ['id', 'slug', 'name', 'repository', '_links', 'urls'];

describe('parseFlex: reading the parameters', () => {
  it('without parameters keeps everything and expands nothing', () => {
    expect(flex({})).toEqual(NO_FLEX);
    expect(kept(NO_FLEX, PROJECT)).toEqual(PROJECT);
    expect(expands(NO_FLEX, 'active_versions')).toBe(false);
  });

  it('splits a single value on commas', () => {
    expect(flex({ expand: 'active_versions,permissions' }).expand).toEqual(['active_versions', 'permissions']);
    expect(flex({ fields: 'id,slug' }).fields).toEqual(['id', 'slug']);
    expect(flex({ omit: 'urls,_links' }).omit).toEqual(['urls', '_links']);
  });

  it('takes repeated parameters each whole, without splitting them', () => {
    expect(flex({ expand: ['active_versions', 'permissions'] }).expand).toEqual(['active_versions', 'permissions']);
    const f = flex({ fields: ['id,slug', 'name'] });
    expect(f.fields).toEqual(['id,slug', 'name']);
    // `id,slug` is one (unknown) field name here, so only `name` is kept.
    expect(kept(f, PROJECT)).toEqual(['name']);
  });

  it('reads the `name[]` form, but only when `name` itself is absent', () => {
    expect(flex({ 'expand[]': 'permissions' }).expand).toEqual(['permissions']);
    expect(flex({ 'fields[]': ['id', 'slug'] }).fields).toEqual(['id', 'slug']);
    expect(flex({ fields: 'id', 'fields[]': 'slug' }).fields).toEqual(['id']);
  });

  it('does not trim items: `a, b` does not name `b`', () => {
    const f = flex({ fields: 'id, slug' });
    expect(kept(f, PROJECT)).toEqual(['id']);
    expect(expands(flex({ expand: 'permissions, active_versions' }), 'active_versions')).toBe(false);
  });

  it('ignores non-string values (a nested object from `expand[a]=b`)', () => {
    expect(parseFlex({ expand: { a: 'b' } }).expand).toEqual([]);
    expect(parseFlex({ fields: { a: 'b' } }).fields).toBeNull();
  });

  it('an empty `fields` keeps nothing, as drf-flex-fields does with `[""]`', () => {
    expect(kept(flex({ fields: '' }), PROJECT)).toEqual([]);
    expect(kept(flex({ fields: ',' }), PROJECT)).toEqual([]);
    expect(kept(flex({ omit: '' }), PROJECT)).toEqual(PROJECT);
  });
});

describe('fields', () => {
  it('keeps only the named top-level fields', () => {
    expect(kept(flex({ fields: 'slug,id' }), PROJECT)).toEqual(['id', 'slug']);
    expect(kept(flex({ fields: 'nope' }), PROJECT)).toEqual([]);
  });

  it('keeps a field named as the first segment of a dotted entry', () => {
    const f = flex({ fields: 'repository.url' });
    expect(kept(f, PROJECT)).toEqual(['repository']);
    expect(nested(f, 'repository').fields).toEqual(['url']);
    // A prefix that is not a whole segment does not count.
    expect(kept(flex({ fields: 'repo.url' }), PROJECT)).toEqual([]);
  });

  it.each(['*', '~all', 'id,*', '~all,slug', '*.x'])('%j keeps everything', (fields) => {
    expect(kept(flex({ fields }), PROJECT)).toEqual(PROJECT);
  });

  it('passes dotted entries one level down; no entry below means every field there', () => {
    const f = flex({ fields: 'active_versions.slug,active_versions.id,id' });
    expect(nested(f, 'active_versions').fields).toEqual(['slug', 'id']);
    expect(nested(f, 'id').fields).toBeNull();
    expect(nested(NO_FLEX, 'active_versions')).toEqual(NO_FLEX);
  });
});

describe('omit', () => {
  it('removes the named top-level fields', () => {
    expect(kept(flex({ omit: 'urls,_links' }), PROJECT)).toEqual(['id', 'slug', 'name', 'repository']);
  });

  it('a dotted path keeps the field and passes the rest down', () => {
    const f = flex({ omit: '_links.builds' });
    expect(kept(f, PROJECT)).toEqual(PROJECT);
    expect(nested(f, '_links').omit).toEqual(['builds']);
  });

  it('a dotted path keeps the field even when the field itself is omitted too', () => {
    // drf-flex-fields: omit_fields - next_level_omits.
    expect(includes(flex({ omit: '_links,_links.builds' }), '_links')).toBe(true);
    expect(includes(flex({ omit: '_links,urls.home' }), '_links')).toBe(false);
  });

  it('wins over fields', () => {
    expect(kept(flex({ fields: 'id,slug', omit: 'slug' }), PROJECT)).toEqual(['id']);
    expect(kept(flex({ fields: '*', omit: 'slug' }), PROJECT)).toEqual(PROJECT.filter((n) => n !== 'slug'));
  });
});

describe('expand', () => {
  it('expands the named fields; other names are not expanded (and are not errors)', () => {
    const f = flex({ expand: 'active_versions,unknown' });
    expect(expands(f, 'active_versions')).toBe(true);
    expect(expands(f, 'permissions')).toBe(false);
  });

  it('a dotted path expands its first segment and passes the rest down', () => {
    const f = flex({ expand: 'active_versions.last_build.config' });
    expect(expands(f, 'active_versions')).toBe(true);
    const below = nested(f, 'active_versions');
    expect(below.expand).toEqual(['last_build.config']);
    expect(expands(below, 'last_build')).toBe(true);
    expect(expands(nested(below, 'last_build'), 'config')).toBe(true);
  });

  it.each(['*', '~all'])('%j expands every expandable field', (expand) => {
    const f = flex({ expand });
    expect(expands(f, 'active_versions')).toBe(true);
    expect(expands(f, 'permissions')).toBe(true);
    // …at this level only.
    expect(nested(f, 'active_versions').expand).toEqual([]);
  });

  it('an expanded field must pass fields', () => {
    expect(expands(flex({ fields: 'slug', expand: 'active_versions' }), 'active_versions')).toBe(false);
    expect(expands(flex({ fields: 'slug,active_versions', expand: 'active_versions' }), 'active_versions')).toBe(true);
    expect(expands(flex({ fields: 'active_versions.slug', expand: 'active_versions' }), 'active_versions')).toBe(true);
    expect(expands(flex({ fields: '*', expand: 'active_versions' }), 'active_versions')).toBe(true);
  });

  it('an expanded field must pass omit', () => {
    expect(expands(flex({ omit: 'active_versions', expand: 'active_versions' }), 'active_versions')).toBe(false);
    expect(expands(flex({ omit: 'active_versions.slug', expand: 'active_versions' }), 'active_versions')).toBe(true);
  });

  it('on a list, honours only the permitted names, each compared whole', () => {
    const permitted = new Set(['active_versions', 'permissions']);
    const f = permit(flex({ expand: 'active_versions,organization,active_versions.last_build' }), permitted);
    expect(f.expand).toEqual(['active_versions']);
    expect(expands(f, 'active_versions', permitted)).toBe(true);
    expect(expands(f, 'organization', permitted)).toBe(false);
    expect(nested(f, 'active_versions').expand).toEqual([]);
    // A dotted path alone is not a permitted name: nothing is expanded.
    expect(permit(flex({ expand: 'active_versions.last_build' }), permitted).expand).toEqual([]);
  });

  it('a wildcard counts at its own level: `*.x` expands every field here', () => {
    expect(expands(flex({ expand: '*.last_build' }), 'active_versions')).toBe(true);
  });

  it('on a list, a wildcard expands every permitted name', () => {
    const permitted = new Set(['config']);
    expect(permit(flex({ expand: '*' }), permitted).expand).toEqual(['config']);
    // drf-flex-fields compares the whole items with the wildcards there.
    expect(permit(flex({ expand: '*.x' }), permitted).expand).toEqual([]);
    expect(permit(flex({ expand: '~all' }), new Set()).expand).toEqual([]);
    expect(expands(permit(flex({ expand: '*' }), permitted), 'config', permitted)).toBe(true);
  });
});

describe('recursive paths (RECURSIVE_EXPANSION_PERMITTED = False)', () => {
  it.each([
    { expand: 'active_versions.active_versions' },
    { expand: 'a.b.a' },
    { fields: 'repository.repository' },
    { omit: '_links._links' },
    { expand: ['ok', 'x.y.x'] },
    { 'expand[]': 'a.a' },
    { fields: 'id,a...b' }, // two empty segments are a repeated segment
  ])('%j is a "Recursive expansion found" error', (query) => {
    expect(() => parseFlex(query)).toThrow(RecursiveExpansionError);
    expect(() => parseFlex(query)).toThrow('Recursive expansion found');
  });

  it('a name repeated across items is not recursive', () => {
    expect(() => parseFlex({ expand: 'active_versions,active_versions.last_build', fields: 'a.b,b.a' })).not.toThrow();
  });
});

describe('bounded work on hostile parameters', () => {
  it('deduplicates and caps the items, and cuts very deep paths', () => {
    const many = Array.from({ length: 5000 }, (_, i) => `f${i}`).join(',');
    expect(flex({ expand: many }).expand.length).toBeLessThanOrEqual(200);
    expect(flex({ expand: Array(1000).fill('a.b.c.d.e') }).expand).toEqual(['a.b.c.d.e']);
    const deep = Array.from({ length: 40 }, (_, i) => `s${i}`).join('.');
    const f = flex({ fields: deep, expand: deep });
    // Still keeps the first segment, as the whole path would.
    expect(kept(f, ['s0', 's1'])).toEqual(['s0']);
    expect(expands(f, 's0')).toBe(true);
    expect(f.expand[0]!.split('.').length).toBeLessThanOrEqual(6);
  });

  it('keeps a thousand repeated deep paths once each (test/bench/liveness.ts times it)', () => {
    const f = parseFlex({ expand: Array(1000).fill('a.b.c.d.e'), fields: Array(1000).fill('a.b.c.d.e'), omit: 'x'.repeat(10_000) });
    expect(f.expand).toEqual(['a.b.c.d.e']);
    expect(f.fields).toEqual(['a.b.c.d.e']);
  });
});
