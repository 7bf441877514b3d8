// Finding what a docs URL names: the project (by slug, by host name, a subproject by alias, a
// translation by language), the version, and whether this reader may see them. Only public data
// is shown to anonymous readers; a maintainer (Authorization: Token) also sees private docs.
// @see ../domain/urls.ts servedRoot() for where each project lives
import type { Prisma } from '../generated/prisma/client.ts';
import type { Context } from '../graphql/context.ts';
import { servedProjectSelect } from '../domain/urls.ts';
import { prisma } from '../services.ts';

export const projectSelect = {
  id: true,
  slug: true,
  language: true,
  privacyLevel: true,
  defaultVersion: true,
  versionSwitcher: true,
  mainLanguageProjectId: true,
  superprojects: servedProjectSelect.superprojects,
  mainLanguageProject: servedProjectSelect.mainLanguageProject,
  // Loaded with the project: forced redirects are checked on every request.
  redirects: {
    where: { enabled: true },
    orderBy: [{ position: 'asc' }, { modifiedAt: 'desc' }],
    select: { type: true, fromUrl: true, toUrl: true, httpStatus: true, force: true },
  },
} satisfies Prisma.ProjectSelect;

export type ServedProjectRow = Prisma.ProjectGetPayload<{ select: typeof projectSelect }>;

const versionSelect = {
  id: true,
  slug: true,
  active: true,
  hidden: true,
  privacyLevel: true,
  publishedBuildId: true,
  hasPdf: true,
  hasEpub: true,
  hasHtmlzip: true,
} satisfies Prisma.VersionSelect;

export type ServedVersionRow = Prisma.VersionGetPayload<{ select: typeof versionSelect }>;
export type ReadableVersion = ServedVersionRow & { publishedBuildId: number };

export async function projectBySlug(slug: string): Promise<ServedProjectRow | null> {
  return prisma().project.findUnique({ where: { slug }, select: projectSelect });
}

/** `<label>.<docs domain>`: docsRoot() writes `_` as `-`, so both spellings of the slug are tried. */
export async function projectByHostLabel(label: string): Promise<ServedProjectRow | null> {
  const candidates = [...new Set([label, label.replace(/-/g, '_')])];
  const rows = await prisma().project.findMany({ where: { slug: { in: candidates } }, select: projectSelect });
  return rows.find((r) => r.slug === label) ?? rows[0] ?? null;
}

export async function subprojectByAlias(parentId: number, alias: string): Promise<ServedProjectRow | null> {
  const rel = await prisma().projectRelationship.findUnique({
    where: { parentId_alias: { parentId, alias } },
    select: { child: { select: projectSelect } },
  });
  return rel?.child ?? null;
}

/** The project of `language` in the family of `root`: itself, its main project, or a translation of that. */
export async function projectForLanguage(root: ServedProjectRow, language: string): Promise<ServedProjectRow | null> {
  if (root.language === language) return root;
  const main = root.mainLanguageProjectId ?? root.id;
  return prisma().project.findFirst({
    where: { language, OR: [{ id: main }, { mainLanguageProjectId: main }] },
    select: projectSelect,
  });
}

/** The translations family of `project` (its main project first), public ones only: what a menu may list. */
export async function publicFamily(project: ServedProjectRow): Promise<ServedProjectRow[]> {
  const main = project.mainLanguageProjectId ?? project.id;
  const rows = await prisma().project.findMany({
    where: { privacyLevel: 'public', OR: [{ id: main }, { mainLanguageProjectId: main }] },
    select: projectSelect,
    orderBy: { language: 'asc' },
  });
  return rows.sort((a, b) => Number(b.id === main) - Number(a.id === main));
}

export async function versionOf(projectId: number, slug: string): Promise<ServedVersionRow | null> {
  return prisma().version.findUnique({ where: { projectId_slug: { projectId, slug } }, select: versionSelect });
}

/** The versions a menu lists: active, not hidden, public, with published files. */
export async function listedVersions(projectId: number): Promise<{ slug: string; verboseName: string }[]> {
  return prisma().version.findMany({
    where: { projectId, active: true, hidden: false, privacyLevel: 'public', publishedBuildId: { not: null } },
    select: { slug: true, verboseName: true },
  });
}

export class Reader {
  constructor(readonly ctx: Context) {}

  async maintains(projectId: number): Promise<boolean> {
    return this.ctx.viewer !== null && (await this.ctx.maintainedProjectIds()).has(projectId);
  }

  async canSeeProject(p: { id: number; privacyLevel: string }): Promise<boolean> {
    return p.privacyLevel === 'public' || (await this.maintains(p.id));
  }

  /** The version when it is served: active, built (a published build), and public or maintained by the reader. Hidden ones are served. */
  async readable(p: { id: number; privacyLevel: string }, v: ServedVersionRow | null): Promise<ReadableVersion | null> {
    if (!v || !v.active || v.publishedBuildId === null) return null;
    if (!(await this.canSeeProject(p))) return null;
    return v.privacyLevel === 'public' || (await this.maintains(p.id)) ? { ...v, publishedBuildId: v.publishedBuildId } : null;
  }
}
