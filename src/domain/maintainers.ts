// A project's maintainers (added by username, removed; a project always keeps one) and its
// translations (Read the Docs' dashboard rules, docs/design/read-the-docs.md §4.5: API v3 only lists them).
// Callers' rights are checked by the GraphQL fields (maintainerOfProject); the rules about the
// projects and users named are checked here, under a lock on the project rows they read.
import type { Prisma } from '../generated/prisma/client.ts';
import { projectToChange } from './access.ts';
import { audit } from './audit.ts';
import type { Context } from './context.ts';
import { ConflictError, NotFoundError, ValidationError } from './errors.ts';
import { lockProjects } from './locks.ts';

interface ProjectQuery {
  include?: Prisma.ProjectInclude;
  select?: Prisma.ProjectSelect;
}

/** Makes a user a maintainer of the project; answers with the project (read with `query`). */
export async function addMaintainer(ctx: Context, slug: string, username: string, query: ProjectQuery = {}) {
  const project = await projectToChange(ctx, slug);
  const user = await ctx.prisma.user.findUnique({ where: { username }, select: { id: true, disabledAt: true } });
  if (!user || user.disabledAt) throw ValidationError.field('username', `No user named "${username}".`);
  return ctx.prisma.$transaction(async (tx) => {
    const updated = await tx.project.update({ ...query, where: { id: project.id }, data: { users: { connect: { id: user.id } } } });
    await audit(ctx, { action: 'maintainer-added', project, data: { maintainer: username } }, tx);
    return updated;
  });
}

/** Removes a maintainer; the last one stays (a project nobody maintains could not be changed again). */
export async function removeMaintainer(ctx: Context, slug: string, username: string, query: ProjectQuery = {}) {
  const project = await projectToChange(ctx, slug);
  return ctx.prisma.$transaction(async (tx) => {
    await lockProjects(tx, [project.id]);
    const maintainers = await tx.user.findMany({ where: { projects: { some: { id: project.id } } }, select: { id: true, username: true } });
    const leaving = maintainers.find((m) => m.username === username);
    if (!leaving) throw new NotFoundError('User');
    if (maintainers.length === 1) throw new ConflictError('A project keeps at least one maintainer: add another before removing this one.');
    await audit(ctx, { action: 'maintainer-removed', project, data: { maintainer: username } }, tx);
    return tx.project.update({ ...query, where: { id: project.id }, data: { users: { disconnect: { id: leaving.id } } } });
  });
}

/**
 * Makes `translationSlug` a translation of the project (served under its path with its own
 * language code). The caller must maintain both (the field checks the project; the translation is
 * checked here, as Read the Docs' form does).
 */
export async function addTranslation(ctx: Context, slug: string, translationSlug: string, query: ProjectQuery = {}) {
  const main = await projectToChange(ctx, slug);
  const notValid = (why: string) => ValidationError.field('translation', why);
  const candidate = await ctx.prisma.project.findUnique({ where: { slug: translationSlug }, select: { id: true } });
  if (!candidate || !(await ctx.maintainedProjectIds()).has(candidate.id)) throw notValid(`No project you maintain has the slug "${translationSlug}".`);
  if (candidate.id === main.id) throw notValid('A project cannot be a translation of itself.');
  try {
    return await ctx.prisma.$transaction(async (tx) => {
      await lockProjects(tx, [main.id, candidate.id]);
      const [parent, child] = await Promise.all(
        [main.id, candidate.id].map((id) =>
          tx.project.findUniqueOrThrow({
            where: { id },
            select: { id: true, language: true, versioningScheme: true, mainLanguageProjectId: true, _count: { select: { translations: true } } },
          }),
        ),
      );
      if (parent!.versioningScheme !== 'multiple_versions_with_translations') {
        throw ValidationError.field('nonFieldErrors', 'This project does not support translations: its versioning scheme has none.');
      }
      if (parent!.mainLanguageProjectId !== null) throw ValidationError.field('nonFieldErrors', 'A translation cannot have translations of its own.');
      if (child!.mainLanguageProjectId !== null) throw notValid('That project is a translation already.');
      if (child!._count.translations > 0) throw notValid('That project has translations of its own.');
      if (child!.language === parent!.language) throw notValid(`Both projects are in the same language ("${parent!.language}").`);
      const sameLanguage = await tx.project.findFirst({ where: { mainLanguageProjectId: parent!.id, language: child!.language }, select: { slug: true } });
      if (sameLanguage) throw notValid(`This project has a translation in "${child!.language}" already: ${sameLanguage.slug}.`);
      await tx.project.update({ where: { id: child!.id }, data: { mainLanguageProjectId: parent!.id } });
      return tx.project.findUniqueOrThrow({ ...query, where: { id: parent!.id } });
    });
  } finally {
    ctx.events.emit('servedChanged', { projectId: main.id });
  }
}

/** Ends a translation relationship: the translation is served on its own again. Both projects stay. */
export async function removeTranslation(ctx: Context, slug: string, translationSlug: string, query: ProjectQuery = {}) {
  const main = await projectToChange(ctx, slug);
  try {
    return await ctx.prisma.$transaction(async (tx) => {
      const { count } = await tx.project.updateMany({
        where: { slug: translationSlug, mainLanguageProjectId: main.id },
        data: { mainLanguageProjectId: null },
      });
      if (count === 0) throw new NotFoundError('Project');
      return tx.project.findUniqueOrThrow({ ...query, where: { id: main.id } });
    });
  } finally {
    ctx.events.emit('servedChanged', { projectId: main.id });
  }
}
