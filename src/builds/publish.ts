// Publishing a build's output (decisions §4 step 5): every file goes to storage first, then one
// update of Version.publishedBuildId makes the new set the served one, so readers never see a mix
// of two builds; the replaced build's files are removed after. The pipeline and the tests that
// publish builder output use this one piece.
import { createReadStream } from 'node:fs';
import type { PrismaClient } from '../db/database.ts';
import type { PutDirectoryResult, Storage } from '../storage/index.ts';
import { events } from '../domain/events.ts';
import { artifactPrefix, buildPrefix, downloadKey } from './artifacts.ts';

export type DownloadFormat = 'pdf' | 'htmlzip' | 'epub';

export interface PublishInput {
  projectSlug: string;
  version: { id: number; slug: string };
  buildId: number;
  /** Directory of HTML output. */
  htmlDir: string;
  /** The single file of each offline format made. */
  downloads?: Partial<Record<DownloadFormat, string>>;
  documentationType?: string;
}

export interface PublishResult {
  /** False when a newer build of the version was published meanwhile: nothing of this one is served. */
  published: boolean;
  /** What the HTML upload stored and skipped (symlinks out of the output, …). */
  upload: PutDirectoryResult;
  /** Removing files no longer served failed (they are only wasted space; the caller logs it). */
  cleanupError?: unknown;
}

/** Uploads, then switches the version to this build, then removes the files no longer served. */
export async function publishBuild(prisma: PrismaClient, storage: Storage, input: PublishInput): Promise<PublishResult> {
  const { projectSlug, version, buildId } = input;
  const upload = await storage.putDirectory(input.htmlDir, artifactPrefix(projectSlug, version.slug, buildId, 'html'));
  const downloads = input.downloads ?? {};
  for (const [format, file] of Object.entries(downloads) as [DownloadFormat, string][]) {
    await storage.put(downloadKey(projectSlug, version.slug, buildId, format), createReadStream(file));
  }
  const previous = await prisma.$transaction(async (tx) => {
    const current = await tx.version.findUniqueOrThrow({ where: { id: version.id }, select: { publishedBuildId: true } });
    if (current.publishedBuildId && current.publishedBuildId > buildId) return undefined;
    await tx.version.update({
      where: { id: version.id },
      data: {
        built: true,
        publishedBuildId: buildId,
        hasHtmlzip: Boolean(downloads.htmlzip),
        hasPdf: Boolean(downloads.pdf),
        hasEpub: Boolean(downloads.epub),
        documentationType: input.documentationType ?? 'sphinx',
      },
    });
    return current.publishedBuildId;
  });
  events.emit('servedChanged', {});
  const stale = previous === undefined ? buildId : previous !== null && previous !== buildId ? previous : null;
  let cleanupError: unknown;
  if (stale !== null) await storage.deletePrefix(buildPrefix(projectSlug, version.slug, stale)).catch((e: unknown) => (cleanupError = e));
  return { published: previous !== undefined, upload, cleanupError };
}
