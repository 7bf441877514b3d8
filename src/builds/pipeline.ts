// One build, start to finish: clone, read the config, install, build HTML and the offline formats,
// publish to storage, finish. Each step's commands are recorded as they run; a failure ends the
// build `finished`, unsuccessful, with an error that names the step, the command and the last
// lines of its output. The pipeline reaches the rest of Lectern only through the database and
// storage.
// @see docs/design/builds.md "Steps"

import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, lstat, mkdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type BuildLimits, DEFAULT_BUILD_LIMITS } from '../config.ts';
import type { PrismaClient } from '../db/database.ts';
import { forbiddenVariableName } from '../domain/environment-variables.ts';
import { firewallExplanation, localGit, localRepositoryPath, resolveLocalRepository } from '../domain/git.ts';
import type { Events } from '../events.ts';
import type { Build, Project, Version } from '../generated/prisma/client.ts';
import type { Logger } from '../log.ts';
import type { SendDeps } from '../notifications/send.ts';
import { finishedEvent, queueBuildEvent } from '../queue/deliveries.ts';
import { buildUid, bwrapAvailable, GIT_ENV, prepareSandbox, retryingSandboxSetup } from '../sandbox/sandbox.ts';
import type { Cipher } from '../secrets.ts';
import type { Storage } from '../storage/index.ts';
import { OutputRefused, zipDirectory } from '../storage/output.ts';
import { type BuildConfig, BuildConfigError, loadBuildConfig } from './config.ts';
import { logPublishProblems, publishBuild } from './publish.ts';
import { Recorder } from './record.ts';

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
  /**
   * The signals of the app this worker builds for (docs/design/events.md): it wakes on its
   * `buildQueued`, `syncQueued` and `deliveryQueued`, and tells its docs server what it published.
   */
  events: Events;
}

const DEFAULT_TIME_LIMIT_S = 900;
const FORMAT_EXT = { htmlzip: '.zip', epub: '.epub', pdf: '.pdf' } as const;
const SYSTEM_PYTHON = '/usr/bin/python3';

/** A failure a person can act on. */
export class StepFailed extends Error {}

function tail(output: string, lines = 15): string {
  return output.trimEnd().split('\n').slice(-lines).join('\n');
}

export async function runBuild(deps: PipelineDeps, build: Build, signal: AbortSignal): Promise<void> {
  const { prisma } = deps;
  const started = Date.now();
  const project = await prisma.project.findUniqueOrThrow({ where: { id: build.projectId } });
  const version = build.versionId ? await prisma.version.findUnique({ where: { id: build.versionId } }) : null;
  /** The version sync started after the clone: it runs beside the build, and ends before the build does. */
  let syncing: Promise<unknown> | null = null;
  const finish = async (data: { success: boolean; error: string | null; message?: string }) => {
    await syncing;
    const { count } = await prisma.build.updateMany({
      // Only while the build is still this worker's: one whose lease was taken back belongs to another.
      where: { id: build.id, state: { not: 'finished' }, workerId: build.workerId },
      data: { ...data, state: 'finished', finishedAt: new Date(), duration: Math.round((Date.now() - started) / 1000), leaseExpiresAt: null },
    });
    // build:passed or build:failed for the project's webhooks (sent by workers, never waited for).
    if (count === 1)
      await queueBuildEvent(prisma, deps.events, build, finishedEvent(data.success)).catch((e: unknown) =>
        deps.log.error({ err: e, build: build.id }, 'could not queue notifications'),
      );
    await Recorder.announce(deps, build.id); // live logs end now, not at their next poll
  };
  if (!version) return finish({ success: false, error: 'The version of this build was deleted before it started.' });

  const limits = deps.limits ?? DEFAULT_BUILD_LIMITS;
  const variables = await prisma.environmentVariable.findMany({ where: { projectId: project.id } });
  // Names that change how programs load or run are refused when created; rows made before that
  // rule are left out of the build, and the log says so.
  const ignored: [name: string, why: string][] = [];
  const env: Record<string, string> = {};
  // A pull request's preview builds code anyone who can open a pull request wrote: it gets the
  // project's public variables only, as on Read the Docs.
  const preview = version.type === 'external';
  for (const v of variables) {
    if (preview && !v.public) continue;
    const why = forbiddenVariableName(v.name);
    if (why) ignored.push([v.name, why]);
    else env[v.name] = deps.cipher.decrypt(v.valueEncrypted);
  }
  const workdir = path.join(deps.dataDir, 'builds', String(build.id));
  const checkout = path.join(workdir, 'checkout');
  const venv = path.join(workdir, 'venv');
  const home = path.join(workdir, 'home');
  const output = path.join(checkout, '_readthedocs');
  /** Lectern's own files of this build (the htmlzip it makes), outside the build's reach. */
  const artifacts = path.join(deps.dataDir, 'builds', `${build.id}.lectern`);
  const recorder = new Recorder(
    deps,
    build.id,
    Object.values(env),
    [
      [`${venv}/bin/`, ''],
      [venv, '$READTHEDOCS_VIRTUALENV_PATH'],
      [`${checkout}/`, ''],
      [checkout, '.'],
    ],
    { maxCommandBytes: limits.logCommandBytes, maxBuildBytes: limits.logBytes },
  );
  const deadline = started + (project.buildTimeLimit ?? DEFAULT_TIME_LIMIT_S) * 1000;
  // Lectern's own files (database, storage, secret key, other builds) and the home of the user
  // Lectern runs as (its credentials, caches) are not there at all inside the sandbox.
  const lecternHome = os.homedir();
  const hide = [deps.dataDir, ...(deps.hidden ?? []), ...(lecternHome !== '/' && path.isAbsolute(lecternHome) ? [lecternHome] : [])];
  const sandbox = bwrapAvailable();
  // Builds run as a user of their own when Lectern runs as root: their directory is theirs alone.
  const uid = buildUid(limits, build.id);

  const baseEnv: Record<string, string> = {
    PATH: `${venv}/bin:/usr/local/bin:/usr/bin:/bin`,
    HOME: home,
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
  const rtdEnv: Record<string, string> = {
    READTHEDOCS: 'True',
    READTHEDOCS_PROJECT: project.slug,
    READTHEDOCS_LANGUAGE: project.language,
    READTHEDOCS_VERSION: version.slug,
    READTHEDOCS_VERSION_NAME: version.verboseName,
    READTHEDOCS_VERSION_TYPE: version.type,
    READTHEDOCS_REPOSITORY_PATH: checkout,
    READTHEDOCS_OUTPUT: output,
    READTHEDOCS_VIRTUALENV_PATH: venv,
    READTHEDOCS_GIT_CLONE_URL: project.repositoryUrl,
    READTHEDOCS_GIT_IDENTIFIER: version.identifier ?? '',
    READTHEDOCS_CANONICAL_URL: `${deps.publicUrl}/docs/${project.slug}/${project.language}/${version.slug}/`,
    READTHEDOCS_PRODUCTION_DOMAIN: new URL(deps.publicUrl).host,
  };

  /** Runs a recorded command; a non-zero exit fails the step. */
  // Every command runs in the sandbox, git included; only there do the project's variables reach it.
  const run = async (
    step: string,
    description: string,
    argv: string[],
    opts: {
      cwd?: string;
      network?: boolean;
      allowFailure?: boolean;
      mayskip?: boolean;
      /** A local repository's directory (read-only) and git's settings for it: the clone's commands only. */
      readOnly?: string[];
      env?: Record<string, string>;
      /** Said after the output when the command fails (why the build firewall refused the host). */
      explain?: () => Promise<string | null>;
    } = {},
  ) => {
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new StepFailed(`The build ran longer than its time limit of ${project.buildTimeLimit ?? DEFAULT_TIME_LIMIT_S} s.`);
    const cwd = opts.cwd ?? checkout;
    const attempt = () =>
      recorder.run(description, argv, {
        cwd: workdir,
        env: { ...baseEnv, ...rtdEnv, ...env, ...opts.env },
        timeoutMs: deadline - Date.now(),
        signal,
        sandbox: prepareSandbox(argv, { workdir, hide, cwd, network: opts.network ?? false, readOnly: opts.readOnly, uid, limits }),
      });
    // bubblewrap failing to set the sandbox up is this machine's trouble, not the project's; the
    // attempt it could not start is not kept in the log (the command never ran).
    const r = await retryingSandboxSetup(
      attempt,
      () => !signal.aborted && deadline > Date.now(),
      (failed) => prisma.buildCommand.delete({ where: { id: failed.commandId } }),
    );
    if (signal.aborted) throw new Aborted();
    // The project's own command asking not to build (Read the Docs' RTD_SKIP_BUILD_EXIT_CODE).
    if (r.exitCode === 183 && opts.mayskip && !r.timedOut && !r.limit) {
      throw new Skipped(`Skipped: \`${recorder.display(argv)}\` (${step}) exited with code 183, which asks not to build; the published docs are unchanged.`);
    }
    if (r.exitCode !== 0 && !opts.allowFailure) {
      const why = r.timedOut
        ? `was killed at the build's time limit`
        : r.limit
          ? `was stopped: ${r.limit.message}`
          : r.exitCode === 183
            ? 'asked to skip the build (exit code 183)'
            : `exited with code ${r.exitCode}`;
      const explained = !r.timedOut && !r.limit ? await opts.explain?.() : null;
      throw new StepFailed(`${step} failed: \`${recorder.display(argv)}\` ${why}.\n${tail(r.output)}${explained ? `\n${explained}` : ''}`);
    }
    return r;
  };
  /**
   * Moves the one `ext` file of `dir` to `target`, inside the sandbox as the build's user: the
   * output is the build's, and Lectern never follows its links with its own rights.
   */
  const moveSingle = async (step: string, dir: string, ext: string, target: string) => {
    const argv = ['sh', '-c', MOVE_SINGLE, 'sh', dir, ext, target];
    const r = await retryingSandboxSetup(async () => {
      const attempt = await recorder.run('collect', argv, {
        cwd: workdir,
        env: baseEnv,
        timeoutMs: 30_000,
        signal,
        sandbox: prepareSandbox(argv, { workdir, hide, cwd: checkout, network: false, uid, limits }),
      });
      await prisma.buildCommand.delete({ where: { id: attempt.commandId } }); // Lectern's own step, not the project's
      return attempt;
    });
    if (r.exitCode !== 0) throw new StepFailed(`${step}: ${r.output.trim().split('\n').pop()}`);
  };
  /**
   * The checkout is the build's own directory, not a link it left in its place (to another build's
   * output, say): checked when no command of the build runs, before Lectern reads the output.
   */
  const checkoutIsReal = async () => {
    const st = await lstat(checkout).catch(() => null);
    if (!st?.isDirectory()) throw new StepFailed('Publishing failed: the checkout is no longer a directory (the build replaced it with a link or a file).');
  };
  // Only while the build is this worker's and unfinished: a build cancelled meanwhile stops here.
  const setState = async (state: 'installing' | 'building') => {
    const { count } = await prisma.build.updateMany({ where: { id: build.id, state: { not: 'finished' }, workerId: build.workerId }, data: { state } });
    if (count === 0) throw new Aborted('the build was finished elsewhere (cancelled)');
  };

  try {
    await rm(workdir, { recursive: true, force: true });
    await mkdir(home, { recursive: true, mode: 0o700 });
    if (uid !== null) {
      await chown(workdir, uid, uid);
      await chown(home, uid, uid);
    }
    // No sandbox, no build: the project's code never runs unconfined.
    if (!sandbox)
      throw new StepFailed(
        'bubblewrap (bwrap) is not installed or cannot run on this machine: Lectern runs no build without its sandbox (apt-get install -y bubblewrap).',
      );
    if (ignored.length) {
      await prisma.buildCommand.create({
        data: {
          buildId: build.id,
          description: 'environment variables',
          command: 'environment variables',
          output: ignored.map(([name, why]) => `The project's environment variable ${name} was left out of this build: ${why}\n`).join(''),
          exitCode: 0,
          startTime: new Date(),
          endTime: new Date(),
        },
      });
    }
    // 1. Clone.
    const url = project.repositoryUrl;
    const isTagCommit = version.type === 'tag' && version.machine; // machine `stable` on a tag: identifier is a commit
    const ref = version.type === 'tag' && !version.machine ? version.verboseName : version.type === 'branch' ? version.identifier : null;
    // A repository on this machine (LECTERN_BUILD_LOCAL_REPOSITORIES), checked again now: its
    // directory is mounted read-only for the clone's commands only, which then have no network.
    const local = localRepositoryPath(url) === null ? null : resolveLocalRepository(url, limits.localRepositories);
    if (typeof local === 'string') throw new StepFailed(`Cloning failed: ${local}`);
    const how = local ? localGit(local) : null;
    const remote = local
      ? { network: false, readOnly: [local.dir], env: how!.env }
      : { network: true, explain: () => firewallExplanation(url, limits.networkAllow) };
    const options = how?.options ?? [];
    await run(
      'Cloning',
      'git clone',
      ['git', 'clone', ...options, '--depth', '1', '--no-tags', ...(ref ? ['--branch', ref] : []), '--', how?.url ?? url, checkout],
      {
        cwd: workdir,
        ...remote,
      },
    );
    if (isTagCommit && version.identifier) {
      await run('Cloning', 'git fetch', ['git', 'fetch', ...options, '--depth', '1', 'origin', version.identifier], remote);
      await run('Cloning', 'git checkout', ['git', 'checkout', '--force', version.identifier]);
    }
    // A pull request's preview: its head, from the ref the forge keeps for it (pull/<n>/head,
    // merge-requests/<n>/head), as Read the Docs fetches it.
    const external = version.type === 'external' ? (version.externalSource as { ref?: unknown } | null) : null;
    if (external && typeof external.ref === 'string' && /^(pull|merge-requests)\/\d+\/head$/.test(external.ref)) {
      await run('Cloning', 'git fetch', ['git', 'fetch', ...options, '--depth', '1', 'origin', external.ref], remote);
      await run('Cloning', 'git checkout', ['git', 'checkout', '--force', 'FETCH_HEAD']);
    }
    const head = await retryingSandboxSetup(async () => {
      const attempt = await recorder.run('git rev-parse', ['git', 'rev-parse', 'HEAD'], {
        cwd: workdir,
        env: baseEnv,
        timeoutMs: 30_000,
        sandbox: prepareSandbox(['git', 'rev-parse', 'HEAD'], { workdir, hide, cwd: checkout, network: false, uid, limits }),
      });
      await prisma.buildCommand.delete({ where: { id: attempt.commandId } }); // not shown, as Read the Docs hides it
      return attempt;
    });
    const commit = /^[0-9a-f]{40,64}$/m.exec(head.output)?.[0];
    if (head.exitCode !== 0 || !commit)
      throw new StepFailed(`Cloning failed: the checked-out commit could not be read (git rev-parse HEAD exited with code ${head.exitCode}).`);
    await prisma.build.update({ where: { id: build.id }, data: { commit } });
    rtdEnv.READTHEDOCS_GIT_COMMIT_HASH = commit;
    // The branches and tags are read beside the build (their own sandbox, network and scratch), not before it.
    if (deps.syncVersions)
      syncing = deps.syncVersions(project.id, url).catch((e) => deps.log.warn({ err: (e as Error).message }, 'version sync after clone failed'));

    // 2. Configuration.
    let config: BuildConfig;
    let file: string | null;
    try {
      ({ config, file } = await loadBuildConfig(checkout, { yamlPath: project.readthedocsYamlPath }));
    } catch (e) {
      if (e instanceof BuildConfigError) throw new StepFailed(`Reading the build configuration failed: ${e.message}`);
      throw e;
    }
    if (file) await run('Reading the configuration', 'cat', ['cat', '--', file]);
    // The variables as this build is given them (ids and change times, never values).
    const variablesStamp = variables
      .map((v) => `${v.id}@${v.modifiedAt.getTime()}`)
      .sort()
      .join(',');
    await prisma.build.update({ where: { id: build.id }, data: { config: config as object, readthedocsYamlPath: file, variablesStamp } });
    // No wasted builds: the commit, configuration and variables the version already serves are not built again unless forced.
    // Only while it serves them: a version turned off (built: false) and on again is built for real.
    if (!build.force && version.built && version.publishedBuildId !== null) {
      const served = await prisma.build.findUnique({
        where: { id: version.publishedBuildId },
        select: { id: true, commit: true, config: true, success: true, variablesStamp: true },
      });
      if (served?.success && served.commit === commit && served.variablesStamp === variablesStamp && canonicalJson(served.config) === canonicalJson(config)) {
        throw new Skipped(
          `Skipped: commit ${commit.slice(0, 12)} with this configuration and these environment variables is already built and published (build #${served.id}); trigger it with force to build it again.`,
        );
      }
    }
    const submodules = config.submodules;
    if (submodules && (submodules.include === 'all' || (Array.isArray(submodules.include) && submodules.include.length > 0))) {
      const paths = submodules.include === 'all' ? [] : submodules.include;
      await run(
        'Cloning',
        'git submodule',
        ['git', 'submodule', 'update', '--init', '--force', '--depth', '1', ...(submodules.recursive ? ['--recursive'] : []), '--', ...paths],
        { network: true },
      );
    }
    const jobs = config.build?.jobs;
    /** The commands of one `build.jobs` entry, each in bash, in order (docs/design/read-the-docs.md §8.3). */
    const runJob = async (name: string, commands: string[] | null | undefined, network: boolean) => {
      for (const command of commands ?? []) await run(`build.jobs.${name}`, `build.jobs.${name}`, ['bash', '-c', command], { network, mayskip: true });
    };
    await runJob('post_checkout', jobs?.post_checkout, true);

    // 3. Install. `build.commands` replaces this step and the next.
    await setState('installing');
    const custom = config.build?.commands?.length ? config.build.commands : null;
    if (!custom) {
      // Lectern installs no system packages (apt_packages): the machine's are what builds have.
      await runJob('pre_system_dependencies', jobs?.pre_system_dependencies, true);
      await runJob('post_system_dependencies', jobs?.post_system_dependencies, true);
      await runJob('pre_create_environment', jobs?.pre_create_environment, true);
    }
    if (!custom && jobs?.create_environment) {
      await runJob('create_environment', jobs.create_environment, true);
    } else {
      // The machine's own pip is visible through the system site packages and installs into the venv
      // (its sys.prefix), so the venv needs no copy of pip: that saves ensurepip's ~3 s per build.
      const venvArgs = systemPipAvailable() ? ['--without-pip'] : [];
      // No network: the venv is made from the machine's Python (ensurepip, when it runs, uses its bundled wheels).
      await run('Creating the environment', 'python -m venv', [SYSTEM_PYTHON, '-m', 'venv', '--system-site-packages', ...venvArgs, venv]);
    }
    if (!custom) {
      await runJob('post_create_environment', jobs?.post_create_environment, true);
      await runJob('pre_install', jobs?.pre_install, true);
      if (jobs?.install) await runJob('install', jobs.install, true);
      else {
        for (const entry of config.python?.install ?? []) {
          if ('requirements' in entry && entry.requirements) {
            await run(
              'Installing',
              'pip install -r',
              [`${venv}/bin/python`, '-m', 'pip', 'install', '--exists-action=w', '--no-cache-dir', '-r', entry.requirements],
              { network: true },
            );
          } else if ('path' in entry && entry.path) {
            const extras = entry.extra_requirements?.length ? `[${entry.extra_requirements.join(',')}]` : '';
            await run(
              'Installing',
              'pip install',
              [`${venv}/bin/python`, '-m', 'pip', 'install', '--upgrade-strategy', 'only-if-needed', '--no-cache-dir', `./${entry.path}${extras}`],
              { network: true },
            );
          }
        }
      }
      await runJob('post_install', jobs?.post_install, true);
    }

    // 4. Build.
    await setState('building');
    const html = path.join(output, 'html');
    const formats: Record<string, boolean> = { htmlzip: false, pdf: false, epub: false };
    const formatErrors: string[] = [];
    const conf = config.sphinx?.configuration ?? 'conf.py';
    const confDir = path.join(checkout, path.dirname(conf));
    const sphinx = (b: string, out: string) => [
      `${venv}/bin/python`,
      '-m',
      'sphinx',
      '-T',
      ...(config.sphinx?.fail_on_warning ? ['-W', '--keep-going'] : []),
      '-b',
      b,
      '-d',
      path.join(output, 'doctrees'),
      '-D',
      `language=${project.language}`,
      '.',
      out,
    ];
    if (custom) {
      for (const command of custom) await run('Building', 'build.commands', ['bash', '-c', command], { mayskip: true });
    } else {
      await runJob('pre_build', jobs?.pre_build, false);
      if (jobs?.build.html) {
        await runJob('build.html', jobs.build.html, false);
      } else if (config.mkdocs) {
        const yml = config.mkdocs.configuration ?? 'mkdocs.yml';
        await run('Building', 'mkdocs build', [
          `${venv}/bin/python`,
          '-m',
          'mkdocs',
          'build',
          '--clean',
          '--site-dir',
          html,
          '--config-file',
          yml,
          ...(config.mkdocs.fail_on_warning ? ['--strict'] : []),
        ]);
      } else if (config.sphinx) {
        const builder = { sphinx: 'html', sphinx_htmldir: 'dirhtml', sphinx_singlehtml: 'singlehtml' }[config.sphinx.builder] ?? 'html';
        await run('Building', `sphinx-build -b ${builder}`, sphinx(builder, html), { cwd: confDir });
      } else {
        throw new StepFailed('Building failed: the configuration names neither Sphinx, MkDocs, build.jobs.build.html nor build.commands.');
      }
      // Offline formats: Sphinx makes them, or the project's own build.jobs.build.<format> writes the
      // one file into $READTHEDOCS_OUTPUT/<format>/. MkDocs has none.
      for (const format of config.formats ?? []) {
        const own = jobs?.build[format];
        if (!own && !config.sphinx) continue;
        try {
          const dir = path.join(output, `${format}-build`);
          if (own) {
            await runJob(`build.${format}`, own, false);
            await moveSingle(
              `build.${format}`,
              path.join(output, format),
              FORMAT_EXT[format],
              path.join(output, format, `${project.slug}${FORMAT_EXT[format]}`),
            );
          } else if (format === 'htmlzip') {
            await run('Building htmlzip', 'sphinx-build -b singlehtml', sphinx('singlehtml', dir), { cwd: confDir });
            // Written by Lectern into a directory of its own, never into one the build could have linked elsewhere.
            await mkdir(artifacts, { recursive: true, mode: 0o700 });
            await checkoutIsReal();
            await zipDirectory(dir, path.join(artifacts, `${project.slug}.zip`), `${project.slug}-${version.slug}`, {
              limits: { maxBytes: limits.maxPublishBytes, maxFiles: limits.maxPublishFiles },
            });
          } else if (format === 'epub') {
            await run('Building epub', 'sphinx-build -b epub', sphinx('epub', dir), { cwd: confDir });
            await moveSingle('Building epub', dir, '.epub', path.join(output, 'epub', `${project.slug}.epub`));
          } else if (format === 'pdf') {
            if (!existsSync('/usr/bin/latexmk')) throw new StepFailed('PDF needs LaTeX, which is not installed on this build machine (latexmk not found).');
            await run('Building pdf', 'sphinx-build -b latex', sphinx('latex', dir), { cwd: confDir });
            await run('Building pdf', 'latexmk', ['latexmk', '-r', '/dev/null', '-pdf', '-f', '-dvi-', '-ps-', '-interaction=nonstopmode', '-quiet'], {
              cwd: dir,
              allowFailure: true,
            });
            await moveSingle('Building pdf', dir, '.pdf', path.join(output, 'pdf', `${project.slug}.pdf`));
          }
          formats[format] = true;
        } catch (e) {
          if (e instanceof Aborted) throw e;
          // An offline format that fails is left out, not the build: the log says why.
          const why = (e as Error).message.split('\n')[0]!;
          formatErrors.push(`${format}: ${why}`);
          await prisma.buildCommand.create({
            data: {
              buildId: build.id,
              description: `${format} skipped`,
              command: `${format}`,
              output: `The ${format} download was not made: ${why}\n`,
              exitCode: 1,
              endTime: new Date(),
            },
          });
        }
      }
      await runJob('post_build', jobs?.post_build, false);
    }
    if (!existsSync(path.join(html, 'index.html'))) {
      throw new StepFailed(
        `Building failed: the HTML output has no index.html at its root (${custom || jobs?.build.html ? '$READTHEDOCS_OUTPUT/html' : "the builder's output"}).`,
      );
    }

    await checkoutIsReal();
    // 5. Publish: all files first, then one update makes them the served ones. The files no longer
    // served go before the build is reported finished, so a finished build leaves storage as it stays.
    const downloads = Object.fromEntries(
      (Object.keys(FORMAT_EXT) as (keyof typeof FORMAT_EXT)[])
        .filter((f) => formats[f])
        .map((f) => [f, f === 'htmlzip' ? path.join(artifacts, `${project.slug}.zip`) : path.join(output, f, `${project.slug}${FORMAT_EXT[f]}`)]),
    );
    // A build cancelled while it ran publishes nothing.
    const current = await prisma.build.findUnique({ where: { id: build.id }, select: { state: true } });
    if (signal.aborted || !current || current.state === 'finished') throw new Aborted('the build was finished elsewhere (cancelled)');
    const published = await publishBuild(deps, {
      projectSlug: project.slug,
      version,
      buildId: build.id,
      htmlDir: html,
      downloads,
      documentationType: config.doctype ?? 'sphinx',
      outputDir: output,
      limits: { maxBytes: limits.maxPublishBytes, maxFiles: limits.maxPublishFiles },
    }).catch((e: unknown) => {
      if (e instanceof OutputRefused) throw new StepFailed(`Publishing failed: ${e.message}`);
      throw e;
    });
    logPublishProblems(deps.log, build.id, published);
    await finish({ success: true, error: null });
    if (formatErrors.length) deps.log.warn({ build: build.id, formatErrors }, 'some offline formats failed');
  } catch (e) {
    if (e instanceof Aborted) return;
    if (e instanceof Skipped) {
      await finish({ success: true, error: null, message: e.message });
      return;
    }
    if (e instanceof StepFailed) {
      await finish({ success: false, error: e.message });
      return;
    }
    deps.log.error({ err: e, build: build.id }, 'build crashed');
    await finish({ success: false, error: `Lectern could not run this build: ${(e as Error).message}` });
  } finally {
    await rm(workdir, { recursive: true, force: true }).catch(() => {});
    await rm(artifacts, { recursive: true, force: true }).catch(() => {});
  }
}

export class Aborted extends Error {}

/** The build ends here, successful, publishing nothing: its message says why. */
export class Skipped extends Error {}

/** JSON with every object's keys in order: two configurations compare equal whatever order they were stored in. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

const MOVE_SINGLE =
  'dir=$1 ext=$2 target=$3; n=0; for f in "$dir"/*"$ext"; do if [ -e "$f" ] || [ -L "$f" ]; then n=$((n+1)); found=$f; fi; done; ' +
  'if [ "$n" -ne 1 ]; then echo "expected one $ext file in the output, found $n"; exit 1; fi; mkdir -p -- "$(dirname -- "$target")" && mv -f -- "$found" "$target"';

let systemPip: boolean | undefined;
/** Whether the system Python has pip (Debian's python3-pip), checked once. */
function systemPipAvailable(): boolean {
  if (systemPip === undefined) {
    try {
      execFileSync(SYSTEM_PYTHON, ['-c', 'import pip'], { stdio: 'ignore', timeout: 10_000 });
      systemPip = true;
    } catch {
      systemPip = false;
    }
  }
  return systemPip;
}

export type { Project, Version };
