// Queueing a build: a `triggered` Build row, and its job in the job queue (docs/design/jobs.md
// "Builds"). A newer build of a version supersedes its pending older ones, which end `finished`,
// unsuccessful, with a message (their jobs end without a run when claimed).
// @see docs/design/builds.md "Queueing"

import type { Events } from '../events.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import { queueBuildJob } from '../queue/builds.ts';
import { queueBuildEvent } from '../queue/deliveries.ts';
import { projectToChange } from './access.ts';
import type { Context } from './context.ts';
import { ConflictError, NotFoundError, ValidationError } from './errors.ts';

type Tx = Prisma.TransactionClient;

/**
 * Takes the version's row lock inside `tx`, before a build of it is inserted: builds of one version
 * are made one at a time. Without it, two concurrent writers each hold a key-share lock on the
 * version (from the new build's foreign key) and deadlock on setting lastBuildId, or both stay pending.
 */
export async function lockVersion(tx: Tx, versionId: number): Promise<void> {
  await tx.$queryRaw`SELECT id FROM "Version" WHERE id = ${versionId} FOR UPDATE`;
}

/**
 * Creates a triggered build of the version inside `tx`; the caller announces it on the app's
 * `events` after commit (announceBuild).
 */
export async function queueBuild(tx: Tx, events: Events, version: { id: number; slug: string; projectId: number }, commit?: string | null, force = false) {
  await lockVersion(tx, version.id);
  const build = await tx.build.create({
    data: {
      projectId: version.projectId,
      versionId: version.id,
      versionSlug: version.slug,
      state: 'triggered',
      commit: commit ?? null,
      force,
    },
  });
  const now = new Date();
  await tx.build.updateMany({
    where: { versionId: version.id, state: 'triggered', id: { not: build.id } },
    data: {
      state: 'finished',
      success: false,
      error: `Superseded by build #${build.id} of the same version before it started.`,
      finishedAt: now,
      duration: 0,
    },
  });
  await tx.version.update({ where: { id: version.id }, data: { lastBuildId: build.id } });
  await queueBuildEvent(tx, events, build, 'build:triggered');
  // Its NOTIFY wakes workers in other processes when the transaction commits.
  await queueBuildJob(tx, build);
  return build;
}

/** Wakes the app's worker for a build queued and committed (workers elsewhere got the NOTIFY). */
export function announceBuild(events: Events, build: { id: number; projectId: number }): void {
  events.emit('buildQueued', { buildId: build.id, projectId: build.projectId });
}

/** Trigger a build of one version (any version, active or not, as the v3 API allows). */
export async function triggerBuild(ctx: Context, projectSlug: string, versionSlug: string, force = false) {
  const project = await projectToChange(ctx, projectSlug);
  const version = await ctx.prisma.version.findUnique({ where: { projectId_slug: { projectId: project.id, slug: versionSlug } } });
  if (!version) throw new NotFoundError('Version');
  if (project.uploadOnly)
    throw ValidationError.field('project', 'This project is upload-only: its versions come from uploads of built docs, and it is never built.');
  const build = await ctx.prisma.$transaction((tx) => queueBuild(tx, ctx.events, version, null, force));
  announceBuild(ctx.events, build);
  return { build, project, version };
}

/** What cancelling a build writes at the start of its error (a cancelled build counts for no badge). */
export const CANCELLED_PREFIX = 'Cancelled by ';

/**
 * Cancels a build that has not finished: it ends `finished`, unsuccessful, saying who cancelled it.
 * A queued build is never started; a running one is stopped by its worker, whose next heartbeat
 * (a third of LECTERN_BUILD_LEASE_SECONDS at most) finds it finished: its commands are killed and
 * nothing is published. The answer is the build, read with `query`.
 */
export async function cancelBuild<Q extends object>(ctx: Context, projectSlug: string, id: number, query: Q) {
  const project = await projectToChange(ctx, projectSlug);
  const who = ctx.viewer?.username ?? 'a maintainer';
  return ctx.prisma.$transaction(async (tx) => {
    const build = await tx.build.findFirst({ where: { id, projectId: project.id }, select: { id: true, startedAt: true } });
    if (!build) throw new NotFoundError('Build');
    const now = new Date();
    const { count } = await tx.build.updateMany({
      where: { id, state: { not: 'finished' } },
      data: {
        state: 'finished',
        success: false,
        error: `${CANCELLED_PREFIX}${who}.`,
        finishedAt: now,
        duration: build.startedAt ? Math.round((now.getTime() - build.startedAt.getTime()) / 1000) : 0,
      },
    });
    if (count === 0) throw new ConflictError('This build has finished already.');
    return tx.build.findUniqueOrThrow({ ...query, where: { id } });
  });
}
