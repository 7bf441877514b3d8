// Subproject relationships, checked in Read the Docs' order (rtd-behavior §5.4): only one level
// of nesting, a child belongs to one parent, aliases unique per parent.
import { Prisma } from '../generated/prisma/client.ts';
import type { Context } from '../graphql/context.ts';
import { NotFoundError, ValidationError } from '../graphql/errors.ts';
import { prisma } from '../services.ts';
import { requireMaintainedProject } from './access.ts';
import { required } from './validate.ts';

export interface CreateSubprojectInput {
  child?: string | null;
  alias?: string | null;
}

const ALIAS = /^[-\w]+(?:\/[-\w]+)*$/;

export async function createSubproject(ctx: Context, parentSlug: string, input: CreateSubprojectInput) {
  const parent = await requireMaintainedProject(ctx, parentSlug);
  const childSlug = input.child;
  if (childSlug === undefined || childSlug === null || childSlug === '') throw ValidationError.field('child', required);
  const maintained = await ctx.maintainedProjectIds();
  const child = await prisma().project.findUnique({
    where: { slug: childSlug },
    select: { id: true, slug: true, _count: { select: { subprojects: true, superprojects: true } } },
  });
  if (!child || child.id === parent.id || !maintained.has(child.id) || child._count.subprojects > 0 || child._count.superprojects > 0) {
    throw ValidationError.field('child', `Project with slug=${childSlug} is not valid as subproject`);
  }
  const alias = input.alias ?? child.slug;
  if (alias.length > 255 || !ALIAS.test(alias)) {
    throw ValidationError.field('alias', 'Aliases can contain letters, numbers, underscores, and hyphens.');
  }
  if (await prisma().projectRelationship.findFirst({ where: { childId: parent.id }, select: { id: true } })) {
    throw ValidationError.field('nonFieldErrors', 'Subproject nesting is not supported');
  }
  const taken = () => ValidationError.field('alias', 'A subproject with this alias already exists');
  if (await prisma().projectRelationship.findUnique({ where: { parentId_alias: { parentId: parent.id, alias } }, select: { id: true } })) throw taken();
  if (alias.includes('/')) throw ValidationError.field('nonFieldErrors', "Aliases can't contain slashes.");
  try {
    return await prisma().projectRelationship.create({ data: { parentId: parent.id, childId: child.id, alias } });
  } catch (e) {
    if (e instanceof Prisma.PrismaClientKnownRequestError && e.code === 'P2002') {
      const target = String((e.meta as { target?: unknown } | undefined)?.target ?? '');
      if (target.includes('alias')) throw taken();
      throw ValidationError.field('child', `Project with slug=${childSlug} is not valid as subproject`);
    }
    throw e;
  }
}

/** Removes the relationship only; both projects stay. */
export async function deleteSubproject(ctx: Context, parentSlug: string, alias: string) {
  const parent = await requireMaintainedProject(ctx, parentSlug);
  const rel = await prisma().projectRelationship.findUnique({ where: { parentId_alias: { parentId: parent.id, alias } } });
  if (!rel) throw new NotFoundError('ProjectRelationship');
  await prisma().projectRelationship.delete({ where: { id: rel.id } });
  return rel;
}
