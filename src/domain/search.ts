// What a search covers, decided by the same rules as everything else (access.ts): one version of
// one project (its default version unless one is named), that project and its subprojects, or
// every project the caller can see (each one's default version). Private projects and versions
// the caller cannot open are never searched; hidden ones only when named.
import type { Prisma } from '../generated/prisma/client.ts';
import { type SectionHit, searchSections } from '../search/index.ts';
import { projectRule, searchableVersions } from './access.ts';
import type { Context } from './context.ts';
import { NotFoundError, ValidationError } from './errors.ts';
import { documentationUrl, servedProjectSelect } from './urls.ts';

export interface SearchArgs {
  query: string;
  project?: string | null;
  version?: string | null;
  includeSubprojects?: boolean | null;
  limit: number;
  offset: number;
}

export interface SearchHit extends SectionHit {
  /** Where the section is read: the page's URL with `#anchor`. */
  url: string;
}

/** Longest query read; longer ones are refused, naming the field. */
const MAX_QUERY = 1000;

export async function search(ctx: Context, args: SearchArgs): Promise<{ hits: SearchHit[]; total: number }> {
  if (args.query.length > MAX_QUERY) throw ValidationError.field('query', `Ensure this field has no more than ${MAX_QUERY} characters.`);
  const where = await scope(ctx, args);
  const versions = await ctx.prisma.version.findMany({
    where,
    select: { id: true, slug: true, project: { select: { ...servedProjectSelect, id: true } } },
  });
  const { hits, total } = await searchSections(ctx.prisma, {
    query: args.query,
    versionIds: versions.map((v) => v.id),
    languages: versions.map((v) => v.project.language),
    limit: args.limit,
    offset: args.offset,
  });
  const byId = new Map(versions.map((v) => [v.id, v]));
  return {
    total,
    hits: hits.map((h) => {
      const v = byId.get(h.versionId)!;
      return { ...h, url: `${documentationUrl(ctx.config, v.project, v.slug)}${h.path}${h.anchor ? `#${h.anchor}` : ''}` };
    }),
  };
}

/** The versions a search reads. */
async function scope(ctx: Context, args: SearchArgs): Promise<Prisma.VersionWhereInput> {
  if (!args.project) {
    if (args.version) throw ValidationError.field('version', 'Name the project whose version to search.');
    // Every project the caller can see, each in its default version.
    const projects = await ctx.prisma.project.findMany({ where: projectRule.where(ctx.viewer), select: { id: true, defaultVersion: true } });
    return { AND: [searchableVersions(ctx.viewer, false), { OR: projects.map((p) => ({ projectId: p.id, slug: p.defaultVersion })) }] };
  }
  const project = await ctx.prisma.project.findUnique({ where: { slug: args.project }, select: { id: true, privacyLevel: true, defaultVersion: true } });
  if (!project || !(await projectRule.allows(ctx, project))) throw new NotFoundError('Project');
  const own: Prisma.VersionWhereInput = { projectId: project.id, slug: args.version ?? project.defaultVersion };
  if (!args.includeSubprojects) return { AND: [searchableVersions(ctx.viewer, Boolean(args.version)), own] };
  // The project and its subprojects (each in its default version) that the caller can see.
  const children = await ctx.prisma.project.findMany({
    where: { AND: [projectRule.where(ctx.viewer), { superprojects: { some: { parentId: project.id } } }] },
    select: { id: true, defaultVersion: true },
  });
  return {
    OR: [
      { AND: [searchableVersions(ctx.viewer, Boolean(args.version)), own] },
      { AND: [searchableVersions(ctx.viewer, false), { OR: children.map((c) => ({ projectId: c.id, slug: c.defaultVersion })) }] },
    ],
  };
}
