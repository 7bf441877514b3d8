// Real Sphinx output for the embed tests: runs `sphinx-build -b html` on a fixture project, and
// publishes an HTML directory as a version's build the way the build pipeline's step 5 does
// (src/builds/pipeline.ts): files into storage under the artifact prefix, a finished successful
// Build row, then the version pointed at it (publishedBuildId, built, active).
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { type PublishDeps, publishBuild } from '../../src/builds/publish.ts';
import { artifactPrefix } from '../../src/storage/artifacts.ts';
import type { PutDirectoryResult } from '../../src/storage/index.ts';

const SPHINX_BUILD = '/usr/bin/sphinx-build';

/** Builds `sourceDir` with Sphinx's HTML builder into a new temporary directory and returns it. */
export async function sphinxHtml(sourceDir: string, extraArgs: string[] = []): Promise<string> {
  if (!existsSync(SPHINX_BUILD)) {
    throw new Error(`${SPHINX_BUILD} is missing: the embed tests need real Sphinx output; install the Debian package python3-sphinx`);
  }
  const out = mkdtempSync(path.join(os.tmpdir(), 'lectern-embed-html-'));
  // -E: no saved environment; -q: warnings only. The doctrees go beside the output, not into it
  // (and not into the fixture's source directory).
  const doctrees = mkdtempSync(path.join(os.tmpdir(), 'lectern-embed-doctrees-'));
  try {
    await promisify(execFile)(SPHINX_BUILD, ['-E', '-q', '-b', 'html', '-d', doctrees, ...extraArgs, sourceDir, out], {
      maxBuffer: 16 * 1024 * 1024,
    });
  } finally {
    rmSync(doctrees, { recursive: true, force: true });
  }
  return out;
}

export interface Published {
  buildId: number;
  prefix: string;
  upload: PutDirectoryResult;
}

/** Publishes `htmlDir` as the served build of version `versionSlug` of project `projectSlug` (both must exist). */
export async function publishHtml(
  deps: PublishDeps,
  opts: { project: string; version: string; htmlDir: string; documentationType?: string },
): Promise<Published> {
  const { prisma } = deps;
  const project = await prisma.project.findUniqueOrThrow({ where: { slug: opts.project } });
  const version = await prisma.version.findUniqueOrThrow({ where: { projectId_slug: { projectId: project.id, slug: opts.version } } });
  const now = new Date();
  const build = await prisma.build.create({
    data: {
      projectId: project.id,
      versionId: version.id,
      versionSlug: version.slug,
      state: 'finished',
      success: true,
      commit: 'f00dcafe',
      duration: 1,
      createdAt: now,
      startedAt: now,
      finishedAt: now,
    },
  });
  const prefix = artifactPrefix(project.slug, version.slug, build.id, 'html');
  const { upload } = await publishBuild(deps, {
    projectSlug: project.slug,
    version,
    buildId: build.id,
    htmlDir: opts.htmlDir,
    documentationType: opts.documentationType,
  });
  await prisma.version.update({ where: { id: version.id }, data: { active: true, lastBuildId: build.id } });
  return { buildId: build.id, prefix, upload };
}
