// Subproject relationships, checked in Read the Docs' order (docs/design/read-the-docs.md §4.4): only one level
// of nesting, a child belongs to one parent, aliases unique per parent.
import { Prisma, type Subproject as SubprojectRow } from '../generated/prisma/client.ts';
import { projectToChange } from './access.ts';
import type { Context } from './context.ts';
import { NotFoundError, ValidationError } from './errors.ts';
import { required } from './validate.ts';

export interface CreateSubprojectInput {
  child?: string | null;
  alias?: string | null;
}

const ALIAS = /^[-\w]+(?:\/[-\w]+)*$/;

export async function createSubproject(ctx: Context, parentSlug: string, input: CreateSubprojectInput, query: SubprojectQuery = {}): Promise<SubprojectRow> {
  const parent = await projectToChange(ctx, parentSlug);
  const childSlug = input.child;
  if (childSlug === undefined || childSlug === null || childSlug === '') throw ValidationError.field('child', required);
  const notValid = () => ValidationError.field('child', `Project with slug=${childSlug} is not valid as subproject`);
  const taken = () => ValidationError.field('alias', 'A subproject with this alias already exists');
  const maintained = await ctx.maintainedProjectIds();
  const found = await ctx.prisma.project.findUnique({ where: { slug: childSlug }, select: { id: true, slug: true } });
  if (!found || found.id === parent.id || !maintained.has(found.id)) throw notValid();
  const alias = input.alias ?? found.slug;
  try {
    return await ctx.prisma
      .$transaction(async (tx) => {
        // The rules below read relationships of both projects: lock both rows (in id order, so two
        // creates never wait on each other crosswise) and check under the locks, so concurrent
        // creates cannot nest, give a child two parents, or reuse an alias.
        const [first, second] = [parent.id, found.id].sort((a, b) => a - b);
        await tx.$queryRaw`SELECT id FROM "Project" WHERE id IN (${first}, ${second}) ORDER BY id FOR NO KEY UPDATE`;
        const child = await tx.project.findUnique({
          where: { id: found.id },
          select: { _count: { select: { subprojects: true, superprojects: true } } },
        });
        if (!child || child._count.subprojects > 0 || child._count.superprojects > 0) throw notValid();
        if (alias.length > 255 || !ALIAS.test(alias)) {
          throw ValidationError.field('alias', 'Aliases can contain letters, numbers, underscores, and hyphens.');
        }
        if (await tx.subproject.findFirst({ where: { childId: parent.id }, select: { id: true } })) {
          throw ValidationError.field('nonFieldErrors', 'Subproject nesting is not supported');
        }
        if (await tx.subproject.findUnique({ where: { parentId_alias: { parentId: parent.id, alias } }, select: { id: true } })) throw taken();
        if (alias.includes('/')) throw ValidationError.field('nonFieldErrors', "Aliases can't contain slashes.");
        return tx.subproject.create({ ...query, data: { parentId: parent.id, childId: found.id, alias } }) as Promise<SubprojectRow>;
      })
      .finally(() => ctx.events.emit('servedChanged', { projectId: parent.id }));
  } catch (e) {
    // A unique index caught what the checks could not see: say which rule it was by looking again
    // (the driver adapter does not reliably name the constraint).
    if (e instanceof Prisma.PrismaClientKnownRequestError && e.code === 'P2002') {
      const aliasTaken = await ctx.prisma.subproject.findUnique({ where: { parentId_alias: { parentId: parent.id, alias } }, select: { id: true } });
      throw aliasTaken ? taken() : notValid();
    }
    throw e;
  }
}

/**
 * Removes the relationship only; both projects stay. `query` (the GraphQL selection) is read
 * before the row goes, so the answer can still show its parent and child.
 */
export async function deleteSubproject(ctx: Context, parentSlug: string, alias: string, query: SubprojectQuery = {}) {
  const parent = await projectToChange(ctx, parentSlug);
  const where = { parentId: parent.id, alias };
  return ctx.prisma
    .$transaction(async (tx) => {
      const shown = await tx.subproject.findFirst({ ...query, where });
      // Gone already, or removed by a concurrent delete between the read and here.
      if (!shown || (await tx.subproject.deleteMany({ where })).count === 0) throw new NotFoundError('ProjectRelationship');
      return shown;
    })
    .finally(() => ctx.events.emit('servedChanged', { projectId: parent.id }));
}

export interface SubprojectQuery {
  include?: Prisma.SubprojectInclude;
  select?: Prisma.SubprojectSelect;
}
