// The Pothos schema builder and nothing else. Plugin order is a rule (the first wraps the others):
// complexity first, so an operation over the cost limit is refused before anything else runs; then
// errors, so a write's refusal by scope-auth is a member of its result union like any other error
// it answers with; then scope-auth, before prisma loads anything.
// @see https://pothos-graphql.dev/docs/guide/app-layout

import SchemaBuilder from '@pothos/core';
import ComplexityPlugin, { ComplexityErrorKind, type FieldComplexityValue } from '@pothos/plugin-complexity';
import ErrorsPlugin from '@pothos/plugin-errors';
import PrismaPlugin from '@pothos/plugin-prisma';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import type { GraphQLField } from 'graphql';
import { isMaintainer, maintainsProject } from '../domain/access.ts';
import { inOrganization, ownsOrganization } from '../domain/organizations.ts';
import type PrismaTypes from '../generated/pothos-types.ts';
import { getDatamodel } from '../generated/pothos-types.ts';
import type { UploadedFile } from '../uploads/spool.ts';
import type { Context } from './context.ts';
import { ForbiddenError, LecternError, QueryTooCostlyError, UnauthenticatedError } from './errors.ts';

/**
 * What a field that reads the database costs: a relation, a lookup of its own, a page, or a field
 * whose selection joins a relation. About one SQL statement; a scalar costs 1.
 */
export const LOOKUP_COST = 10;
/**
 * What a root field costs (a lookup, a page, a mutation). More than a nested lookup: each one
 * starts its own statements and its own resolver work at once, so aliasing root fields is the
 * cheapest way to ask for many lookups; 20,000 (the default limit) allows about 200 of them.
 */
export const ROOT_COST = 100;

const ROOT_KINDS = new Set(['Query', 'Mutation', 'Subscription']);
/** The cost of a field that reads the database: ROOT_COST at the root, LOOKUP_COST below. */
export const lookupCost = (field: { extensions?: unknown }) =>
  ROOT_KINDS.has((field.extensions as FieldExtensions | undefined)?.pothosConfig?.kind ?? '') ? ROOT_COST : LOOKUP_COST;
/** The multiplier of a list whose length the operation does not choose (a relation list). */
const LIST_MULTIPLIER = 10;

/**
 * Operations Lectern builds itself (the REST adapters) rather than a client: their shape comes
 * from a fixed route table and their size from the REST page limit, so the cost limit, which
 * bounds operations a client shapes, does not apply to them. The depth limit still does.
 */
const ownOperations = new WeakSet<object>();
export function exemptFromCostLimit(ctx: object): void {
  ownOperations.add(ctx);
}
export const isExemptFromCostLimit = (ctx: object) => ownOperations.has(ctx);

interface FieldExtensions {
  pothosConfig?: { kind: string; type: { kind: string; ref?: unknown; type?: { ref?: unknown } } };
  pothosPrismaRelationField?: unknown;
  pothosPrismaSelect?: unknown;
}

const isPrismaModel = (ref: unknown) => typeof ref === 'object' && ref !== null && 'modelName' in ref;
/** A `select` naming a relation (a nested object), which the parent's query then loads. */
const selectsRelation = (select: unknown) =>
  typeof select === 'object' && select !== null && Object.values(select).some((v) => typeof v === 'object' && v !== null);

const costs = new WeakMap<object, FieldComplexityValue>();

/**
 * The cost of a field without a `complexity` of its own: ROOT_COST for a root field; LOOKUP_COST
 * when it reads the database (on a model: a relation, a field returning a model, which looks it
 * up, or a field selecting a relation); 1 otherwise; a list multiplies its selection by LIST_MULTIPLIER.
 * Aliases are separate selections, so each alias costs again. Fields that read the database in a
 * resolver of their own, and pages (multiplied by their limit), say so with `complexity`.
 */
function fieldCost(field: GraphQLField<unknown, unknown>): FieldComplexityValue {
  const known = costs.get(field);
  if (known !== undefined) return known;
  const e = field.extensions as FieldExtensions;
  const config = e.pothosConfig;
  const list = config?.type.kind === 'List';
  const returned = list ? config?.type.type?.ref : config?.type.ref;
  const root = ROOT_KINDS.has(config?.kind ?? '');
  const reads =
    root || e.pothosPrismaRelationField !== undefined || (config?.kind === 'PrismaObject' && isPrismaModel(returned)) || selectsRelation(e.pothosPrismaSelect);
  const cost = root ? ROOT_COST : reads ? LOOKUP_COST : 1;
  const value = list ? { field: cost, multiplier: LIST_MULTIPLIER } : cost;
  costs.set(field, value);
  return value;
}

export const builder = new SchemaBuilder<{
  Context: Context;
  PrismaTypes: PrismaTypes;
  /**
   * Every root field and every field that reads maintainers' data declares one (test/graphql/
   * auth-scopes.test.ts checks): `public` (anyone; what they see is filtered by domain/access.ts's
   * rules), `loggedIn`, `maintainerOf` (a project by id, on a field of a project already read) and
   * `maintainerOfProject` (the project a write names by slug: 401, 404, 403 in Read the Docs' order),
   * `memberOfOrganization` (an organization by id, on a field of one already read; site admins too)
   * and `ownerOfOrganization` (the organization a write names by slug: 401, 404, 403).
   */
  AuthScopes: {
    public: boolean;
    loggedIn: boolean;
    siteAdmin: boolean;
    selfOrAdmin: number;
    self: number;
    maintainerOf: number;
    maintainerOfProject: string;
    memberOfOrganization: number;
    ownerOfOrganization: string;
  };
  Scalars: {
    DateTime: { Input: Date; Output: Date };
    JSON: { Input: unknown; Output: unknown };
    Upload: { Input: UploadedFile; Output: never };
  };
  DefaultFieldNullability: false;
}>({
  plugins: [ComplexityPlugin, ErrorsPlugin, ScopeAuthPlugin, PrismaPlugin],
  defaultFieldNullability: false,
  scopeAuth: {
    authScopes: (ctx) => {
      // The user's own powers (their account, organizations, new projects): not a token limited to
      // projects, which reaches those projects and nothing else (docs/design/tokens.md).
      // Asked when each field is checked: a write that signs in (setUpFirstAdmin, signIn) changes the viewer mid-request.
      const whole = () => ctx.viewer !== null && !ctx.viewer.limits?.projectIds;
      return {
        public: true,
        loggedIn: whole(),
        // Site admins manage users (domain/users.ts).
        siteAdmin: ctx.viewer?.isAdmin === true,
        // A user's own account data (their tokens), or also an admin's view of it (email, admin, disabled).
        self: (userId: number) => whole() && ctx.viewer?.id === userId,
        selfOrAdmin: (userId: number) => whole() && (ctx.viewer?.id === userId || ctx.viewer?.isAdmin === true),
        // Maintainers of the project with this id; others are refused before the resolver runs.
        maintainerOf: (projectId: number) => isMaintainer(ctx, projectId),
        maintainerOfProject: (slug: string) => maintainsProject(ctx, slug),
        memberOfOrganization: (organizationId: number) => whole() && inOrganization(ctx, organizationId),
        ownerOfOrganization: (slug: string) => whole() && ownsOrganization(ctx, slug),
      };
    },
    unauthorizedError: (_parent, ctx) => (ctx.viewer ? new ForbiddenError() : new UnauthenticatedError()),
  },
  errors: { defaultTypes: [LecternError] },
  prisma: {
    client: (ctx) => ctx.prisma,
    dmmf: getDatamodel(),
    exposeDescriptions: true,
    filterConnectionTotalCount: true,
    onUnusedQuery: process.env.NODE_ENV === 'production' ? null : 'error',
  },
  // Checked before the first root field resolves, so a refused operation sends no SQL at all.
  complexity: {
    fieldComplexity: (_args, _ctx, field) => fieldCost(field as GraphQLField<unknown, unknown>),
    limit: (ctx) => {
      const { maxDepth, maxComplexity } = (ctx as Context).config.graphql;
      return ownOperations.has(ctx) ? { depth: maxDepth } : { depth: maxDepth, complexity: maxComplexity };
    },
    complexityError: (kind, r) => {
      if (kind === ComplexityErrorKind.Complexity) return new QueryTooCostlyError('complexity', r.complexity, r.maxComplexity ?? 0);
      if (kind === ComplexityErrorKind.Depth) return new QueryTooCostlyError('depth', r.depth, r.maxDepth ?? 0);
      return new QueryTooCostlyError('breadth', r.breadth, r.maxBreadth ?? 0);
    },
  },
});

// The root Subscription type (live build logs, over server-sent events), declared once here so
// any type file can add its fields, as Query and Mutation are declared once in schema.ts.
builder.subscriptionType({});
