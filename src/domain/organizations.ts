// Organizations, their members and teams (docs/design/organizations.md): Read the Docs for
// Business's model, as a company runs it. Owners manage an organization and maintain all its
// projects; members have what their teams give (read-only or admin access to chosen projects, or
// to all of the organization's). People join by a one-time invitation link. What each of these
// gives is read by domain/access.ts; here they are made and changed.
import { randomBytes } from 'node:crypto';
import { type Organization, type OrganizationRole, Prisma, type Team, type TeamAccess } from '../generated/prisma/client.ts';
import { hashToken } from '../secrets.ts';
import { signedIn } from './access.ts';
import { audit } from './audit.ts';
import type { Context, Viewer } from './context.ts';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from './errors.ts';
import { projectSlug } from './slug.ts';
import { Collector, checkChoice, checkString, checkUrl, emailProblem, notBlank } from './validate.ts';

/** How long an invitation link works. */
export const INVITATION_VALID_MS = 7 * 24 * 60 * 60 * 1000;
export const INVITATION_REFUSED = 'This invitation is used, expired or wrong: ask the organization for a new one.';
const ROLES: ReadonlySet<string> = new Set(['owner', 'member']);
const ACCESS: ReadonlySet<string> = new Set(['readonly', 'admin']);
/** Teams an organization may have, and projects a team may name: enough for a company, bounded for a hostile caller. */
export const TEAM_LIMIT = 200;
const TEAM_PROJECTS_LIMIT = 1000;

type Tx = Prisma.TransactionClient;

/** The caller's role in the organization, or null when they are not in it. */
export async function roleIn(ctx: Context, organizationId: number): Promise<OrganizationRole | null> {
  if (!ctx.viewer) return null;
  const m = await ctx.prisma.organizationMember.findUnique({
    where: { organizationId_userId: { organizationId, userId: ctx.viewer.id } },
    select: { role: true },
  });
  return m?.role ?? null;
}

/** The organizations the viewer may read: theirs, or every one for a site admin. */
export function visibleOrganizations(viewer: Viewer | null): Prisma.OrganizationWhereInput {
  // A token limited to projects reaches no organization (docs/design/tokens.md).
  if (!viewer || viewer.limits?.projectIds) return { id: -1 };
  return viewer.isAdmin ? {} : { members: { some: { userId: viewer.id } } };
}

/**
 * The organization a request names by slug, when the caller may read it (a member, or a site
 * admin); NotFoundError otherwise: an outsider learns nothing of whether it exists.
 */
export async function organizationToRead(ctx: Context, slug: string): Promise<Organization> {
  const viewer = signedIn(ctx);
  const org = await ctx.prisma.organization.findUnique({ where: { slug } });
  if (!org || viewer.limits?.projectIds || (!viewer.isAdmin && !(await roleIn(ctx, org.id)))) throw new NotFoundError('Organization');
  return org;
}

/**
 * Whether the caller owns the organization a write names: false for anonymous (401), NotFoundError
 * when they cannot read it (404), then whether they are an owner (403). GraphQL's `ownerOfOrganization`.
 */
export async function ownsOrganization(ctx: Context, slug: string): Promise<boolean> {
  if (!ctx.viewer) return false;
  const org = await organizationToRead(ctx, slug);
  return (await roleIn(ctx, org.id)) === 'owner';
}

/** Whether the caller is in the organization (GraphQL's `memberOfOrganization`: its teams, members and projects). */
export async function inOrganization(ctx: Context, organizationId: number): Promise<boolean> {
  if (ctx.viewer?.limits?.projectIds) return false;
  return ctx.viewer?.isAdmin === true || (await roleIn(ctx, organizationId)) !== null;
}

export interface OrganizationInput {
  name?: string | null;
  slug?: string | null;
  description?: string | null;
  url?: string | null;
  email?: string | null;
  ssoOnly?: boolean | null;
}

/** A slug given by hand: as the slug made from a name would be (lowercase letters, numbers, `-`). */
function checkSlug(slug: string | null | undefined) {
  const long = checkString(slug, { max: 255 });
  if (long || !slug?.trim()) return long;
  return projectSlug(slug) === slug ? undefined : 'Enter a valid "slug" consisting of lowercase letters, numbers, underscores or hyphens.';
}

function checkOrganization(input: OrganizationInput, creating: boolean): void {
  const c = new Collector();
  c.add('name', checkString(input.name, { max: 100, required: creating }));
  c.add('slug', checkSlug(input.slug));
  c.add('description', checkString(input.description, { max: 10_000, allowBlank: true }));
  c.add('url', checkUrl(input.url));
  if (input.email) c.add('email', emailProblem(input.email));
  c.throwIfAny();
}

const slugTaken = (slug: string) => ValidationError.field('slug', `An organization with slug "${slug}" already exists.`);

/**
 * Single sign-on policy is the installation's, as its identity providers are: only a site admin
 * makes an organization SSO-only (an owner could otherwise lock members without an SSO identity out
 * of their accounts) or ties a team to a provider's group (which pulls people into an
 * organization). docs/design/sso.md.
 */
async function checkSsoPolicy(ctx: Context, input: { ssoOnly?: boolean | null; ssoGroup?: string | null }): Promise<void> {
  const asks = input.ssoOnly === true || (input.ssoGroup != null && input.ssoGroup.trim() !== '');
  if (!asks) return;
  if (!ctx.viewer?.isAdmin) throw new ForbiddenError('Only a site admin sets single sign-on rules (SSO-only organizations, teams that follow a group).');
  if (input.ssoOnly && (await ctx.prisma.identityProvider.count({ where: { enabled: true } })) === 0) {
    throw ValidationError.field('ssoOnly', 'No identity provider is enabled: members could not sign in at all.');
  }
}

/** A new organization, owned by its creator. */
export async function createOrganization(ctx: Context, input: OrganizationInput): Promise<Organization> {
  const viewer = signedIn(ctx);
  checkOrganization(input, true);
  await checkSsoPolicy(ctx, input);
  const name = input.name!.trim();
  const slug = input.slug?.trim() || projectSlug(name);
  if (!slug) throw ValidationError.field('name', `Invalid organization name "${name}": no slug generated.`);
  try {
    return await ctx.prisma.$transaction(async (tx) => {
      const org = await tx.organization.create({
        data: {
          name,
          slug,
          description: input.description ?? '',
          url: input.url ?? '',
          email: input.email ?? '',
          ssoOnly: input.ssoOnly ?? false,
          members: { create: { userId: viewer.id, role: 'owner' } },
        },
      });
      await audit(ctx, { action: 'organization-created', organization: org }, tx);
      return org;
    });
  } catch (e) {
    if (e instanceof Prisma.PrismaClientKnownRequestError && e.code === 'P2002') throw slugTaken(slug);
    throw e;
  }
}

/** Changes the fields given (owners; `ownerOfOrganization` has been checked). The slug stays. */
export async function updateOrganization(ctx: Context, slug: string, input: OrganizationInput): Promise<Organization> {
  checkOrganization(input, false);
  if (input.slug != null && input.slug !== slug) throw ValidationError.field('slug', 'The slug of an organization cannot be changed.');
  await checkSsoPolicy(ctx, input);
  const data: Prisma.OrganizationUpdateInput = {};
  if (input.name != null) data.name = input.name.trim();
  if (input.description != null) data.description = input.description;
  if (input.url != null) data.url = input.url;
  if (input.email != null) data.email = input.email;
  if (input.ssoOnly != null) data.ssoOnly = input.ssoOnly;
  return ctx.prisma.$transaction(async (tx) => {
    const org = await tx.organization.update({ where: { slug }, data });
    await audit(ctx, { action: 'organization-changed', organization: org, data: { fields: Object.keys(data) } }, tx);
    return org;
  });
}

/** Deletes an organization that owns no project (they are moved out or deleted first: deleting it never deletes docs). */
export async function deleteOrganization(ctx: Context, slug: string): Promise<Organization> {
  const org = await ctx.prisma.organization.findUniqueOrThrow({ where: { slug }, include: { _count: { select: { projects: true } } } });
  if (org._count.projects > 0) {
    throw new ConflictError(`The organization owns ${org._count.projects} project(s): move them out of it or delete them first.`);
  }
  const { _count, ...row } = org;
  await ctx.prisma.$transaction(async (tx) => {
    await tx.organization.delete({ where: { id: org.id } });
    await audit(ctx, { action: 'organization-deleted', organization: row }, tx);
  });
  return row;
}

const orgId = async (ctx: Context, slug: string) => (await ctx.prisma.organization.findUniqueOrThrow({ where: { slug }, select: { id: true } })).id;
/** The organization an entry of the audit log names. */
const named = (id: number, slug: string) => ({ id, slug });

/** The member by username, or a validation error naming the field. */
async function memberOf(tx: Tx, organizationId: number, username: string, field = 'username') {
  const m = await tx.organizationMember.findFirst({ where: { organizationId, user: { username } }, select: { userId: true, role: true } });
  if (!m) throw ValidationError.field(field, `"${username}" is not a member of this organization.`);
  return m;
}

/** Refuses a change that would leave the organization without an owner. */
async function keepAnOwner(tx: Tx, organizationId: number) {
  const owners = await tx.organizationMember.count({ where: { organizationId, role: 'owner' } });
  if (owners === 0) throw new ConflictError('An organization keeps at least one owner: make someone else an owner first.');
}

/** Changes a member's role (owners). The last owner cannot step down. */
export async function setMemberRole(ctx: Context, slug: string, username: string, role: string) {
  new Collector().add('role', checkChoice(role, ROLES)).throwIfAny();
  const organizationId = await orgId(ctx, slug);
  return ctx.prisma.$transaction(async (tx) => {
    const m = await memberOf(tx, organizationId, username);
    const row = await tx.organizationMember.update({
      where: { organizationId_userId: { organizationId, userId: m.userId } },
      data: { role: role as OrganizationRole },
    });
    await keepAnOwner(tx, organizationId);
    await audit(ctx, { action: 'member-role-changed', organization: named(organizationId, slug), data: { member: username, role } }, tx);
    return row;
  });
}

/**
 * Removes a member, and with them their teams (owners; or a member leaving by themself, which
 * GraphQL lets any member do). The last owner cannot be removed. Their pending invitations stay.
 */
export async function removeMember(ctx: Context, slug: string, username: string): Promise<void> {
  const viewer = signedIn(ctx);
  const organizationId = (await organizationToRead(ctx, slug)).id;
  const self = username === viewer.username;
  if (!self && (await roleIn(ctx, organizationId)) !== 'owner') throw new ForbiddenError();
  await ctx.prisma.$transaction(async (tx) => {
    const m = await memberOf(tx, organizationId, username);
    await tx.organizationMember.delete({ where: { organizationId_userId: { organizationId, userId: m.userId } } });
    await keepAnOwner(tx, organizationId);
    await audit(ctx, { action: 'member-removed', organization: named(organizationId, slug), data: { member: username, left: self } }, tx);
  });
}

export interface InvitationInput {
  email?: string | null;
  role?: string | null;
  /** A team of the organization the taker joins. */
  team?: string | null;
}

/**
 * A one-time invitation link (owners). Only its hash is kept: the link is in the answer once, and
 * goes by email when the installation sends email and an address is given.
 */
export async function inviteToOrganization(ctx: Context, slug: string, input: InvitationInput) {
  const viewer = signedIn(ctx);
  const c = new Collector();
  if (input.email) c.add('email', emailProblem(input.email));
  c.add('role', checkChoice(input.role, ROLES));
  c.throwIfAny();
  const org = await ctx.prisma.organization.findUniqueOrThrow({ where: { slug } });
  let teamId: number | null = null;
  if (input.team) {
    const team = await ctx.prisma.team.findUnique({ where: { organizationId_slug: { organizationId: org.id, slug: input.team } }, select: { id: true } });
    if (!team) throw ValidationError.field('team', `This organization has no team "${input.team}".`);
    teamId = team.id;
  }
  const token = randomBytes(32).toString('base64url');
  const invitation = await ctx.prisma.organizationInvitation.create({
    data: {
      organizationId: org.id,
      tokenHash: hashToken(token),
      email: input.email?.trim() ?? '',
      role: (input.role as OrganizationRole | null) ?? 'member',
      teamId,
      createdById: viewer.id,
      expiresAt: new Date(Date.now() + INVITATION_VALID_MS),
    },
  });
  await audit(ctx, {
    action: 'invitation-created',
    organization: org,
    data: { invitation: invitation.id, email: invitation.email, role: invitation.role, team: input.team ?? null },
  });
  const link = `${ctx.config.publicUrl}/invitations/accept?token=${token}`;
  const mail = ctx.mail;
  if (mail && invitation.email) {
    const text = [
      `${viewer.username} invites you to the organization "${org.name}" on ${ctx.config.publicUrl}.`,
      '',
      `Join it here within a week (sign in or ask for an account first): ${link}`,
      '',
      'If you did not expect this, ignore this email.',
    ].join('\n');
    mail.send({ to: invitation.email, subject: `Join ${org.name} on Lectern`, text }).catch((e: unknown) => {
      ctx.log.error({ err: (e as Error).message, organization: org.slug }, 'the invitation email could not be sent');
    });
  }
  return { invitation, link, emailed: Boolean(mail && invitation.email) };
}

/** Withdraws an invitation not yet taken (owners). */
export async function revokeInvitation(ctx: Context, slug: string, id: number): Promise<void> {
  const organizationId = await orgId(ctx, slug);
  const gone = await ctx.prisma.organizationInvitation.deleteMany({ where: { id, organizationId, acceptedAt: null } });
  if (gone.count !== 1) throw new NotFoundError('Invitation');
  await audit(ctx, { action: 'invitation-revoked', organization: named(organizationId, slug), data: { invitation: id } });
}

/** What an invitation offers, for its link's page; null when it is used, expired or wrong. */
export async function previewInvitation(ctx: Context, token: string) {
  const inv = await ctx.prisma.organizationInvitation.findUnique({
    where: { tokenHash: hashToken(token) },
    select: { role: true, expiresAt: true, acceptedAt: true, organization: { select: { slug: true, name: true } }, team: { select: { name: true } } },
  });
  if (!inv || inv.acceptedAt || inv.expiresAt.getTime() <= Date.now()) return null;
  return { organization: inv.organization, role: inv.role, team: inv.team?.name ?? null, expiresAt: inv.expiresAt };
}

/**
 * Takes an invitation: the signed-in caller joins its organization (an owner when it says so; a
 * member already keeps a higher role) and its team. Once, within its week.
 */
export async function acceptInvitation(ctx: Context, token: string): Promise<Organization> {
  const viewer = signedIn(ctx);
  const inv = await ctx.prisma.organizationInvitation.findUnique({ where: { tokenHash: hashToken(token) }, include: { organization: true } });
  if (!inv || inv.acceptedAt || inv.expiresAt.getTime() <= Date.now()) throw ValidationError.field('token', INVITATION_REFUSED);
  await ctx.prisma.$transaction(async (tx) => {
    // Taken once: of two requests with the same link, one joins.
    const taken = await tx.organizationInvitation.updateMany({ where: { id: inv.id, acceptedAt: null }, data: { acceptedAt: new Date() } });
    if (taken.count !== 1) throw ValidationError.field('token', INVITATION_REFUSED);
    const key = { organizationId_userId: { organizationId: inv.organizationId, userId: viewer.id } };
    const now = await tx.organizationMember.findUnique({ where: key, select: { role: true } });
    if (!now) await tx.organizationMember.create({ data: { organizationId: inv.organizationId, userId: viewer.id, role: inv.role } });
    else if (inv.role === 'owner' && now.role !== 'owner') await tx.organizationMember.update({ where: key, data: { role: 'owner' } });
    if (inv.teamId !== null) {
      await tx.teamMember.upsert({
        where: { teamId_userId: { teamId: inv.teamId, userId: viewer.id } },
        create: { teamId: inv.teamId, organizationId: inv.organizationId, userId: viewer.id },
        update: {},
      });
    }
    const data = { member: viewer.username, invitation: inv.id, role: inv.role, team: inv.teamId };
    await audit(ctx, { action: 'member-added', organization: inv.organization, data }, tx);
  });
  return inv.organization;
}

export interface TeamInput {
  name?: string | null;
  slug?: string | null;
  access?: string | null;
  allProjects?: boolean | null;
  /** The projects (slugs) the team is granted, replacing those it had; the organization's own only. */
  projects?: readonly string[] | null;
  ssoGroup?: string | null;
}

function checkTeam(input: TeamInput, creating: boolean) {
  const c = new Collector();
  c.add('name', checkString(input.name, { max: 100, required: creating }));
  c.add('slug', checkSlug(input.slug));
  c.add('access', checkChoice(input.access, ACCESS));
  c.add('ssoGroup', checkString(input.ssoGroup, { max: 255, allowBlank: true }));
  if (input.projects && input.projects.length > TEAM_PROJECTS_LIMIT) c.add('projects', `Ensure this field has no more than ${TEAM_PROJECTS_LIMIT} elements.`);
  c.throwIfAny();
}

/** The ids of the organization's projects named, or a validation error naming those it does not own. */
async function teamProjects(tx: Tx, organizationId: number, slugs: readonly string[]): Promise<{ id: number }[]> {
  const wanted = [...new Set(slugs)];
  const found = await tx.project.findMany({ where: { organizationId, slug: { in: wanted } }, select: { id: true, slug: true } });
  const missing = wanted.filter((s) => !found.some((p) => p.slug === s));
  if (missing.length) throw ValidationError.field('projects', `This organization owns no project ${missing.map((s) => `"${s}"`).join(', ')}.`);
  return found.map((p) => ({ id: p.id }));
}

/** A new team of the organization (owners). */
export async function createTeam(ctx: Context, orgSlug: string, input: TeamInput): Promise<Team> {
  checkTeam(input, true);
  await checkSsoPolicy(ctx, input);
  const organizationId = await orgId(ctx, orgSlug);
  const name = input.name!.trim();
  const slug = input.slug?.trim() || projectSlug(name);
  if (!slug) throw ValidationError.field('name', notBlank);
  if ((await ctx.prisma.team.count({ where: { organizationId } })) >= TEAM_LIMIT) {
    throw ValidationError.field('nonFieldErrors', `An organization has at most ${TEAM_LIMIT} teams.`);
  }
  try {
    return await ctx.prisma.$transaction(async (tx) => {
      const team = await tx.team.create({
        data: {
          organizationId,
          name,
          slug,
          access: (input.access as TeamAccess | null) ?? 'readonly',
          allProjects: input.allProjects ?? false,
          ssoGroup: input.ssoGroup?.trim() ?? '',
          projects: { connect: await teamProjects(tx, organizationId, input.projects ?? []) },
        },
      });
      const data = { team: slug, access: team.access, allProjects: team.allProjects, projects: [...(input.projects ?? [])] };
      await audit(ctx, { action: 'team-created', organization: named(organizationId, orgSlug), data }, tx);
      return team;
    });
  } catch (e) {
    if (e instanceof Prisma.PrismaClientKnownRequestError && e.code === 'P2002')
      throw ValidationError.field('slug', `A team with slug "${slug}" already exists.`);
    throw e;
  }
}

async function teamOf(tx: Tx | Context['prisma'], organizationId: number, slug: string) {
  const team = await tx.team.findUnique({ where: { organizationId_slug: { organizationId, slug } } });
  if (!team) throw new NotFoundError('Team');
  return team;
}

/** Changes the fields given (owners); `projects` replaces the team's grants. The slug stays. */
export async function updateTeam(ctx: Context, orgSlug: string, teamSlug: string, input: TeamInput): Promise<Team> {
  checkTeam(input, false);
  if (input.slug != null && input.slug !== teamSlug) throw ValidationError.field('slug', 'The slug of a team cannot be changed.');
  await checkSsoPolicy(ctx, input);
  const organizationId = await orgId(ctx, orgSlug);
  return ctx.prisma.$transaction(async (tx) => {
    const team = await teamOf(tx, organizationId, teamSlug);
    const data: Prisma.TeamUpdateInput = {};
    if (input.name != null) data.name = input.name.trim();
    if (input.access != null) data.access = input.access as TeamAccess;
    if (input.allProjects != null) data.allProjects = input.allProjects;
    if (input.ssoGroup != null) data.ssoGroup = input.ssoGroup.trim();
    if (input.projects != null) data.projects = { set: await teamProjects(tx, organizationId, input.projects) };
    const changes = { team: teamSlug, fields: Object.keys(data), access: input.access ?? null, projects: input.projects ? [...input.projects] : null };
    await audit(ctx, { action: 'team-changed', organization: named(organizationId, orgSlug), data: changes }, tx);
    return tx.team.update({ where: { id: team.id }, data });
  });
}

export async function deleteTeam(ctx: Context, orgSlug: string, teamSlug: string): Promise<Team> {
  const organizationId = await orgId(ctx, orgSlug);
  const team = await teamOf(ctx.prisma, organizationId, teamSlug);
  await ctx.prisma.$transaction(async (tx) => {
    await tx.team.delete({ where: { id: team.id } });
    await audit(ctx, { action: 'team-deleted', organization: named(organizationId, orgSlug), data: { team: teamSlug } }, tx);
  });
  return team;
}

/** Adds a member of the organization to one of its teams (owners). */
export async function addTeamMember(ctx: Context, orgSlug: string, teamSlug: string, username: string): Promise<Team> {
  const organizationId = await orgId(ctx, orgSlug);
  return ctx.prisma.$transaction(async (tx) => {
    const team = await teamOf(tx, organizationId, teamSlug);
    const m = await memberOf(tx, organizationId, username);
    await tx.teamMember.upsert({
      where: { teamId_userId: { teamId: team.id, userId: m.userId } },
      create: { teamId: team.id, organizationId, userId: m.userId },
      update: {},
    });
    await audit(ctx, { action: 'team-member-added', organization: named(organizationId, orgSlug), data: { team: teamSlug, member: username } }, tx);
    return team;
  });
}

export async function removeTeamMember(ctx: Context, orgSlug: string, teamSlug: string, username: string): Promise<Team> {
  const organizationId = await orgId(ctx, orgSlug);
  return ctx.prisma.$transaction(async (tx) => {
    const team = await teamOf(tx, organizationId, teamSlug);
    const m = await memberOf(tx, organizationId, username);
    await tx.teamMember.deleteMany({ where: { teamId: team.id, userId: m.userId } });
    await audit(ctx, { action: 'team-member-removed', organization: named(organizationId, orgSlug), data: { team: teamSlug, member: username } }, tx);
    return team;
  });
}

/**
 * Moves a project into an organization, out of one, or between two. The caller maintains the
 * project (`maintainerOfProject` has been checked), owns the organization it joins, and owns the
 * one it leaves: a member of an admin team cannot take a project out of the company. Leaving drops
 * the old organization's team grants of it.
 */
export async function setProjectOrganization(ctx: Context, projectSlug_: string, organization: string | null) {
  const viewer = signedIn(ctx);
  if (viewer.limits?.projectIds) throw new ForbiddenError('A token limited to projects cannot move them between organizations.');
  const project = await ctx.prisma.project.findUniqueOrThrow({
    where: { slug: projectSlug_ },
    select: { id: true, slug: true, organizationId: true, organization: { select: { slug: true } } },
  });
  const owner = async (id: number) => viewer.isAdmin || (await roleIn(ctx, id)) === 'owner';
  let target: number | null = null;
  if (organization) {
    const org = await ctx.prisma.organization.findUnique({ where: { slug: organization }, select: { id: true, slug: true } });
    if (!org || !(await inOrganization(ctx, org.id))) throw ValidationError.field('organization', `You are in no organization "${organization}".`);
    if (!(await owner(org.id))) throw ValidationError.field('organization', `Only an owner of "${organization}" can move projects into it.`);
    target = org.id;
  }
  if (project.organizationId === target) return;
  if (project.organizationId !== null && !(await owner(project.organizationId))) {
    throw new ForbiddenError("Only an owner of the project's organization can move it out.");
  }
  await ctx.prisma.$transaction(async (tx) => {
    await tx.project.update({ where: { id: project.id }, data: { organizationId: target, teams: { set: [] } } });
    // One entry in each organization's log: the one it left and the one it joined.
    const data = { from: project.organization?.slug ?? null, to: organization ?? null };
    if (project.organizationId !== null) {
      await audit(
        ctx,
        { action: 'project-moved', organization: named(project.organizationId, data.from!), project: { id: project.id, slug: project.slug }, data },
        tx,
      );
    }
    if (target !== null)
      await audit(ctx, { action: 'project-moved', organization: named(target, organization!), project: { id: project.id, slug: project.slug }, data }, tx);
  });
}
