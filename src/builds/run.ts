// One build as it runs: what every step reads (the build, its project and version, its limits,
// directories, environment and recorder) and the few things every step does (run a recorded
// command in the sandbox, run a `build.jobs` entry, move a single output file, move the build to
// its next state, finish it). The steps themselves are in src/builds/steps/, in the order
// src/builds/pipeline.ts runs them (docs/design/builds.md "Steps").
import { lstat, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_BUILD_LIMITS } from '../config.ts';
import { buildLimitsFor } from '../domain/build-limits.ts';
import { forbiddenVariableName } from '../domain/environment-variables.ts';
import type { Build, EnvironmentVariable, Project, Version } from '../generated/prisma/client.ts';
import { finishedEvent, queueBuildEvent } from '../queue/deliveries.ts';
import { buildUid, bwrapAvailable, GIT_ENV, prepareSandbox, retryingSandboxSetup } from '../sandbox/sandbox.ts';
import type { BuildConfig } from './config.ts';
import { KeptEnvironment } from './environment.ts';
import type { InstalledImage } from './images.ts';
import type { PipelineDeps } from './pipeline.ts';
import { Recorder } from './record.ts';
import type { ToolChoice } from './tools.ts';

/** A failure a person can act on: the build ends unsuccessful with this message. */
export class StepFailed extends Error {}

/** The build was finished elsewhere (cancelled), or the worker is stopping: nothing more is written. */
export class Aborted extends Error {}

/** The build ends here, successful, publishing nothing: its message says why. */
export class Skipped extends Error {}

export const FORMAT_EXT = { htmlzip: '.zip', epub: '.epub', pdf: '.pdf' } as const;
export const SYSTEM_PYTHON = '/usr/bin/python3';
/** The build's PATH after its venv's bin (and the tools it put there). */
export const SYSTEM_PATH = '/usr/local/bin:/usr/bin:/bin';
/** Where a version's kept environment is in the sandbox: one path for every build, as on Read the Docs (docs/design/images.md "Caches"). */
export const KEPT_VENV = '/home/docs/venv';
/** The whole environment of a command Lectern runs as root in a build's image (its package installs). */
const ROOT_ENV = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', HOME: '/root', LANG: 'C.UTF-8', TMPDIR: '/tmp', DEBIAN_FRONTEND: 'noninteractive' };

const MOVE_SINGLE =
  'dir=$1 ext=$2 target=$3; n=0; for f in "$dir"/*"$ext"; do if [ -e "$f" ] || [ -L "$f" ]; then n=$((n+1)); found=$f; fi; done; ' +
  'if [ "$n" -ne 1 ]; then echo "expected one $ext file in the output, found $n"; exit 1; fi; mkdir -p -- "$(dirname -- "$target")" && mv -f -- "$found" "$target"';

function tail(output: string, lines = 15): string {
  return output.trimEnd().split('\n').slice(-lines).join('\n');
}

export interface RunOptions {
  cwd?: string;
  network?: boolean;
  allowFailure?: boolean;
  /** Exit code 183 skips the build (Read the Docs' RTD_SKIP_BUILD_EXIT_CODE): the project's own commands only. */
  mayskip?: boolean;
  /** A local repository's directory (read-only) and git's settings for it: the clone's commands only. */
  readOnly?: string[];
  /** As root in the build's image, writing into its layer: Lectern's own `apt-get` only. */
  asRoot?: boolean;
  env?: Record<string, string>;
  /** Said after the output when the command fails (why the build firewall refused the host). */
  explain?: () => Promise<string | null>;
}

export class BuildRun {
  readonly started = Date.now();
  readonly limits;
  readonly workdir: string;
  readonly checkout: string;
  readonly venv: string;
  readonly home: string;
  /** $READTHEDOCS_OUTPUT: where the build leaves html/ and the offline formats. */
  readonly output: string;
  /** Lectern's own files of this build (the htmlzip it makes), outside the build's reach. */
  readonly artifacts: string;
  readonly recorder: Recorder;
  readonly deadline: number;
  /** Lectern's own files (database, storage, secret key, other builds) and its user's home: not in the sandbox at all. */
  readonly hide: string[];
  /** Builds run as a user of their own when Lectern runs as root: their directory is theirs alone. */
  readonly uid: number | null;
  readonly sandbox = bwrapAvailable();
  /** The project's variables the build gets, and those left out with why (named in the log). */
  readonly env: Record<string, string> = {};
  readonly ignored: [name: string, why: string][] = [];
  readonly baseEnv: Record<string, string>;
  readonly rtdEnv: Record<string, string>;
  /** The version sync started after the clone: it runs beside the build, and ends before the build does. */
  syncing: Promise<unknown> | null = null;
  /** The build image it runs in from its configuration on (the configure step), or null: this machine's own system. */
  image: InstalledImage | null = null;
  /** What `build.tools` asked for and got (the configure step). */
  tools: ToolChoice[] = [];
  /** The build's layer over its image: what its commands write outside its directory (docs/design/images.md). */
  readonly layer: string;
  /**
   * The project's cache kept between its builds, or null: a pull request's preview starts from
   * none and leaves none (docs/design/images.md "Caches"). Its `downloads/` is pip's and uv's cache
   * (the build's `~/.cache`), its `envs/` the versions' environments.
   */
  readonly cache: string | null;
  /** The version's environment kept between builds, held by this build; null: the venv is made afresh in the build's directory. */
  readonly keptEnv: KeptEnvironment | null;
  /** The commit checked out: set by the clone step. */
  commit = '';
  /** The build's configuration: set by the configure step. */
  config!: BuildConfig;
  /** The offline formats made, by name (the build step), and why others were not. */
  readonly formats: Record<string, boolean> = { htmlzip: false, pdf: false, epub: false };
  readonly formatErrors: string[] = [];

  readonly deps: PipelineDeps;
  readonly build: Build;
  /** Aborted when the worker stops: the build's command is killed, and the build given back. */
  readonly signal: AbortSignal;
  readonly project: Project;
  readonly version: Version;
  /** The project's environment variables, all of them (what the build gets is `env`). */
  readonly variables: EnvironmentVariable[];

  constructor(deps: PipelineDeps, build: Build, signal: AbortSignal, project: Project, version: Version, variables: EnvironmentVariable[]) {
    this.deps = deps;
    this.build = build;
    this.signal = signal;
    this.project = project;
    this.version = version;
    this.variables = variables;
    // The project's own time, memory and processes where a site admin set them, capped at the ceilings.
    this.limits = buildLimitsFor(project, deps.limits ?? DEFAULT_BUILD_LIMITS);
    // A pull request's preview builds code anyone who can open a pull request wrote: it gets the
    // project's public variables only, as on Read the Docs. Names that change how programs load or
    // run are refused when created; rows made before that rule are left out, and the log says so.
    const preview = version.type === 'external';
    for (const v of variables) {
      if (preview && !v.public) continue;
      const why = forbiddenVariableName(v.name);
      if (why) this.ignored.push([v.name, why]);
      else this.env[v.name] = deps.cipher.decrypt(v.valueEncrypted);
    }
    this.workdir = path.join(deps.dataDir, 'builds', String(build.id));
    this.checkout = path.join(this.workdir, 'checkout');
    this.cache = preview ? null : path.join(deps.dataDir, 'cache', 'projects', String(project.id));
    // A build of a version another build of it is running makes its own (the kept one is that build's).
    this.keptEnv = this.cache ? KeptEnvironment.claim(this.cache, version.id, build.id, (this.timeLimitSeconds + 600) * 1000) : null;
    // A kept environment is at the same place in every build's sandbox (its scripts' #! lines name it).
    this.venv = this.keptEnv ? KEPT_VENV : path.join(this.workdir, 'venv');
    this.home = path.join(this.workdir, 'home');
    this.output = path.join(this.checkout, '_readthedocs');
    this.artifacts = path.join(deps.dataDir, 'builds', `${build.id}.lectern`);
    this.layer = path.join(deps.dataDir, 'builds', `${build.id}.layer`);
    this.recorder = new Recorder(
      deps,
      build.id,
      Object.values(this.env),
      [
        [`${this.venv}/bin/`, ''],
        [this.venv, '$READTHEDOCS_VIRTUALENV_PATH'],
        [`${this.checkout}/`, ''],
        [this.checkout, '.'],
      ],
      { maxCommandBytes: this.limits.logCommandBytes, maxBuildBytes: this.limits.logBytes },
    );
    this.deadline = this.started + this.timeLimitSeconds * 1000;
    const lecternHome = os.homedir();
    this.hide = [deps.dataDir, ...(deps.hidden ?? []), ...(lecternHome !== '/' && path.isAbsolute(lecternHome) ? [lecternHome] : [])];
    this.uid = buildUid(this.limits, build.id);
    this.baseEnv = {
      PATH: `${this.venv}/bin:${SYSTEM_PATH}`,
      HOME: this.home,
      USER: 'docs',
      LOGNAME: 'docs',
      TMPDIR: '/tmp',
      LANG: 'C.UTF-8',
      NO_COLOR: '1',
      PIP_DISABLE_PIP_VERSION_CHECK: '1',
      ...GIT_ENV,
      // The machine's own pip configuration (index, wheels, certificates) reaches pip in the build.
      ...Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[0].startsWith('PIP_') && e[1] !== undefined)),
    };
    this.rtdEnv = {
      READTHEDOCS: 'True',
      READTHEDOCS_PROJECT: project.slug,
      READTHEDOCS_LANGUAGE: project.language,
      READTHEDOCS_VERSION: version.slug,
      READTHEDOCS_VERSION_NAME: version.verboseName,
      READTHEDOCS_VERSION_TYPE: version.type,
      READTHEDOCS_REPOSITORY_PATH: this.checkout,
      READTHEDOCS_OUTPUT: this.output,
      READTHEDOCS_VIRTUALENV_PATH: this.venv,
      READTHEDOCS_GIT_CLONE_URL: project.repositoryUrl,
      READTHEDOCS_GIT_IDENTIFIER: version.identifier ?? '',
      READTHEDOCS_CANONICAL_URL: `${deps.publicUrl}/docs/${project.slug}/${project.language}/${version.slug}/`,
      READTHEDOCS_PRODUCTION_DOMAIN: new URL(deps.publicUrl).host,
    };
  }

  /** Where the venv is on this machine (READTHEDOCS_VIRTUALENV_PATH is where it is in the sandbox). */
  get venvOnHost(): string {
    return this.keptEnv?.dir ?? this.venv;
  }

  get prisma() {
    return this.deps.prisma;
  }

  get timeLimitSeconds(): number {
    return this.limits.timeLimitSeconds;
  }

  /** Where the time limit comes from, as a build stopped by it is told. */
  get timeLimitSource(): string {
    return this.limits.limitSources.time;
  }

  /** The project's own `build.commands`, which replace every step Lectern would run; null when it gives none. */
  get customCommands(): string[] | null {
    const commands = this.config.build?.commands;
    return commands?.length ? commands : null;
  }

  /**
   * Where the offline `format` is once made: in the output's `<format>/` (where a project's own
   * `build.jobs.build.<format>` or Sphinx leaves it), except Sphinx's htmlzip, which Lectern zips
   * into its own directory, out of the build's reach.
   */
  downloadPath(format: keyof typeof FORMAT_EXT): string {
    const file = `${this.project.slug}${FORMAT_EXT[format]}`;
    const zippedByLectern = format === 'htmlzip' && !this.config.build?.jobs?.build.htmlzip;
    return zippedByLectern ? path.join(this.artifacts, file) : path.join(this.output, format, file);
  }

  /** The sandbox of one command: the build's directory, `cwd`, and nothing of Lectern's. */
  sandboxFor(argv: string[], opts: { cwd: string; network: boolean; readOnly?: string[]; asRoot?: boolean }) {
    const image = this.image ? { rootfs: this.image.rootfs, layer: this.layer } : null;
    const writable =
      this.cache && !opts.asRoot
        ? [
            { host: path.join(this.cache, 'downloads'), at: path.join(this.home, '.cache') },
            ...(this.keptEnv ? [{ host: this.keptEnv.dir, at: KEPT_VENV }] : []),
          ]
        : [];
    // The tools of the tool directory the build runs (a relocatable Python), read-only at their own path.
    const readOnly = [...(opts.readOnly ?? []), ...this.tools.flatMap((t) => (t.path ? [t.path] : []))];
    return prepareSandbox(argv, { workdir: this.workdir, hide: this.hide, uid: this.uid, limits: this.limits, image, writable, ...opts, readOnly });
  }

  /**
   * Runs a recorded command in the sandbox (git included; only there do the project's variables
   * reach it); a non-zero exit fails the step.
   */
  async run(step: string, description: string, argv: string[], opts: RunOptions = {}) {
    if (this.deadline - Date.now() <= 0)
      throw new StepFailed(`The build ran longer than its time limit of ${this.timeLimitSeconds} s (${this.timeLimitSource}).`);
    const attempt = () =>
      this.recorder.run(description, argv, {
        cwd: this.workdir,
        // Root's commands get none of the project's variables, and nothing of the build on their PATH.
        env: opts.asRoot ? ROOT_ENV : { ...this.baseEnv, ...this.rtdEnv, ...this.env, ...opts.env },
        timeoutMs: this.deadline - Date.now(),
        signal: this.signal,
        sandbox: this.sandboxFor(argv, {
          cwd: opts.asRoot ? '/' : (opts.cwd ?? this.checkout),
          network: opts.network ?? false,
          readOnly: opts.readOnly,
          asRoot: opts.asRoot,
        }),
      });
    // bubblewrap failing to set the sandbox up is this machine's trouble, not the project's; the
    // attempt it could not start is not kept in the log (the command never ran).
    const r = await retryingSandboxSetup(
      attempt,
      () => !this.signal.aborted && this.deadline > Date.now(),
      (failed) => this.prisma.buildCommand.delete({ where: { id: failed.commandId } }),
    );
    if (this.signal.aborted) throw new Aborted();
    if (r.exitCode === 183 && opts.mayskip && !r.timedOut && !r.limit) {
      throw new Skipped(
        `Skipped: \`${this.recorder.display(argv)}\` (${step}) exited with code 183, which asks not to build; the published docs are unchanged.`,
      );
    }
    if (r.exitCode !== 0 && !opts.allowFailure) {
      const why = r.timedOut
        ? `was killed at the build's time limit of ${this.timeLimitSeconds} s (${this.timeLimitSource})`
        : r.limit
          ? `was stopped: ${r.limit.message}`
          : r.exitCode === 183
            ? 'asked to skip the build (exit code 183)'
            : `exited with code ${r.exitCode}`;
      const explained = !r.timedOut && !r.limit ? await opts.explain?.() : null;
      throw new StepFailed(`${step} failed: \`${this.recorder.display(argv)}\` ${why}.\n${tail(r.output)}${explained ? `\n${explained}` : ''}`);
    }
    return r;
  }

  /** A command of Lectern's own, in the sandbox, kept out of the log (not the project's). */
  async runOwn(description: string, argv: string[], timeoutMs = 30_000) {
    return retryingSandboxSetup(async () => {
      const attempt = await this.recorder.run(description, argv, {
        cwd: this.workdir,
        env: this.baseEnv,
        timeoutMs,
        signal: this.signal,
        sandbox: this.sandboxFor(argv, { cwd: this.checkout, network: false }),
      });
      await this.prisma.buildCommand.delete({ where: { id: attempt.commandId } });
      return attempt;
    });
  }

  /** The commands of one `build.jobs` entry, each in bash, in order (docs/design/read-the-docs.md §8.3). */
  async runJob(name: string, commands: string[] | null | undefined, network: boolean): Promise<void> {
    for (const command of commands ?? []) await this.run(`build.jobs.${name}`, `build.jobs.${name}`, ['bash', '-c', command], { network, mayskip: true });
  }

  /**
   * Moves the one `ext` file of `dir` to `target`, inside the sandbox as the build's user: the
   * output is the build's, and Lectern never follows its links with its own rights.
   */
  async moveSingle(step: string, dir: string, ext: string, target: string): Promise<void> {
    const r = await this.runOwn('collect', ['sh', '-c', MOVE_SINGLE, 'sh', dir, ext, target]);
    if (r.exitCode !== 0) throw new StepFailed(`${step}: ${r.output.trim().split('\n').pop()}`);
  }

  /**
   * The checkout is the build's own directory, not a link it left in its place (to another build's
   * output, say): checked when no command of the build runs, before Lectern reads the output.
   */
  async checkoutIsReal(): Promise<void> {
    const st = await lstat(this.checkout).catch(() => null);
    if (!st?.isDirectory()) throw new StepFailed('Publishing failed: the checkout is no longer a directory (the build replaced it with a link or a file).');
  }

  /** Only while the build is this worker's and unfinished: a build cancelled meanwhile stops here. */
  async setState(state: 'installing' | 'building'): Promise<void> {
    const { count } = await this.prisma.build.updateMany({
      where: { id: this.build.id, state: { not: 'finished' }, workerId: this.build.workerId },
      data: { state },
    });
    if (count === 0) throw new Aborted('the build was finished elsewhere (cancelled)');
  }

  /** A note in the build's log that is not a command (a variable left out, a format not made). */
  async note(description: string, command: string, output: string, exitCode: number): Promise<void> {
    await this.prisma.buildCommand.create({ data: { buildId: this.build.id, description, command, output, exitCode, endTime: new Date() } });
  }

  /** Ends the build (only while it is still this worker's), queues its webhooks and ends its live log. */
  async finish(data: { success: boolean; error: string | null; message?: string }): Promise<void> {
    // Let go of the version's environment and the layer first: the next build of the version may
    // start the moment this one is finished, and nothing of the build outlives its end.
    this.keptEnv?.release();
    await rm(this.layer, { recursive: true, force: true }).catch(() => {});
    await finishBuild(this.deps, this.build, this.started, data, this.syncing);
  }
}

/** Ends `build` (only while it is still this worker's: one whose lease was taken back belongs to another). */
export async function finishBuild(
  deps: PipelineDeps,
  build: Build,
  started: number,
  data: { success: boolean; error: string | null; message?: string },
  syncing: Promise<unknown> | null = null,
): Promise<void> {
  await syncing;
  await endBuild(deps, build, { ...data, finishedAt: new Date(), duration: Math.round((Date.now() - started) / 1000) });
  await Recorder.announce(deps, build.id); // live logs end now, not at their next poll
}

/**
 * Marks `build` finished with `data` while it is still this worker's, and queues build:passed or
 * build:failed for the project's webhooks and emails (sent by workers, never waited for) in the
 * same transaction: whoever sees it finished sees its notifications queued, and a process that dies
 * in between loses neither. When queueing fails, the build still ends (logged).
 */
export async function endBuild(
  deps: PipelineDeps,
  build: Pick<Build, 'id' | 'projectId' | 'workerId'>,
  data: { success: boolean; error: string | null; message?: string; finishedAt: Date; duration?: number },
): Promise<void> {
  const where = { id: build.id, state: { not: 'finished' as const }, workerId: build.workerId };
  const finished = { ...data, state: 'finished' as const };
  try {
    await deps.prisma.$transaction(async (tx) => {
      const { count } = await tx.build.updateMany({ where, data: finished });
      if (count === 1) await queueBuildEvent(tx, deps.events, build, finishedEvent(data.success), { email: !!deps.notify?.email });
    });
  } catch (e) {
    // The build still ends; its notifications are what is lost.
    deps.log.error({ err: e, build: build.id }, 'could not queue notifications');
    await deps.prisma.build.updateMany({ where, data: finished });
  }
}
