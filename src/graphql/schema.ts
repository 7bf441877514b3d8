// The schema: the type files register themselves on the builder; this file only gathers them.
import { type GraphQLFieldResolver, type GraphQLObjectType, lexicographicSortSchema, printSchema } from 'graphql';
import { builder } from './builder.ts';
import type { Context } from './context.ts';
import { ForbiddenError, QueryTooCostlyError } from './errors.ts';
import './types/scalars.ts';
import './types/errors.ts';
import './types/common.ts';
import './types/user.ts';
import './types/project.ts';
import './types/build-limits.ts';
import './types/organization.ts';
import './types/audit.ts';
import './types/sso.ts';
import './types/version.ts';
import './types/build.ts';
import './types/subproject.ts';
import './types/redirect.ts';
import './types/automation-rule.ts';
import './types/analytics.ts';
import './types/environment-variable.ts';
import './types/integration.ts';
import './types/webhook.ts';
import './types/embed.ts';
import './types/search.ts';

builder.queryType({});
builder.mutationType({});

export const schema = builder.toSchema();

/**
 * The cost limit is checked as each root field starts (the complexity plugin), so a refused
 * operation sends no SQL. Once one root field of a request is refused, the others answer null
 * without running or erring again: a refused
 * operation of 10,000 aliases gets one error, not 10,000 (each of which graphql-js would locate in
 * the query text, a scan of the whole text per error).
 */
function refuseOnce(root: GraphQLObjectType | null | undefined): void {
  const refused = new WeakSet<object>();
  for (const field of Object.values(root?.getFields() ?? {})) {
    const resolve = field.resolve as GraphQLFieldResolver<unknown, object> | undefined;
    if (!resolve) continue;
    field.resolve = (source, args, ctx, info) => {
      if (refused.has(ctx)) return null;
      let result: unknown;
      try {
        result = resolve(source, args, ctx, info);
      } catch (e) {
        if (e instanceof QueryTooCostlyError) refused.add(ctx);
        throw e;
      }
      // A mutation's errors plugin turns the refusal into a member of its result union (through a
      // promise): it is still the operation's refusal, not the mutation's answer. Mutations run one
      // after another, so the next one sees it.
      const refusal = (r: unknown) => {
        // (The errors plugin hands a proxy of the error, which is no instance of it: the code tells.)
        const e = r as Partial<QueryTooCostlyError> | null;
        if (typeof e !== 'object' || e === null || e.code !== QueryTooCostlyError.CODE) return r;
        refused.add(ctx);
        throw new QueryTooCostlyError(e.kind!, e.value!, e.max!);
      };
      return result instanceof Promise ? result.then(refusal) : refusal(result);
    };
  }
}
refuseOnce(schema.getQueryType());
refuseOnce(schema.getMutationType());

/** What a read-only token is told when it tries to write. */
export const READ_ONLY_TOKEN = 'This token is read-only: make the change with a token that may write.';

/**
 * A read-only token writes nothing (docs/design/tokens.md): every mutation it sends is refused
 * before its resolver runs, whatever the mutation's own scope would allow. Checked here, on the
 * root, so a mutation added later is covered without a word of its own. (Its projects are at most
 * read besides: domain/access.ts gives it no admin access.)
 */
function refuseReadOnlyTokens(root: GraphQLObjectType | null | undefined): void {
  for (const field of Object.values(root?.getFields() ?? {})) {
    const resolve = field.resolve as GraphQLFieldResolver<unknown, Context> | undefined;
    if (!resolve) continue;
    field.resolve = (source, args, ctx, info) => {
      if (ctx.viewer?.limits?.readOnly) throw new ForbiddenError(READ_ONLY_TOKEN);
      return resolve(source, args, ctx, info);
    };
  }
}
refuseReadOnlyTokens(schema.getMutationType());

/** The SDL committed as schema.graphql. */
export const printedSchema = () => `${printSchema(lexicographicSortSchema(schema))}\n`;
