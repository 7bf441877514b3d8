// Step 3 of a build: its environment, a virtual environment that sees the machine's packages, and
// what the configuration asks pip to install, with the `build.jobs` around them. `build.commands`
// replaces this step and the next: only the environment is made for them.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chown } from 'node:fs/promises';
import { isUvInstall, readRepositoryFile, type UvInstall, uvInstall } from '../config.ts';
import { IMAGE_NAMES } from '../images.ts';
import { type BuildRun, StepFailed, SYSTEM_PYTHON } from '../run.ts';
import { hostPythonVersion } from '../tools.ts';

export async function install(r: BuildRun): Promise<void> {
  await r.setState('installing');
  const jobs = r.config.build?.jobs;
  const custom = r.customCommands !== null;
  if (!custom) await r.runJob('pre_system_dependencies', jobs?.pre_system_dependencies, true);
  // build.commands replace the steps, not the system packages and tools they build with.
  await systemPackages(r);
  if (!custom) await r.runJob('post_system_dependencies', jobs?.post_system_dependencies, true);
  // The version's kept environment, as the last build that ended its install well left it, when
  // nothing it was made from changed; else emptied, before the jobs that may prepare it run
  // (docs/design/images.md "Caches").
  const uv = uvInstall(r.config);
  // A relocatable Python of the tool directory, when build.tools.python chose one.
  const tool = r.tools.find((t) => t.tool === 'python' && t.path);
  const key = await environmentKey(r);
  const kept = r.keptEnv?.kept() ?? null;
  const reused = key !== null && kept !== null && kept.key === key;
  if (r.keptEnv && !reused) await resetEnvironment(r);
  r.keptEnv?.forget();
  if (!custom) await r.runJob('pre_create_environment', jobs?.pre_create_environment, true);
  if (reused) {
    await r.note(
      'Reusing the environment',
      'reuse $READTHEDOCS_VIRTUALENV_PATH',
      `Reusing the environment build #${kept.build} made: the image, tools, Python install configuration, jobs and requirements files are the same.\n`,
      0,
    );
  } else if (!custom && jobs?.create_environment) {
    await r.runJob('create_environment', jobs.create_environment, true);
  } else if (uv) {
    // As Read the Docs makes it (`uv venv`), from the Python build.tools chose: no system site packages.
    const python = tool ? `${tool.path}/bin/python3` : SYSTEM_PYTHON;
    await r.run('Creating the environment', 'uv venv', ['uv', 'venv', '--python', python, r.venv], { cwd: r.workdir });
  } else {
    // The machine's own pip is visible through the system site packages and installs into the venv
    // (its sys.prefix), so the venv needs no copy of pip: that saves ensurepip's ~3 s per build.
    // A relocatable Python of the tool directory carries its own pip, seen the same way.
    const venvArgs = tool || systemPipAvailable() ? ['--without-pip'] : [];
    const python = tool ? `${tool.path}/bin/python3` : SYSTEM_PYTHON;
    // No network: the venv is made from the machine's Python (ensurepip, when it runs, uses its bundled wheels).
    await r.run('Creating the environment', 'python -m venv', [python, '-m', 'venv', '--system-site-packages', ...venvArgs, r.venv]);
  }
  if (custom) return;
  await r.runJob('post_create_environment', jobs?.post_create_environment, true);
  await r.runJob('pre_install', jobs?.pre_install, true);
  if (jobs?.install) await r.runJob('install', jobs.install, true);
  else if (uv) await uvPackages(r, uv);
  else await pipInstall(r, reused);
  await r.runJob('post_install', jobs?.post_install, true);
  if (key !== null) r.keptEnv?.keep({ key, build: r.build.id });
}

/** A requirements file larger than this is installed every time (its environment is not kept). */
const MAX_REQUIREMENTS_BYTES = 1024 ** 2;

/**
 * What the environment is made from, hashed: the image (its version) or this machine's Python, the
 * tools, `python.install`, the jobs that make or fill it, Lectern's pip settings, and the content
 * of every requirements file (read as the configuration file is: through links only while they
 * stay in the checkout, the file opened without following one, docs/design/sandbox.md). Null when
 * it is not to be kept: no kept environment, the project's own `build.commands`,
 * `create_environment` or `install`, or a requirements file that cannot be read so.
 */
async function environmentKey(r: BuildRun): Promise<string | null> {
  const jobs = r.config.build.jobs;
  if (!r.keptEnv || r.customCommands !== null || jobs.create_environment || jobs.install) return null;
  // uv's install runs every time (it makes the environment exactly what the project asks): only pip's requirements decide.
  const requirements = r.config.python.install.flatMap((e) => ('requirements' in e && !isUvInstall(e) ? [e.requirements] : []));
  const hashes: string[] = [];
  for (const file of requirements) {
    try {
      hashes.push(
        createHash('sha256')
          .update(await readRepositoryFile(r.checkout, file, MAX_REQUIREMENTS_BYTES))
          .digest('hex'),
      );
    } catch {
      return null; // gone, a link out, too large: installed as always
    }
  }
  const made = {
    image: r.image ? `${r.image.name}@${r.image.created}` : `host python ${hostPythonVersion()}`,
    tools: r.tools,
    apt: r.config.build.apt_packages,
    install: r.config.python.install,
    jobs: [jobs.pre_create_environment, jobs.post_create_environment, jobs.pre_install, jobs.post_install],
    pip: Object.entries(r.baseEnv).filter(([k]) => k.startsWith('PIP_')),
    hashes,
  };
  return createHash('sha256').update(JSON.stringify(made)).digest('hex');
}

/** Empties the kept environment (the last build's user's files) and gives it to this build's user. */
async function resetEnvironment(r: BuildRun): Promise<void> {
  await r.keptEnv!.reset();
  if (r.uid !== null) await chown(r.keptEnv!.dir, r.uid, r.uid);
}

/** apt's settings for Lectern's installs: as root throughout (the build's /tmp is not apt's own user's), no translations, no kept .debs. */
const APT = ['apt-get', '-o', 'APT::Sandbox::User=root', '-o', 'Acquire::Languages=none', '-o', 'APT::Keep-Downloaded-Packages=false'];

/**
 * `build.apt_packages` and the packages of `build.tools` (nodejs, ruby, rust, golang), installed
 * into the build's layer over its image from the image's Debian sources, as Read the Docs runs
 * them (names checked when the configuration was read: no options, no paths or URLs).
 */
async function systemPackages(r: BuildRun): Promise<void> {
  const apt = r.config.build.apt_packages;
  const packages = [...new Set([...r.tools.flatMap((t) => t.packages), ...apt])];
  if (!packages.length) return;
  if (!r.image) {
    throw new StepFailed(
      `build.apt_packages: packages are installed into a build image, and none is installed on this machine (lectern images build ${IMAGE_NAMES.join('|')}); this machine's own system is never changed by a build.`,
    );
  }
  await r.run('Installing system packages', 'apt-get update', [...APT, 'update', '--assume-yes', '--quiet'], { network: true, asRoot: true });
  await r.run('Installing system packages', 'apt-get install', [...APT, 'install', '--assume-yes', '--quiet', '--no-install-recommends', '--', ...packages], {
    network: true,
    asRoot: true,
  });
}

/** `python.install`: requirements files and local packages, in order; requirements already in a reused environment are not installed again. */
async function pipInstall(r: BuildRun, reused: boolean): Promise<void> {
  // pip's cache is the project's own (kept between builds) where it has one.
  const pip = [`${r.venv}/bin/python`, '-m', 'pip', 'install', ...(r.cache ? [] : ['--no-cache-dir'])];
  for (const entry of r.config.python?.install ?? []) {
    if (isUvInstall(entry)) continue; // uvPackages's
    if ('requirements' in entry && entry.requirements) {
      if (reused) continue;
      await r.run('Installing', 'pip install -r', [...pip, '--exists-action=w', '-r', entry.requirements], { network: true });
    } else if ('path' in entry && entry.path) {
      const extras = entry.extra_requirements?.length ? `[${entry.extra_requirements.join(',')}]` : '';
      await r.run('Installing', 'pip install', [...pip, '--upgrade-strategy', 'only-if-needed', `./${entry.path}${extras}`], {
        network: true,
      });
    }
  }
}

/**
 * A uv entry of `python.install`, as Read the Docs runs it: `uv sync` (its groups and extras) in
 * the checkout, or `uv pip install` of a requirements file or a local path (with its extras). It
 * runs in a reused environment too: uv makes it match the project's lock or requirements, quickly
 * when it already does.
 */
async function uvPackages(r: BuildRun, uv: UvInstall): Promise<void> {
  const names = (flag: string, all: string, value: string[] | 'all' | null) => (value === 'all' ? [all] : (value ?? []).flatMap((n) => [flag, n]));
  if (uv.command === 'sync') {
    const args = ['uv', 'sync', ...names('--group', '--all-groups', uv.groups), ...names('--extra', '--all-extras', uv.extras)];
    await r.run('Installing', 'uv sync', args, { network: true });
    return;
  }
  const extras = Array.isArray(uv.extras) && uv.extras.length ? `[${uv.extras.join(',')}]` : '';
  // `./` as pip's path entries have it: a bare `docs` would be a package of that name to uv.
  const what = uv.requirements ? ['-r', uv.requirements] : [`./${uv.path}${extras}`];
  await r.run('Installing', 'uv pip install', ['uv', 'pip', 'install', ...what], { network: true });
}

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
