// A JSON request body turned into a GraphQL input object, checked against the input type the
// schema declares: snake_case keys become camelCase, unknown keys are dropped (as Django REST
// framework ignores them), and a value of the wrong type gets DRF's message under its field.
import type { GraphQLEnumType, GraphQLInputObjectType, GraphQLInputType, GraphQLList, GraphQLNonNull, GraphQLSchema } from 'graphql';

export type Errors = Record<string, unknown>;

// Types are told apart by shape, not instanceof: the schema may come from another copy of
// graphql-js than this module would import.
export const isNonNull = (t: GraphQLInputType): t is GraphQLNonNull<any> => 'ofType' in t && String(t).endsWith('!');
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

const TRUE = new Set([true, 'true', 'True', 'TRUE', '1', 1, 'yes', 'on', 'y', 't']);
const FALSE = new Set([false, 'false', 'False', 'FALSE', '0', 0, 'no', 'off', 'n', 'f']);

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
    const ok = typeof value === 'string' && type.getValues().some((v) => v.name === value);
    return ok ? { value } : { error: [`"${typeof value === 'string' ? value : JSON.stringify(value)}" is not a valid choice.`] };
  }
  {
    switch ((type as { name: string }).name) {
      case 'String':
        if (typeof value === 'string') return { value };
        if (typeof value === 'number') return { value: String(value) };
        return { error: ['Not a valid string.'] };
      case 'Boolean':
        if (TRUE.has(value as never)) return { value: true };
        if (FALSE.has(value as never)) return { value: false };
        return { error: ['Must be a valid boolean.'] };
      case 'Int': {
        const n = typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
        if (typeof n === 'number' && Number.isInteger(n) && Math.abs(n) <= 2 ** 31 - 1) return { value: n };
        return { error: ['A valid integer is required.'] };
      }
      default:
        return { value };
    }
  }
  return { value };
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
    if (!(key in body)) continue;
    const r = coerce(f.type, body[key]);
    if (r.error) errors[key] = r.error;
    else out[name] = r.value;
  }
  return Object.keys(errors).length ? { error: errors } : { value: out };
}

/** `{input}` for the named input type, or `{errors}` as a DRF 400 body. */
export function readInput(schema: GraphQLSchema, typeName: string, body: unknown): { input?: Record<string, unknown>; errors?: Errors } {
  const type = schema.getType(typeName);
  if (!isInputObject(type)) throw new Error(`no input type ${typeName}`);
  const r = objectInput(type, body ?? {});
  return r.error ? { errors: r.error as Errors } : { input: r.value as Record<string, unknown> };
}
