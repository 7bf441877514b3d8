// Errors as Read the Docs' API answers them (DRF bodies, docs/design/read-the-docs.md §1.1): `{"detail": …}` for
// 401/403/404/405/429, `{"field": ["msg"]}` for 400, or a bare list for rules checked on save.
import type { GraphQLFormattedError } from 'graphql';
import { snake } from './input.ts';

export class RestError extends Error {
  readonly status: number;
  readonly body: unknown;
  readonly headers: Record<string, string>;
  constructor(status: number, body: unknown, headers: Record<string, string> = {}) {
    super(typeof body === 'object' && body && 'detail' in body ? String((body as { detail: unknown }).detail) : `HTTP ${status}`);
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
}

export const detail = (status: number, message: string, headers?: Record<string, string>) => new RestError(status, { detail: message }, headers);
export const notAuthenticated = (message = 'Authentication credentials were not provided.') => detail(401, message, { 'WWW-Authenticate': 'Token' });
export const forbidden = () => detail(403, 'You do not have permission to perform this action.');
export const notFound = (model?: string) => detail(404, model ? `No ${model} matches the given query.` : 'Not found.');

export interface FieldError {
  field: string;
  messages: string[];
}

/** `repository.url` → `{repository: {url: [...]}}`; `nonFieldErrors` → `non_field_errors` or a bare list. */
export function validationBody(fieldErrors: FieldError[], bare: boolean): unknown {
  const rule = fieldErrors.filter((f) => f.field === 'nonFieldErrors');
  if (bare && rule.length === fieldErrors.length) return rule.flatMap((f) => f.messages);
  // biome-ignore lint/suspicious/noExplicitAny: a nested DRF error body, built path by path
  const body: Record<string, any> = {};
  for (const f of fieldErrors) {
    const path = f.field === 'nonFieldErrors' ? ['non_field_errors'] : f.field.split('.').map(snake);
    let at = body;
    for (const seg of path.slice(0, -1)) at = at[seg] ??= {};
    const last = path[path.length - 1]!;
    at[last] = [...(at[last] ?? []), ...f.messages];
  }
  return body;
}

/** A typed error from a mutation's result union, or a GraphQL error with an `extensions.code`. */
export function fromDomainError(e: { code?: string; message?: string; model?: string; fieldErrors?: FieldError[] }, bare: boolean): RestError {
  switch (e.code) {
    case 'UNAUTHENTICATED':
      return notAuthenticated(e.message);
    case 'FORBIDDEN':
      return forbidden();
    case 'NOT_FOUND':
      return notFound(e.model);
    case 'VALIDATION':
      return new RestError(400, validationBody(e.fieldErrors ?? [], bare));
    case 'BAD_USER_INPUT':
      // GraphQL's refusal of a control character (graphql/input-rule.ts); the router refuses them first.
      return detail(400, e.message ?? 'Bad input.');
    case 'TIMEOUT':
    case 'QUERY_TOO_COSTLY':
      return detail(e.code === 'TIMEOUT' ? 503 : 400, e.message ?? 'Request failed.');
    default:
      return detail(500, 'A server error occurred.');
  }
}

export function fromGraphQLErrors(errors: readonly GraphQLFormattedError[], bare: boolean): RestError {
  const first = errors[0]!;
  const ext = (first.extensions ?? {}) as { code?: string; model?: string; fieldErrors?: FieldError[] };
  return fromDomainError({ code: ext.code, message: first.message, model: ext.model, fieldErrors: ext.fieldErrors }, bare);
}
