// sphinx-build as a build runs it, for its HTML and its offline formats.
import path from 'node:path';
import type { BuildRun } from '../run.ts';

/** The directory of the project's Sphinx configuration: where sphinx-build runs. */
export function sphinxDir(r: BuildRun): string {
  return path.join(r.checkout, path.dirname(r.config.sphinx?.configuration ?? 'conf.py'));
}

/** sphinx-build with `builder` into `out`, as Read the Docs runs it. */
export function sphinxBuild(r: BuildRun, builder: string, out: string): string[] {
  const { config } = r;
  return [
    `${r.venv}/bin/python`,
    '-m',
    'sphinx',
    '-T',
    ...(config.sphinx?.fail_on_warning ? ['-W', '--keep-going'] : []),
    '-b',
    builder,
    '-d',
    path.join(r.output, 'doctrees'),
    '-D',
    `language=${r.project.language}`,
    '.',
    out,
  ];
}
