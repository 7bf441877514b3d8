// Step 4 of a build: HTML into $READTHEDOCS_OUTPUT/html, by `build.commands`, `build.jobs.build.html`,
// MkDocs or Sphinx, with `build.jobs.pre_build` and `post_build` around it and the offline formats
// (src/builds/steps/formats.ts) after it. Output without an index.html at its root fails the build.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { type BuildRun, StepFailed } from '../run.ts';
import { offlineFormats } from './formats.ts';
import { sphinxBuild, sphinxDir } from './sphinx.ts';

export async function buildDocs(r: BuildRun): Promise<void> {
  await r.setState('building');
  const { config } = r;
  const jobs = config.build?.jobs;
  const html = path.join(r.output, 'html');
  const custom = r.customCommands;
  if (custom) {
    for (const command of custom) await r.run('Building', 'build.commands', ['bash', '-c', command], { mayskip: true });
  } else {
    await r.runJob('pre_build', jobs?.pre_build, false);
    if (jobs?.build.html) {
      await r.runJob('build.html', jobs.build.html, false);
    } else if (config.mkdocs) {
      const yml = config.mkdocs.configuration ?? 'mkdocs.yml';
      const strict = config.mkdocs.fail_on_warning ? ['--strict'] : [];
      await r.run('Building', 'mkdocs build', [
        `${r.venv}/bin/python`,
        '-m',
        'mkdocs',
        'build',
        '--clean',
        '--site-dir',
        html,
        '--config-file',
        yml,
        ...strict,
      ]);
    } else if (config.sphinx) {
      const builder = { sphinx: 'html', sphinx_htmldir: 'dirhtml', sphinx_singlehtml: 'singlehtml' }[config.sphinx.builder] ?? 'html';
      await r.run('Building', `sphinx-build -b ${builder}`, sphinxBuild(r, builder, html), { cwd: sphinxDir(r) });
    } else {
      throw new StepFailed('Building failed: the configuration names neither Sphinx, MkDocs, build.jobs.build.html nor build.commands.');
    }
    await offlineFormats(r);
    await r.runJob('post_build', jobs?.post_build, false);
  }
  if (!existsSync(path.join(html, 'index.html'))) {
    const where = custom || jobs?.build.html ? '$READTHEDOCS_OUTPUT/html' : "the builder's output";
    throw new StepFailed(`Building failed: the HTML output has no index.html at its root (${where}).`);
  }
}
