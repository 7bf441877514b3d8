// Every error a caller can be shown: a stable code, the HTTP status it maps to, and for validation
// the fields at fault. Domain code throws these; GraphQL returns them as members of a mutation's
// result union (the Pothos errors plugin) or as errors with `extensions.code` (graphql/errors.ts
// maps them), the REST adapter maps those to Read the Docs' bodies, and the docs server to its
// pages. Anything else thrown is a bug, shown as a 500 without detail.

/** The codes, in one place, with the HTTP status each maps to. */
export const ErrorCodes = {
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  VALIDATION: 400,
  CONFLICT: 409,
  /** Too many attempts (signing in): try again after `retryAfter` seconds. */
  THROTTLED: 429,
  QUERY_TOO_COSTLY: 400,
  /** A statement ran past LECTERN_DB_STATEMENT_TIMEOUT_MS and the database cancelled it. */
  TIMEOUT: 503,
} as const;
export type ErrorCode = keyof typeof ErrorCodes;

export class LecternError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** What a client is told besides the message (`model`, `fieldErrors`, limits), by name. */
  readonly details: Readonly<Record<string, unknown>>;
  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.code = code;
    this.status = ErrorCodes[code];
    this.details = details;
  }
}

export class UnauthenticatedError extends LecternError {
  constructor(message = 'Authentication credentials were not provided.') {
    super('UNAUTHENTICATED', message);
  }
}

export class ForbiddenError extends LecternError {
  constructor(message = 'You do not have permission to perform this action.') {
    super('FORBIDDEN', message);
  }
}

/** Too many attempts for now (429); `retryAfter` seconds until the next one is let through. */
export class ThrottledError extends LecternError {
  readonly retryAfter: number;
  constructor(retryAfter: number) {
    super('THROTTLED', `Too many attempts. Try again in ${retryAfter} second${retryAfter === 1 ? '' : 's'}.`, { retryAfter });
    this.retryAfter = retryAfter;
  }
}

/** The request is valid but cannot be done in the present state (409). */
export class ConflictError extends LecternError {
  constructor(message: string) {
    super('CONFLICT', message);
  }
}

/** Read the Docs' model names, so `No Project matches the given query.` reads the same. */
export type ModelName =
  | 'Project'
  | 'Version'
  | 'Build'
  | 'ProjectRelationship'
  | 'Redirect'
  | 'EnvironmentVariable'
  | 'Integration'
  | 'User'
  | 'ApiToken'
  | 'Webhook'
  | 'AutomationRule'
  | 'Organization'
  | 'Team'
  | 'Invitation'
  | 'IdentityProvider';

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
