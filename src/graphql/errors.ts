// How the domain's errors (domain/errors.ts) travel in GraphQL. A mutation returns them as members
// of its result union (the Pothos errors plugin); anywhere else they become GraphQL errors with
// `extensions.code`, `extensions.http.status` (which yoga answers with) and their details, made by
// toGraphQLError when yoga masks errors (app.ts). Anything else thrown is masked as a 500.
import { GraphQLError } from 'graphql';
import { LecternError } from '../domain/errors.ts';

export * from '../domain/errors.ts';

/** The GraphQL error a domain error is shown as, at the place (path, nodes) `located` was raised. */
export function toGraphQLError(error: LecternError, located?: GraphQLError): GraphQLError {
  // DRF answers every 401 with the scheme to use (docs/design/read-the-docs.md §1.1); yoga sends `http.headers`.
  const headers = error.code === 'UNAUTHENTICATED' ? { headers: { 'WWW-Authenticate': 'Token' } } : {};
  return new GraphQLError(error.message, {
    nodes: located?.nodes,
    source: located?.source,
    positions: located?.positions,
    path: located?.path,
    originalError: error,
    extensions: { code: error.code, http: { status: error.status, ...headers }, ...error.details },
  });
}

/**
 * An operation over the cost or depth limit, refused before any of it runs. The message keeps the
 * wording clients already match (`Query exceeds maximum complexity (complexity: N, max: M)`).
 */
export class QueryTooCostlyError extends LecternError {
  static readonly CODE = 'QUERY_TOO_COSTLY';
  readonly kind: 'complexity' | 'depth' | 'breadth';
  readonly value: number;
  readonly max: number;
  constructor(kind: 'complexity' | 'depth' | 'breadth', value: number, max: number) {
    super('QUERY_TOO_COSTLY', `Query exceeds maximum ${kind} (${kind}: ${value}, max: ${max})`, {
      [kind]: value,
      [`max${kind[0]!.toUpperCase()}${kind.slice(1)}`]: max,
    });
    this.kind = kind;
    this.value = value;
    this.max = max;
  }
}
