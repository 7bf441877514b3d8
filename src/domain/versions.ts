// Version activation and visibility (rtd-behavior §1.4 "Version update", §5.3): deactivating
// marks the version unbuilt (its files stop being served); activating queues a build.
import type { Prisma } from '../generated/prisma/client.ts';
import { projectToChange } from './access.ts';
import { announceBuild, queueBuild } from './builds.ts';
import type { Context } from './context.ts';
import { NotFoundError } from './errors.ts';
import { events } from './events.ts';
import { Collector, checkChoice } from './validate.ts';

export interface UpdateVersionInput {
  active?: boolean | null;
  hidden?: boolean | null;
  privacyLevel?: 'public' | 'private' | null;
}

export async function updateVersion(ctx: Context, projectSlug: string, versionSlug: string, input: UpdateVersionInput) {
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
    const updated = await tx.version.update({ where: { id: version.id }, data });
    const build = activated ? await queueBuild(tx, updated) : null;
    return { updated, build };
  });
  if (build) announceBuild(build);
  events.emit('servedChanged', { projectId: project.id });
  return updated;
}
