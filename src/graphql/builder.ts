// The Pothos schema builder and nothing else. Plugin order is a rule: scope-auth first, errors
// before prisma, complexity last.
// @see https://pothos-graphql.dev/docs/guide/app-layout
import SchemaBuilder from '@pothos/core';
import ComplexityPlugin from '@pothos/plugin-complexity';
import ErrorsPlugin from '@pothos/plugin-errors';
import PrismaPlugin from '@pothos/plugin-prisma';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import type PrismaTypes from '../generated/pothos-types.ts';
import { getDatamodel } from '../generated/pothos-types.ts';
import { prisma, services } from '../services.ts';
import type { Context } from './context.ts';
import { ForbiddenError, LecternError, UnauthenticatedError } from './errors.ts';

export const builder = new SchemaBuilder<{
  Context: Context;
  PrismaTypes: PrismaTypes;
  AuthScopes: { loggedIn: boolean; maintainerOf: number };
  Scalars: {
    DateTime: { Input: Date; Output: Date };
    JSON: { Input: unknown; Output: unknown };
  };
  DefaultFieldNullability: false;
}>({
  plugins: [ScopeAuthPlugin, ErrorsPlugin, PrismaPlugin, ComplexityPlugin],
  defaultFieldNullability: false,
  scopeAuth: {
    authScopes: (ctx) => ({
      loggedIn: ctx.viewer !== null,
      // Maintainers of the project with this id; others are refused before the resolver runs.
      maintainerOf: async (projectId: number) => ctx.viewer !== null && (await ctx.maintainedProjectIds()).has(projectId),
    }),
    unauthorizedError: (_parent, ctx) => (ctx.viewer ? new ForbiddenError() : new UnauthenticatedError()),
  },
  errors: { defaultTypes: [LecternError] },
  prisma: {
    client: () => prisma(),
    dmmf: getDatamodel(),
    exposeDescriptions: true,
    filterConnectionTotalCount: true,
    onUnusedQuery: process.env.NODE_ENV === 'production' ? null : 'error',
  },
  complexity: {
    defaultComplexity: 1,
    defaultListMultiplier: 10,
    limit: () => {
      const { maxDepth, maxComplexity } = services().config.graphql;
      return { depth: maxDepth, complexity: maxComplexity };
    },
  },
});

// The root Subscription type (live build logs, over server-sent events), declared once here so
// any type file can add its fields, as Query and Mutation are declared once in schema.ts.
builder.subscriptionType({});
