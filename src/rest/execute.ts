// Runs a REST route's GraphQL operation through the same yoga pipeline as /graphql (its context
// factory, so authentication is one; its execute, so masking and limits apply). The documents are
// the routes', built and validated once when the API is made (router.ts, operation.ts).
import type express from 'express';
import type { DocumentNode, ExecutionResult, GraphQLError } from 'graphql';
import { exemptFromCostLimit } from '../graphql/builder.ts';
import type { Context } from '../graphql/context.ts';
import type { Yoga } from '../graphql/yoga.ts';

export interface Session {
  context: Context;
  run(document: DocumentNode, variables?: Record<string, unknown>): Promise<ExecutionResult>;
}

export class AuthenticationFailed extends Error {
  readonly error: GraphQLError;
  constructor(error: GraphQLError) {
    super(error.message);
    this.error = error;
  }
}

/**
 * Opens the request's GraphQL session: its context (who is asking) and a way to run operations.
 * `anonymous` leaves the Authorization header out, so the request reads what anyone may (v2).
 */
export async function session(yoga: Yoga, req: express.Request, opts: { anonymous?: boolean } = {}): Promise<Session> {
  const headers = new Headers();
  if (req.headers.authorization && !opts.anonymous) headers.set('authorization', req.headers.authorization);
  // Where the call came from, for the audit log (docs/design/audit.md).
  if (req.headers['user-agent']) headers.set('user-agent', req.headers['user-agent']);
  const request = new Request(`http://lectern.internal${req.originalUrl}`, { method: 'POST', headers });
  const enveloped = yoga.getEnveloped({ request, req } as never);
  let context: Context;
  try {
    context = (await enveloped.contextFactory()) as unknown as Context;
  } catch (e) {
    if ((e as GraphQLError).extensions?.code === 'UNAUTHENTICATED') throw new AuthenticationFailed(e as GraphQLError);
    throw e;
  }
  // Operations made here come from the route table, sized by the REST page limit: not priced by
  // the GraphQL cost limit, which bounds what a client shapes (the depth limit still applies).
  exemptFromCostLimit(context);
  return {
    context,
    run: async (document, variables) =>
      (await enveloped.execute({
        schema: enveloped.schema,
        document,
        variableValues: variables,
        contextValue: context,
      })) as ExecutionResult,
  };
}
