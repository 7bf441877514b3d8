// Version activation and visibility (docs/design/read-the-docs.md §2.4 "Version update", §4.3): deactivating
// marks the version unbuilt (its files stop being served); activating queues a build.
import type { Prisma, Version } from '../generated/prisma/client.ts';
import { projectToChange } from './access.ts';
import { announceBuild, queueBuild } from './builds.ts';
import type { Context } from './context.ts';
import { NotFoundError } from './errors.ts';
import { Collector, checkChoice } from './validate.ts';

export interface UpdateVersionInput {
  active?: boolean | null;
  hidden?: boolean | null;
  privacyLevel?: 'public' | 'private' | null;
}

/** The client's selection of a version a write answers with (GraphQL's `query`). */
export interface VersionQuery {
  include?: Prisma.VersionInclude;
  select?: Prisma.VersionSelect;
}

/** `query` is the client's selection of the answer (GraphQL's), read as the row is written. */
export async function updateVersion(
  ctx: Context,
  projectSlug: string,
  versionSlug: string,
  input: UpdateVersionInput,
  query: VersionQuery = {},
): Promise<Version> {
  const project = await projectToChange(ctx, projectSlug);
  const version = await ctx.prisma.version.findUnique({ where: { projectId_slug: { projectId: project.id, slug: versionSlug } } });
  if (!version || version.type === 'external') throw new NotFoundError('Version');
  new Collector().add('privacyLevel', checkChoice(input.privacyLevel, new Set(['public', 'private']))).throwIfAny();

  const data: Prisma.VersionUpdateInput = {};
  if (input.active != null) data.active = input.active;
  if (input.hidden != null) data.hidden = input.hidden;
  if (input.privacyLevel != null) data.privacyLevel = input.privacyLevel;
  const deactivated = version.active && input.active === false;
  const activated = !version.active && input.active === true;
  if (deactivated) data.built = false;

  const { updated, build } = await ctx.prisma.$transaction(async (tx) => {
    if (!activated) return { updated: (await tx.version.update({ ...query, where: { id: version.id }, data })) as Version, build: null };
    // The answer shows the build just queued (its `lastBuild`): read once the build is there.
    await tx.version.update({ where: { id: version.id }, data, select: { id: true } });
    const build = await queueBuild(tx, ctx.events, version);
    return { updated: (await tx.version.findUniqueOrThrow({ ...query, where: { id: version.id } })) as Version, build };
  });
  if (build) announceBuild(ctx.events, build);
  ctx.events.emit('servedChanged', { projectId: project.id });
  return updated;
}

/**
 * The version a machine-managed `stable` or `latest` stands for, as Read the Docs finds it
 * (docs/design/read-the-docs.md §3.2, `aliases`): for `stable`, the project's own
 * branch or tag at the same commit (the highest name where several are); for `latest`, the branch
 * it follows, by name. Never a pull request's preview, which may share the commit. Null for every
 * other version, which stands for itself.
 */
export function originalVersionWhere(v: Pick<Version, 'projectId' | 'slug' | 'machine' | 'identifier'>): Prisma.VersionWhereInput | null {
  if (!v.machine || !v.identifier) return null;
  const own = { projectId: v.projectId, machine: false, type: { not: 'external' as const } };
  if (v.slug === 'stable') return { ...own, identifier: v.identifier };
  if (v.slug === 'latest') return { ...own, type: 'branch', verboseName: v.identifier };
  return null;
}

/** Among several originals (tags at one commit), the one named highest, as `stable` was chosen. */
export const ORIGINAL_VERSION_ORDER = [{ verboseName: 'desc' }, { id: 'desc' }] satisfies Prisma.VersionOrderByWithRelationInput[];
