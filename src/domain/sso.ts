// Single sign-on (docs/design/sso.md), the part that is Lectern's own: the identity providers a
// site admin configures (the client secret stored encrypted, never answered), and what a validated
// ID token's claims make of a person: the user they are (linked by subject, else by a verified
// email address, else created), and their teams kept in step with the groups claim. The protocol
// itself (discovery, the authorization code flow with PKCE, the ID token's checks) is src/sso/'s.
import { issuerProblem } from '../config.ts';
import type { IdentityProvider, Prisma } from '../generated/prisma/client.ts';
import { audit } from './audit.ts';
import type { Context, Viewer } from './context.ts';
import { ForbiddenError, NotFoundError, ValidationError } from './errors.ts';
import { projectSlug } from './slug.ts';
import { Collector, checkString } from './validate.ts';

/** The claims Lectern reads from a validated ID token. */
export interface IdClaims {
  sub: string;
  email?: unknown;
  email_verified?: unknown;
  preferred_username?: unknown;
  name?: unknown;
  [claim: string]: unknown;
}

export interface IdentityProviderInput {
  slug?: string | null;
  name?: string | null;
  issuer?: string | null;
  clientId?: string | null;
  /** Write-only: stored encrypted, never answered. */
  clientSecret?: string | null;
  scopes?: string | null;
  groupsClaim?: string | null;
  allowSignUp?: boolean | null;
  enabled?: boolean | null;
}

function checkProvider(input: IdentityProviderInput, creating: boolean): void {
  const c = new Collector();
  c.add('slug', checkString(input.slug, { max: 50, required: creating }));
  if (input.slug && projectSlug(input.slug) !== input.slug) c.add('slug', 'Enter a valid "slug" consisting of lowercase letters, numbers or hyphens.');
  c.add('name', checkString(input.name, { max: 100, required: creating }));
  c.add('issuer', checkString(input.issuer, { max: 500, required: creating }) ?? issuerProblem(input.issuer));
  c.add('clientId', checkString(input.clientId, { max: 255, required: creating }));
  c.add('clientSecret', checkString(input.clientSecret, { max: 2000, required: creating }));
  c.add('scopes', checkString(input.scopes, { max: 255 }));
  if (input.scopes && !input.scopes.split(/\s+/).includes('openid')) c.add('scopes', 'The scopes must include "openid".');
  c.add('groupsClaim', checkString(input.groupsClaim, { max: 100, allowBlank: true }));
  c.throwIfAny();
}

/** A new identity provider (site admins). */
export async function createIdentityProvider(ctx: Context, input: IdentityProviderInput): Promise<IdentityProvider> {
  checkProvider(input, true);
  if (await ctx.prisma.identityProvider.findUnique({ where: { slug: input.slug! } })) {
    throw ValidationError.field('slug', `An identity provider with slug "${input.slug}" already exists.`);
  }
  return ctx.prisma.identityProvider.create({
    data: {
      slug: input.slug!,
      name: input.name!.trim(),
      issuer: input.issuer!,
      clientId: input.clientId!,
      clientSecretEncrypted: ctx.cipher.encrypt(input.clientSecret!),
      scopes: input.scopes ?? 'openid email profile',
      groupsClaim: input.groupsClaim ?? '',
      allowSignUp: input.allowSignUp ?? true,
      enabled: input.enabled ?? true,
    },
  });
}

/** Changes the fields given (site admins); a provider from settings is changed in the settings only. */
export async function updateIdentityProvider(ctx: Context, slug: string, input: IdentityProviderInput): Promise<IdentityProvider> {
  checkProvider(input, false);
  const found = await ctx.prisma.identityProvider.findUnique({ where: { slug } });
  if (!found) throw new NotFoundError('IdentityProvider');
  if (found.fromSettings) throw new ForbiddenError('This provider comes from the LECTERN_OIDC_* settings: change it there.');
  if (input.slug != null && input.slug !== slug) throw ValidationError.field('slug', 'The slug of a provider cannot be changed.');
  const data: Prisma.IdentityProviderUpdateInput = {};
  if (input.name != null) data.name = input.name.trim();
  if (input.issuer != null) data.issuer = input.issuer;
  if (input.clientId != null) data.clientId = input.clientId;
  if (input.clientSecret != null) data.clientSecretEncrypted = ctx.cipher.encrypt(input.clientSecret);
  if (input.scopes != null) data.scopes = input.scopes;
  if (input.groupsClaim != null) data.groupsClaim = input.groupsClaim;
  if (input.allowSignUp != null) data.allowSignUp = input.allowSignUp;
  if (input.enabled != null) data.enabled = input.enabled;
  return ctx.prisma.identityProvider.update({ where: { id: found.id }, data });
}

export async function deleteIdentityProvider(ctx: Context, slug: string): Promise<IdentityProvider> {
  const found = await ctx.prisma.identityProvider.findUnique({ where: { slug } });
  if (!found) throw new NotFoundError('IdentityProvider');
  if (found.fromSettings) throw new ForbiddenError('This provider comes from the LECTERN_OIDC_* settings: remove it there.');
  return ctx.prisma.identityProvider.delete({ where: { id: found.id } });
}

/** Why a person is refused a sign-in with their password: a member of an organization that signs in with SSO only. */
export async function passwordRefusedFor(ctx: Pick<Context, 'prisma'>, user: { id: number; isAdmin: boolean }): Promise<string | null> {
  if (user.isAdmin) return null;
  const org = await ctx.prisma.organization.findFirst({ where: { ssoOnly: true, members: { some: { userId: user.id } } }, select: { name: true } });
  return org ? `Members of ${org.name} sign in with single sign-on.` : null;
}

/** A username for a new person: their preferred name or email's local part, made valid and unique. */
async function freeUsername(tx: Prisma.TransactionClient, claims: IdClaims): Promise<string> {
  const wanted = [claims.preferred_username, typeof claims.email === 'string' ? claims.email.split('@')[0] : undefined, 'user'].find(
    (v): v is string => typeof v === 'string' && v.trim() !== '',
  )!;
  const base = wanted.replace(/[^\w.@+-]/g, '').slice(0, 140) || 'user';
  for (let i = 1; ; i++) {
    const name = i === 1 ? base : `${base}-${i}`;
    if (!(await tx.user.findUnique({ where: { username: name }, select: { id: true } }))) return name;
  }
}

/** Thrown when the claims make no user: the person is told why, and the audit log says so. */
export class SsoRefused extends Error {}

/**
 * The user a validated ID token is: linked by (provider, subject); else, the first time, the one
 * account with its verified email address, else a new account when the provider allows sign-up.
 * A disabled user is refused. Their SSO teams are then kept in step with the groups claim.
 */
export async function userForIdentity(ctx: Context, provider: IdentityProvider, claims: IdClaims): Promise<Viewer> {
  const user = await ctx.prisma.$transaction(async (tx) => {
    const linked = await tx.userIdentity.findUnique({
      where: { providerId_subject: { providerId: provider.id, subject: claims.sub } },
      select: { id: true, user: true },
    });
    if (linked) {
      await tx.userIdentity.update({ where: { id: linked.id }, data: { lastSignInAt: new Date() } });
      return linked.user;
    }
    const email = typeof claims.email === 'string' && claims.email_verified === true ? claims.email : null;
    const byEmail = email ? await tx.user.findMany({ where: { email: { equals: email, mode: 'insensitive' } }, take: 2 }) : [];
    let user = byEmail.length === 1 ? byEmail[0]! : null;
    if (!user) {
      if (!provider.allowSignUp) throw new SsoRefused(`No account here is linked to this ${provider.name} identity: ask a site admin for one.`);
      user = await tx.user.create({ data: { username: await freeUsername(tx, claims), email } });
    }
    await tx.userIdentity.create({ data: { providerId: provider.id, subject: claims.sub, userId: user.id } });
    return user;
  });
  if (user.disabledAt) throw new SsoRefused('This account is disabled.');
  if (provider.groupsClaim) await syncTeams(ctx, user, claims[provider.groupsClaim]);
  return { id: user.id, username: user.username, isAdmin: user.isAdmin };
}

/**
 * Teams with an SSO group: the person is put in those whose group the claim lists (and made a
 * member of their organizations), and taken out of the others. Teams without one are left alone.
 * A claim that is not a list of strings changes nothing.
 */
async function syncTeams(ctx: Context, user: { id: number; username: string }, claim: unknown): Promise<void> {
  if (!Array.isArray(claim) || !claim.every((g) => typeof g === 'string')) return;
  const groups = new Set(claim as string[]);
  const teams = await ctx.prisma.team.findMany({
    where: { ssoGroup: { not: '' } },
    select: {
      id: true,
      slug: true,
      ssoGroup: true,
      organization: { select: { id: true, slug: true } },
      members: { where: { userId: user.id }, select: { userId: true } },
    },
  });
  for (const team of teams) {
    const wanted = groups.has(team.ssoGroup);
    const has = team.members.length > 0;
    if (wanted === has) continue;
    const organizationId = team.organization.id;
    await ctx.prisma.$transaction(async (tx) => {
      if (wanted) {
        await tx.organizationMember.upsert({
          where: { organizationId_userId: { organizationId, userId: user.id } },
          create: { organizationId, userId: user.id, role: 'member' },
          update: {},
        });
        await tx.teamMember.create({ data: { teamId: team.id, organizationId, userId: user.id } });
      } else {
        await tx.teamMember.deleteMany({ where: { teamId: team.id, userId: user.id } });
      }
      const action = wanted ? 'team-member-added' : 'team-member-removed';
      const data = { team: team.slug, member: user.username, group: team.ssoGroup };
      await audit(ctx, { action, user, organization: team.organization, method: 'sso', data }, tx);
    });
  }
}

/** Per app (its settings object): the LECTERN_OIDC_* provider written once, before its first use. */
const settingsSynced = new WeakMap<object, Promise<void>>();

/**
 * The provider of the LECTERN_OIDC_* settings, kept in step with them (slug `sso`): written the
 * first time sign-in or the sign-in page needs it, after each start. Settings win over a provider
 * a site admin made with that slug.
 */
export function settingsProviderReady(s: Pick<Context, 'prisma' | 'cipher' | 'config'>): Promise<void> {
  const o = s.config.oidc;
  if (!o) return Promise.resolve();
  let done = settingsSynced.get(s.config);
  if (!done) {
    const data = {
      name: o.name,
      issuer: o.issuer,
      clientId: o.clientId,
      clientSecretEncrypted: s.cipher.encrypt(o.clientSecret),
      scopes: o.scopes,
      groupsClaim: o.groupsClaim,
      allowSignUp: o.allowSignUp,
      enabled: true,
      fromSettings: true,
    };
    done = s.prisma.identityProvider.upsert({ where: { slug: 'sso' }, create: { slug: 'sso', ...data }, update: data }).then(() => undefined);
    settingsSynced.set(s.config, done);
    done.catch(() => settingsSynced.delete(s.config));
  }
  return done;
}
