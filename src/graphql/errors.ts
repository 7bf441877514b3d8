// Every error a client can be shown: a stable code, the HTTP status it maps to, and for
// validation the fields at fault. Mutations return them as members of their result union (the
// Pothos errors plugin); elsewhere they travel as GraphQL errors with `extensions.code` and
// `extensions.http.status`, which yoga does not mask. Anything else thrown is masked as a 500.
import { GraphQLError } from 'graphql';

/** The codes, in one place; the REST adapter maps them to Read the Docs' bodies. */
export const ErrorCodes = {
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  VALIDATION: 400,
  CONFLICT: 409,
  QUERY_TOO_COSTLY: 400,
  /** A statement ran past LECTERN_DB_STATEMENT_TIMEOUT_MS and the database cancelled it. */
  TIMEOUT: 503,
} as const;
export type ErrorCode = keyof typeof ErrorCodes;

export class LecternError extends GraphQLError {
  readonly code: ErrorCode;
  readonly status: number;
  constructor(code: ErrorCode, message: string, extra: Record<string, unknown> = {}) {
    super(message, { extensions: { code, http: { status: ErrorCodes[code] }, ...extra } });
    this.code = code;
    this.status = ErrorCodes[code];
  }
}

export class UnauthenticatedError extends LecternError {
  constructor(message = 'Authentication credentials were not provided.') {
    // DRF answers every 401 with the scheme to use (rtd-behavior §0); yoga sends `http.headers`.
    super('UNAUTHENTICATED', message, { http: { status: ErrorCodes.UNAUTHENTICATED, headers: { 'WWW-Authenticate': 'Token' } } });
  }
}

export class ForbiddenError extends LecternError {
  constructor(message = 'You do not have permission to perform this action.') {
    super('FORBIDDEN', message);
  }
}

/** Read the Docs' model names, so `No Project matches the given query.` reads the same. */
export type ModelName = 'Project' | 'Version' | 'Build' | 'ProjectRelationship' | 'Redirect' | 'EnvironmentVariable' | 'Integration' | 'User';

export class NotFoundError extends LecternError {
  readonly model: ModelName;
  constructor(model: ModelName) {
    super('NOT_FOUND', `No ${model} matches the given query.`, { model });
    this.model = model;
  }
}

export interface FieldError {
  /** Dotted path of the input field (`repository.url`); `nonFieldErrors` for rules about the input as a whole. */
  field: string;
  messages: string[];
}

export class ValidationError extends LecternError {
  readonly fieldErrors: FieldError[];
  constructor(fieldErrors: FieldError[]) {
    const first = fieldErrors[0];
    super('VALIDATION', first ? `${first.field}: ${first.messages.join(' ')}` : 'Invalid input.', { fieldErrors });
    this.fieldErrors = fieldErrors;
  }

  static field(field: string, ...messages: string[]): ValidationError {
    return new ValidationError([{ field, messages }]);
  }
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
