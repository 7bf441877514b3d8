// What a search covers, decided by the same rules as everything else (access.ts): one version of
// one project (its default version unless one is named), that project and its subprojects, or
// every project the caller can see (each one's default version). Private projects and versions
// the caller cannot open are never searched; hidden ones only when named.
import type { Prisma } from '../generated/prisma/client.ts';
import { type PageHit, type SectionHit, searchPages as searchPagesIn, searchSections } from '../search/index.ts';
import { documentationUrl, servedProjectSelect } from '../urls.ts';
import { projectRule, projectsWithAccess, searchableVersions } from './access.ts';
import type { Context } from './context.ts';
import { NotFoundError, ValidationError } from './errors.ts';

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
  const { asked, urlOf } = await searched(ctx, await scope(ctx, args), args);
  const { hits, total } = await searchSections(ctx.prisma, asked);
  return { total, hits: hits.map((h) => ({ ...h, url: `${urlOf(h.versionId)}${h.path}${h.anchor ? `#${h.anchor}` : ''}` })) };
}

/** What the search index is asked for the versions `where` finds, and the docs root of each of them, by version id. */
async function searched(ctx: Context, where: Prisma.VersionWhereInput, args: { query: string; limit: number; offset: number }) {
  const versions = await ctx.prisma.version.findMany({ where, select: { id: true, slug: true, project: { select: { ...servedProjectSelect, id: true } } } });
  const byId = new Map(versions.map((v) => [v.id, v]));
  return {
    asked: {
      query: args.query,
      versionIds: versions.map((v) => v.id),
      languages: versions.map((v) => v.project.language),
      limit: args.limit,
      offset: args.offset,
    },
    urlOf: (versionId: number) => {
      const v = byId.get(versionId)!;
      return documentationUrl(ctx.config, v.project, v.slug);
    },
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

/** One part of a page search's scope: a project in a version (its default one unless named), with its subprojects or not. */
export interface SearchScope {
  project: string;
  version?: string | null;
  includeSubprojects?: boolean | null;
}

/** A version searched, and the alias its project has under the superproject searched with it. */
export interface SearchedVersion {
  projectId: number;
  versionId: number;
  alias: string | null;
}

export interface PageSearchHit extends PageHit {
  /** Where the page is read. */
  url: string;
  alias: string | null;
}

/** Most versions one page search reads (Read the Docs' max_projects). */
const MAX_SEARCHED = 100;

/**
 * Search by page (Read the Docs' search API): the pages of the scopes' versions (and, with
 * `maintained`, the default version of each project the caller has access to) whose sections match,
 * best first. A scope naming what the caller cannot read adds nothing, as on Read the Docs.
 */
export async function searchPages(
  ctx: Context,
  args: { query: string; scopes: readonly SearchScope[]; maintained?: boolean | null; limit: number; offset: number },
): Promise<{ pages: PageSearchHit[]; total: number; searched: SearchedVersion[] }> {
  if (args.query.length > MAX_QUERY) throw ValidationError.field('query', `Ensure this field has no more than ${MAX_QUERY} characters.`);
  if (args.scopes.length > MAX_SEARCHED) throw ValidationError.field('scopes', `Ensure this field has no more than ${MAX_SEARCHED} elements.`);
  const versions = await searchedVersions(ctx, args.scopes, Boolean(args.maintained));
  const { asked, urlOf } = await searched(ctx, { id: { in: versions.map((s) => s.versionId) } }, args);
  const { pages, total } = await searchPagesIn(ctx.prisma, asked);
  // The search counts in the analytics of the project searched first (its own search box's).
  const first = versions[0];
  if (first && ctx.analytics && args.offset === 0) ctx.analytics.search(first.projectId, args.scopes[0]?.version ?? '', args.query, total);
  const aliases = new Map(versions.map((s) => [s.versionId, s.alias]));
  return {
    total,
    searched: versions,
    pages: pages.map((p) => ({ ...p, alias: aliases.get(p.versionId) ?? null, url: `${urlOf(p.versionId)}${p.path}` })),
  };
}

/** The versions a page search reads, in the order named, each once, MAX_SEARCHED at most. */
async function searchedVersions(ctx: Context, scopes: readonly SearchScope[], maintained: boolean): Promise<SearchedVersion[]> {
  const found = new Map<number, SearchedVersion>();
  const add = async (project: { id: number; defaultVersion: string }, slug: string | null | undefined, alias: string | null, fallback: boolean) => {
    const named = slug ?? project.defaultVersion;
    // A subproject without the version named is searched in its default version (Read the Docs' rule).
    for (const [s, hidden] of [[named, slug != null && !fallback], ...(fallback && slug ? [[project.defaultVersion, false] as const] : [])] as const) {
      const v = await ctx.prisma.version.findFirst({
        where: { AND: [searchableVersions(ctx.viewer, hidden), { projectId: project.id, slug: s }] },
        select: { id: true },
      });
      if (v) {
        if (!found.has(v.id) && found.size < MAX_SEARCHED) found.set(v.id, { projectId: project.id, versionId: v.id, alias });
        return;
      }
    }
  };
  for (const scope of scopes) {
    const project = await ctx.prisma.project.findUnique({ where: { slug: scope.project }, select: { id: true, privacyLevel: true, defaultVersion: true } });
    if (!project || !(await projectRule.allows(ctx, project))) continue;
    await add(project, scope.version, null, false);
    if (!scope.includeSubprojects) continue;
    const children = await ctx.prisma.subproject.findMany({
      where: { parentId: project.id, child: projectRule.where(ctx.viewer) },
      select: { alias: true, child: { select: { id: true, defaultVersion: true } } },
      orderBy: { alias: 'asc' },
    });
    for (const c of children) await add(c.child, scope.version, c.alias, true);
  }
  if (maintained && ctx.viewer) {
    const mine = await ctx.prisma.project.findMany({
      where: projectsWithAccess(ctx.viewer, 'read'),
      select: { id: true, defaultVersion: true },
      orderBy: { slug: 'asc' },
    });
    for (const p of mine) await add(p, null, null, false);
  }
  return [...found.values()];
}
