// The offline formats of a build (htmlzip, epub, pdf), after its HTML: Sphinx makes them, or the
// project's own `build.jobs.build.<format>` writes the one file into $READTHEDOCS_OUTPUT/<format>/.
// MkDocs has none. A format that fails is left out, not the build: the log says why.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { zipDirectory } from '../../storage/output.ts';
import { Aborted, type BuildRun, FORMAT_EXT, StepFailed } from '../run.ts';
import { sphinxBuild, sphinxDir } from './sphinx.ts';

export async function offlineFormats(r: BuildRun): Promise<void> {
  const jobs = r.config.build?.jobs;
  for (const format of r.config.formats ?? []) {
    const own = jobs?.build[format];
    if (!own && !r.config.sphinx) continue;
    try {
      if (own) {
        await r.runJob(`build.${format}`, own, false);
        await r.moveSingle(`build.${format}`, path.join(r.output, format), FORMAT_EXT[format], r.downloadPath(format));
      } else await sphinxFormat(r, format);
      r.formats[format] = true;
    } catch (e) {
      if (e instanceof Aborted) throw e;
      const why = (e as Error).message.split('\n')[0]!;
      r.formatErrors.push(`${format}: ${why}`);
      await r.note(`${format} skipped`, format, `The ${format} download was not made: ${why}\n`, 1);
    }
  }
}

/** One offline format made by Sphinx. */
async function sphinxFormat(r: BuildRun, format: keyof typeof FORMAT_EXT): Promise<void> {
  const { project, version, limits } = r;
  const dir = path.join(r.output, `${format}-build`);
  const cwd = sphinxDir(r);
  if (format === 'htmlzip') {
    await r.run('Building htmlzip', 'sphinx-build -b singlehtml', sphinxBuild(r, 'singlehtml', dir), { cwd });
    // Written by Lectern into a directory of its own, never into one the build could have linked elsewhere.
    await mkdir(r.artifacts, { recursive: true, mode: 0o700 });
    await r.checkoutIsReal();
    await zipDirectory(dir, r.downloadPath('htmlzip'), `${project.slug}-${version.slug}`, {
      limits: { maxBytes: limits.maxPublishBytes, maxFiles: limits.maxPublishFiles },
    });
  } else if (format === 'epub') {
    await r.run('Building epub', 'sphinx-build -b epub', sphinxBuild(r, 'epub', dir), { cwd });
    await r.moveSingle('Building epub', dir, '.epub', r.downloadPath('epub'));
  } else if (format === 'pdf') {
    if (!existsSync('/usr/bin/latexmk')) throw new StepFailed('PDF needs LaTeX, which is not installed on this build machine (latexmk not found).');
    await r.run('Building pdf', 'sphinx-build -b latex', sphinxBuild(r, 'latex', dir), { cwd });
    const latexmk = ['latexmk', '-r', '/dev/null', '-pdf', '-f', '-dvi-', '-ps-', '-interaction=nonstopmode', '-quiet'];
    await r.run('Building pdf', 'latexmk', latexmk, { cwd: dir, allowFailure: true });
    await r.moveSingle('Building pdf', dir, '.pdf', r.downloadPath('pdf'));
  }
}
