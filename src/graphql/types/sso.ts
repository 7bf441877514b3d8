// Single sign-on (docs/design/sso.md): the providers the sign-in page offers (anyone), and their
// settings, which site admins manage (the client secret is written, never read).
import { createIdentityProvider, deleteIdentityProvider, settingsProviderReady, updateIdentityProvider } from '../../domain/sso.ts';
import { builder } from '../builder.ts';
import { rowQuery } from './common.ts';
import { writeErrors } from './errors.ts';

export const IdentityProvider = builder.prismaObject('IdentityProvider', {
  description: 'An OpenID Connect provider people sign in with. Its client secret is stored encrypted and never answered.',
  fields: (t) => ({
    id: t.exposeInt('id'),
    slug: t.exposeString('slug'),
    name: t.exposeString('name'),
    issuer: t.exposeString('issuer'),
    clientId: t.exposeString('clientId'),
    scopes: t.exposeString('scopes'),
    groupsClaim: t.exposeString('groupsClaim', { description: "The ID token's claim listing a person's groups, which teams' SSO groups follow; empty: none." }),
    allowSignUp: t.exposeBoolean('allowSignUp'),
    enabled: t.exposeBoolean('enabled'),
    fromSettings: t.exposeBoolean('fromSettings', { description: 'Made from the LECTERN_OIDC_* settings, and changed only there.' }),
    callbackUrl: t.string({
      description: 'The redirect URI to register at the provider.',
      resolve: (p, _a, ctx) => `${ctx.config.publicUrl}/auth/oidc/${encodeURIComponent(p.slug)}/callback`,
    }),
  }),
});

const SignInOption = builder.objectRef<{ slug: string; name: string; loginUrl: string }>('SignInOption').implement({
  description: 'A way to sign in besides a password: a button on the sign-in page.',
  fields: (t) => ({
    slug: t.exposeString('slug'),
    name: t.exposeString('name'),
    loginUrl: t.exposeString('loginUrl', { description: 'Where the button goes; add `?next=<path>`.' }),
  }),
});

builder.queryFields((t) => ({
  signInOptions: t.field({
    authScopes: { public: true },
    type: [SignInOption],
    description: 'The identity providers the sign-in page offers.',
    resolve: async (_root, _args, ctx) => {
      await settingsProviderReady(ctx);
      const providers = await ctx.prisma.identityProvider.findMany({ where: { enabled: true }, select: { slug: true, name: true }, orderBy: { slug: 'asc' } });
      return providers.map((p) => ({ ...p, loginUrl: `/auth/oidc/${encodeURIComponent(p.slug)}/login` }));
    },
  }),
  identityProviders: t.prismaField({
    authScopes: { siteAdmin: true },
    type: [IdentityProvider],
    description: 'Every identity provider, by slug (site admins).',
    resolve: async (query, _root, _args, ctx) => {
      await settingsProviderReady(ctx);
      return ctx.prisma.identityProvider.findMany({ ...query, orderBy: { slug: 'asc' } });
    },
  }),
}));

const IdentityProviderInput = builder.inputType('IdentityProviderInput', {
  fields: (t) => ({
    slug: t.string({ description: 'In its URLs (`/auth/oidc/<slug>/…`); it cannot be changed later.' }),
    name: t.string({ description: 'What the sign-in button says: "Sign in with <name>".' }),
    issuer: t.string({ description: 'The issuer URL (its discovery document is under it): https, or http on this machine only.' }),
    clientId: t.string(),
    clientSecret: t.string({ description: 'Stored encrypted; never answered.' }),
    scopes: t.string({ description: '`openid email profile` by default; must include `openid`.' }),
    groupsClaim: t.string(),
    allowSignUp: t.boolean({ description: 'Whether a person with no account gets one at their first sign-in (true by default).' }),
    enabled: t.boolean(),
  }),
});

builder.mutationFields((t) => ({
  createIdentityProvider: t.prismaField({
    authScopes: { siteAdmin: true },
    type: IdentityProvider,
    args: { input: t.arg({ type: IdentityProviderInput, required: true }) },
    errors: writeErrors,
    resolve: async (query, _root, args, ctx) => {
      const p = await createIdentityProvider(ctx, args.input);
      return ctx.prisma.identityProvider.findUniqueOrThrow({ ...rowQuery(query), where: { id: p.id } });
    },
  }),
  updateIdentityProvider: t.prismaField({
    authScopes: { siteAdmin: true },
    type: IdentityProvider,
    description: 'Changes the fields given; a provider from the settings is changed there only.',
    args: { slug: t.arg.string({ required: true }), input: t.arg({ type: IdentityProviderInput, required: true }) },
    errors: writeErrors,
    resolve: async (query, _root, args, ctx) => {
      const p = await updateIdentityProvider(ctx, args.slug, args.input);
      return ctx.prisma.identityProvider.findUniqueOrThrow({ ...rowQuery(query), where: { id: p.id } });
    },
  }),
  deleteIdentityProvider: t.prismaField({
    authScopes: { siteAdmin: true },
    type: IdentityProvider,
    description: 'Removes a provider and the links of accounts to it (the accounts stay). Answers with it as it was (its own fields).',
    args: { slug: t.arg.string({ required: true }) },
    errors: writeErrors,
    resolve: (_query, _root, args, ctx) => deleteIdentityProvider(ctx, args.slug) as never,
  }),
}));
