// Users: maintainers of projects, and the caller's own account. Only the username is public; a
// user's account (email, admin, disabled, password set) is theirs and site admins' to read, their
// API tokens theirs alone. `viewer` is the caller; site admins list and manage users.
import { queryFromInfo } from '@pothos/plugin-prisma';
import { audit } from '../../domain/audit.ts';
import { passwordResetAvailable, requestPasswordReset, resetPassword } from '../../domain/password-reset.ts';
import {
  changePassword,
  changeUser,
  createAccount,
  createOwnToken,
  revokeToken,
  setUpFirstAdmin,
  setupNeeded,
  signIn,
  updateAccount,
} from '../../domain/users.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { builder } from '../builder.ts';
import { ConflictError, ForbiddenError, ThrottledError, UnauthenticatedError, ValidationError } from '../errors.ts';
import { pageComplexity, pageOf, rowQuery, window } from './common.ts';
import { writeErrors } from './errors.ts';

export const User = builder.prismaObject('User', {
  fields: (t) => ({
    id: t.exposeInt('id'),
    username: t.exposeString('username'),
    email: t.exposeString('email', { nullable: true, authScopes: (u) => ({ selfOrAdmin: u.id }), description: 'The user and site admins only.' }),
    emailNotifications: t.exposeBoolean('emailNotifications', {
      authScopes: (u) => ({ selfOrAdmin: u.id }),
      description:
        "Whether Lectern emails the user about their projects' builds (a failed build of the default version, and the next that passes), when the installation sends email. The user and site admins only.",
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime', authScopes: (u) => ({ selfOrAdmin: u.id }), description: 'The user and site admins only.' }),
    isAdmin: t.exposeBoolean('isAdmin', {
      authScopes: (u) => ({ selfOrAdmin: u.id }),
      description: 'A site admin, who manages users. The user and site admins only.',
    }),
    disabled: t.boolean({
      authScopes: (u) => ({ selfOrAdmin: u.id }),
      description: "A disabled user's tokens are refused. The user and site admins only.",
      select: { disabledAt: true },
      resolve: (u) => u.disabledAt !== null,
    }),
    hasPassword: t.boolean({
      authScopes: (u) => ({ selfOrAdmin: u.id }),
      description: 'Whether the user can sign in with a password (otherwise with API tokens only). The user and site admins only.',
      select: { passwordHash: true },
      resolve: (u) => u.passwordHash !== null,
    }),
    tokens: t.relation('tokens', {
      authScopes: (u) => ({ self: u.id }),
      description: "The user's API tokens, newest first. The user only; a token's key is shown once, when it is made.",
      query: { where: { revokedAt: null }, orderBy: { id: 'desc' } },
    }),
  }),
});

export const ApiToken = builder.prismaObject('ApiToken', {
  description: 'An API token (`Authorization: Token <key>`). Its key is shown once, when it is made; only its first characters are kept to tell tokens apart.',
  fields: (t) => ({
    id: t.exposeInt('id'),
    name: t.exposeString('name'),
    prefix: t.exposeString('keyPrefix', { description: 'The first characters of the key.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime', nullable: true, description: 'When a request last used it, to the minute; null if none has.' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', nullable: true, description: 'When it stops working; null: never.' }),
    readOnly: t.exposeBoolean('readOnly', { description: 'Reads only: every write made with it is refused.' }),
    projects: t.field({
      type: ['String'],
      nullable: true,
      description: 'The only projects (slugs) it reaches; null when it is not limited to projects (empty when they were all deleted).',
      select: { projectScoped: true, projects: { select: { project: { select: { slug: true } } }, orderBy: { project: { slug: 'asc' } } } },
      resolve: (tok) => (tok.projectScoped ? tok.projects.map((p) => p.project.slug) : null),
    }),
  }),
});

export const UserPage = pageOf<Prisma.UserGetPayload<object>>('UserPage', User);

interface NewApiToken {
  token: Prisma.ApiTokenGetPayload<object>;
  key: string;
}
const NewApiTokenRef = builder.objectRef<NewApiToken>('NewApiToken').implement({
  description: 'A token just made, with its key: shown this once, and stored nowhere.',
  fields: (t) => ({
    token: t.field({ type: ApiToken, resolve: (n) => n.token }),
    key: t.exposeString('key'),
  }),
});

builder.queryFields((t) => ({
  viewer: t.prismaField({
    authScopes: { public: true },
    type: User,
    nullable: true,
    description: 'The user whose token made this request; null when anonymous.',
    resolve: (query, _root, _args, ctx) => (ctx.viewer ? ctx.prisma.user.findUnique({ ...query, where: { id: ctx.viewer.id } }) : null),
  }),
  passwordResetAvailable: t.boolean({
    authScopes: { public: true },
    description: 'Whether a forgotten password can be reset by email here (the installation sends email): requestPasswordReset, then resetPassword.',
    resolve: (_root, _args, ctx) => passwordResetAvailable(ctx),
  }),
  setupNeeded: t.boolean({
    authScopes: { public: true },
    description: 'True while the installation has no users: its first account is made with `setUpFirstAdmin` and the code `lectern serve` logged.',
    resolve: (_root, _args, ctx) => setupNeeded(ctx.prisma),
  }),
  users: t.field({
    authScopes: { siteAdmin: true },
    type: UserPage,
    description: 'Every user, by username (site admins only); `search` is a substring of the username or email.',
    args: { search: t.arg.string(), limit: t.arg.int(), offset: t.arg.int() },
    complexity: pageComplexity,
    resolve: (_root, args, ctx, info) => {
      const search = args.search?.trim();
      const where: Prisma.UserWhereInput = search
        ? { OR: [{ username: { contains: search, mode: 'insensitive' } }, { email: { contains: search, mode: 'insensitive' } }] }
        : {};
      const { take, skip } = window(args, ctx);
      return {
        nodes: ctx.prisma.user.findMany({
          ...queryFromInfo({ context: ctx, info, path: ['nodes'] }),
          where,
          orderBy: { username: 'asc' },
          take,
          skip,
        }) as never,
        totalCount: () => ctx.prisma.user.count({ where }),
      };
    },
  }),
}));

const CreateUserInput = builder.inputType('CreateUserInput', {
  fields: (t) => ({
    username: t.string({ required: true }),
    email: t.string(),
    password: t.string({ description: 'Lets the user sign in; without it they use API tokens only.' }),
    isAdmin: t.boolean(),
  }),
});

const ChangeUserInput = builder.inputType('ChangeUserInput', {
  fields: (t) => ({
    isAdmin: t.boolean(),
    disabled: t.boolean({
      description: "A disabled user's tokens are refused at once and their sessions end for good (enabling them again brings none back).",
    }),
    password: t.string({ description: 'A new password for the user: every session of theirs ends (yours stays when it is your own).' }),
  }),
});

const UpdateAccountInput = builder.inputType('UpdateAccountInput', {
  fields: (t) => ({
    email: t.string({ description: "The caller's email address; '' removes it." }),
    emailNotifications: t.boolean({ description: "Email about their projects' builds (when the installation sends email)." }),
  }),
});

const ChangePasswordInput = builder.inputType('ChangePasswordInput', {
  fields: (t) => ({
    currentPassword: t.string({ description: 'Required when the caller has a password.' }),
    newPassword: t.string({ required: true }),
  }),
});

const SetUpInput = builder.inputType('SetUpInput', {
  fields: (t) => ({
    code: t.string({ required: true, description: 'The code in the setup URL `lectern serve` logged.' }),
    username: t.string({ required: true }),
    password: t.string({ required: true }),
    email: t.string(),
  }),
});

const accountErrors = { types: [...writeErrors.types, ConflictError] };

// Signing in and out, and the first account.
builder.mutationFields((t) => ({
  signIn: t.prismaField({
    authScopes: { public: true },
    type: User,
    description:
      "Signs in with a username and password, from Lectern's own pages: the answer sets the session's cookie (HttpOnly). Throttled per account and per address; an unknown user and a wrong password get the same answer. A request from elsewhere (another origin, a form) is FORBIDDEN.",
    args: { username: t.arg.string({ required: true }), password: t.arg.string({ required: true }) },
    errors: { types: [UnauthenticatedError, ForbiddenError, ThrottledError] },
    resolve: (query, _root, args, ctx) => signIn(ctx, args.username, args.password, rowQuery(query)),
  }),
  setUpFirstAdmin: t.prismaField({
    authScopes: { public: true },
    type: User,
    description:
      "Creates the installation's first account, a site admin, with the one-time code `lectern serve` logged while there were no users; signs it in where sign-in is offered.",
    args: { input: t.arg({ type: SetUpInput, required: true }) },
    errors: { types: [ValidationError, ForbiddenError, ConflictError] },
    resolve: (query, _root, { input }, ctx) =>
      setUpFirstAdmin(ctx, { code: input.code, username: input.username, password: input.password, email: input.email ?? undefined }, rowQuery(query)),
  }),
  signOut: t.boolean({
    authScopes: { public: true },
    description: "Ends the caller's session, in every process; the answer clears its cookie. True whether or not there was one.",
    resolve: async (_root, _args, ctx) => {
      if (ctx.viewer && ctx.session?.id) await audit(ctx, { action: 'sign-out', method: 'session' });
      await ctx.session?.end();
      return true;
    },
  }),
}));

// The caller's own tokens, email and password.
builder.mutationFields((t) => ({
  createToken: t.field({
    authScopes: { loggedIn: true },
    type: NewApiTokenRef,
    description: 'Makes an API token for the caller; the answer holds its key, shown this once.',
    args: {
      name: t.arg.string({ required: true }),
      expiresAt: t.arg({ type: 'DateTime', description: 'When it stops working; never, when not given.' }),
      readOnly: t.arg.boolean({ description: 'Reads only: every write made with it is refused.' }),
      projects: t.arg.stringList({ description: 'The only projects (slugs) it reaches, which the caller has access to; it reads and changes nothing else.' }),
    },
    errors: writeErrors,
    resolve: (_root, args, ctx) => createOwnToken(ctx, args.name, {}, args),
  }),
  revokeToken: t.prismaField({
    authScopes: { loggedIn: true },
    type: ApiToken,
    description: "Revokes one of the caller's tokens: requests made with it are refused from now on. Answers with the token as it was.",
    args: { id: t.arg.int({ required: true }) },
    errors: writeErrors,
    resolve: (query, _root, args, ctx) => revokeToken(ctx, args.id, rowQuery(query)),
  }),
  updateAccount: t.prismaField({
    authScopes: { loggedIn: true },
    type: User,
    description: "Changes the caller's own email address and email settings.",
    args: { input: t.arg({ type: UpdateAccountInput, required: true }) },
    errors: writeErrors,
    resolve: (query, _root, args, ctx) => updateAccount(ctx.prisma, ctx.viewer!, args.input, rowQuery(query)),
  }),
  changePassword: t.boolean({
    authScopes: { loggedIn: true },
    description: "Changes the caller's password. Every other session of the caller's ends; the one asking stays.",
    args: { input: t.arg({ type: ChangePasswordInput, required: true }) },
    errors: writeErrors,
    resolve: async (_root, args, ctx) => {
      await changePassword(ctx.prisma, ctx.viewer!, args.input.currentPassword, args.input.newPassword, ctx.session?.id);
      return true;
    },
  }),
}));

// Users, as site admins manage them.
builder.mutationFields((t) => ({
  createUser: t.prismaField({
    authScopes: { siteAdmin: true },
    type: User,
    description: 'Creates a user (site admins only).',
    args: { input: t.arg({ type: CreateUserInput, required: true }) },
    errors: writeErrors,
    resolve: async (query, _root, { input }, ctx) => {
      const user = await createAccount(ctx.prisma, input.username, {
        email: input.email ?? undefined,
        password: input.password ?? undefined,
        isAdmin: input.isAdmin ?? false,
      });
      return ctx.prisma.user.findUniqueOrThrow({ ...rowQuery(query), where: { id: user.id } });
    },
  }),
  changeUser: t.prismaField({
    authScopes: { siteAdmin: true },
    type: User,
    description:
      'Makes a user an admin or not, disables or enables them, or sets their password (site admins only). The last admin who is not disabled stays one.',
    args: { username: t.arg.string({ required: true }), input: t.arg({ type: ChangeUserInput, required: true }) },
    errors: accountErrors,
    resolve: (query, _root, args, ctx) => changeUser(ctx.prisma, args.username, args.input, rowQuery(query), ctx.session?.id),
  }),
}));

// A forgotten password, reset by email (src/domain/password-reset.ts).
builder.mutationFields((t) => ({
  requestPasswordReset: t.string({
    authScopes: { public: true },
    description:
      "Emails a link that sets a new password to the account with this username or email address, if there is one (the answer is the same either way, and says so). From Lectern's own pages; throttled as signing in is; FORBIDDEN where the installation sends no email.",
    args: { nameOrEmail: t.arg.string({ required: true }) },
    errors: { types: [ValidationError, ForbiddenError, ThrottledError] },
    resolve: (_root, args, ctx) => requestPasswordReset(ctx, args.nameOrEmail),
  }),
  resetPassword: t.boolean({
    authScopes: { public: true },
    description: 'Sets a new password with the token of a reset link: once, within its hour. Every session of the account ends.',
    args: { token: t.arg.string({ required: true }), newPassword: t.arg.string({ required: true }) },
    errors: writeErrors,
    resolve: async (_root, args, ctx) => {
      await resetPassword(ctx, args.token, args.newPassword);
      return true;
    },
  }),
}));
