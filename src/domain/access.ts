// Who may see and change what (docs/design/read-the-docs.md §2.2, docs/design/organizations.md), in
// one place: a project's maintainers, its organization's owners and the members of its admin teams
// write; those and the members of its read-only teams also read its private data; everyone else
// reads public data only. Each read rule has two faces (Rule): a Prisma condition for lists and a
// check of one row, tested to agree. GraphQL, the docs server, embed and webhooks use these, never
// a copy. Writes look the project up without a privacy filter and then answer 401, 404 or 403 in
// that order, as Read the Docs does.
import type { Prisma, Project } from '../generated/prisma/client.ts';
import type { Context, Viewer } from './context.ts';
import { NotFoundError, UnauthenticatedError } from './errors.ts';

/**
 * The projects the viewer has access to at `level`: `admin` (maintains: a maintainer, an owner of
 * the project's organization, a member of one of its admin teams that covers it) or `read` (those,
 * and members of its read-only teams). A team covers the projects granted to it, or all of its
 * organization's with `allProjects`; a team's grants are only ever of its organization's projects
 * (domain/organizations.ts keeps them so).
 */
export function projectsWithAccess(viewer: Viewer, level: 'read' | 'admin'): Prisma.ProjectWhereInput {
  const limits = viewer.limits;
  // A read-only token maintains nothing; a token limited to projects reaches those only (docs/design/tokens.md).
  if (limits?.readOnly && level === 'admin') return { id: { in: [] } };
  const inTeam = { members: { some: { userId: viewer.id } }, ...(level === 'admin' ? { access: 'admin' as const } : {}) };
  const rule: Prisma.ProjectWhereInput = {
    OR: [
      { users: { some: { id: viewer.id } } },
      { teams: { some: inTeam } },
      // One condition on the organization: Prisma joins it once per condition that names it.
      { organization: { OR: [{ members: { some: { userId: viewer.id, role: 'owner' } } }, { teams: { some: { ...inTeam, allProjects: true } } }] } },
    ],
  };
  return limits?.projectIds ? { AND: [rule, { id: { in: [...limits.projectIds] } }] } : rule;
}
const readBy = (viewer: Viewer) => projectsWithAccess(viewer, 'read');

/** Who a rule is about: the viewer, and (read once per request) the projects they read privately and maintain. */
export type Caller = Pick<Context, 'viewer' | 'readableProjectIds' | 'maintainedProjectIds'>;

/**
 * A rule with two faces: `where`, a Prisma condition for lists, and `allows`, the same rule on one
 * row already read (a lookup by key, a row from a cache), answered without a promise when no
 * access check is needed. test/db/access-rules.test.ts checks that they agree on generated data.
 */
export interface Rule<Where, Row> {
  where(viewer: Viewer | null): Where;
  allows(caller: Caller, row: Row): boolean | Promise<boolean>;
}

/** Whether the caller maintains the project: a promise only for a signed-in caller. */
function maintains(caller: Caller, projectId: number): boolean | Promise<boolean> {
  return caller.viewer !== null && caller.maintainedProjectIds().then((ids) => ids.has(projectId));
}

/** Whether the caller reads the project's private data (maintains it, or is in a team that covers it). */
function reads(caller: Caller, projectId: number): boolean | Promise<boolean> {
  return caller.viewer !== null && caller.readableProjectIds().then((ids) => ids.has(projectId));
}

/** A project: public, or one the caller has access to. */
export const projectRule: Rule<Prisma.ProjectWhereInput, { id: number; privacyLevel: string }> = {
  where: (viewer) => (viewer ? { OR: [{ privacyLevel: 'public' }, readBy(viewer)] } : { privacyLevel: 'public' }),
  allows: (caller, p) => p.privacyLevel === 'public' || reads(caller, p.id),
};

type VersionRow = { projectId: number; privacyLevel: string; type: string; project: { privacyLevel: string } };

/**
 * A version in the API: of a project the caller can see, public or of a project the caller has access to. A pull
 * request's preview (type external) is one too, private or public as the project's
 * externalBuildsPrivacyLevel made it; lists leave previews out unless asked for them (`type:
 * external`), and version menus never offer them (offeredVersions).
 */
export const versionRule: Rule<Prisma.VersionWhereInput, VersionRow> = {
  where: (viewer) => ({
    project: projectRule.where(viewer),
    OR: [{ privacyLevel: 'public' }, ...(viewer ? [{ project: readBy(viewer) }] : [])],
  }),
  allows: (caller, v) => (v.privacyLevel === 'public' && v.project.privacyLevel === 'public' ? true : reads(caller, v.projectId)),
};

/**
 * A version whose docs the caller can open: one the caller can see that is active and built (its
 * files published). Hidden versions are served; they are only left out of menus (offeredVersions).
 */
export const readableVersionRule: Rule<Prisma.VersionWhereInput, VersionRow & { active: boolean; built: boolean }> = {
  where: (viewer) => ({ AND: [versionRule.where(viewer), { active: true, built: true }] }),
  allows: (caller, v) => v.active && v.built && versionRule.allows(caller, v),
};

/**
 * The versions offered to every reader, whoever asks: readable by anyone (public project and
 * version, active, built). The API's `activeVersions` (Read the Docs' `active_versions`) lists
 * them all; version menus leave out the hidden ones. With `viewer`, those offered to them (their
 * private ones too).
 */
export function offeredVersions(o: { includeHidden: boolean; viewer?: Viewer | null }): Prisma.VersionWhereInput {
  return { AND: [readableVersionRule.where(o.viewer ?? null), { type: { not: 'external' } }, ...(o.includeHidden ? [] : [{ hidden: false }])] };
}

/**
 * The versions search reads: ones whose docs the caller can open; hidden ones only when the search
 * names the version (they are left out of menus and of searches that do not ask for them).
 */
export function searchableVersions(viewer: Viewer | null, named: boolean): Prisma.VersionWhereInput {
  return { AND: [readableVersionRule.where(viewer), ...(named ? [] : [{ hidden: false }])] };
}

type BuildRow = { projectId: number; project: { privacyLevel: string }; version: { privacyLevel: string } | null };

/** A build: of a public version of a public project, or of a project the caller has access to. */
export const buildRule: Rule<Prisma.BuildWhereInput, BuildRow> = {
  where: (viewer) => ({
    OR: [{ project: { privacyLevel: 'public' }, version: { privacyLevel: 'public' } }, ...(viewer ? [{ project: readBy(viewer) }] : [])],
  }),
  allows: (caller, b) => (b.project.privacyLevel === 'public' && b.version?.privacyLevel === 'public') || reads(caller, b.projectId),
};

/** A subproject relationship: visible when its child project is. */
export const subprojectRule: Rule<Prisma.SubprojectWhereInput, { child: { id: number; privacyLevel: string } }> = {
  where: (viewer) => ({ child: projectRule.where(viewer) }),
  allows: (caller, r) => projectRule.allows(caller, r.child),
};

// The list faces under the names the resolvers use.
export const visibleProjects = projectRule.where;
export const visibleVersions = versionRule.where;
export const visibleBuilds = buildRule.where;
export const visibleSubprojects = subprojectRule.where;

/**
 * Who may change the project a write names by slug: those with admin access to it. Answered in Read the Docs'
 * order: false for an anonymous caller (401) before any lookup; NotFoundError when the caller
 * cannot see a project of that slug (none, or a private one: its existence is not revealed); then
 * whether the caller maintains it (403). GraphQL declares it on each write (scope `maintainerOfProject`).
 */
export async function maintainsProject(ctx: Context, slug: string): Promise<boolean> {
  if (!ctx.viewer) return false;
  const project = await ctx.projectBySlug(slug);
  if (!project || !(await projectRule.allows(ctx, project))) throw new NotFoundError('Project');
  return (await ctx.maintainedProjectIds()).has(project.id);
}

/** Whether the caller reads the project's private data (GraphQL's `readerOf`: its builds' commands, its team access). */
export async function hasReadAccess(caller: Caller, projectId: number): Promise<boolean> {
  return reads(caller, projectId);
}

/**
 * The project a write changes, read once per request: the write's rule (maintainsProject) has
 * already been checked by the field that calls it, so nothing is checked again here.
 */
export async function projectToChange(ctx: Context, slug: string): Promise<Project> {
  const project = await ctx.projectBySlug(slug);
  if (!project) throw new NotFoundError('Project');
  return project;
}

/** The caller a write for signed-in callers acts for (GraphQL's `loggedIn` scope has checked there is one). */
export function signedIn(ctx: Context): Viewer {
  if (!ctx.viewer) throw new UnauthenticatedError();
  return ctx.viewer;
}

export async function isMaintainer(caller: Caller, projectId: number): Promise<boolean> {
  return maintains(caller, projectId);
}

/** projectRule on one row, as a promise (for resolvers that await anyway). */
export async function canSeeProject(caller: Caller, p: { id: number; privacyLevel: string }): Promise<boolean> {
  return projectRule.allows(caller, p);
}
