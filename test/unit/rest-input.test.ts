// A JSON body read as a GraphQL input, with Django REST framework's messages for values of the
// wrong type (docs/design/read-the-docs.md §1.1). Checked against the committed schema.graphql,
// the contract the REST adapter is written against.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { buildSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { camel, readInput, snake } from '../../src/rest/input.ts';

const schema = buildSchema(readFileSync(path.resolve(import.meta.dirname, '../../schema.graphql'), 'utf8'));
const read = (type: string, body: unknown) => readInput(schema, type, body);
const ok = (type: string, body: unknown) => {
  const r = read(type, body);
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return r.input;
};
const errors = (type: string, body: unknown) => {
  const r = read(type, body);
  expect(r.input).toBeUndefined();
  return r.errors;
};

describe('names', () => {
  it('snake and camel convert field names both ways', () => {
    expect(snake('programmingLanguage')).toBe('programming_language');
    expect(camel('programming_language')).toBe('programmingLanguage');
    expect(camel(snake('readthedocsYamlPath'))).toBe('readthedocsYamlPath');
  });

  it('reads snake_case keys; camelCase and unknown keys are ignored, as DRF ignores unknown fields', () => {
    expect(ok('ImportProjectInput', { name: 'x', programming_language: 'py', programmingLanguage: 'js', slug: 'forced', id: 9, users: [] })).toEqual({
      name: 'x',
      programmingLanguage: 'py',
    });
  });

  it('does not read inherited properties', () => {
    expect(ok('ImportProjectInput', JSON.parse('{"__proto__": {"name": "polluted"}}'))).toEqual({});
  });
});

describe('the body as a whole', () => {
  it.each([
    [[], 'list'],
    [[{ name: 'x' }], 'list'],
    ['x', 'str'],
    [42, 'int'],
    [4.5, 'float'],
    [true, 'bool'],
  ])('%j is not a dictionary (%s)', (body, type) => {
    expect(errors('ImportProjectInput', body)).toEqual({ non_field_errors: [`Invalid data. Expected a dictionary, but got ${type}.`] });
  });

  it('JSON null is "No data provided"', () => {
    expect(errors('UpdateProjectInput', null)).toEqual({ non_field_errors: ['No data provided'] });
  });

  it('no body at all reads as an empty object', () => {
    expect(ok('UpdateProjectInput', undefined)).toEqual({});
    expect(ok('UpdateProjectInput', {})).toEqual({});
  });

  it('collects the errors of every field at once', () => {
    expect(errors('ImportProjectInput', { name: true, tags: 'x', repository: 'x', homepage: 'http://ok.example/' })).toEqual({
      name: ['Not a valid string.'],
      tags: ['Expected a list of items but got type "str".'],
      repository: { non_field_errors: ['Invalid data. Expected a dictionary, but got str.'] },
    });
  });
});

describe('strings (DRF CharField)', () => {
  it('numbers are coerced to strings', () => {
    expect(ok('ImportProjectInput', { name: 42 })).toEqual({ name: '42' });
    expect(ok('ImportProjectInput', { name: 4.5 })).toEqual({ name: '4.5' });
    expect(ok('ImportProjectInput', { name: -0.25, homepage: 0 })).toEqual({ name: '-0.25', homepage: '0' });
  });

  it.each([true, false, [], ['x'], {}, { a: 1 }])('%j is "Not a valid string."', (name) => {
    expect(errors('ImportProjectInput', { name })).toEqual({ name: ['Not a valid string.'] });
  });

  it('null passes through (the domain decides whether the field is required)', () => {
    expect(ok('ImportProjectInput', { name: null })).toEqual({ name: null });
  });

  it('strings stay as they are, unicode and empty included', () => {
    expect(ok('ImportProjectInput', { name: '  Ünïcødé 文档 📚  ' })).toEqual({ name: '  Ünïcødé 文档 📚  ' });
    expect(ok('ImportProjectInput', { name: '' })).toEqual({ name: '' });
  });

  it('NUL characters are refused', () => {
    expect(errors('EnvironmentVariableInput', { name: 'A', value: 'x\u0000y' })).toEqual({ value: ['Null characters are not allowed.'] });
  });

  it('lone surrogates are refused; pairs are fine', () => {
    expect(errors('ImportProjectInput', { name: 'a\ud800b' })).toEqual({ name: ['Surrogate characters are not allowed: U+D800.'] });
    expect(errors('ImportProjectInput', { name: '\udc01' })).toEqual({ name: ['Surrogate characters are not allowed: U+DC01.'] });
    expect(ok('ImportProjectInput', { name: '\ud83d\udcda' })).toEqual({ name: '📚' });
  });
});

describe('lists (DRF ListField)', () => {
  it.each([
    ['x', 'str'],
    [{ a: 1 }, 'dict'],
    [1, 'int'],
    [1.5, 'float'],
    [true, 'bool'],
  ])('%j: Expected a list of items but got type "%s".', (tags, type) => {
    expect(errors('ImportProjectInput', { tags })).toEqual({ tags: [`Expected a list of items but got type "${type}".`] });
  });

  it('items are coerced one by one; errors are keyed by index', () => {
    expect(ok('ImportProjectInput', { tags: ['a', 2] })).toEqual({ tags: ['a', '2'] });
    expect(errors('ImportProjectInput', { tags: ['a', true, null, ['x']] })).toEqual({
      tags: { 1: ['Not a valid string.'], 2: ['This field may not be null.'], 3: ['Not a valid string.'] },
    });
  });

  it('an empty list and null are accepted', () => {
    expect(ok('ImportProjectInput', { tags: [] })).toEqual({ tags: [] });
    expect(ok('ImportProjectInput', { tags: null })).toEqual({ tags: null });
  });
});

describe('nested objects (DRF nested serializer)', () => {
  it.each([
    ['x', 'str'],
    [[], 'list'],
    [3, 'int'],
    [false, 'bool'],
  ])('%j: Invalid data. Expected a dictionary, but got %s.', (repository, type) => {
    expect(errors('ImportProjectInput', { repository })).toEqual({
      repository: { non_field_errors: [`Invalid data. Expected a dictionary, but got ${type}.`] },
    });
  });

  it('reads the nested fields with the same rules', () => {
    expect(ok('ImportProjectInput', { repository: { url: 'https://github.com/a/b', type: 'git', extra: 1 } })).toEqual({
      repository: { url: 'https://github.com/a/b', type: 'git' },
    });
    expect(errors('ImportProjectInput', { repository: { url: false } })).toEqual({ repository: { url: ['Not a valid string.'] } });
  });
});

describe('booleans (DRF BooleanField)', () => {
  it.each([true, 1, 'true', 'True', 'TRUE', 't', 'T', 'yes', 'Yes', 'YES', 'y', 'Y', 'on', 'On', 'ON', '1'])('%j is true', (active) => {
    expect(ok('UpdateVersionInput', { active })).toEqual({ active: true });
  });

  it.each([false, 0, 'false', 'False', 'FALSE', 'f', 'F', 'no', 'No', 'NO', 'n', 'N', 'off', 'Off', 'OFF', '0'])('%j is false', (active) => {
    expect(ok('UpdateVersionInput', { active })).toEqual({ active: false });
  });

  it.each(['maybe', 2, -1, 0.5, '', 'truthy', [], {}, [true]])('%j is "Must be a valid boolean."', (hidden) => {
    expect(errors('UpdateVersionInput', { hidden })).toEqual({ hidden: ['Must be a valid boolean.'] });
  });
});

describe('integers (DRF IntegerField)', () => {
  it.each([
    [3, 3],
    [3.0, 3],
    ['3', 3],
    [' 7 ', 7],
    ['-2', -2],
    ['5.0', 5],
    [0, 0],
  ])('%j is %j', (position, expected) => {
    expect(ok('RedirectInput', { position })).toEqual({ position: expected });
  });

  it.each([3.5, '3.5', 'x', '', true, false, [], {}, '1e3', '0x10'])('%j is "A valid integer is required."', (position) => {
    expect(errors('RedirectInput', { position })).toEqual({ position: ['A valid integer is required.'] });
  });

  it('values beyond a 32-bit integer are out of range, not a server error', () => {
    expect(errors('RedirectInput', { position: 2 ** 31 })).toEqual({ position: ['Ensure this value is less than or equal to 2147483647.'] });
    expect(errors('RedirectInput', { http_status: '-99999999999' })).toEqual({
      http_status: ['Ensure this value is greater than or equal to -2147483648.'],
    });
    expect(errors('RedirectInput', { position: '9'.repeat(5000) })).toEqual({ position: ['A valid integer is required.'] });
  });
});

describe('hostile values', () => {
  const deep = (n: number): unknown => JSON.parse(`${'['.repeat(n)}${']'.repeat(n)}`);

  it('a deeply nested value is refused without recursing into it, with a short message', () => {
    const r = errors('RedirectInput', { type: deep(50_000), from_url: deep(50_000), enabled: deep(50_000), position: deep(50_000) }) as Record<
      string,
      string[]
    >;
    expect(r.from_url).toEqual(['Not a valid string.']);
    expect(r.enabled).toEqual(['Must be a valid boolean.']);
    expect(r.position).toEqual(['A valid integer is required.']);
    expect(r.type![0]).toMatch(/^"\[\[\[.*\.\.\..*" is not a valid choice\.$/);
    expect(r.type![0]!.length).toBeLessThan(200);
  });

  it('a long or wide value is cut short in a choice message', () => {
    const wide = (errors('RedirectInput', { type: Array(100_000).fill(0) }) as Record<string, string[]>).type![0]!;
    expect(wide.startsWith('"[0, 0, ')).toBe(true);
    expect(wide.length).toBeLessThan(1000);
    const long = (errors('RedirectInput', { type: 'x'.repeat(100_000) }) as Record<string, string[]>).type![0]!;
    expect(long.length).toBeLessThan(300);
  });

  it('a list of a hundred thousand items is read item by item', () => {
    const tags = Array.from({ length: 100_000 }, (_, i) => (i === 99_999 ? false : 't'));
    expect(errors('ImportProjectInput', { tags })).toEqual({ tags: { 99999: ['Not a valid string.'] } });
  });
});

describe('choices (DRF ChoiceField)', () => {
  it('accepts a known value', () => {
    expect(ok('RedirectInput', { type: 'page' })).toEqual({ type: 'page' });
    expect(ok('ImportProjectInput', { privacy_level: 'private' })).toEqual({ privacyLevel: 'private' });
  });

  it.each([
    ['nope', 'nope'],
    ['PAGE', 'PAGE'],
    [3, '3'],
    [true, 'True'],
    [['page'], "['page']"],
    [{ a: 'b' }, "{'a': 'b'}"],
  ])('%j: "%s" is not a valid choice.', (type, shown) => {
    expect(errors('RedirectInput', { type })).toEqual({ type: [`"${shown}" is not a valid choice.`] });
  });
});
