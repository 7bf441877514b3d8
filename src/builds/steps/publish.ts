// Step 5 of a build: publish. All files first, then one update makes them the served ones (search
// indexed, caches told: src/builds/publish.ts). The files no longer served go before the build is
// reported finished, so a finished build leaves storage as it stays. A build cancelled while it
// ran publishes nothing.
import path from 'node:path';
import { OutputRefused } from '../../storage/output.ts';
import { logPublishProblems, publishBuild } from '../publish.ts';
import { Aborted, type BuildRun, FORMAT_EXT, StepFailed } from '../run.ts';

export async function publish(r: BuildRun): Promise<void> {
  await r.checkoutIsReal();
  const { project, build, limits } = r;
  const downloads = Object.fromEntries((Object.keys(FORMAT_EXT) as (keyof typeof FORMAT_EXT)[]).filter((f) => r.formats[f]).map((f) => [f, r.downloadPath(f)]));
  const current = await r.prisma.build.findUnique({ where: { id: build.id }, select: { state: true } });
  if (r.signal.aborted || !current || current.state === 'finished') throw new Aborted('the build was finished elsewhere (cancelled)');
  const published = await publishBuild(r.deps, {
    projectSlug: project.slug,
    version: r.version,
    buildId: build.id,
    htmlDir: path.join(r.output, 'html'),
    downloads,
    documentationType: r.config.doctype ?? 'sphinx',
    outputDir: r.output,
    limits: { maxBytes: limits.maxPublishBytes, maxFiles: limits.maxPublishFiles },
  }).catch((e: unknown) => {
    if (e instanceof OutputRefused) throw new StepFailed(`Publishing failed: ${e.message}`);
    throw e;
  });
  logPublishProblems(r.deps.log, build.id, published);
}
