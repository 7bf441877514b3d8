// Publishing a build's output (docs/design/builds.md "Steps", 5): every file goes to storage first, then one
// update of Version.publishedBuildId makes the new set the served one, so readers never see a mix
// of two builds; the replaced build's files are removed after. The pipeline and the tests that
// publish builder output use this one piece.
//
// Everything is read through ../storage/output.ts: only the build's own regular files are published (a
// symbolic link, hard link, fifo, socket or device anywhere in the HTML or as a download raises
// OutputRefused, whose message is for the build's log), within the build's limits of files and
// bytes, checked before anything is uploaded and again as files are read. On any failure nothing
// is published: the version keeps the build it served, and what went up is removed.
import path from 'node:path';
import { DEFAULT_BUILD_LIMITS } from '../config.ts';
import type { PrismaClient } from '../db/database.ts';
import type { Events } from '../events.ts';
import type { Logger } from '../log.ts';
import { type IndexResult, indexBuild } from '../search/index.ts';
import { artifactPrefix, buildPrefix, downloadKey } from '../storage/artifacts.ts';
import type { PutDirectoryResult, Storage } from '../storage/index.ts';
import { OutputDir, type OutputLimits, PublishBudget } from '../storage/output.ts';

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
  /**
   * The build's output directory ($READTHEDOCS_OUTPUT), which htmlDir and the downloads lie in: each
   * is reached from it without following any link (so `html` or `epub` themselves may not be links
   * either), and messages name files relative to its parent (`_readthedocs/epub/x.epub`). Without
   * it, htmlDir and each download's directory are the roots. A download outside it is checked under
   * its own directory (a file Lectern made elsewhere, such as the htmlzip).
   */
  outputDir?: string;
  /** What one build may publish, HTML and downloads together; DEFAULT_BUILD_LIMITS' by default. */
  limits?: OutputLimits;
}

export interface PublishResult {
  /** False when a newer build of the version was published meanwhile: nothing of this one is served. */
  published: boolean;
  /** What the HTML upload stored, and skipped (names that cannot be storage keys). */
  upload: PutDirectoryResult;
  /** Removing files no longer served failed (they are only wasted space; the caller logs it). */
  cleanupError?: unknown;
  /** The search index of the version, now this build's (when published); or why it could not be made (the caller logs it: search then finds the previous build's sections). */
  index?: IndexResult;
  indexError?: unknown;
}

/** Logs what a publish could not do besides publishing (never the build's failure): cleanup, indexing, pages search skipped. */
export function logPublishProblems(log: Logger, buildId: number, published: PublishResult): void {
  if (published.cleanupError) log.warn({ err: published.cleanupError, build: buildId }, 'could not delete the files of a replaced build');
  if (published.indexError) log.error({ err: published.indexError, build: buildId }, 'could not index the published build for search');
  if (published.index?.skipped.length) {
    log.warn(
      { build: buildId, skipped: published.index.skipped.slice(0, 20), count: published.index.skipped.length },
      'search skipped pages it could not read',
    );
  }
}

/** Where a build is published, and whose docs server hears of it (the app's events). */
export interface PublishDeps {
  prisma: PrismaClient;
  storage: Storage;
  events: Events;
}

/**
 * Switches the version to the build (unless a newer build already serves it): the build it served
 * before (null: none), or undefined when a newer one does and this one is not served.
 */
async function serveBuild(prisma: PrismaClient, input: PublishInput, downloads: NonNullable<PublishInput['downloads']>): Promise<number | null | undefined> {
  const { version, buildId } = input;
  return prisma.$transaction(async (tx) => {
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
}

/**
 * Checks the whole output against the limits, uploads it, then switches the version to this build,
 * then removes the files no longer served.
 * @throws OutputRefused (src/storage/output.ts) when the output holds anything but the build's own
 *   regular files, or more than the limits; nothing is published then.
 */
export async function publishBuild(deps: PublishDeps, input: PublishInput): Promise<PublishResult> {
  const { prisma, storage } = deps;
  const { projectSlug, version, buildId } = input;
  const downloads = input.downloads ?? {};
  const upload = await uploadOutput(deps, input, downloads);
  const previous = await serveBuild(prisma, input, downloads);
  deps.events.emit('servedChanged', {});
  const stale = previous === undefined ? buildId : previous !== null && previous !== buildId ? previous : null;
  let cleanupError: unknown;
  const cleanup = stale === null ? null : storage.deletePrefix(`${buildPrefix(projectSlug, version.slug, stale)}/`).catch((e: unknown) => (cleanupError = e));
  // 6. The search index follows what is served, read back from storage, while the stale files go
  // (other keys); it never fails the build.
  const indexed = previous === undefined ? {} : await indexServed(deps, input);
  await cleanup;
  return { published: previous !== undefined, upload, cleanupError, ...indexed };
}

/**
 * Steps 1 and 2: the output's downloads and HTML, each directory held open, walked and counted
 * against the limits, then uploaded, each file checked again as it is read. What a failed upload
 * put in storage is removed (unless the version serves this very build).
 */
async function uploadOutput(deps: PublishDeps, input: PublishInput, downloads: Partial<Record<DownloadFormat, string>>): Promise<PutDirectoryResult> {
  const { prisma, storage } = deps;
  const { projectSlug, version, buildId } = input;
  const limits = input.limits ?? { maxBytes: DEFAULT_BUILD_LIMITS.maxPublishBytes, maxFiles: DEFAULT_BUILD_LIMITS.maxPublishFiles };
  const opened: OutputDir[] = [];
  let uploaded = false;
  try {
    const { files, html } = await openOutput(input, downloads, opened);

    // 1. Everything is walked and counted before anything goes up.
    const walked = new PublishBudget(limits);
    for (const f of files) walked.add((await f.dir.entry(f.rel)).size);
    const htmlEntries = await html.list({ limits });
    walked.check(
      htmlEntries.length,
      htmlEntries.reduce((n, e) => n + e.size, 0),
    );

    // 2. Uploaded, each file checked again as it is read, and counted as read.
    uploaded = true;
    const read = new PublishBudget(limits);
    for (const f of files) {
      const { stream, size } = await f.dir.openStream(f.rel);
      try {
        read.add(size);
      } catch (e) {
        stream.destroy();
        throw e;
      }
      await storage.put(downloadKey(projectSlug, version.slug, buildId, f.format), stream);
    }
    return await storage.putDirectory(html, artifactPrefix(projectSlug, version.slug, buildId, 'html'), { budget: read });
  } catch (e) {
    if (uploaded) await removeUnpublished(prisma, storage, input).catch(() => {});
    throw e;
  } finally {
    await Promise.all(opened.map((d) => d.close().catch(() => {})));
  }
}

/**
 * The output's HTML directory and each download as a file below a directory held open: the
 * output's own where they are inside it, or their own. Every directory opened is added to `opened`.
 */
async function openOutput(input: PublishInput, downloads: Partial<Record<DownloadFormat, string>>, opened: OutputDir[]) {
  const open = async (dir: string) => {
    const d = await OutputDir.open(dir);
    opened.push(d);
    return d;
  };
  const root = input.outputDir === undefined ? undefined : await open(input.outputDir);
  const inRoot = (p: string) => {
    if (!root || input.outputDir === undefined) return null;
    const rel = path.relative(path.resolve(input.outputDir), path.resolve(p));
    return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel.split(path.sep).join('/') : null;
  };
  const files: { format: DownloadFormat; dir: OutputDir; rel: string }[] = [];
  for (const [format, file] of Object.entries(downloads) as [DownloadFormat, string][]) {
    const rel = inRoot(file);
    if (rel !== null) files.push({ format, dir: root!, rel });
    else files.push({ format, dir: await open(path.dirname(file)), rel: path.basename(file) });
  }
  const htmlRel = inRoot(input.htmlDir);
  let html: OutputDir;
  if (htmlRel === null) html = await open(input.htmlDir);
  else {
    html = await root!.subdir(htmlRel);
    opened.push(html);
  }
  return { files, html };
}

/** Step 6: the search index of what the version now serves; a failure is returned, not thrown. */
async function indexServed(deps: PublishDeps, input: PublishInput): Promise<{ index?: IndexResult; indexError?: unknown }> {
  const { prisma, storage } = deps;
  const { projectSlug, version, buildId } = input;
  try {
    const owner = await prisma.version.findUniqueOrThrow({ where: { id: version.id }, select: { projectId: true, project: { select: { language: true } } } });
    const index = await indexBuild(prisma, storage, {
      projectId: owner.projectId,
      versionId: version.id,
      buildId,
      language: owner.project.language,
      htmlPrefix: artifactPrefix(projectSlug, version.slug, buildId, 'html'),
    });
    return { index };
  } catch (e) {
    return { indexError: e };
  }
}

/** Removes what a failed publish uploaded, unless the version serves this very build (a retry of a published one). */
async function removeUnpublished(prisma: PrismaClient, storage: Storage, input: PublishInput): Promise<void> {
  const current = await prisma.version.findUnique({ where: { id: input.version.id }, select: { publishedBuildId: true } });
  if (current?.publishedBuildId === input.buildId) return;
  // With the slash: `…/12` alone is also the start of `…/120`, another build's files.
  await storage.deletePrefix(`${buildPrefix(input.projectSlug, input.version.slug, input.buildId)}/`);
}
