// Versions of a project's documentation: branches and tags, plus machine-managed `latest` and
// `stable`. The project's `versions` and `activeVersions`, and the version update mutation.
import { queryFromInfo } from '@pothos/plugin-prisma';
import { offeredVersions, versionRule, visibleVersions } from '../../domain/access.ts';
import { requestVersionSync } from '../../domain/version-sync.ts';
import { ORIGINAL_VERSION_ORDER, originalVersionWhere, updateVersion } from '../../domain/versions.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { documentationUrl, downloadUrl, versionWebUrl } from '../../urls.ts';
import { builder, LOOKUP_COST } from '../builder.ts';
import { alsoSelecting, PrivacyLevelEnum, pageComplexity, pageOf, projectOf, rowQuery, VersionTypeEnum, window, withServedProject } from './common.ts';
import { writeErrors } from './errors.ts';
import { Project } from './project.ts';

interface Downloads {
  pdf: string | null;
  htmlzip: string | null;
  epub: string | null;
}
const DownloadsRef = builder.objectRef<Downloads>('Downloads').implement({
  description: 'Offline formats of a version; a format not built is null.',
  fields: (t) => ({
    pdf: t.exposeString('pdf', { nullable: true }),
    htmlzip: t.exposeString('htmlzip', { nullable: true }),
    epub: t.exposeString('epub', { nullable: true }),
  }),
});

const PullRequestRef = builder
  .objectRef<{ number: number; url: string | null; provider: string; open: boolean; closedAt: Date | null }>('PullRequest')
  .implement({
    fields: (t) => ({
      number: t.exposeInt('number'),
      url: t.exposeString('url', { nullable: true }),
      provider: t.exposeString('provider', { description: 'github or gitlab.' }),
      open: t.exposeBoolean('open'),
      closedAt: t.expose('closedAt', {
        type: 'DateTime',
        nullable: true,
        description: 'When it closed: the preview is removed LECTERN_PREVIEW_RETENTION_DAYS later.',
      }),
    }),
  });

export const Version = builder.prismaObject('Version', {
  fields: (t) => ({
    id: t.exposeInt('id'),
    slug: t.exposeString('slug'),
    verboseName: t.exposeString('verboseName'),
    identifier: t.exposeString('identifier', { nullable: true }),
    type: t.expose('type', { type: VersionTypeEnum }),
    active: t.exposeBoolean('active'),
    hidden: t.exposeBoolean('hidden'),
    built: t.exposeBoolean('built', { description: 'True when the version has at least one successful build.' }),
    privacyLevel: t.expose('privacyLevel', { type: PrivacyLevelEnum }),
    documentationType: t.exposeString('documentationType', { description: 'What built it: `sphinx`, `mkdocs`, …' }),
    machine: t.exposeBoolean('machine', { description: 'Managed by Lectern (`latest`, `stable`).' }),
    ref: t.string({
      nullable: true,
      description: 'For a machine-managed `stable`: the slug of the version it points to.',
      complexity: LOOKUP_COST,
      resolve: async (v, _a, ctx) => {
        const where = v.slug === 'stable' ? originalVersionWhere(v) : null;
        if (!where) return null;
        const target = await ctx.prisma.version.findFirst({ where, orderBy: ORIGINAL_VERSION_ORDER, select: { slug: true } });
        return target?.slug ?? null;
      },
    }),
    // The page's own row where a query's page read it (projectOf): no statement for a page's versions.
    project: t.field({ type: Project, resolve: (v, _a, ctx) => projectOf(ctx, v.projectId) }),
    lastBuild: t.relation('lastBuild', { nullable: true, description: 'The most recent build of this version.' }),
    // These three read where the project is served (withServedProject): a lookup, as their cost says.
    documentationUrl: t.string({
      complexity: LOOKUP_COST,
      resolve: (v, _a, ctx) => withServedProject(ctx, v.projectId, (p) => documentationUrl(ctx.config, p, v.slug)),
    }),
    vcsUrl: t.string({
      complexity: LOOKUP_COST,
      resolve: (v, _a, ctx) => withServedProject(ctx, v.projectId, (p) => versionWebUrl(p, v)),
    }),
    downloads: t.field({
      type: DownloadsRef,
      complexity: LOOKUP_COST,
      resolve: (v, _a, ctx) =>
        withServedProject(ctx, v.projectId, (project) => {
          const url = (f: 'pdf' | 'htmlzip' | 'epub') => downloadUrl(ctx.config, project.slug, project.language, v.slug, f);
          return { pdf: v.hasPdf ? url('pdf') : null, htmlzip: v.hasHtmlzip ? url('htmlzip') : null, epub: v.hasEpub ? url('epub') : null };
        }),
    }),
    pullRequest: t.field({
      type: PullRequestRef,
      nullable: true,
      description: "A pull request's preview (type external): which pull request, and whether it is still open. Null for other versions.",
      select: { type: true, externalState: true, externalClosedAt: true, externalSource: true },
      resolve: (v) => {
        const src = v.externalSource as { number?: number; url?: string | null; provider?: string } | null;
        if (v.type !== 'external' || !src || typeof src.number !== 'number') return null;
        return { number: src.number, url: src.url ?? null, provider: src.provider ?? '', open: v.externalState !== 'closed', closedAt: v.externalClosedAt };
      },
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    modifiedAt: t.expose('modifiedAt', { type: 'DateTime' }),
  }),
});

builder.prismaObjectFields(Version, (t) => ({
  // A plain field: most versions have none, and read nothing (a prismaField's query must be used).
  original: t.field({
    type: Version,
    nullable: true,
    description:
      "For a machine-managed `stable` or `latest`: the version it stands for (the branch or tag at stable's commit, the branch latest follows), when that version is active and the caller can see it; null otherwise. REST v3's `aliases`.",
    complexity: LOOKUP_COST,
    resolve: async (v, _a, ctx, info) => {
      const where = originalVersionWhere(v);
      if (!where) return null;
      return ctx.prisma.version.findFirst({
        ...queryFromInfo({ context: ctx, info }),
        where: { AND: [where, { active: true }, visibleVersions(ctx.viewer)] },
        orderBy: ORIGINAL_VERSION_ORDER,
      });
    },
  }),
}));

export const VersionPage = pageOf<Prisma.VersionGetPayload<object>>('VersionPage', Version);

const VersionFilter = builder.inputType('VersionFilter', {
  fields: (t) => ({
    active: t.boolean(),
    built: t.boolean(),
    hidden: t.boolean(),
    type: t.field({ type: VersionTypeEnum }),
    slug: t.string({ description: 'Substring of the slug, case-insensitive.' }),
    verboseName: t.string({ description: 'Substring of the name, case-insensitive.' }),
    projectSlug: t.string({ description: 'Only versions of this project (exact slug); used by the root `versions` list.' }),
  }),
});

/** The conditions of a VersionFilter, beside the caller's visibility. */
function versionWhere(f: {
  active?: boolean | null;
  built?: boolean | null;
  hidden?: boolean | null;
  type?: string | null;
  slug?: string | null;
  verboseName?: string | null;
  projectSlug?: string | null;
}): Prisma.VersionWhereInput[] {
  return [
    f.active != null ? { active: f.active } : {},
    f.built != null ? { built: f.built } : {},
    f.hidden != null ? { hidden: f.hidden } : {},
    // Pull requests' previews are listed only when asked for (type: external), as on Read the Docs.
    f.type ? { type: f.type as Prisma.VersionWhereInput['type'] } : { type: { not: 'external' as const } },
    f.slug ? { slug: { contains: f.slug, mode: 'insensitive' } } : {},
    f.verboseName ? { verboseName: { contains: f.verboseName, mode: 'insensitive' } } : {},
    f.projectSlug ? { project: { slug: f.projectSlug } } : {},
  ];
}

builder.prismaObjectFields(Project, (t) => ({
  activeVersions: t.relation('versions', {
    description: "Versions every reader is offered: active, public and built (hidden ones included, as Read the Docs' `active_versions`).",
    query: { where: offeredVersions({ includeHidden: true }), orderBy: { verboseName: 'desc' } },
  }),
  versions: t.field({
    type: VersionPage,
    description: 'Versions the caller can see, by name, highest first (as Read the Docs orders them).',
    args: { filter: t.arg({ type: VersionFilter }), limit: t.arg.int(), offset: t.arg.int() },
    complexity: pageComplexity,
    resolve: (project, args, ctx, info) => {
      const f = args.filter ?? {};
      const where: Prisma.VersionWhereInput = {
        AND: [{ projectId: project.id }, visibleVersions(ctx.viewer), ...versionWhere(f)],
      };
      const { take, skip } = window(args, ctx);
      const query = queryFromInfo({ context: ctx, info, path: ['nodes'] });
      return {
        nodes: ctx.prisma.version.findMany({ ...query, where, orderBy: [{ verboseName: 'desc' }, { id: 'desc' }], take, skip }),
        totalCount: () => ctx.prisma.version.count({ where }),
      };
    },
  }),
  version: t.prismaField({
    type: Version,
    nullable: true,
    args: { slug: t.arg.string({ required: true }) },
    // A unique lookup with visibility checked here, not in the query: Prisma batches the unique
    // lookups of one tick into one statement, so a page of projects asking for a version each costs
    // one round trip, not one per project. The project itself is visible (it is being resolved).
    resolve: async (query, project, args, ctx) => {
      const version = await ctx.prisma.version.findUnique({
        ...alsoSelecting(query, { projectId: true, type: true, privacyLevel: true }),
        where: { projectId_slug: { projectId: project.id, slug: args.slug } },
      });
      return version && (await versionRule.allows(ctx, { ...version, project })) ? version : null;
    },
  }),
}));

builder.queryField('versions', (t) =>
  t.field({
    authScopes: { public: true },
    type: VersionPage,
    description: 'Versions of every project the caller can see, by name, highest first (the v2 API lists them this way).',
    args: { filter: t.arg({ type: VersionFilter }), limit: t.arg.int(), offset: t.arg.int() },
    complexity: pageComplexity,
    resolve: (_root, args, ctx, info) => {
      const where: Prisma.VersionWhereInput = {
        AND: [visibleVersions(ctx.viewer), ...versionWhere(args.filter ?? {})],
      };
      const { take, skip } = window(args, ctx);
      const query = queryFromInfo({ context: ctx, info, path: ['nodes'] });
      return {
        nodes: ctx.prisma.version.findMany({ ...query, where, orderBy: [{ verboseName: 'desc' }, { id: 'desc' }], take, skip }),
        totalCount: () => ctx.prisma.version.count({ where }),
      };
    },
  }),
);

builder.queryField('version', (t) =>
  t.prismaField({
    authScopes: { public: true },
    type: Version,
    nullable: true,
    description: 'A version by id (the v2 API looks versions up this way).',
    args: { id: t.arg.int({ required: true }) },
    resolve: (query, _root, args, ctx) => ctx.prisma.version.findFirst({ ...query, where: { AND: [{ id: args.id }, visibleVersions(ctx.viewer)] } }),
  }),
);

const UpdateVersionInput = builder.inputType('UpdateVersionInput', {
  fields: (t) => ({
    active: t.boolean(),
    hidden: t.boolean(),
    privacyLevel: t.field({ type: PrivacyLevelEnum }),
  }),
});

builder.mutationField('updateVersion', (t) =>
  t.prismaField({
    authScopes: (_root, args) => ({ maintainerOfProject: args.project }),
    type: Version,
    description: 'Activates, deactivates or hides a version. Activating queues a build; deactivating stops serving it.',
    args: {
      project: t.arg.string({ required: true }),
      slug: t.arg.string({ required: true }),
      input: t.arg({ type: UpdateVersionInput, required: true }),
    },
    errors: writeErrors,
    resolve: (query, _root, args, ctx) => updateVersion(ctx, args.project, args.slug, args.input, rowQuery(query)),
  }),
);

builder.mutationField('syncVersions', (t) =>
  t.boolean({
    description:
      "Reads the repository's branches and tags and updates the versions (new ones inactive; `stable` follows the highest release). " +
      'Queues a sync job that a worker runs (retried with backoff when it fails); false when the project has no `latest` version to sync from.',
    args: { project: t.arg.string({ required: true }) },
    authScopes: (_root, args) => ({ maintainerOfProject: args.project }),
    errors: writeErrors,
    resolve: (_root, args, ctx) => requestVersionSync(ctx, args.project),
  }),
);
