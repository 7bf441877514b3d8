// Organizations, their members, teams and invitations (docs/design/organizations.md). An
// organization is read by its members and site admins; anyone who sees one of its projects sees its
// name and slug (Read the Docs' RelatedOrganizationSerializer shows no more through a public project).
// Owners change it.
import { queryFromInfo } from '@pothos/plugin-prisma';
import { hasReadAccess, isMaintainer, visibleProjects } from '../../domain/access.ts';
import {
  acceptInvitation,
  addTeamMember,
  createOrganization,
  createTeam,
  deleteOrganization,
  deleteTeam,
  inviteToOrganization,
  previewInvitation,
  removeMember,
  removeTeamMember,
  revokeInvitation,
  roleIn,
  setMemberRole,
  setProjectOrganization,
  updateOrganization,
  updateTeam,
  visibleOrganizations,
} from '../../domain/organizations.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { OrganizationRole, TeamAccess } from '../../generated/prisma/enums.ts';
import { builder } from '../builder.ts';
import { ConflictError } from '../errors.ts';
import { pageComplexity, pageOf, rowQuery, window } from './common.ts';
import { writeErrors } from './errors.ts';
import { Project } from './project.ts';
import { User } from './user.ts';

export const OrganizationRoleEnum = builder.enumType(OrganizationRole, {
  name: 'OrganizationRole',
  description: 'owner: manages the organization and maintains all its projects; member: has what their teams give.',
});
export const TeamAccessEnum = builder.enumType(TeamAccess, {
  name: 'TeamAccess',
  description: "readonly: reads the team's projects' private docs and builds; admin: maintains them.",
});

const members = (org: { id: number }) => ({ memberOfOrganization: org.id });

export const Organization = builder.prismaObject('Organization', {
  fields: (t) => ({
    id: t.exposeInt('id'),
    slug: t.exposeString('slug'),
    name: t.exposeString('name'),
    description: t.exposeString('description', { authScopes: members }),
    url: t.exposeString('url', { authScopes: members }),
    email: t.exposeString('email', { authScopes: members }),
    disabled: t.exposeBoolean('disabled', {
      authScopes: members,
      description: "Read the Docs' flag, kept for its API's shape: Lectern never disables an organization.",
    }),
    ssoOnly: t.exposeBoolean('ssoOnly', {
      authScopes: members,
      description: 'Members sign in with single sign-on only: password sign-in is refused to them (site admins excepted).',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime', authScopes: members }),
    modifiedAt: t.expose('modifiedAt', { type: 'DateTime', authScopes: members }),
    owners: t.prismaField({
      type: [User],
      authScopes: members,
      description: 'Its owners, by username.',
      select: (_args, _ctx, nested) => ({ members: { where: { role: 'owner' }, orderBy: { user: { username: 'asc' } }, select: { user: nested() } } }),
      resolve: (_query, org) => org.members.map((m) => m.user),
    }),
    members: t.relation('members', {
      authScopes: members,
      description: 'Everyone in it, owners too, by username.',
      query: { orderBy: { user: { username: 'asc' } } },
    }),
    teams: t.relation('teams', { authScopes: members, query: { orderBy: { slug: 'asc' } } }),
    invitations: t.relation('invitations', {
      authScopes: (org) => ({ ownerOfOrganization: org.slug }),
      description: 'Invitations not yet taken, newest first (their links are not kept: only their hashes). Owners only.',
      query: { where: { acceptedAt: null }, orderBy: { id: 'desc' } },
    }),
    projects: t.field({
      type: ProjectsOfOrganization,
      authScopes: members,
      description: 'Its projects the caller can see, by slug.',
      args: { limit: t.arg.int(), offset: t.arg.int() },
      complexity: pageComplexity,
      resolve: (org, args, ctx, info) => {
        const where: Prisma.ProjectWhereInput = { AND: [{ organizationId: org.id }, visibleProjects(ctx.viewer)] };
        const { take, skip } = window(args, ctx);
        return {
          nodes: ctx.prisma.project.findMany({ ...queryFromInfo({ context: ctx, info, path: ['nodes'] }), where, orderBy: { slug: 'asc' }, take, skip }),
          totalCount: () => ctx.prisma.project.count({ where }),
        };
      },
    }),
    viewerRole: t.field({
      type: OrganizationRoleEnum,
      nullable: true,
      description: "The caller's role in it; null for a site admin who is not in it.",
      select: { id: true },
      resolve: (org, _a, ctx) => roleIn(ctx, org.id),
    }),
  }),
});

const ProjectsOfOrganization = pageOf<Prisma.ProjectGetPayload<object>>('OrganizationProjectPage', Project);

export const OrganizationMember = builder.prismaObject('OrganizationMember', {
  fields: (t) => ({
    user: t.relation('user'),
    role: t.expose('role', { type: OrganizationRoleEnum }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    teams: t.prismaField({
      type: ['Team'],
      description: "The organization's teams the member is in, by slug.",
      select: (_args, _ctx, nested) => ({ teams: { orderBy: { team: { slug: 'asc' } }, select: { team: nested() } } }),
      resolve: (_query, m) => m.teams.map((t) => t.team),
    }),
  }),
});

export const Team = builder.prismaObject('Team', {
  fields: (t) => ({
    id: t.exposeInt('id'),
    slug: t.exposeString('slug'),
    name: t.exposeString('name'),
    access: t.expose('access', { type: TeamAccessEnum }),
    allProjects: t.exposeBoolean('allProjects', { description: 'Every project of the organization, present and future, instead of the chosen ones.' }),
    ssoGroup: t.exposeString('ssoGroup', {
      description:
        "A group of the identity provider's groups claim: people are put in the team, or taken out, as it lists them at each sign-in; empty: by hand.",
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    modifiedAt: t.expose('modifiedAt', { type: 'DateTime' }),
    organization: t.relation('organization'),
    members: t.prismaField({
      type: [User],
      description: 'Its members, by username.',
      select: (_args, _ctx, nested) => ({
        members: { orderBy: { member: { user: { username: 'asc' } } }, select: { member: { select: { user: nested() } } } },
      }),
      resolve: (_query, team) => team.members.map((m) => m.member.user),
    }),
    projects: t.relation('projects', {
      description:
        'The projects granted to it by name, those the caller can see, by slug (with `allProjects`, every project of the organization is covered besides).',
      query: (_args, ctx) => ({ where: visibleProjects(ctx.viewer), orderBy: { slug: 'asc' } }),
    }),
  }),
});

export const OrganizationInvitation = builder.prismaObject('OrganizationInvitation', {
  description:
    'A one-time link that makes its taker a member (or owner) of an organization; only its hash is kept, so the link is shown once, when it is made.',
  fields: (t) => ({
    id: t.exposeInt('id'),
    email: t.exposeString('email', { description: 'Who it was sent to; empty when the link was to be copied by hand.' }),
    role: t.expose('role', { type: OrganizationRoleEnum }),
    team: t.relation('team', { nullable: true }),
    createdBy: t.relation('createdBy', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
  }),
});

const CreatedInvitation = builder
  .objectRef<{ invitation: Prisma.OrganizationInvitationGetPayload<object>; link: string; emailed: boolean }>('CreatedInvitation')
  .implement({
    fields: (t) => ({
      invitation: t.field({ type: OrganizationInvitation, resolve: (c) => c.invitation }),
      link: t.exposeString('link', { description: 'The link to send: shown this once.' }),
      emailed: t.exposeBoolean('emailed', { description: 'Whether it went by email (the installation sends email and an address was given).' }),
    }),
  });

builder.prismaObjectFields(Project, (t) => ({
  organization: t.relation('organization', {
    nullable: true,
    description: 'The organization that owns it. Its name and slug are there for anyone who sees the project; the rest for its members.',
  }),
  viewerAccess: t.field({
    type: TeamAccessEnum,
    nullable: true,
    description:
      "The caller's access to it: admin (maintains it, as a maintainer, an owner of its organization or in an admin team), readonly (in a read-only team), or null.",
    select: { id: true },
    resolve: async (p, _a, ctx) => ((await isMaintainer(ctx, p.id)) ? 'admin' : (await hasReadAccess(ctx, p.id)) ? 'readonly' : null),
  }),
}));

const OrganizationPage = pageOf<Prisma.OrganizationGetPayload<object>>('OrganizationPage', Organization);

const InvitationPreview = builder
  .objectRef<{ organization: { slug: string; name: string }; role: string; team: string | null; expiresAt: Date }>('InvitationPreview')
  .implement({
    description: 'What an invitation link offers, shown before it is taken.',
    fields: (t) => ({
      organizationSlug: t.string({ resolve: (i) => i.organization.slug }),
      organizationName: t.string({ resolve: (i) => i.organization.name }),
      role: t.field({ type: OrganizationRoleEnum, resolve: (i) => i.role as never }),
      team: t.exposeString('team', { nullable: true, description: 'The team (its name) the taker joins, if any.' }),
      expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
    }),
  });

builder.queryFields((t) => ({
  invitation: t.field({
    authScopes: { loggedIn: true },
    type: InvitationPreview,
    nullable: true,
    description:
      "What the invitation link with this token offers; null when it is used, expired or wrong. Whoever holds the link may read it: it is the link's own content.",
    args: { token: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => previewInvitation(ctx, args.token),
  }),
  organizations: t.field({
    authScopes: { public: true },
    type: OrganizationPage,
    description: "The caller's organizations (every one for a site admin), by slug; none for an anonymous caller.",
    args: { limit: t.arg.int(), offset: t.arg.int() },
    complexity: pageComplexity,
    resolve: (_root, args, ctx, info) => {
      const where = visibleOrganizations(ctx.viewer);
      const { take, skip } = window(args, ctx);
      return {
        nodes: ctx.prisma.organization.findMany({ ...queryFromInfo({ context: ctx, info, path: ['nodes'] }), where, orderBy: { slug: 'asc' }, take, skip }),
        totalCount: () => ctx.prisma.organization.count({ where }),
      };
    },
  }),
  organization: t.prismaField({
    authScopes: { public: true },
    type: Organization,
    nullable: true,
    description: 'One organization by slug; null when there is none the caller is in (site admins read every one).',
    args: { slug: t.arg.string({ required: true }) },
    resolve: (query, _root, args, ctx) =>
      ctx.prisma.organization.findFirst({ ...query, where: { AND: [{ slug: args.slug }, visibleOrganizations(ctx.viewer)] } }),
  }),
}));

const OrganizationInput = builder.inputType('OrganizationInput', {
  fields: (t) => ({
    name: t.string(),
    slug: t.string({ description: 'Made from the name when not given; it cannot be changed later.' }),
    description: t.string(),
    url: t.string(),
    email: t.string(),
    ssoOnly: t.boolean({ description: 'Members sign in with single sign-on only (site admins excepted).' }),
  }),
});

const TeamInput = builder.inputType('TeamInput', {
  fields: (t) => ({
    name: t.string(),
    slug: t.string({ description: 'Made from the name when not given; it cannot be changed later.' }),
    access: t.field({ type: TeamAccessEnum, description: 'readonly by default.' }),
    allProjects: t.boolean(),
    projects: t.stringList({ description: "The organization's projects (slugs) granted to the team, replacing those it had." }),
    ssoGroup: t.string({ description: "A group of the identity provider's groups claim that the team's members follow; empty: by hand." }),
  }),
});

const InvitationInput = builder.inputType('OrganizationInvitationInput', {
  fields: (t) => ({
    email: t.string({ description: 'Where the link goes by email, when the installation sends email.' }),
    role: t.field({ type: OrganizationRoleEnum, description: 'member by default.' }),
    team: t.string({ description: 'A team (slug) the taker joins.' }),
  }),
});

/** Writes that keep an owner, or keep an organization that owns projects, answer ConflictError. */
const withConflicts = { types: [...writeErrors.types, ConflictError] };

const owner = (_root: unknown, args: { organization: string }) => ({ ownerOfOrganization: args.organization });

// Organizations made, changed and deleted.
builder.mutationFields((t) => ({
  createOrganization: t.prismaField({
    authScopes: { loggedIn: true },
    type: Organization,
    description: 'A new organization, owned by the caller.',
    args: { input: t.arg({ type: OrganizationInput, required: true }) },
    errors: writeErrors,
    resolve: async (query, _root, args, ctx) => {
      const org = await createOrganization(ctx, args.input);
      return ctx.prisma.organization.findUniqueOrThrow({ ...rowQuery(query), where: { id: org.id } });
    },
  }),
  updateOrganization: t.prismaField({
    authScopes: owner,
    type: Organization,
    args: { organization: t.arg.string({ required: true }), input: t.arg({ type: OrganizationInput, required: true }) },
    errors: writeErrors,
    resolve: async (query, _root, args, ctx) => {
      const org = await updateOrganization(ctx, args.organization, args.input);
      return ctx.prisma.organization.findUniqueOrThrow({ ...rowQuery(query), where: { id: org.id } });
    },
  }),
  deleteOrganization: t.prismaField({
    authScopes: owner,
    type: Organization,
    description: 'Deletes an organization that owns no project. Answers with it as it was (its own fields).',
    args: { organization: t.arg.string({ required: true }) },
    errors: withConflicts,
    // The answer is read (with the client's selection) before the row goes.
    resolve: async (query, _root, args, ctx) => {
      const row = await ctx.prisma.organization.findUniqueOrThrow({ ...rowQuery(query), where: { slug: args.organization } });
      await deleteOrganization(ctx, args.organization);
      return row;
    },
  }),
}));

// An organization's members: invited, accepted, made owners or members, removed.
builder.mutationFields((t) => ({
  inviteToOrganization: t.field({
    authScopes: owner,
    type: CreatedInvitation,
    description: 'A one-time link that lets its taker join (within a week); sent by email when the installation sends email and an address is given.',
    args: { organization: t.arg.string({ required: true }), input: t.arg({ type: InvitationInput, required: true }) },
    errors: writeErrors,
    resolve: (_root, args, ctx) => inviteToOrganization(ctx, args.organization, args.input),
  }),
  revokeInvitation: t.boolean({
    authScopes: owner,
    args: { organization: t.arg.string({ required: true }), id: t.arg.int({ required: true }) },
    errors: writeErrors,
    resolve: async (_root, args, ctx) => {
      await revokeInvitation(ctx, args.organization, args.id);
      return true;
    },
  }),
  acceptInvitation: t.prismaField({
    authScopes: { loggedIn: true },
    type: Organization,
    description: "Joins the organization an invitation link's token is for: once, within its week.",
    args: { token: t.arg.string({ required: true }) },
    errors: writeErrors,
    resolve: async (query, _root, args, ctx) => {
      const org = await acceptInvitation(ctx, args.token);
      return ctx.prisma.organization.findUniqueOrThrow({ ...rowQuery(query), where: { id: org.id } });
    },
  }),
  setOrganizationMemberRole: t.prismaField({
    authScopes: owner,
    type: OrganizationMember,
    description: 'Makes a member an owner, or an owner a member; the last owner cannot step down.',
    args: {
      organization: t.arg.string({ required: true }),
      username: t.arg.string({ required: true }),
      role: t.arg({ type: OrganizationRoleEnum, required: true }),
    },
    errors: withConflicts,
    resolve: async (query, _root, args, ctx) => {
      const m = await setMemberRole(ctx, args.organization, args.username, args.role);
      return ctx.prisma.organizationMember.findUniqueOrThrow({
        ...rowQuery(query),
        where: { organizationId_userId: { organizationId: m.organizationId, userId: m.userId } },
      });
    },
  }),
  removeOrganizationMember: t.boolean({
    authScopes: { loggedIn: true },
    description: 'Removes a member and their teams (owners), or the caller leaves. The last owner cannot leave.',
    args: { organization: t.arg.string({ required: true }), username: t.arg.string({ required: true }) },
    errors: withConflicts,
    resolve: async (_root, args, ctx) => {
      await removeMember(ctx, args.organization, args.username);
      return true;
    },
  }),
}));

// The teams of an organization: their owners' to change.
builder.mutationFields((t) => ({
  createTeam: t.prismaField({
    authScopes: owner,
    type: Team,
    args: { organization: t.arg.string({ required: true }), input: t.arg({ type: TeamInput, required: true }) },
    errors: writeErrors,
    resolve: async (query, _root, args, ctx) => {
      const team = await createTeam(ctx, args.organization, args.input);
      return ctx.prisma.team.findUniqueOrThrow({ ...rowQuery(query), where: { id: team.id } });
    },
  }),
  updateTeam: t.prismaField({
    authScopes: owner,
    type: Team,
    args: { organization: t.arg.string({ required: true }), team: t.arg.string({ required: true }), input: t.arg({ type: TeamInput, required: true }) },
    errors: writeErrors,
    resolve: async (query, _root, args, ctx) => {
      const team = await updateTeam(ctx, args.organization, args.team, args.input);
      return ctx.prisma.team.findUniqueOrThrow({ ...rowQuery(query), where: { id: team.id } });
    },
  }),
  deleteTeam: t.prismaField({
    authScopes: owner,
    type: Team,
    description: 'Deletes a team; its members stay in the organization. Answers with it as it was (its own fields).',
    args: { organization: t.arg.string({ required: true }), team: t.arg.string({ required: true }) },
    errors: writeErrors,
    resolve: async (query, _root, args, ctx) => {
      const org = await ctx.prisma.organization.findUniqueOrThrow({ where: { slug: args.organization }, select: { id: true } });
      const row = await ctx.prisma.team.findUnique({ ...rowQuery(query), where: { organizationId_slug: { organizationId: org.id, slug: args.team } } });
      await deleteTeam(ctx, args.organization, args.team);
      return row!;
    },
  }),
  addTeamMember: t.prismaField({
    authScopes: owner,
    type: Team,
    description: 'Adds a member of the organization to one of its teams.',
    args: { organization: t.arg.string({ required: true }), team: t.arg.string({ required: true }), username: t.arg.string({ required: true }) },
    errors: writeErrors,
    resolve: async (query, _root, args, ctx) => {
      const team = await addTeamMember(ctx, args.organization, args.team, args.username);
      return ctx.prisma.team.findUniqueOrThrow({ ...rowQuery(query), where: { id: team.id } });
    },
  }),
  removeTeamMember: t.prismaField({
    authScopes: owner,
    type: Team,
    args: { organization: t.arg.string({ required: true }), team: t.arg.string({ required: true }), username: t.arg.string({ required: true }) },
    errors: writeErrors,
    resolve: async (query, _root, args, ctx) => {
      const team = await removeTeamMember(ctx, args.organization, args.team, args.username);
      return ctx.prisma.team.findUniqueOrThrow({ ...rowQuery(query), where: { id: team.id } });
    },
  }),
  setProjectOrganization: t.prismaField({
    authScopes: (_root, args) => ({ maintainerOfProject: args.project }),
    type: Project,
    description:
      "Moves a project into an organization (the caller owns it), out of its organization (`organization: null`; the caller owns the one it leaves), or between two. Leaving drops the old organization's team grants of it.",
    args: { project: t.arg.string({ required: true }), organization: t.arg.string() },
    errors: writeErrors,
    resolve: async (query, _root, args, ctx) => {
      await setProjectOrganization(ctx, args.project, args.organization ?? null);
      return ctx.prisma.project.findUniqueOrThrow({ ...rowQuery(query), where: { slug: args.project } });
    },
  }),
}));
