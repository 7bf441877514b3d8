// The error types mutations return in their result unions; each carries its code and HTTP status.
import { builder } from '../builder.ts';
import {
  ConflictError,
  type FieldError,
  ForbiddenError,
  LecternError,
  NotFoundError,
  ThrottledError,
  UnauthenticatedError,
  ValidationError,
} from '../errors.ts';

export const ErrorInterface = builder.interfaceRef<LecternError>('Error').implement({
  description: 'Something a client did that Lectern refused, with a stable code and the HTTP status it maps to.',
  fields: (t) => ({
    message: t.exposeString('message'),
    code: t.string({ resolve: (e) => e.code }),
    status: t.int({ resolve: (e) => e.status }),
  }),
});

builder.objectType(LecternError, { name: 'BaseError', interfaces: [ErrorInterface] });
builder.objectType(UnauthenticatedError, { name: 'UnauthenticatedError', interfaces: [ErrorInterface] });
builder.objectType(ForbiddenError, { name: 'ForbiddenError', interfaces: [ErrorInterface] });
builder.objectType(ConflictError, { name: 'ConflictError', interfaces: [ErrorInterface] });
builder.objectType(ThrottledError, {
  name: 'ThrottledError',
  interfaces: [ErrorInterface],
  fields: (t) => ({ retryAfter: t.exposeInt('retryAfter', { description: 'Seconds until the next attempt is let through.' }) }),
});
builder.objectType(NotFoundError, {
  name: 'NotFoundError',
  interfaces: [ErrorInterface],
  fields: (t) => ({ model: t.exposeString('model', { description: 'What was not found: Project, Version, Build, …' }) }),
});

const FieldErrorRef = builder.objectRef<FieldError>('FieldError').implement({
  description: 'The messages for one input field; `nonFieldErrors` for rules about the input as a whole.',
  fields: (t) => ({
    field: t.exposeString('field'),
    messages: t.exposeStringList('messages'),
  }),
});

builder.objectType(ValidationError, {
  name: 'ValidationError',
  interfaces: [ErrorInterface],
  fields: (t) => ({ fieldErrors: t.field({ type: [FieldErrorRef], resolve: (e) => e.fieldErrors }) }),
});

/** The errors every write can answer with. */
export const writeErrors = { types: [ValidationError, NotFoundError, ForbiddenError, UnauthenticatedError] };
