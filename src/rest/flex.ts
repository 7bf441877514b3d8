// `fields`, `omit` and `expand` as drf-flex-fields 1.0.2 reads them (rtd-behavior §2.9), turned
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
/** Deeper paths than any resource nests are ignored; this bounds work on hostile queries. */
const MAX_SEGMENTS = 6;
const MAX_ITEMS = 200;

type QueryValue = string | string[] | undefined;

/** Reads one parameter: a single value is comma-split; repeated values are each taken whole. */
function items(query: Record<string, QueryValue | unknown>, name: string): string[] | null {
  const raw = [query[name], query[`${name}[]`]].flatMap((v) => (v === undefined ? [] : Array.isArray(v) ? v : [v]));
  const strings = raw.filter((v): v is string => typeof v === 'string');
  if (strings.length === 0) return null;
  const list = strings.length === 1 ? strings[0]!.split(',') : strings;
  const seen = new Set<string>();
  for (const item of list) {
    if (item === '' || seen.size >= MAX_ITEMS) continue;
    const segments = item.split('.');
    if (new Set(segments).size !== segments.length) throw new RecursiveExpansionError();
    if (segments.length > MAX_SEGMENTS) continue;
    seen.add(item);
  }
  return [...seen];
}

export function parseFlex(query: Record<string, unknown>): FlexParams {
  return { fields: items(query, 'fields'), omit: items(query, 'omit') ?? [], expand: items(query, 'expand') ?? [] };
}

export const NO_FLEX: FlexParams = { fields: null, omit: [], expand: [] };

/** The parameters one level down, for the nested field `name`. */
export function nested(flex: FlexParams, name: string): FlexParams {
  const below = (list: string[]) => list.filter((p) => p.startsWith(`${name}.`)).map((p) => p.slice(name.length + 1));
  const fields = flex.fields === null ? null : below(flex.fields);
  return { fields: fields && fields.length ? fields : null, omit: below(flex.omit), expand: below(flex.expand) };
}

/** Whether the top-level field `name` is written at this level. */
export function includes(flex: FlexParams, name: string): boolean {
  if (flex.fields !== null && !flex.fields.some((f) => ALL.has(f) || f === name || f.startsWith(`${name}.`))) return false;
  // A dotted omit (`omit=a.b`) keeps `a` and passes `b` down.
  return !flex.omit.includes(name);
}

/** Whether the expandable field `name` is expanded at this level (and passes fields/omit). */
export function expands(flex: FlexParams, name: string, permitted?: ReadonlySet<string>): boolean {
  if (permitted && !permitted.has(name)) return false;
  const asked = flex.expand.some((e) => ALL.has(e) || e === name || e.startsWith(`${name}.`));
  return asked && includes(flex, name);
}
