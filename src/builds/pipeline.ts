// One build, start to finish: a list of named steps over one BuildRun (src/builds/run.ts), run in
// order: prepare, clone, configure, install, build (HTML, then the offline formats), publish; then
// the build is finished, its webhooks queued. Each step's commands are recorded as they run; a
// failure ends the build `finished`, unsuccessful, with an error that names the step, the command
// and the last lines of its output. The pipeline reaches the rest of Lectern only through the
// database and storage.
// @see docs/design/builds.md "Steps"

import { rm } from 'node:fs/promises';
import type { BuildLimits } from '../config.ts';
import type { PrismaClient } from '../db/database.ts';
import type { Events } from '../events.ts';
import type { Build } from '../generated/prisma/client.ts';
import type { Logger } from '../log.ts';
import type { SendDeps } from '../notifications/send.ts';
import type { Cipher } from '../secrets.ts';
import type { Storage } from '../storage/index.ts';
import { Aborted, BuildRun, finishBuild, Skipped, StepFailed } from './run.ts';
import { buildDocs } from './steps/build.ts';
import { clone } from './steps/clone.ts';
import { configure } from './steps/configure.ts';
import { install } from './steps/install.ts';
import { prepare } from './steps/prepare.ts';
import { publish } from './steps/publish.ts';

export { Aborted, Skipped, StepFailed };

export interface PipelineDeps {
  prisma: PrismaClient;
  storage: Storage;
  cipher: Cipher;
  log: Logger;
  dataDir: string;
  publicUrl: string;
  /** More directories builds must not see (a file: storage outside the data dir). */
  hidden?: string[];
  /** Called after the clone, with the repository URL (syncs versions from the remote). */
  syncVersions?: (projectId: number, repositoryUrl: string) => Promise<unknown>;
  /** Bounds and network of builds (LECTERN_BUILD_*); defaults when absent. */
  limits?: BuildLimits;
  /** Webhook notifications are sent by the worker with these settings (none without them). */
  notify?: SendDeps['config'];
  /** Closed pull requests' previews are removed this many days after they closed (not at all without it). */
  previewRetentionDays?: number;
  /** Days the audit log keeps its entries (docs/design/audit.md): the worker's housekeeping drops older ones. */
  auditRetentionDays?: number;
  /**
   * The signals of the app this worker builds for (docs/design/events.md): it wakes on its
   * `buildQueued`, `syncQueued` and `deliveryQueued`, and tells its docs server what it published.
   */
  events: Events;
}

/** A build's steps, in order: each reads and fills the BuildRun; a failure ends the build. */
export const BUILD_STEPS: readonly { name: string; run: (r: BuildRun) => Promise<void> }[] = [
  { name: 'prepare', run: prepare },
  { name: 'clone', run: clone },
  { name: 'configure', run: configure },
  { name: 'install', run: install },
  { name: 'build', run: buildDocs },
  { name: 'publish', run: publish },
];

export async function runBuild(deps: PipelineDeps, build: Build, signal: AbortSignal): Promise<void> {
  const started = Date.now();
  const project = await deps.prisma.project.findUniqueOrThrow({ where: { id: build.projectId } });
  const version = build.versionId ? await deps.prisma.version.findUnique({ where: { id: build.versionId } }) : null;
  if (!version) return finishBuild(deps, build, started, { success: false, error: 'The version of this build was deleted before it started.' });
  const variables = await deps.prisma.environmentVariable.findMany({ where: { projectId: project.id } });
  const r = new BuildRun(deps, build, signal, project, version, variables);
  try {
    for (const step of BUILD_STEPS) await step.run(r);
    await r.finish({ success: true, error: null });
    if (r.formatErrors.length) deps.log.warn({ build: build.id, formatErrors: r.formatErrors }, 'some offline formats failed');
  } catch (e) {
    await ended(r, e);
  } finally {
    await rm(r.workdir, { recursive: true, force: true }).catch(() => {});
    await rm(r.artifacts, { recursive: true, force: true }).catch(() => {});
    await rm(r.layer, { recursive: true, force: true }).catch(() => {});
    r.keptEnv?.release();
  }
}

/** How a build that stopped before its end is finished: by what stopped it. */
async function ended(r: BuildRun, e: unknown): Promise<void> {
  if (e instanceof Aborted) return;
  if (e instanceof Skipped) return r.finish({ success: true, error: null, message: e.message });
  if (e instanceof StepFailed) return r.finish({ success: false, error: e.message });
  r.deps.log.error({ err: e, build: r.build.id }, 'build crashed');
  await r.finish({ success: false, error: `Lectern could not run this build: ${(e as Error).message}` });
}
