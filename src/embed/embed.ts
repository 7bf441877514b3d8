// The v2 embed API's core (docs/design/read-the-docs.md §5.2, docs/design/rest-api.md): finds the
// project, version and page a request names, reads the page from the HTML the version's published
// build stored, and returns a section of it. GraphQL's `Query.embed` calls this; the REST route
// runs that field. Private projects and versions are found only by those who may see them.
import type { Readable } from 'node:stream';
import { readableVersionRule, visibleProjects, visibleVersions } from '../domain/access.ts';
import type { Context } from '../domain/context.ts';
import { NotFoundError, ValidationError } from '../domain/errors.ts';
import { artifactPrefix } from '../storage/artifacts.ts';
import type { Storage } from '../storage/index.ts';
import { assertKey } from '../storage/storage.ts';
import { documentationUrl, servedProjectSelect } from '../urls.ts';
import { pageCache } from './cache.ts';
import { candidateFiles, docFromPath, unresolveDocsUrl } from './locate.ts';
import { findSection, type ParsedPage, parsePage, renderSection, type TocEntry } from './sphinx.ts';

export interface EmbedArgs {
  project?: string | null;
  version?: string | null;
  doc?: string | null;
  path?: string | null;
  section?: string | null;
  url?: string | null;
}

export interface EmbedResult {
  content: string[];
  headers: TocEntry[];
  url: string;
  meta: { project: string; version: string; doc: string; section: string | null };
}

export const INVALID_ARGUMENTS = 'Invalid Arguments. Please provide "url" or "section" and "path" GET arguments.';

/** Sphinx's builders; the embed API reads only what they wrote (step 5). */
const SPHINX_TYPES = new Set(['sphinx', 'sphinx_htmldir', 'sphinx_singlehtml']);
/** A page larger than this is not embedded (Sphinx pages are far smaller; this bounds memory). */
export const MAX_PAGE_BYTES = 32 * 1024 * 1024;

const hasNul = (...values: (string | null | undefined)[]) => values.some((v) => v?.includes('\u0000'));

/** Project by slug, or the subproject or translation a docs URL names below it; only one the caller may see. */
async function findProject(ctx: Context, slug: string, via?: { alias: string | null; language: string; hostLabel: boolean }) {
  const select = { ...servedProjectSelect, id: true, privacyLevel: true } as const;
  const slugs = via?.hostLabel ? [slug, slug.replace(/-/g, '_')] : [slug];
  let project = await ctx.prisma.project.findFirst({
    where: { AND: [{ slug: { in: slugs } }, visibleProjects(ctx.viewer)] },
    select: { ...select, language: true },
  });
  if (project && via?.alias !== undefined && via.alias !== null) {
    project = await ctx.prisma.project.findFirst({
      where: { AND: [{ superprojects: { some: { parentId: project.id, alias: via.alias } } }, visibleProjects(ctx.viewer)] },
      select,
    });
  }
  if (project && via && via.language !== project.language) {
    project = await ctx.prisma.project.findFirst({
      where: { AND: [{ mainLanguageProjectId: project.id, language: via.language }, visibleProjects(ctx.viewer)] },
      select,
    });
  }
  return project;
}

/** The version of a project by slug, when the caller may see it. */
function visibleVersion(ctx: Context, projectId: number, slug: string) {
  return ctx.prisma.version.findFirst({
    where: { AND: [{ projectId, slug }, visibleVersions(ctx.viewer)] },
    select: { slug: true, projectId: true, type: true, privacyLevel: true, active: true, built: true, publishedBuildId: true, documentationType: true },
  });
}

/** The project and version a docs URL names, both visible to the caller; null when either is not. */
export async function findEmbeddedVersion(ctx: Context, projectSlug: string, versionSlug: string, via: Parameters<typeof findProject>[2]) {
  if (hasNul(projectSlug, versionSlug)) return null;
  const project = await findProject(ctx, projectSlug, via);
  const version = project && (await visibleVersion(ctx, project.id, versionSlug));
  return project && version ? { project, version } : null;
}

async function readBody(body: Readable): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > MAX_PAGE_BYTES) {
      body.destroy();
      return null;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** The parsed page at `key`: from the cache while storage says its ETag is unchanged, else read and parsed. */
export async function loadPage(store: Storage, key: string): Promise<ParsedPage | null> {
  const cache = pageCache(store);
  for (let attempt = 0; attempt < 2; attempt++) {
    const cached = attempt === 0 ? cache.peek(key) : undefined;
    const got = await store.get(key, cached ? { ifNoneMatch: cached.etag } : {});
    if (!got) {
      cache.delete(key);
      return null;
    }
    if (got.notModified) {
      const page = cache.get(key, got.etag);
      if (page) return page;
      continue; // evicted meanwhile: read it whole
    }
    const bytes = await readBody(got.body);
    if (!bytes) return null;
    const page = parsePage(bytes.toString('utf8'));
    cache.set(key, got.etag, page);
    return page;
  }
  return null;
}

/**
 * One embed. Throws ValidationError when neither `project` and `doc`/`path` nor `url` is given,
 * NotFoundError when the project or version is not there for the caller; null when the page is
 * not (or the version is not a published Sphinx build).
 */
export async function embed(ctx: Context, args: EmbedArgs): Promise<EmbedResult | null> {
  // Empty parameters count as absent, as `request.GET.get(...)` tested for truthiness.
  const given = (v: string | null | undefined) => (v ? v : null);
  const url = given(args.url);
  let path = given(args.path);
  let doc = given(args.doc);
  let section = given(args.section);
  let projectSlug = given(args.project);
  let versionSlug = given(args.version) ?? 'latest';
  let via: Parameters<typeof findProject>[2];

  if (url) {
    const at = unresolveDocsUrl(ctx.config, url);
    if (!at) throw new NotFoundError('Project');
    projectSlug = at.project;
    versionSlug = at.version;
    via = { alias: at.alias, language: at.language, hostLabel: at.byHost };
    path = at.filename;
    section = at.fragment || null;
  } else if (!projectSlug || (!path && !doc)) {
    throw new ValidationError([{ field: 'nonFieldErrors', messages: [INVALID_ARGUMENTS] }]);
  }
  if (path) doc = docFromPath(path);
  doc ??= '';

  // No slug holds a NUL, and PostgreSQL cannot even compare one.
  if (hasNul(projectSlug, versionSlug)) throw new NotFoundError(hasNul(projectSlug) ? 'Project' : 'Version');
  const project = await findProject(ctx, projectSlug!, via);
  if (!project) throw new NotFoundError('Project');
  const version = await visibleVersion(ctx, project.id, versionSlug);
  if (!version) throw new NotFoundError('Version');
  // Only what readers can open (readableVersionRule) of a published Sphinx build.
  if (version.publishedBuildId === null || !SPHINX_TYPES.has(version.documentationType)) return null;
  if (!(await readableVersionRule.allows(ctx, { ...version, project }))) return null;

  const files = candidateFiles(doc);
  if (!files) return null;
  const prefix = artifactPrefix(project.slug, version.slug, version.publishedBuildId, 'html');
  for (const file of files) {
    const key = `${prefix}/${file}`;
    try {
      assertKey(key);
    } catch {
      return null;
    }
    if (!key.startsWith(`${prefix}/`)) return null;
    const page = await loadPage(ctx.storage, key);
    if (!page) continue;

    const pageUrl = documentationUrl(ctx.config, project, version.slug) + file.split('/').map(encodeURIComponent).join('/');
    // Without a section, the page's first heading, as the historical API chose it (step 8).
    const chosen = section ?? (page.toc[0] ? page.toc[0].title.toLowerCase() : null);
    return {
      content: chosen ? renderSection(page, findSection(page, chosen), pageUrl) : [],
      headers: page.toc,
      url: url ?? pageUrl,
      meta: { project: project.slug, version: version.slug, doc, section: chosen },
    };
  }
  return null;
}
