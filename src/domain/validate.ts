// Input checks shared by every write, phrased as Django REST framework phrases them, so the REST
// layer can pass the messages through unchanged. Each check returns the messages for one field;
// `collect` gathers them into one ValidationError, so a client sees every bad field at once and
// nothing is written.
import { type FieldError, ValidationError } from './errors.ts';
import { LOCAL_SETTING, localRepositoryPath, resolveLocalRepository } from './git.ts';

export type Check = () => string[] | string | undefined;

export class Collector {
  readonly errors: FieldError[] = [];

  add(field: string, result: string[] | string | undefined): this {
    const messages = result === undefined ? [] : Array.isArray(result) ? result : [result];
    if (messages.length) {
      const existing = this.errors.find((e) => e.field === field);
      if (existing) existing.messages.push(...messages);
      else this.errors.push({ field, messages });
    }
    return this;
  }

  throwIfAny(): void {
    if (this.errors.length) throw new ValidationError(this.errors);
  }
}

export const required = 'This field is required.';
export const maxLength = (n: number) => `Ensure this field has no more than ${n} characters.`;
export const notBlank = 'This field may not be blank.';
export const invalidChoice = (v: unknown) => `"${String(v)}" is not a valid choice.`;

/** An email address, as accounts, organizations and invitations take one. */
export const emailProblem = (email: string) => (/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email) && email.length <= 254 ? undefined : 'Enter a valid email address.');

/** A string field: undefined passes (optional), blank and overlong fail. */
export function checkString(value: string | null | undefined, opts: { max: number; required?: boolean; allowBlank?: boolean }) {
  if (value === undefined || value === null) return opts.required ? required : undefined;
  if (!opts.allowBlank && value.trim() === '') return notBlank;
  if (value.length > opts.max) return maxLength(opts.max);
  return undefined;
}

export function checkChoice(value: string | null | undefined, choices: ReadonlyMap<string, string> | ReadonlySet<string>) {
  if (value === undefined || value === null) return undefined;
  return choices.has(value) ? undefined : invalidChoice(value);
}

export function checkUrl(value: string | null | undefined, max = 255) {
  if (value === undefined || value === null || value === '') return undefined;
  if (value.length > max) return maxLength(max);
  try {
    const u = new URL(value);
    if ((u.protocol === 'http:' || u.protocol === 'https:') && u.hostname) return undefined;
  } catch {
    // fall through
  }
  return 'Enter a valid URL.';
}

/**
 * Repository URLs a build may clone: http(s) and git:// (RTD's RepositoryURLValidator with
 * private repositories off), and repositories on this machine (`file://` or a path) under the
 * directories LECTERN_BUILD_LOCAL_REPOSITORIES names. Shell-significant characters are refused first.
 */
export function checkRepositoryUrl(value: string | null | undefined, localRepositories: string[] = []) {
  if (value === undefined || value === null) return required;
  if (value.trim() === '') return notBlank;
  if (value.length > 255) return maxLength(255);
  if (value.includes('&&') || value.includes('|')) return 'Invalid character in the URL';
  // A repository on this machine: only under a directory LECTERN_BUILD_LOCAL_REPOSITORIES names.
  if (localRepositoryPath(value) !== null) {
    const local = resolveLocalRepository(value, localRepositories);
    return typeof local === 'string' ? local : undefined;
  }
  // git's transport helpers run a program (ext::) or talk over descriptors (fd::).
  if (/^[A-Za-z][A-Za-z0-9+.-]*::/.test(value))
    return `Git's transport helpers (${value.split('::')[0]}::) are not supported: use http(s):// or git://, or for a repository on this machine a file:// URL or path under a directory ${LOCAL_SETTING} names`;
  let scheme = '';
  try {
    scheme = new URL(value).protocol.replace(/:$/, '');
  } catch {
    scheme = '';
  }
  if (['http', 'https', 'git'].includes(scheme)) {
    return /[\s\0]/.test(value) ? 'Invalid character in the URL' : undefined;
  }
  if (/^[\w]+@.+/.test(value) || scheme === 'ssh' || scheme === 'ssh+git') return 'Manual cloning via SSH is not supported';
  return 'Invalid scheme for URL';
}
