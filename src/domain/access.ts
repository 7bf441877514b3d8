// Who may see and change what (rtd-behavior §1.2): maintainers write; everyone else reads public
// data only. Reads are filtered in SQL with these conditions; writes look the project up without
// a privacy filter and then answer 401, 404 or 403 in that order, as Read the Docs does.
import type { Prisma } from '../generated/prisma/client.ts';
import type { Context, Viewer } from '../graphql/context.ts';
import { ForbiddenError, NotFoundError, UnauthenticatedError } from '../graphql/errors.ts';
import { prisma } from '../services.ts';

const maintainedBy = (viewer: Viewer) => ({ users: { some: { id: viewer.id } } });

export function visibleProjects(viewer: Viewer | null): Prisma.ProjectWhereInput {
  return viewer ? { OR: [{ privacyLevel: 'public' }, maintainedBy(viewer)] } : { privacyLevel: 'public' };
}

export function visibleVersions(viewer: Viewer | null): Prisma.VersionWhereInput {
  const mine = viewer ? [{ project: maintainedBy(viewer) }] : [];
  return { project: visibleProjects(viewer), OR: [{ privacyLevel: 'public' }, ...mine] };
}

export function visibleBuilds(viewer: Viewer | null): Prisma.BuildWhereInput {
  const mine = viewer ? [{ project: maintainedBy(viewer) }] : [];
  return { OR: [{ project: { privacyLevel: 'public' }, version: { privacyLevel: 'public' } }, ...mine] };
}

/** Subproject relationships are visible when the child is. */
export function visibleSubprojects(viewer: Viewer | null): Prisma.ProjectRelationshipWhereInput {
  return { child: visibleProjects(viewer) };
}

export function requireViewer(ctx: Context): Viewer {
  if (!ctx.viewer) throw new UnauthenticatedError();
  return ctx.viewer;
}

/** The project a write is about, when the viewer maintains it. */
export async function requireMaintainedProject(ctx: Context, slug: string) {
  requireViewer(ctx);
  const project = await prisma().project.findUnique({ where: { slug } });
  if (!project) throw new NotFoundError('Project');
  if (!(await ctx.maintainedProjectIds()).has(project.id)) throw new ForbiddenError();
  return project;
}

export async function isMaintainer(ctx: Context, projectId: number): Promise<boolean> {
  return ctx.viewer !== null && (await ctx.maintainedProjectIds()).has(projectId);
}

/**
 * The same rules as visibleProjects/visibleVersions, checked on a row already read: lookups by a
 * unique key read the row and check here, so that Prisma can batch a page's lookups into one statement.
 */
export async function canSeeProject(ctx: Context, p: { id: number; privacyLevel: string }): Promise<boolean> {
  return p.privacyLevel === 'public' || isMaintainer(ctx, p.id);
}

/** A version of a project the viewer can see (canSeeProject) is visible when public or maintained. */
export async function canSeeVersion(ctx: Context, v: { projectId: number; privacyLevel: string }): Promise<boolean> {
  return v.privacyLevel === 'public' || isMaintainer(ctx, v.projectId);
}
