// Uploading built docs as a version of a project: what teams that build their docs in CI do instead
// of letting Lectern build them. An upload is a build like any other (a Build row, with the
// uploader, the sizes and a message), published through the same step as a build's output
// (builds/publish.ts: all files stored, then one switch, then indexed for search), so it is served
// and listed exactly like built docs.
//
// The archive is unpacked and checked (uploads/archive.ts) before anything is written to the
// database or storage: a refused archive changes nothing.

import fs from 'node:fs/promises';
import path from 'node:path';
import { logPublishProblems, publishBuild } from '../builds/publish.ts';
import { Recorder } from '../builds/record.ts';
import { projectToChange } from '../domain/access.ts';
import { announceBuild, lockVersion } from '../domain/builds.ts';
import type { Context } from '../domain/context.ts';
import { ValidationError } from '../domain/errors.ts';
import { versionSlug } from '../domain/slug.ts';
import { Collector, checkString } from '../domain/validate.ts';
import type { Prisma, Project } from '../generated/prisma/client.ts';
import { finishedEvent, queueBuildEvent } from '../queue/deliveries.ts';
import { ArchiveRefused, docsLayout, extractArchive } from './archive.ts';
import type { UploadedFile } from './spool.ts';

/** Where uploads are spooled and unpacked while they are handled: below the data directory. */
export function uploadsDir(dataDir: string): string {
  return path.join(dataDir, 'tmp', 'uploads');
}

/** The documentation tool an unpacked site was made with, as far as its files say. */
async function doctypeOf(htmlDir: string): Promise<string> {
  const has = (p: string) =>
    fs.stat(path.join(htmlDir, p)).then(
      () => true,
      () => false,
    );
  if ((await has('objects.inv')) || (await has('_static/documentation_options.js'))) return 'sphinx';
  if (await has('search/search_index.json')) return 'mkdocs';
  return 'generic';
}

export interface UploadDocsInput {
  project: string;
  /** The version's name; its slug is made from it as from a branch's, and it is created if missing. */
  version: string;
  archive: UploadedFile;
}

/**
 * Publishes an uploaded archive as a version of a project (maintainers only). Returns the upload's
 * build, finished: successful, or failed when publishing failed after the checks.
 * @throws ValidationError on `archive` for an archive the rules refuse (nothing is changed then), on
 *   `version` for a name that makes no slug.
 */
export async function uploadDocs<Q extends object>(ctx: Context, input: UploadDocsInput, query: Q) {
  const project = await projectToChange(ctx, input.project);
  const c = new Collector();
  c.add('version', checkString(input.version, { max: 255, required: true }));
  if (/[\u0000-\u001f\u007f]/.test(input.version)) c.add('version', 'The name holds a control character.');
  c.throwIfAny();
  const name = input.version.trim();
  const work = await fs.mkdtemp(path.join(await ensure(uploadsDir(ctx.config.dataDir)), 'unpacked-'));
  try {
    const { unpacked, layout } = await unpack(ctx, input.archive, work);
    const documentationType = await doctypeOf(layout.htmlDir);
    const started = new Date();
    const { version, build } = await startBuild(ctx, project, name, input.archive, unpacked, started);
    announceBuild(ctx.events, build);
    const finish = async (data: Prisma.BuildUpdateInput) => {
      await ctx.prisma.build.update({
        where: { id: build.id },
        data: { ...data, state: 'finished', finishedAt: new Date(), duration: Math.round((Date.now() - started.getTime()) / 1000) },
      });
      await Recorder.announce(ctx, build.id);
      await queueBuildEvent(ctx.prisma, ctx.events, build, finishedEvent(data.success === true), { email: !!ctx.config.email });
    };
    const limits = ctx.config.build;
    try {
      const published = await publishBuild(
        { prisma: ctx.prisma, storage: ctx.storage, events: ctx.events },
        {
          projectSlug: project.slug,
          version,
          buildId: build.id,
          htmlDir: layout.htmlDir,
          downloads: layout.downloads,
          documentationType,
          outputDir: work,
          limits: { maxBytes: limits.maxPublishBytes, maxFiles: limits.maxPublishFiles },
        },
      );
      logPublishProblems(ctx.log, build.id, published);
      await finish({ success: true, error: null, message: uploadMessage(ctx.viewer!.username, input.archive, unpacked, layout, published.published) });
    } catch (e) {
      ctx.log.error({ err: e, build: build.id }, 'could not publish an upload');
      await finish({ success: false, error: `Publishing the upload failed: ${(e as Error).message}` });
    }
    return ctx.prisma.build.findUniqueOrThrow({ ...query, where: { id: build.id } });
  } finally {
    await fs.rm(work, { recursive: true, force: true }).catch(() => {});
  }
}

/** The archive unpacked into `work` within the installation's limits, and where its HTML and downloads are; a refusal is the `archive` field's. */
async function unpack(ctx: Context, archive: UploadedFile, work: string) {
  const limits = ctx.config.build;
  try {
    const unpacked = await extractArchive(archive.path, work, {
      maxBytes: limits.maxPublishBytes,
      maxFiles: limits.maxPublishFiles,
      maxRatio: limits.uploadMaxRatio,
    });
    return { unpacked, layout: await docsLayout(work) };
  } catch (e) {
    if (e instanceof ArchiveRefused) throw ValidationError.field('archive', e.message);
    throw e;
  }
}

/** The version (made if missing, active) and its upload's build, in one transaction; the build is not queued. */
async function startBuild(
  ctx: Context,
  project: Pick<Project, 'id' | 'privacyLevel'>,
  name: string,
  archive: UploadedFile,
  unpacked: { files: number; bytes: number },
  started: Date,
) {
  const slug = versionSlug(name);
  return ctx.prisma.$transaction(async (tx) => {
    const version =
      (await tx.version.findUnique({ where: { projectId_slug: { projectId: project.id, slug } } })) ??
      (await tx.version.create({
        data: { projectId: project.id, slug, verboseName: name, type: 'unknown', active: true, privacyLevel: project.privacyLevel },
      }));
    await lockVersion(tx, version.id);
    const build = await tx.build.create({
      data: {
        projectId: project.id,
        versionId: version.id,
        versionSlug: version.slug,
        state: 'building',
        startedAt: started,
        uploadedBy: ctx.viewer!.username,
        uploadArchiveBytes: BigInt(archive.size),
        uploadFiles: unpacked.files,
        uploadBytes: BigInt(unpacked.bytes),
      },
    });
    await tx.version.update({ where: { id: version.id }, data: { lastBuildId: build.id, ...(version.active ? {} : { active: true }) } });
    await queueBuildEvent(tx, ctx.events, build, 'build:triggered');
    return { version, build };
  });
}

/** What an upload's build says it did. */
function uploadMessage(
  username: string,
  archive: UploadedFile,
  unpacked: { files: number; bytes: number; format: string },
  layout: { downloads: object },
  published: boolean,
): string {
  const formats = Object.keys(layout.downloads);
  const withFormats = formats.length ? ` (with ${formats.join(', ')})` : '';
  const notServed = published ? '' : ' A newer build of this version was published meanwhile; this upload is not served.';
  return `Uploaded by ${username}: ${unpacked.files} files, ${unpacked.bytes} bytes, from a ${unpacked.format} archive of ${archive.size} bytes${withFormats}.${notServed}`;
}

async function ensure(dir: string): Promise<string> {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  return dir;
}
