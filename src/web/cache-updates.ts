// What a change does to the lists the normalized cache holds (docs/design/dashboard-data.md): a
// mutation that answers with the entity it changed updates every list showing it by itself; one
// that adds a row to a list or takes one out says so here, so no page asks Lectern again after a
// change. Each function mirrors what Lectern does with the list (where a new row goes, how the
// others' positions move), reading the rows the cache holds and writing the list back.
import type { Cache, DataFields, UpdateResolver, UpdatesConfig, Variables } from '@urql/exchange-graphcache';
import { gql } from 'urql';

export type Row = { __typename: string; id: number | string };
type Args = Variables;

/** The cache's key of an entity an answer holds (null when it holds none). */
export const keyOf = (cache: Cache, row: Row | null | undefined) => (row ? cache.keyOfEntity(row) : null);

/** The cache's key of the project with this slug, when a page has read it. */
function projectKey(cache: Cache, slug: unknown): string | null {
  return typeof slug === 'string' ? (cache.resolve('Query', 'project', { slug }) as string | null) : null;
}

/** The entity a mutation answered with, under `data` of its success member (null for an error). */
export function answered(result: DataFields, field: string): Row | null {
  const answer = result[field] as { data?: Row | null } | null | undefined;
  const row = answer?.data;
  return row && typeof row === 'object' && row.id != null ? row : null;
}

/** The totalCount of a page field's variant, rewritten by `delta` (only where the cache holds it). */
function shiftTotal(cache: Cache, slug: string, field: string, args: Args | null, delta: number) {
  const query = gql`
    query ListTotal($slug: String!, $limit: Int, $offset: Int) {
      project(slug: $slug) { id ${field}(limit: $limit, offset: $offset) { totalCount } }
    }
  `;
  cache.updateQuery({ query, variables: { slug, ...args } }, (data) => {
    const page = (data?.project as Record<string, { totalCount: number } | null> | null)?.[field];
    if (!page) return data;
    page.totalCount += delta;
    return data;
  });
}

/**
 * Every cached variant of a project's paged list `field` (`*Page { nodes totalCount }`): its rows
 * (entity keys) edited by `edit`, its totalCount moved by as many rows as it gained or lost. A
 * variant that starts past the first row (an offset) is left alone: which rows it holds now
 * depends on rows the cache does not hold.
 */
function editPages(cache: Cache, slug: string, field: string, edit: (keys: string[]) => string[]) {
  const key = projectKey(cache, slug);
  if (!key) return;
  for (const f of cache.inspectFields(key)) {
    if (f.fieldName !== field || (f.arguments?.offset as number | undefined)) continue;
    const page = cache.resolve(key, f.fieldKey) as string | null;
    const nodes = page ? (cache.resolve(page, 'nodes') as string[] | null) : null;
    if (!page || !nodes) continue;
    const next = edit(nodes);
    cache.link(page, 'nodes', next);
    if (next.length !== nodes.length) shiftTotal(cache, slug, field, f.arguments, next.length - nodes.length);
  }
}

/** The plain list `field` (no pages) of the entity `owner` (`Query`, a project, …), its rows edited by `edit`, where the cache holds it. */
export function editLinks(cache: Cache, owner: string | null, field: string, edit: (keys: string[]) => string[]) {
  const nodes = owner ? (cache.resolve(owner, field) as string[] | null) : null;
  if (owner && nodes) cache.link(owner, field, edit(nodes));
}

/** `key` placed in `keys` in the order of the string field `by` (a list Lectern orders by slug or name). */
export function inSlugOrder(cache: Cache, keys: string[], key: string, by = 'slug'): string[] {
  if (keys.includes(key)) return keys;
  const value = (k: string) => String(cache.resolve(k, by) ?? '');
  const at = keys.findIndex((k) => value(k) > value(key));
  return at < 0 ? [...keys, key] : [...keys.slice(0, at), key, ...keys.slice(at)];
}

/** A project's plain list `field` (no pages), its rows edited by `edit`. */
const editList = (cache: Cache, slug: unknown, field: string, edit: (keys: string[]) => string[]) => editLinks(cache, projectKey(cache, slug), field, edit);

/** Adds the answered row at the end of a project's paged list (lists ordered by id: a new row is last). */
function appendTo(field: string): UpdateResolver {
  return (result, args, cache, info) => {
    const key = keyOf(cache, answered(result, info.fieldName));
    if (key) editPages(cache, String(args.project), field, (keys) => (keys.includes(key) ? keys : [...keys, key]));
  };
}

/** Takes the answered row out of a project's paged list, and out of the cache. */
function removeFrom(field: string): UpdateResolver {
  return (result, args, cache, info) => {
    const key = keyOf(cache, answered(result, info.fieldName));
    if (!key) return;
    editPages(cache, String(args.project), field, (keys) => keys.filter((k) => k !== key));
    cache.invalidate(key);
  };
}

const ORDERED = {
  redirects: { order: 'position', fragment: gql`fragment RedirectPosition on Redirect { id position }` },
  automationRules: { order: 'priority', fragment: gql`fragment RulePriority on AutomationRule { id priority }` },
} as const;

/**
 * A project's redirects or automation rules after one was added, moved or deleted: Lectern numbers
 * them 0, 1, 2, … in order (a redirect's position, a rule's priority), and puts the changed one at
 * the number it answers with (a new redirect first, a new rule last), the others keeping their
 * order around it. `changed` is that row's key; `gone` leaves it out.
 */
function renumber(cache: Cache, slug: string, field: keyof typeof ORDERED, changed: string, gone: boolean) {
  const { order: by, fragment } = ORDERED[field];
  editPages(cache, slug, field, (keys) => {
    const number = (k: string) => (cache.resolve(k, by) as number | null) ?? 0;
    const order = keys.filter((k) => k !== changed).sort((a, b) => number(a) - number(b));
    if (!gone) order.splice(Math.min(number(changed), order.length), 0, changed);
    order.forEach((k, i) => {
      if (k !== changed && number(k) !== i) cache.writeFragment(fragment, { __typename: cache.resolve(k, '__typename'), id: cache.resolve(k, 'id'), [by]: i });
    });
    return order;
  });
}

/** An update of a redirect or rule (`moves` says whether its arguments move it), or a new or deleted one (`gone`). */
function reordered(field: keyof typeof ORDERED, gone: boolean, moves: (args: Args) => boolean = () => true): UpdateResolver {
  return (result, args, cache, info) => {
    const key = keyOf(cache, answered(result, info.fieldName));
    // An edit that leaves the order alone (not a move) changes nothing else.
    if (!key || !moves(args)) return;
    renumber(cache, String(args.project), field, key, gone);
    if (gone) cache.invalidate(key);
  };
}
const inputMoves = (by: string) => (args: Args) => (args.input as Record<string, unknown> | undefined)?.[by] != null;

/**
 * Adds a new row last in a project's plain list `field` (ordered by id): the row is `data[inner]`
 * of the answer (a new integration or webhook is answered beside its secret).
 */
function appendToList(field: string, inner: string): UpdateResolver {
  return (result, args, cache, info) => {
    const data = (result[info.fieldName] as { data?: Record<string, Row> } | null)?.data;
    const key = keyOf(cache, data?.[inner]);
    if (key) editList(cache, args.project, field, (keys) => (keys.includes(key) ? keys : [...keys, key]));
  };
}

/** Takes the answered row out of a project's plain list `field`, and out of the cache. */
function removeFromList(field: string): UpdateResolver {
  return (result, args, cache, info) => {
    const key = keyOf(cache, answered(result, info.fieldName));
    if (!key) return;
    editList(cache, args.project, field, (keys) => keys.filter((k) => k !== key));
    cache.invalidate(key);
  };
}

/**
 * A build asked for goes first in the project's lists of builds (newest first) that show every
 * version, the projects' list's last build included; a list of one version's builds, or a page
 * past the first, is read again when next shown.
 */
const triggeredBuild: UpdateResolver = (result, args, cache) => {
  const buildKey = keyOf(cache, (result.triggerBuild as { data?: { build?: Row } } | null)?.data?.build);
  const key = projectKey(cache, args.project);
  if (!buildKey || !key) return;
  for (const f of cache.inspectFields(key)) {
    if (f.fieldName !== 'builds') continue;
    if (f.arguments?.filter || f.arguments?.offset) {
      cache.invalidate(key, f.fieldName, f.arguments);
      continue;
    }
    const page = cache.resolve(key, f.fieldKey) as string | null;
    const nodes = page ? (cache.resolve(page, 'nodes') as string[] | null) : null;
    if (!page || !nodes || nodes.includes(buildKey)) continue;
    const limit = (f.arguments?.limit as number | undefined) ?? nodes.length + 1;
    cache.link(page, 'nodes', [buildKey, ...nodes].slice(0, limit));
    shiftTotal(cache, String(args.project), 'builds', f.arguments, 1);
  }
};

/**
 * The projects' lists (filtered, searched, paged by name) cannot place a project added or taken
 * away: each is read again when next shown, as is a deleted project's organization's list.
 */
const projectsChanged: UpdateResolver = (result, args, cache, info) => {
  if (!answered(result, info.fieldName)) return;
  if (info.fieldName === 'deleteProject') {
    const key = projectKey(cache, args.project);
    const org = key ? (cache.resolve(key, 'organization') as string | null) : null;
    for (const f of org ? cache.inspectFields(org) : []) {
      if (f.fieldName === 'projects') cache.invalidate(org!, f.fieldName, f.arguments);
    }
  }
  for (const f of cache.inspectFields('Query')) {
    if (f.fieldName === 'projects') cache.invalidate('Query', f.fieldName, f.arguments);
  }
};

/** What each mutation of a project's data does to the lists the cache holds (client.ts adds the organizations'). */
export const PROJECT_UPDATES: NonNullable<UpdatesConfig['Mutation']> = {
  createRedirect: reordered('redirects', false),
  updateRedirect: reordered('redirects', false, inputMoves('position')),
  deleteRedirect: reordered('redirects', true),
  createAutomationRule: reordered('automationRules', false),
  updateAutomationRule: reordered('automationRules', false, inputMoves('priority')),
  moveAutomationRule: reordered('automationRules', false),
  deleteAutomationRule: reordered('automationRules', true),
  createEnvironmentVariable: appendTo('environmentVariables'),
  deleteEnvironmentVariable: removeFrom('environmentVariables'),
  createSubproject: appendTo('subprojects'),
  deleteSubproject: removeFrom('subprojects'),
  createIntegration: appendToList('integrations', 'integration'),
  deleteIntegration: removeFromList('integrations'),
  createWebhook: appendToList('webhooks', 'webhook'),
  deleteWebhook: removeFromList('webhooks'),
  triggerBuild: triggeredBuild,
  importProject: projectsChanged,
  deleteProject: projectsChanged,
};
