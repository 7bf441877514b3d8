// A JSON request body turned into a GraphQL input object, checked against the input type the
// schema declares: snake_case keys become camelCase, unknown keys are dropped (as Django REST
// framework ignores them), and a value of the wrong type gets DRF's message under its field.
import type { GraphQLEnumType, GraphQLInputObjectType, GraphQLInputType, GraphQLList, GraphQLNonNull, GraphQLSchema } from 'graphql';

export type Errors = Record<string, unknown>;

// Types are told apart by shape, not instanceof: the schema may come from another copy of
// graphql-js than this module would import.
// biome-ignore lint/suspicious/noExplicitAny: any wrapped type
export const isNonNull = (t: GraphQLInputType): t is GraphQLNonNull<any> => 'ofType' in t && String(t).endsWith('!');
// biome-ignore lint/suspicious/noExplicitAny: any wrapped type
export const isList = (t: GraphQLInputType): t is GraphQLList<any> => 'ofType' in t && !String(t).endsWith('!');
export const isEnum = (t: GraphQLInputType): t is GraphQLEnumType => 'getValues' in t;
export const isInputObject = (t: unknown): t is GraphQLInputObjectType => !!t && typeof t === 'object' && 'getFields' in t && !('getInterfaces' in t);

export const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
export const camel = (s: string) => s.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

/** Python's name for a JSON value's type, as DRF's messages show it. */
function pyType(v: unknown): string {
  if (v === null) return 'NoneType';
  if (Array.isArray(v)) return 'list';
  if (typeof v === 'string') return 'str';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  return 'dict';
}

/**
 * Python's `str()` of a parsed JSON value, as DRF puts it into a choice message. Bounded: deep or
 * long values are cut short (`...`), so a hostile body costs neither stack nor a huge message.
 */
function pyStr(v: unknown): string {
  return pyRepr(v, 0, { left: 100 });
}

function pyRepr(v: unknown, depth: number, budget: { left: number }): string {
  budget.left -= 1;
  if (v === null) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') {
    const s = v.length > 200 ? `${v.slice(0, 200)}...` : v;
    return depth === 0 ? s : `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  }
  const list = Array.isArray(v);
  const entries: [string | null, unknown][] = list ? v.map((x) => [null, x]) : Object.entries(v as object);
  if (depth >= 8 && entries.length) return list ? '[...]' : '{...}';
  const parts: string[] = [];
  for (const [k, x] of entries) {
    if (budget.left <= 0) {
      parts.push('...');
      break;
    }
    parts.push(k === null ? pyRepr(x, depth + 1, budget) : `${pyRepr(k, depth + 1, budget)}: ${pyRepr(x, depth + 1, budget)}`);
  }
  return list ? `[${parts.join(', ')}]` : `{${parts.join(', ')}}`;
}

// DRF's BooleanField.TRUE_VALUES / FALSE_VALUES.
const TRUE = new Set<unknown>([true, 1, 't', 'T', 'y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON', '1']);
const FALSE = new Set<unknown>([false, 0, 'f', 'F', 'n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF', '0']);
const INT_MAX = 2 ** 31 - 1;
const INT_MIN = -(2 ** 31);

/** DRF CharField's own validators: no NUL characters, no lone UTF-16 surrogates. */
function stringError(s: string): string | undefined {
  if (s.includes('\u0000')) return 'Null characters are not allowed.';
  const lone = /[\ud800-\udfff]/.exec(s.replace(/[\ud800-\udbff][\udc00-\udfff]/g, ''));
  if (lone) return `Surrogate characters are not allowed: U+${lone[0].charCodeAt(0).toString(16).toUpperCase()}.`;
  return undefined;
}

function coerce(type: GraphQLInputType, value: unknown): { value?: unknown; error?: unknown } {
  if (isNonNull(type)) {
    if (value === null) return { error: ['This field may not be null.'] };
    return coerce(type.ofType, value);
  }
  if (value === null) return { value: null };
  if (isList(type)) {
    if (!Array.isArray(value)) return { error: [`Expected a list of items but got type "${pyType(value)}".`] };
    const out: unknown[] = [];
    const errors: Record<string, unknown> = {};
    value.forEach((item, i) => {
      const r = coerce(type.ofType, item);
      if (r.error) errors[i] = r.error;
      else out.push(r.value);
    });
    return Object.keys(errors).length ? { error: errors } : { value: out };
  }
  if (isInputObject(type)) return objectInput(type, value);
  if (isEnum(type)) {
    // DRF's ChoiceField compares `str(value)`.
    const text = typeof value === 'number' ? String(value) : value;
    const ok = typeof text === 'string' && type.getValues().some((v) => v.name === text);
    return ok ? { value: text } : { error: [`"${pyStr(value)}" is not a valid choice.`] };
  }
  switch ((type as { name: string }).name) {
    case 'String': {
      // Numbers are coerced to strings, as DRF's CharField does; booleans and composites are not.
      if (typeof value !== 'string' && typeof value !== 'number') return { error: ['Not a valid string.'] };
      const text = String(value);
      const bad = stringError(text);
      return bad ? { error: [bad] } : { value: text };
    }
    case 'Boolean':
      if (TRUE.has(value)) return { value: true };
      if (FALSE.has(value)) return { value: false };
      return { error: ['Must be a valid boolean.'] };
    case 'Int': {
      // DRF's IntegerField: an integral number, or a string of one (a `.0` tail is allowed).
      const text = typeof value === 'string' ? value.trim().replace(/\.0*$/, '') : undefined;
      const n = text !== undefined ? (/^[-+]?\d{1,1000}$/.test(text) ? Number(text) : NaN) : value;
      if (typeof n !== 'number' || !Number.isInteger(n)) return { error: ['A valid integer is required.'] };
      if (n > INT_MAX) return { error: [`Ensure this value is less than or equal to ${INT_MAX}.`] };
      if (n < INT_MIN) return { error: [`Ensure this value is greater than or equal to ${INT_MIN}.`] };
      return { value: n };
    }
    default:
      return { value };
  }
}

function objectInput(type: GraphQLInputObjectType, value: unknown): { value?: unknown; error?: unknown } {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { error: { non_field_errors: [`Invalid data. Expected a dictionary, but got ${pyType(value)}.`] } };
  }
  const body = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  const errors: Errors = {};
  for (const [name, f] of Object.entries(type.getFields())) {
    const key = snake(name);
    if (!Object.hasOwn(body, key)) continue;
    const r = coerce(f.type, body[key]);
    if (r.error) errors[key] = r.error;
    else out[name] = r.value;
  }
  return Object.keys(errors).length ? { error: errors } : { value: out };
}

/**
 * `{input}` for the named input type, or `{errors}` as a DRF 400 body. `body` undefined (no body
 * at all) reads as `{}`; a JSON `null` body is DRF's "No data provided".
 */
export function readInput(schema: GraphQLSchema, typeName: string, body: unknown): { input?: Record<string, unknown>; errors?: Errors } {
  const type = schema.getType(typeName);
  if (!isInputObject(type)) throw new Error(`no input type ${typeName}`);
  if (body === null) return { errors: { non_field_errors: ['No data provided'] } };
  const r = objectInput(type, body === undefined ? {} : body);
  return r.error ? { errors: r.error as Errors } : { input: r.value as Record<string, unknown> };
}
