// Pull requests' previews (external versions) are removed, with their files and search sections,
// LECTERN_PREVIEW_RETENTION_DAYS after their pull request closed (Read the Docs'
// delete_closed_external_versions), by the job queue's housekeeping job (docs/design/jobs.md "Housekeeping").
import type { PrismaClient } from '../db/database.ts';
import type { Events } from '../events.ts';
import type { Storage } from '../storage/index.ts';

/** Removes up to `limit` previews closed more than `days` ago; returns `<project>/<version>` of each removed. */
export async function removeClosedPreviews(
  { prisma, storage, events }: { prisma: PrismaClient; storage: Storage; events: Events },
  days: number,
  limit = 100,
): Promise<string[]> {
  const before = new Date(Date.now() - days * 86_400_000);
  const stale = await prisma.version.findMany({
    where: { type: 'external', externalState: 'closed', externalClosedAt: { lte: before } },
    select: { id: true, slug: true, project: { select: { id: true, slug: true } } },
    orderBy: { externalClosedAt: 'asc' },
    take: limit,
  });
  const removed: string[] = [];
  for (const v of stale) {
    // The files first, then the row, so that a failure leaves the row to be found and removed on
    // the next run (never files nothing points to). A pull request reopened in between keeps its
    // row (no longer closed) and builds again, publishing anew.
    await storage.deletePrefix(`projects/${v.project.slug}/${encodeURIComponent(v.slug)}/`);
    const { count } = await prisma.version.deleteMany({ where: { id: v.id, externalState: 'closed' } });
    if (count === 0) continue;
    events.emit('servedChanged', { projectId: v.project.id });
    removed.push(`${v.project.slug}/${v.slug}`);
  }
  return removed;
}
