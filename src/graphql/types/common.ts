// Shapes shared by several types: the enums from the data model, `{code, name}` choices, and the
// page of a list (limit/offset plus the total count the REST envelope needs).

import {
  GraphQLIncludeDirective,
  type GraphQLResolveInfo,
  GraphQLSkipDirective,
  getDirectiveValues,
  Kind,
  type SelectionNode,
  type SelectionSetNode,
} from 'graphql';
import type { ServedProjectRow } from '../../domain/served-projects.ts';
import type { Project } from '../../generated/prisma/client.ts';
import { BuildState, IntegrationProvider, PrivacyLevel, RedirectType, VersionType } from '../../generated/prisma/enums.ts';
import { builder, lookupCost } from '../builder.ts';
import type { Context } from '../context.ts';
import { ValidationError } from '../errors.ts';

export const VersionTypeEnum = builder.enumType(VersionType, { name: 'VersionType' });
export const PrivacyLevelEnum = builder.enumType(PrivacyLevel, { name: 'PrivacyLevel' });
export const BuildStateEnum = builder.enumType(BuildState, {
  name: 'BuildState',
  description: 'triggered → cloning → installing → building → finished',
});
export const RedirectTypeEnum = builder.enumType(RedirectType, { name: 'RedirectType' });
export const IntegrationProviderEnum = builder.enumType(IntegrationProvider, { name: 'IntegrationProvider' });

export interface Choice {
  code: string;
  name: string;
}

export const ChoiceRef = builder.objectRef<Choice>('Choice').implement({
  description: 'A coded choice with its display name, such as a language `{code: "en", name: "English"}`.',
  fields: (t) => ({ code: t.exposeString('code'), name: t.exposeString('name') }),
});

/**
 * `answer` of where a project's docs are served (ctx.servedProjects: at once on a query's page,
 * which read them with its rows; else one statement for all the projects asked for in one turn).
 * The project exists: a row of it, or of one of its versions, is being resolved.
 */
export function withServedProject<T>(ctx: Context, projectId: number, answer: (p: ServedProjectRow) => T | Promise<T>): T | Promise<T> {
  const got = ctx.servedProjects.get(projectId);
  if (!(got instanceof Promise)) return answer(got);
  return got.then((p) => {
    if (!p) throw new Error(`project ${projectId} is gone`);
    return answer(p);
  });
}

/** The fields that read where a project is served (withServedProject). */
const SERVED_FIELDS = new Set(['documentationUrl', 'vcsUrl', 'downloads', 'superproject']);

/** Whether `@skip`/`@include` with the operation's variables leave `node` in (graphql-js's own rule). */
function included(node: SelectionNode, variables: GraphQLResolveInfo['variableValues']): boolean {
  if (!node.directives?.length) return true;
  if (getDirectiveValues(GraphQLSkipDirective, node, variables)?.if === true) return false;
  return getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if !== false;
}

/** Whether the selection under `info`'s field names any of `names`, through fragments too, as `@skip`/`@include` leave it. */
function selectsAny(info: GraphQLResolveInfo, names: ReadonlySet<string>): boolean {
  const seen = new Set<string>();
  const walk = (set: SelectionSetNode | undefined): boolean =>
    !!set?.selections.some((s) => {
      if (!included(s, info.variableValues)) return false;
      if (s.kind === Kind.FIELD) return names.has(s.name.value) || walk(s.selectionSet);
      if (s.kind === Kind.INLINE_FRAGMENT) return walk(s.selectionSet);
      if (seen.has(s.name.value)) return false;
      seen.add(s.name.value);
      return walk(info.fragments[s.name.value]?.selectionSet);
    });
  return info.fieldNodes.some((f) => walk(f.selectionSet));
}

/**
 * What a query's field that returns projects passes its rows through: where they are served is read
 * with them, in one statement, when something below asks (withServedProject then answers at once).
 * Not in a mutation: what is read here is kept for the request, and a later write would not be seen
 * (docs/design/graphql-reads.md).
 */
export function withServedPrimed(ctx: Context, info: GraphQLResolveInfo) {
  const query = info.operation.operation === 'query';
  const served = query && selectsAny(info, SERVED_FIELDS);
  return async <R extends Project>(rows: R[]): Promise<R[]> => {
    if (query) await ctx.servedProjects.prime(rows, served);
    return rows;
  };
}

/**
 * The project of a version or a build: the row a query's page read, else read (Prisma batches the
 * lookups of one turn into one statement).
 */
export function projectOf(ctx: Context, projectId: number): Project | Promise<Project> {
  return ctx.servedProjects.row(projectId) ?? ctx.prisma.project.findUniqueOrThrow({ where: { id: projectId } });
}

/** `read()`, started when first awaited: a page's rows are read only where its `nodes` are selected. */
export function whenAwaited<T>(read: () => Promise<T>): PromiseLike<T> {
  let started: Promise<T> | undefined;
  return {
    // biome-ignore lint/suspicious/noThenProperty: a thenable on purpose, as Prisma's own lazy queries are
    then: (onRead, onFailed) => {
      started ??= read();
      return started.then(onRead, onFailed);
    },
  };
}

export interface Page<T> {
  nodes: T[] | PromiseLike<T[]>;
  totalCount: () => Promise<number>;
}

export const DEFAULT_LIMIT = 10;

/**
 * The Prisma selection of a field whose object the client did not select (only `__typename` of
 * the result union): the prisma plugin gives `{select: {}}`, which Prisma refuses. Nothing is
 * selected then, so the row's own columns are loaded.
 */
export function rowQuery<Q extends { select?: object }>(query: Q): Q | Record<string, never> {
  return query.select && Object.keys(query.select).length === 0 ? {} : query;
}

/** A page type for a node type: `{totalCount, nodes}`. */
// biome-ignore lint/suspicious/noExplicitAny: any node type (a Pothos object ref) may be paged
export function pageOf<T>(name: string, node: any) {
  return builder.objectRef<Page<T>>(name).implement({
    description: `A page of ${name.replace(/Page$/, '')} items and the total number there are.`,
    fields: (t) => ({
      totalCount: t.int({ resolve: (page) => page.totalCount() }),
      // The page field's multiplier (its limit) already counts the nodes; a second list
      // multiplier here would price a page of 100 as if it held 1000.
      nodes: t.field({ type: [node], complexity: { field: 0, multiplier: 1 }, resolve: (page) => page.nodes as never }),
    }),
  });
}

export interface PageArgs {
  limit?: number | null;
  offset?: number | null;
}

/**
 * `take`/`skip` for a page: limit defaults to 10, and is at most LECTERN_API_MAX_LIMIT (a larger
 * one is refused, never silently cut); what a client may ask is bounded by the cost limit, where a
 * page costs what it selects once per row it may hold.
 */
export function window(args: PageArgs, ctx: Pick<Context, 'config'>): { take: number; skip: number } {
  const max = ctx.config.apiMaxLimit;
  if (args.limit != null && args.limit < 1) throw ValidationError.field('limit', 'Ensure this value is greater than or equal to 1.');
  if (args.limit != null && args.limit > max) throw ValidationError.field('limit', `Ensure this value is less than or equal to ${max}.`);
  if (args.offset != null && args.offset < 0) throw ValidationError.field('offset', 'Ensure this value is greater than or equal to 0.');
  return { take: args.limit ?? DEFAULT_LIMIT, skip: args.offset ?? 0 };
}

/** A page reads the database (its rows and its count), and what it selects costs once per row it may hold. */
export const pageComplexity = (args: PageArgs, _ctx: unknown, field: { extensions?: unknown }) => ({
  field: lookupCost(field),
  multiplier: Math.max(args.limit ?? DEFAULT_LIMIT, 1),
});

/**
 * A Pothos prisma query (`{ select }` or `{ include }`) that also reads `fields`: what a resolver
 * checks on the row besides what the operation selects.
 */
export function alsoSelecting<Q extends object>(query: Q, fields: Record<string, true>): Q {
  const select = (query as { select?: Record<string, unknown> }).select;
  return select ? ({ ...query, select: { ...select, ...fields } } as Q) : query;
}
