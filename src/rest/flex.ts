// `fields`, `omit` and `expand` as drf-flex-fields 1.0.2 reads them (docs/design/read-the-docs.md §3.7), turned
// into one small tree per nesting level. The REST resources use it to decide both which GraphQL
// fields to select and which JSON keys to write.

export class RecursiveExpansionError extends Error {
  constructor() {
    super('Recursive expansion found');
  }
}

export interface FlexParams {
  /** null keeps every field. */
  fields: string[] | null;
  omit: string[];
  expand: string[];
}

const ALL = new Set(['*', '~all']);
/** Deeper paths than any resource nests are cut to this many segments; this bounds work on hostile queries. */
const MAX_SEGMENTS = 6;
const MAX_ITEMS = 200;

type QueryValue = string | string[] | undefined;

const first = (path: string) => {
  const dot = path.indexOf('.');
  return dot < 0 ? path : path.slice(0, dot);
};
/** `*` or `~all` at this level (drf-flex-fields looks at the first segment of each path). */
const wildcard = (list: readonly string[]) => list.some((p) => ALL.has(first(p)));

/**
 * Reads one parameter as drf-flex-fields does: `name`, or `name[]` only when `name` is absent; a
 * single value is comma-split, repeated values are each taken whole; items are not trimmed.
 */
function items(query: Record<string, QueryValue | unknown>, name: string): string[] | null {
  const values = (v: unknown) => (v === undefined ? [] : Array.isArray(v) ? v : [v]).filter((s): s is string => typeof s === 'string');
  let strings = values(query[name]);
  if (strings.length === 0) strings = values(query[`${name}[]`]);
  if (strings.length === 0) return null;
  const list = strings.length === 1 ? strings[0]!.split(',') : strings;
  const seen = new Set<string>();
  for (const item of list) {
    if (item === '' || seen.size >= MAX_ITEMS) continue;
    const segments = item.split('.');
    if (new Set(segments).size !== segments.length) throw new RecursiveExpansionError();
    seen.add(segments.length > MAX_SEGMENTS ? segments.slice(0, MAX_SEGMENTS).join('.') : item);
  }
  return [...seen];
}

export function parseFlex(query: Record<string, unknown>): FlexParams {
  return { fields: items(query, 'fields'), omit: items(query, 'omit') ?? [], expand: items(query, 'expand') ?? [] };
}

export const NO_FLEX: FlexParams = { fields: null, omit: [], expand: [] };

/**
 * The parameters of a list action: only the permitted expands are kept, each compared whole
 * (drf-flex-fields' `permit_list_expands`); `*` or `~all` asks for every permitted one.
 */
export function permit(flex: FlexParams, permitted: ReadonlySet<string>): FlexParams {
  const expand = flex.expand.some((e) => ALL.has(e)) ? [...permitted] : flex.expand.filter((e) => permitted.has(e));
  return { ...flex, expand };
}

/** The parameters one level down, for the nested field `name`. */
export function nested(flex: FlexParams, name: string): FlexParams {
  const below = (list: string[]) => list.filter((p) => p.startsWith(`${name}.`)).map((p) => p.slice(name.length + 1));
  const fields = flex.fields === null ? null : below(flex.fields);
  return { fields: fields?.length ? fields : null, omit: below(flex.omit), expand: below(flex.expand) };
}

/** Whether the top-level field `name` is written at this level. */
export function includes(flex: FlexParams, name: string): boolean {
  // A dotted omit (`omit=a.b`) keeps `a` and passes `b` down, even beside `omit=a`.
  if (flex.omit.includes(name) && !flex.omit.some((o) => o.startsWith(`${name}.`))) return false;
  if (flex.fields === null || wildcard(flex.fields)) return true;
  return flex.fields.some((f) => f === name || f.startsWith(`${name}.`));
}

/** Whether the expandable field `name` is expanded at this level (and passes fields/omit). */
export function expands(flex: FlexParams, name: string, permitted?: ReadonlySet<string>): boolean {
  if (permitted && !permitted.has(name)) return false;
  const asked = wildcard(flex.expand) || flex.expand.some((e) => e === name || e.startsWith(`${name}.`));
  return asked && includes(flex, name);
}
