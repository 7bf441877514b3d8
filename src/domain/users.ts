// Users, their passwords and their API tokens. A token's key is returned once; only its hash is
// stored. Site admins manage users; an installation always keeps one admin who is not disabled.

import { randomBytes } from 'node:crypto';
import type { PrismaClient } from '../db/database.ts';
import { Prisma } from '../generated/prisma/client.ts';
import { hashToken, newTokenKey } from '../secrets.ts';
import { projectsWithAccess } from './access.ts';
import { audit } from './audit.ts';
import { actAs, type Context, type Viewer } from './context.ts';
import { ConflictError, ForbiddenError, NotFoundError, ThrottledError, UnauthenticatedError, ValidationError } from './errors.ts';
import { type BegunHash, hashPassword, needsRehash, passwordProblem, verifyPassword } from './passwords.ts';
import { endOtherSessions } from './sessions.ts';
import { passwordRefusedFor } from './sso.ts';
import { Collector, checkString, emailProblem } from './validate.ts';

const USERNAME = /^[\w.@+-]+$/;

/** Why a new username is refused (Django's rule, as Read the Docs has it), or undefined. */
const usernameProblem = (username: string) =>
  checkString(username, { max: 150, required: true }) ??
  (USERNAME.test(username) ? undefined : 'Enter a valid username. This value may contain only letters, numbers, and @/./+/-/_ characters.');

/**
 * Runs a serializable transaction about users; one that lost to another at the same time (PostgreSQL
 * serialization failure, P2034) is answered as a conflict, not a server error.
 */
async function serializably<T>(db: PrismaClient, what: string, fn: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
  try {
    return await db.$transaction(fn, { isolationLevel: 'Serializable' });
  } catch (e) {
    if (e instanceof Prisma.PrismaClientKnownRequestError && e.code === 'P2034') throw new ConflictError(`${what} at the same time: try again.`);
    throw e;
  }
}

export interface NewUser {
  email?: string;
  /** Lets the user sign in to the dashboard; without it the user has API tokens only. */
  password?: string;
  isAdmin?: boolean;
  /** The password's hash, begun earlier (the command line's); used only if of `password`. */
  begun?: BegunHash;
}

/** Creates a user and an API token (its key returned once), as the command line does. */
export async function createUser(db: PrismaClient, username: string, opts: NewUser = {}) {
  const user = await createAccount(db, username, opts);
  return { user, token: await createToken(db, user.id) };
}

/** Why an email address is refused, or undefined. */

export interface AccountChange {
  /** '' removes it. */
  email?: string | null;
  emailNotifications?: boolean | null;
}

/** The caller changes their own email address, and whether Lectern emails them about their projects' builds. */
export async function updateAccount<Q extends object>(db: PrismaClient, viewer: Viewer, change: AccountChange, query: Q) {
  const email = change.email?.trim();
  if (email) new Collector().add('email', emailProblem(email)).throwIfAny();
  return db.user.update({
    ...query,
    where: { id: viewer.id },
    data: {
      ...(email !== undefined ? { email: email || null } : {}),
      ...(change.emailNotifications != null ? { emailNotifications: change.emailNotifications } : {}),
    },
  });
}

/** Creates a user, with no token (an admin's, in the dashboard). Bad input changes nothing. */
export async function createAccount(db: PrismaClient, username: string, opts: NewUser = {}) {
  const c = new Collector();
  c.add('username', usernameProblem(username));
  const { email, password } = opts;
  if (email !== undefined) c.add('email', emailProblem(email));
  if (password !== undefined) c.add('password', passwordProblem(password, username));
  c.throwIfAny();
  const passwordHash = password === undefined ? null : await hashPassword(password, opts.begun);
  try {
    return await db.user.create({ data: { username, email: email ?? null, passwordHash, isAdmin: opts.isAdmin ?? false } });
  } catch (e) {
    if (e instanceof Prisma.PrismaClientKnownRequestError && e.code === 'P2002') {
      throw ValidationError.field('username', 'A user with that username already exists.');
    }
    throw e;
  }
}

/** A new token's row data and its key, which is not stored anywhere: only its hash. */
function newToken(userId: number, name: string) {
  if (name.length > 100) throw ValidationError.field('name', 'Ensure this field has no more than 100 characters.');
  const key = newTokenKey();
  return { key, data: { userId, keyHash: hashToken(key), keyPrefix: key.slice(0, 8), name: name.trim() } };
}

/** Creates a token for the user and returns its key. */
export async function createToken(db: PrismaClient, userId: number, name = ''): Promise<string> {
  const { key, data } = newToken(userId, name);
  await db.apiToken.create({ data });
  return key;
}

/** What a new token may do (docs/design/tokens.md): by default, all its user may, for ever. */
export interface TokenOptions {
  expiresAt?: Date | null;
  readOnly?: boolean | null;
  /** Limited to these projects (slugs), which the user must have access to; null: not limited. */
  projects?: readonly string[] | null;
}

/** How far ahead a token may expire, and how many projects it may be limited to. */
const TOKEN_MAX_LIFETIME_MS = 10 * 366 * 24 * 60 * 60 * 1000;
const TOKEN_PROJECTS_LIMIT = 100;

/** The ids of the projects a token is limited to, each one the user has access to; or the fields' errors. */
async function tokenProjects(db: PrismaClient, viewer: Viewer, options: TokenOptions): Promise<number[] | null> {
  const c = new Collector();
  const expires = options.expiresAt?.getTime();
  if (expires !== undefined && (Number.isNaN(expires) || expires <= Date.now())) c.add('expiresAt', 'The expiry must be in the future.');
  else if (expires !== undefined && expires > Date.now() + TOKEN_MAX_LIFETIME_MS) c.add('expiresAt', 'The expiry must be within ten years.');
  const slugs = options.projects ? [...new Set(options.projects)] : null;
  if (slugs && slugs.length === 0) c.add('projects', 'Name at least one project, or leave the token unlimited.');
  if (slugs && slugs.length > TOKEN_PROJECTS_LIMIT) c.add('projects', `Ensure this field has no more than ${TOKEN_PROJECTS_LIMIT} elements.`);
  c.throwIfAny();
  if (!slugs) return null;
  const found = await db.project.findMany({ where: { AND: [{ slug: { in: slugs } }, projectsWithAccess(viewer, 'read')] }, select: { id: true, slug: true } });
  const missing = slugs.filter((s) => !found.some((p) => p.slug === s));
  if (missing.length) throw ValidationError.field('projects', `You have no project ${missing.map((s) => `"${s}"`).join(', ')}.`);
  return found.map((p) => p.id);
}

/** A new token of the caller's, with its row (read with `query`, the client's selection) and its key. */
export async function createOwnToken<Q extends object>(ctx: Context, name: string, query: Q, options: TokenOptions = {}) {
  const viewer = ctx.viewer!;
  const db = ctx.prisma;
  const { key, data } = newToken(viewer.id, name);
  const projectIds = await tokenProjects(db, viewer, options);
  const limited = {
    expiresAt: options.expiresAt ?? null,
    readOnly: options.readOnly ?? false,
    projectScoped: projectIds !== null,
    projects: { create: (projectIds ?? []).map((projectId) => ({ projectId })) },
  };
  const token = await db.apiToken.create({ ...query, data: { ...data, ...limited } });
  await audit(ctx, {
    action: 'token-created',
    data: {
      prefix: data.keyPrefix,
      name: data.name,
      readOnly: limited.readOnly,
      projects: options.projects ? [...options.projects] : null,
      expiresAt: options.expiresAt?.toISOString() ?? null,
    },
  });
  return { token, key };
}

/**
 * Revokes one of the caller's tokens: requests made with it are refused from now on. Its hash is
 * kept, marked revoked, so that a later use is recorded in the audit log (docs/design/audit.md).
 */
export async function revokeToken<Q extends object>(ctx: Context, id: number, query: Q) {
  const viewer = ctx.viewer!;
  return ctx.prisma.$transaction(async (tx) => {
    const token = await tx.apiToken.findFirst({ ...query, where: { id, userId: viewer.id, revokedAt: null } });
    if (!token) throw new NotFoundError('ApiToken');
    const row = await tx.apiToken.update({ where: { id }, data: { revokedAt: new Date() }, select: { keyPrefix: true, name: true } });
    await audit(ctx, { action: 'token-revoked', data: { prefix: row.keyPrefix, name: row.name } }, tx);
    return token;
  });
}

export async function createTokenFor(db: PrismaClient, username: string): Promise<string> {
  const user = await db.user.findUnique({ where: { username } });
  if (!user) throw ValidationError.field('username', `No user named "${username}".`);
  return createToken(db, user.id);
}

/**
 * Sets a user's password (the command line's `user set-password`): every session of theirs ends,
 * in the same transaction, so whoever knew the old one is signed out everywhere.
 */
export async function setPassword(db: PrismaClient, username: string, password: string, begun?: BegunHash): Promise<void> {
  const problem = passwordProblem(password, username);
  if (problem) throw ValidationError.field('password', problem);
  const passwordHash = await hashPassword(password, begun);
  await db.$transaction(async (tx) => {
    const user = await tx.user.findUnique({ where: { username }, select: { id: true } });
    if (!user) throw ValidationError.field('username', `No user named "${username}".`);
    await tx.user.update({ where: { id: user.id }, data: { passwordHash } });
    await endOtherSessions(tx, user.id);
  });
}

/**
 * The caller changes their own password; the current one is asked for when there is one. Every
 * other session of theirs ends; `keep` (the cookie of the session asking, if any) stays.
 */
export async function changePassword(db: PrismaClient, viewer: Viewer, current: string | null | undefined, next: string, keep?: string): Promise<void> {
  const user = await db.user.findUniqueOrThrow({ where: { id: viewer.id }, select: { passwordHash: true } });
  if (user.passwordHash && !(await verifyPassword(user.passwordHash, current ?? ''))) {
    throw ValidationError.field('currentPassword', 'Your old password was entered incorrectly. Please enter it again.');
  }
  const problem = passwordProblem(next, viewer.username);
  if (problem) throw ValidationError.field('newPassword', problem);
  const passwordHash = await hashPassword(next);
  await db.$transaction(async (tx) => {
    await tx.user.update({ where: { id: viewer.id }, data: { passwordHash } });
    await endOtherSessions(tx, viewer.id, keep);
  });
}

export interface UserChange {
  isAdmin?: boolean | null;
  disabled?: boolean | null;
  /** A new password, set by the admin: every session of the user ends. */
  password?: string | null;
}

/**
 * An admin makes a user an admin or not, disables or enables them, or sets their password. A
 * disabled user's tokens stop working at once and their sessions are deleted, so enabling them
 * again brings none back; a new password ends every session of theirs (but `keep`, the admin's own
 * when they set their own). The last admin who is not disabled cannot stop being one.
 */
export async function changeUser<Q extends object>(db: PrismaClient, username: string, change: UserChange, query: Q, keep?: string) {
  const passwordHash = change.password == null ? undefined : await checkedHash(change.password, username);
  return serializably(db, 'Another change to the admins was made', async (tx) => {
    const user = await tx.user.findUnique({ where: { username }, select: { id: true, isAdmin: true, disabledAt: true } });
    if (!user) throw new NotFoundError('User');
    const isAdmin = change.isAdmin ?? user.isAdmin;
    const disabledAt = change.disabled == null ? user.disabledAt : change.disabled ? (user.disabledAt ?? new Date()) : null;
    const wasActiveAdmin = user.isAdmin && !user.disabledAt;
    if (wasActiveAdmin && !(isAdmin && !disabledAt)) {
      const others = await tx.user.count({ where: { isAdmin: true, disabledAt: null, id: { not: user.id } } });
      if (others === 0) throw new ConflictError('This is the only admin: make another user an admin first.');
    }
    if (disabledAt) await endOtherSessions(tx, user.id);
    else if (passwordHash) await endOtherSessions(tx, user.id, keep);
    return tx.user.update({ ...query, where: { id: user.id }, data: { isAdmin, disabledAt, ...(passwordHash ? { passwordHash } : {}) } });
  });
}

/** The hash of a new password, or the field error saying why it is refused. */
async function checkedHash(password: string, username: string): Promise<string> {
  const problem = passwordProblem(password, username);
  if (problem) throw ValidationError.field('password', problem);
  return hashPassword(password);
}

/** One answer for an unknown user, a wrong password and a disabled user: which it was is not told. */
export const SIGN_IN_REFUSED = 'Unable to sign in with the username and password given.';

/**
 * Signs the caller in with a username and password: the answer carries the session's cookie, and
 * the user is read with `query`. Failed attempts are throttled per client address, per account
 * from that address, and per account, without locking the owner out (app.ts signInThrottle).
 */
export async function signIn<Q extends object>(ctx: Context, username: string, password: string, query: Q) {
  const session = ctx.session;
  if (!session) throw new ForbiddenError('Sign in from a browser, through /graphql.');
  if (session.unavailable) throw new ForbiddenError(session.unavailable);
  const attempt = await session.admit(username.toLowerCase());
  if (attempt.wait > 0) throw new ThrottledError(attempt.wait);
  const user = await ctx.prisma.user.findUnique({ where: { username }, select: { id: true, passwordHash: true, disabledAt: true, isAdmin: true } });
  // The password is checked whether or not there is such a user, so both take the same time.
  const ok = await verifyPassword(user?.passwordHash, password);
  if (!user || !ok || user.disabledAt) {
    const reason = !user ? 'no such user' : user.disabledAt ? 'disabled' : 'wrong password';
    await audit(ctx, { action: 'sign-in-failed', user: { id: user?.id ?? null, username }, method: 'password', data: { reason } });
    throw new UnauthenticatedError(SIGN_IN_REFUSED);
  }
  // An organization that signs in with SSO only refuses its members' passwords (docs/design/sso.md).
  const ssoOnly = await passwordRefusedFor(ctx, { id: user.id, isAdmin: user.isAdmin });
  if (ssoOnly) {
    await audit(ctx, { action: 'sign-in-failed', user: { id: user.id, username }, method: 'password', data: { reason: 'single sign-on only' } });
    throw new ForbiddenError(ssoOnly);
  }
  // Only failures count against the account and the client (docs/design/sessions.md).
  await attempt.succeeded();
  if (user.passwordHash && needsRehash(user.passwordHash)) await rehash(ctx, user.id, user.passwordHash, password);
  await session.start(user.id);
  const row = await ctx.prisma.user.findUniqueOrThrow({ where: { id: user.id }, select: { id: true, username: true, isAdmin: true } });
  await audit(ctx, { action: 'sign-in', user: { id: row.id, username: row.username }, method: 'password' });
  actAs(ctx, row);
  return ctx.prisma.user.findUniqueOrThrow({ ...query, where: { id: user.id } });
}

/**
 * Stores `password` (just verified against `old`) hashed with today's algorithm and parameters,
 * unless the password was changed meanwhile (docs/design/sessions.md).
 */
async function rehash(ctx: Context, userId: number, old: string, password: string): Promise<void> {
  const passwordHash = await hashPassword(password);
  await ctx.prisma.user.updateMany({ where: { id: userId, passwordHash: old }, data: { passwordHash } });
}

/**
 * A one-time code for creating the first account, when there are no users yet (else null). Each
 * `lectern serve` that starts on an empty installation makes one and logs where to use it; all are
 * valid until the first account exists.
 */
export async function firstRunSetupCode(db: PrismaClient): Promise<string | null> {
  if ((await db.user.count()) > 0) return null;
  const code = randomBytes(24).toString('base64url');
  await db.setupCode.create({ data: { codeHash: hashToken(code) } });
  return code;
}

/** Whether the installation still waits for its first account. */
export async function setupNeeded(db: PrismaClient): Promise<boolean> {
  return (await db.user.count()) === 0;
}

export interface FirstAdmin {
  code: string;
  username: string;
  password: string;
  email?: string;
}

/**
 * Creates the first account of an installation, a site admin, with a setup code: once, while
 * there are no users (two at once: one wins, the other is told it is set up already). The codes
 * are used up with it. Signs the new admin in where sessions are offered.
 */
export async function setUpFirstAdmin<Q extends object>(ctx: Context, input: FirstAdmin, query: Q) {
  const c = new Collector();
  c.add('username', usernameProblem(input.username));
  c.add('password', passwordProblem(input.password, input.username));
  c.throwIfAny();
  const passwordHash = await hashPassword(input.password);
  const user = await serializably(ctx.prisma, 'Another first account was made', async (tx) => {
    if ((await tx.user.count()) > 0) throw new ConflictError('This installation is set up already: sign in.');
    const used = await tx.setupCode.deleteMany({ where: { codeHash: hashToken(input.code) } });
    if (used.count === 0) throw new ForbiddenError('This setup code is not valid: use the one `lectern serve` logged.');
    await tx.setupCode.deleteMany({});
    return tx.user.create({ data: { username: input.username, email: input.email ?? null, passwordHash, isAdmin: true } });
  });
  if (ctx.session && !ctx.session.unavailable) await ctx.session.start(user.id);
  actAs(ctx, { id: user.id, username: user.username, isAdmin: true });
  return ctx.prisma.user.findUniqueOrThrow({ ...query, where: { id: user.id } });
}
