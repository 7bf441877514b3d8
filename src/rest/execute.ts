// Runs a REST route's GraphQL operation through the same yoga pipeline as /graphql (its context
// factory, so authentication is one; its execute, so masking and limits apply). Each distinct
// operation text is parsed and validated once, then cached.
import type express from 'express';
import { type DocumentNode, type ExecutionResult, type GraphQLError, type GraphQLSchema, print } from 'graphql';
import { exemptFromCostLimit } from '../graphql/builder.ts';
import type { Context } from '../graphql/context.ts';
import type { Yoga } from '../graphql/yoga.ts';
import { buildOperation } from './operation.ts';
import type { Route } from './route.ts';

const MAX_CACHED = 2000;
const documents = new Map<string, DocumentNode>();

/** The parsed, validated document for an operation text; a bad text is a bug, so it throws. */
export function operation(yoga: Yoga, text: string): DocumentNode {
  const cached = documents.get(text);
  if (cached) return cached;
  // yoga's own parse and validate: under some loaders a second copy of graphql-js is loaded for
  // src/, and its classes would not match the schema's.
  const { schema, parse, validate } = yoga.getEnveloped();
  const document = parse(text) as DocumentNode;
  const errors = validate(schema, document) as readonly GraphQLError[];
  if (errors.length) throw new Error(`REST operation does not validate: ${errors.map((e) => e.message).join('; ')}\n${text}`);
  if (documents.size >= MAX_CACHED) documents.delete(documents.keys().next().value!);
  documents.set(text, document);
  return document;
}

/**
 * The document a route runs for a selection, built from the schema (operation.ts), validated once
 * and cached by route and selection.
 */
export function routeDocument(yoga: Yoga, route: Route, selection: string): DocumentNode {
  const key = `${route.name} ${route.method}\n${selection}`;
  const cached = documents.get(key);
  if (cached) return cached;
  const { schema, validate } = yoga.getEnveloped();
  const document = buildOperation(schema as GraphQLSchema, route, selection);
  const errors = validate(schema, document) as readonly GraphQLError[];
  if (errors.length) throw new Error(`route ${route.name}: its operation does not validate: ${errors.map((e) => e.message).join('; ')}\n${print(document)}`);
  if (documents.size >= MAX_CACHED) documents.delete(documents.keys().next().value!);
  documents.set(key, document);
  return document;
}

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
