// Step 2 of a build: its configuration read (.readthedocs.yaml, or what the checkout implies) and
// recorded with the variables it is given; a build of what the version already serves skipped;
// submodules and `build.jobs.post_checkout` run.
import path from 'node:path';
import { BuildConfigError, loadBuildConfig, uvInstall } from '../config.ts';
import { chooseImage, listImages } from '../images.ts';
import { type BuildRun, Skipped, StepFailed, SYSTEM_PATH } from '../run.ts';
import { chooseTools, chooseUv, listToolPythons } from '../tools.ts';

export async function configure(r: BuildRun): Promise<void> {
  const { build, version, prisma } = r;
  let file: string | null;
  let text: string | null;
  try {
    ({ config: r.config, file, text } = await loadBuildConfig(r.checkout, { yamlPath: r.project.readthedocsYamlPath }));
  } catch (e) {
    if (e instanceof BuildConfigError) throw new StepFailed(`Reading the build configuration failed: ${e.message}`);
    throw e;
  }
  const config = r.config;
  // The image and tools from here on: the configuration's own commands run in it.
  const problem = await chooseImageAndTools(r);
  // Shown as Read the Docs shows it (`cat -- <file>`), from the text just read: no sandbox for it.
  if (file && text !== null && !problem) await r.recorder.shown('cat', ['cat', '--', file], text);
  // The variables as this build is given them (ids and change times, never values).
  const variablesStamp = r.variables
    .map((v) => `${v.id}@${v.modifiedAt.getTime()}`)
    .sort()
    .join(',');
  await prisma.build.update({ where: { id: build.id }, data: { config: config as object, readthedocsYamlPath: file, variablesStamp } });
  if (problem) throw new StepFailed(problem);
  // No wasted builds: the commit, configuration and variables the version already serves are not built again unless forced.
  // Only while it serves them: a version turned off (built: false) and on again is built for real.
  if (!build.force && version.built && version.publishedBuildId !== null) {
    const served = await prisma.build.findUnique({
      where: { id: version.publishedBuildId },
      select: { id: true, commit: true, config: true, success: true, variablesStamp: true },
    });
    if (served?.success && served.commit === r.commit && served.variablesStamp === variablesStamp && canonicalJson(served.config) === canonicalJson(config)) {
      throw new Skipped(
        `Skipped: commit ${r.commit.slice(0, 12)} with this configuration and these environment variables is already built and published (build #${served.id}); trigger it with force to build it again.`,
      );
    }
  }
  const submodules = config.submodules;
  if (submodules && (submodules.include === 'all' || (Array.isArray(submodules.include) && submodules.include.length > 0))) {
    const paths = submodules.include === 'all' ? [] : submodules.include;
    const recursive = submodules.recursive ? ['--recursive'] : [];
    await r.run('Cloning', 'git submodule', ['git', 'submodule', 'update', '--init', '--force', '--depth', '1', ...recursive, '--', ...paths], {
      network: true,
    });
  }
  await r.runJob('post_checkout', config.build?.jobs?.post_checkout, true);
}

/** JSON with every object's keys in order: two configurations compare equal whatever order they were stored in. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/**
 * The build image `build.os` maps to and the versions `build.tools` asks for (docs/design/images.md),
 * said in the build's log, given to its commands as READTHEDOCS_BUILD_IMAGE and
 * READTHEDOCS_TOOLS_<TOOL>, and kept as each tool's `full_version`; or why the build cannot run.
 */
async function chooseImageAndTools(r: BuildRun): Promise<string | null> {
  const build = r.config.build;
  const installed = await listImages(r.limits.images.dir);
  const choice = chooseImage(build.os, installed);
  if ('problem' in choice) return choice.problem;
  const tools = chooseTools(build.tools, choice.image, installed, listToolPythons(r.limits.images.toolsDir));
  if ('problem' in tools) return tools.problem;
  r.image = choice.image;
  r.tools = tools.chosen;
  r.rtdEnv.READTHEDOCS_BUILD_IMAGE = choice.image?.name ?? 'host';
  const lines = [choice.note];
  for (const t of tools.chosen) {
    build.tools[t.tool]!.full_version = t.version;
    r.rtdEnv[`READTHEDOCS_TOOLS_${t.tool.toUpperCase()}`] = t.version;
    const from = t.path
      ? ` (from the tool directory, ${t.path})`
      : t.packages.length
        ? ` (Debian's ${t.packages.join(', ')}, installed with the system packages)`
        : '';
    lines.push(`build.tools.${t.tool}: "${t.asked}" runs ${t.tool} ${t.version}${from}.`);
  }
  const uv = uvInstall(r.config);
  if (uv) {
    const got = chooseUv(choice.image, r.limits.images.toolsDir);
    if ('problem' in got) return got.problem;
    r.tools.push(got.uv);
    useUv(r, got.uv.bin, uv.path);
    lines.push(`python.install: uv ${got.uv.version}${got.uv.path ? ` (from the tool directory, ${got.uv.path})` : ''} makes and fills the environment.`);
  }
  await r.note('Build image', `build.os: ${build.os ?? '(not set)'}`, `${lines.join('\n')}\n`, 0);
  return null;
}

/**
 * The environment of a build that installs with uv: Read the Docs' UV_PYTHON, UV_PROJECT and
 * UV_PROJECT_ENVIRONMENT, and Lectern's own: no Python downloads (the build's Python is the one
 * build.tools chose), files copied from uv's cache (the project's, at ~/.cache/uv, is on another
 * mount), and uv's directory on PATH for the project's own jobs.
 */
function useUv(r: BuildRun, bin: string, projectPath: string | null): void {
  Object.assign(r.rtdEnv, {
    UV_PYTHON: `${r.venv}/bin/python`,
    UV_PROJECT: projectPath ? path.join(r.checkout, projectPath) : r.checkout,
    UV_PROJECT_ENVIRONMENT: r.venv,
    UV_PYTHON_DOWNLOADS: 'never',
    UV_LINK_MODE: 'copy',
  });
  r.baseEnv.PATH = `${r.venv}/bin:${path.dirname(bin)}:${SYSTEM_PATH}`;
}
