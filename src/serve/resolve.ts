// Finding what a docs URL names: the project (by slug, by host name, a subproject by alias, a
// translation by language), the version, and whether this reader may see them. Only public data
// is shown to anonymous readers; a maintainer (Authorization: Token) also sees private docs.
// A project comes with its redirects and relations in one SQL statement (Prisma would send five),
// and every lookup goes through a short-lived cache (./cache.ts), so a warm page sends none.
// @see ../urls.ts servedRoot() for where each project lives

import type { PrismaClient } from '../db/database.ts';
import { offeredVersions, projectRule, readableVersionRule } from '../domain/access.ts';
import type { Context } from '../domain/context.ts';
import { Prisma } from '../generated/prisma/client.ts';
import { servedProjectSelect } from '../urls.ts';
import { type Freshness, type ServedGeneration, TtlCache } from './cache.ts';

export const projectSelect = {
  id: true,
  slug: true,
  language: true,
  privacyLevel: true,
  defaultVersion: true,
  versionSwitcher: true,
  docsSearch: true,
  addonsEnabled: true,
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
  projectId: true,
  slug: true,
  type: true,
  active: true,
  built: true,
  hidden: true,
  privacyLevel: true,
  publishedBuildId: true,
  hasPdf: true,
  hasEpub: true,
  hasHtmlzip: true,
  externalSource: true,
} satisfies Prisma.VersionSelect;

export type ServedVersionRow = Prisma.VersionGetPayload<{ select: typeof versionSelect }>;
export type ReadableVersion = ServedVersionRow & { publishedBuildId: number };

/**
 * The projects matching `where` (an SQL condition on `p`, the Project row) as ServedProjectRows:
 * superprojects, main language project and enabled redirects aggregated as JSON in the same
 * statement, in the order projectSelect gives them.
 */
async function servedProjects(prisma: PrismaClient, where: Prisma.Sql): Promise<ServedProjectRow[]> {
  const rows = await prisma.$queryRaw<{ row: string }[]>`
    SELECT json_build_object(
      'id', p.id, 'slug', p.slug, 'language', p.language, 'privacyLevel', p."privacyLevel"::text,
      'defaultVersion', p."defaultVersion", 'versionSwitcher', p."versionSwitcher", 'docsSearch', p."docsSearch", 'addonsEnabled', p."addonsEnabled", 'mainLanguageProjectId', p."mainLanguageProjectId",
      'superprojects', COALESCE((
        SELECT json_agg(json_build_object('alias', r.alias, 'parent', json_build_object('slug', pp.slug, 'privacyLevel', pp."privacyLevel"::text)) ORDER BY r.id)
        FROM "ProjectRelationship" r JOIN "Project" pp ON pp.id = r."parentId" WHERE r."childId" = p.id), '[]'::json),
      'mainLanguageProject', (SELECT json_build_object('slug', m.slug, 'privacyLevel', m."privacyLevel"::text) FROM "Project" m WHERE m.id = p."mainLanguageProjectId"),
      'redirects', COALESCE((
        SELECT json_agg(json_build_object('type', d.type::text, 'fromUrl', d."fromUrl", 'toUrl', d."toUrl", 'httpStatus', d."httpStatus", 'force', d.force)
          ORDER BY d.position ASC, d."modifiedAt" DESC)
        FROM "Redirect" d WHERE d."projectId" = p.id AND d.enabled), '[]'::json)
    )::text AS row
    FROM "Project" p WHERE ${where}`;
  return rows.map((r: { row: string }) => JSON.parse(r.row) as ServedProjectRow);
}

async function versionRow(prisma: PrismaClient, projectId: number, slug: string): Promise<ServedVersionRow | null> {
  return prisma.version.findUnique({ where: { projectId_slug: { projectId, slug } }, select: versionSelect });
}

/**
 * The lookups of the docs server, cached for `ttlSeconds` (0: none). Cached values are shared:
 * callers must not change them.
 */
export class Resolver {
  readonly #cache: TtlCache;
  readonly #prisma: PrismaClient;

  /** `generation`: the app's count of `servedChanged`, which empties the cache. */
  constructor(prisma: PrismaClient, ttlSeconds: number, generation: ServedGeneration) {
    this.#prisma = prisma;
    this.#cache = new TtlCache({ ttlMs: ttlSeconds * 1000, generation });
  }

  projectBySlug(slug: string, fresh?: Freshness): Promise<ServedProjectRow | null> {
    return this.#cache.get(`slug:${slug}`, async () => (await servedProjects(this.#prisma, Prisma.sql`p.slug = ${slug}`))[0] ?? null, fresh);
  }

  /** `<label>.<docs domain>`: docsRoot() writes `_` as `-`, so both spellings of the slug are tried. */
  projectByHostLabel(label: string, fresh?: Freshness): Promise<ServedProjectRow | null> {
    return this.#cache.get(
      `host:${label}`,
      async () => {
        const candidates = [...new Set([label, label.replace(/-/g, '_')])];
        const rows = await servedProjects(this.#prisma, Prisma.sql`p.slug IN (${Prisma.join(candidates)})`);
        return rows.find((r) => r.slug === label) ?? rows[0] ?? null;
      },
      fresh,
    );
  }

  subprojectByAlias(parentId: number, alias: string, fresh?: Freshness): Promise<ServedProjectRow | null> {
    return this.#cache.get(
      `alias:${parentId}:${alias}`,
      async () => {
        const rows = await servedProjects(
          this.#prisma,
          Prisma.sql`p.id = (SELECT "childId" FROM "ProjectRelationship" WHERE "parentId" = ${parentId} AND alias = ${alias})`,
        );
        return rows[0] ?? null;
      },
      fresh,
    );
  }

  /** The project of `language` in the family of `root`: itself, its main project, or a translation of that. */
  projectForLanguage(root: ServedProjectRow, language: string, fresh?: Freshness): Promise<ServedProjectRow | null> {
    if (root.language === language) return Promise.resolve(root);
    const main = root.mainLanguageProjectId ?? root.id;
    return this.#cache.get(
      `lang:${main}:${language}`,
      async () => {
        const rows = await servedProjects(
          this.#prisma,
          Prisma.sql`p.language = ${language} AND (p.id = ${main} OR p."mainLanguageProjectId" = ${main}) ORDER BY p.id LIMIT 1`,
        );
        return rows[0] ?? null;
      },
      fresh,
    );
  }

  /** The translations family of `project` (its main project first), public ones only: what a menu may list. */
  publicFamily(project: ServedProjectRow): Promise<ServedProjectRow[]> {
    const main = project.mainLanguageProjectId ?? project.id;
    return this.#cache.get(`family:${main}`, async () => {
      const rows = await servedProjects(
        this.#prisma,
        Prisma.sql`p."privacyLevel" = 'public' AND (p.id = ${main} OR p."mainLanguageProjectId" = ${main}) ORDER BY p.language ASC`,
      );
      return rows.sort((a, b) => Number(b.id === main) - Number(a.id === main));
    });
  }

  versionOf(projectId: number, slug: string, fresh?: Freshness): Promise<ServedVersionRow | null> {
    return this.#cache.get(`version:${projectId}:${slug}`, () => versionRow(this.#prisma, projectId, slug), fresh);
  }

  /** The version row as the database has it now, replacing the cached one (a page was missing: perhaps a newer build). */
  freshVersionOf(projectId: number, slug: string, fresh?: Freshness): Promise<ServedVersionRow | null> {
    this.#cache.delete(`version:${projectId}:${slug}`);
    return this.versionOf(projectId, slug, fresh);
  }

  /** The versions a menu lists: those offered to every reader, without the hidden ones. */
  listedVersions(projectId: number): Promise<{ slug: string; verboseName: string }[]> {
    return this.#cache.get(`listed:${projectId}`, () =>
      this.#prisma.version.findMany({
        where: { AND: [{ projectId, publishedBuildId: { not: null } }, offeredVersions({ includeHidden: false })] },
        select: { slug: true, verboseName: true },
      }),
    );
  }

  /** The versions a menu lists to `viewer`: listedVersions() for an anonymous reader, theirs (private ones too, read now) for others. */
  listedVersionsFor(projectId: number, viewer: Context['viewer']): Promise<{ slug: string; verboseName: string }[]> {
    if (!viewer) return this.listedVersions(projectId);
    return this.#prisma.version.findMany({
      where: { AND: [{ projectId, publishedBuildId: { not: null } }, offeredVersions({ includeHidden: false, viewer })] },
      select: { slug: true, verboseName: true },
    });
  }
}

/** The docs server's reader: the rules of domain/access.ts, answered without a promise when everything is public. */
export class Reader {
  readonly ctx: Context;
  constructor(ctx: Context) {
    this.ctx = ctx;
  }

  canSeeProject(p: { id: number; privacyLevel: string }): boolean | Promise<boolean> {
    return projectRule.allows(this.ctx, p);
  }

  /**
   * The version when its docs are served: readableVersionRule (visible, active, built) with its
   * files published. The row itself (shared with the cache, never changed).
   */
  readable(p: { id: number; privacyLevel: string }, v: ServedVersionRow | null): ReadableVersion | null | Promise<ReadableVersion | null> {
    if (!v || v.publishedBuildId === null) return null;
    const readable = v as ReadableVersion;
    const yes = readableVersionRule.allows(this.ctx, { ...v, project: p });
    return typeof yes === 'boolean' ? (yes ? readable : null) : yes.then((y) => (y ? readable : null));
  }
}
