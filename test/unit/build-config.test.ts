// The build configuration: finding `.readthedocs.yaml`, its version 2 keys with every default filled
// in (docs/design/read-the-docs.md §8.1–§8.2, docs/design/builds.md), the fallbacks without a file, and paths from an
// untrusted repository kept inside the checkout.
import { execFileSync } from 'node:child_process';
import { link, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type BuildConfig, BuildConfigError, loadBuildConfig } from '../../src/builds/config.ts';

const made: string[] = [];
afterAll(async () => {
  await Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A temporary checkout holding `files` (path → content). */
async function checkout(files: Record<string, string> = {}): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lectern-config-'));
  made.push(dir);
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), content);
  }
  return dir;
}

async function load(files: Record<string, string>, opts?: { yamlPath?: string | null }) {
  return loadBuildConfig(await checkout(files), opts);
}

/** The config of a `.readthedocs.yaml` holding `yaml`, next to a docs/conf.py unless `files` say otherwise. */
async function config(yaml: string, files: Record<string, string> = { 'docs/conf.py': '' }): Promise<BuildConfig> {
  return (await load({ '.readthedocs.yaml': yaml, ...files })).config;
}

async function failure(promise: Promise<unknown>): Promise<BuildConfigError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BuildConfigError);
  return error as BuildConfigError;
}

async function configError(yaml: string, files: Record<string, string> = { 'docs/conf.py': '' }): Promise<string> {
  return (await failure(config(yaml, files))).message;
}

const JOBS = {
  pre_checkout: [],
  post_checkout: [],
  pre_system_dependencies: [],
  post_system_dependencies: [],
  pre_create_environment: [],
  create_environment: null,
  post_create_environment: [],
  pre_install: [],
  install: null,
  post_install: [],
  pre_build: [],
  build: { html: null, pdf: null, epub: null, htmlzip: null },
  post_build: [],
};

/** The whole config of a Sphinx build with nothing configured but the conf.py at `conf`. */
function sphinxDefaults(conf: string | null = 'docs/conf.py'): BuildConfig {
  return {
    version: '2',
    formats: [],
    python: { install: [], use_system_site_packages: true },
    conda: null,
    build: { os: null, tools: {}, jobs: structuredClone(JOBS), commands: [], apt_packages: [] },
    doctype: 'sphinx',
    sphinx: { builder: 'sphinx', configuration: conf, fail_on_warning: false },
    mkdocs: null,
    submodules: { include: [], exclude: 'all', recursive: false },
    search: { ranking: {}, ignore: ['search.html', 'search/index.html', '404.html', '404/index.html'] },
  };
}

describe('without a configuration file', () => {
  it('builds with Sphinx when there is a conf.py, every default filled in', async () => {
    expect(await load({ 'docs/conf.py': '', 'docs/index.rst': '' })).toEqual({ config: sphinxDefaults(), file: null, text: null });
  });

  it.each([
    [{ 'conf.py': '', 'docs/conf.py': '' }, 'docs/conf.py'],
    [{ 'conf.py': '', 'doc/conf.py': '' }, 'doc/conf.py'],
    [{ 'docs/conf.py': '', 'doc/conf.py': '' }, 'docs/conf.py'],
    [{ 'conf.py': '', 'a/conf.py': '' }, 'conf.py'],
    [{ 'src/pkg/conf.py': '', 'manual/conf.py': '' }, 'manual/conf.py'], // the shallowest
    [{ 'b/conf.py': '', 'a/conf.py': '' }, 'a/conf.py'], // the first by path among equals
    [{ 'docs/source/conf.py': '' }, 'docs/source/conf.py'],
    [{ '.hidden/conf.py': '', 'node_modules/x/conf.py': '', '_build/conf.py': '', 'x/y/z/conf.py': '' }, 'x/y/z/conf.py'],
  ])('%j: Sphinx with %s', async (files, conf) => {
    expect((await load(files)).config).toEqual(sphinxDefaults(conf));
  });

  it.each(['mkdocs.yml', 'mkdocs.yaml', 'docs/mkdocs.yml', 'docs/mkdocs.yaml'])('builds with MkDocs when there is no conf.py but a %s', async (yml) => {
    expect(await load({ [yml]: 'site_name: x\n' })).toEqual({
      config: { ...sphinxDefaults(), doctype: 'mkdocs', sphinx: null, mkdocs: { configuration: yml, fail_on_warning: false } },
      file: null,
      text: null,
    });
  });

  it('prefers Sphinx when both a conf.py and an mkdocs.yml exist', async () => {
    expect((await load({ 'mkdocs.yml': '', 'docs/conf.py': '' })).config.doctype).toBe('sphinx');
  });

  it('does not look for mkdocs.yml deeper than docs/', async () => {
    const error = await failure(load({ 'site/mkdocs.yml': '', 'README.md': '' }));
    expect(error.message).toBe(
      'No build configuration found: the repository has no .readthedocs.yaml, .readthedocs.yml, readthedocs.yaml at its root, ' +
        'no Sphinx conf.py and no MkDocs mkdocs.yml (at the root or in docs/). ' +
        'Add a .readthedocs.yaml with "version: 2" that says how to build the docs.',
    );
    expect(error.file).toBeNull();
  });

  it('ignores a conf.py or mkdocs.yml that is a symbolic link out of the checkout', async () => {
    const outside = await checkout({ 'conf.py': '', 'mkdocs.yml': '' });
    const dir = await checkout({ 'docs/conf.py': '' });
    await rm(path.join(dir, 'docs/conf.py'));
    await symlink(path.join(outside, 'conf.py'), path.join(dir, 'docs/conf.py'));
    await symlink(path.join(outside, 'mkdocs.yml'), path.join(dir, 'mkdocs.yml'));
    await symlink(outside, path.join(dir, 'linked')); // a linked folder is not searched either
    await expect(loadBuildConfig(dir)).rejects.toThrow(/^No build configuration found/);
  });

  it('follows a conf.py symlink that stays inside the checkout', async () => {
    const dir = await checkout({ 'real/conf.py': '' });
    await mkdir(path.join(dir, 'docs'));
    await symlink('../real/conf.py', path.join(dir, 'docs/conf.py'));
    expect((await loadBuildConfig(dir)).config.sphinx?.configuration).toBe('docs/conf.py');
  });
});

describe('finding the file', () => {
  it.each(['.readthedocs.yaml', '.readthedocs.yml', 'readthedocs.yaml'])('reads %s at the root', async (name) => {
    const { config, file } = await load({ [name]: 'version: 2\nformats: [pdf]\n', 'docs/conf.py': '' });
    expect(file).toBe(name);
    expect(config.formats).toEqual(['pdf']);
  });

  it('takes .readthedocs.yaml first, then .readthedocs.yml, then readthedocs.yaml', async () => {
    const files = {
      '.readthedocs.yaml': 'version: 2\nformats: [pdf]\n',
      '.readthedocs.yml': 'version: 2\nformats: [epub]\n',
      'readthedocs.yaml': 'version: 2\nformats: [htmlzip]\n',
      'docs/conf.py': '',
    };
    expect((await load(files)).file).toBe('.readthedocs.yaml');
    const { '.readthedocs.yaml': _, ...rest } = files;
    expect((await load(rest)).file).toBe('.readthedocs.yml');
  });

  it('does not read other names or files below the root', async () => {
    const { file } = await load({ 'readthedocs.yml': 'version: 2\nbad: key\n', 'docs/.readthedocs.yaml': 'bad', 'docs/conf.py': '' });
    expect(file).toBeNull();
  });

  it("reads the project's custom path instead, normalized", async () => {
    const files = {
      '.readthedocs.yaml': 'version: 2\nformats: [pdf]\n',
      'sub/project/.readthedocs.yaml': 'version: 2\nformats: [epub]\nsphinx:\n  configuration: sub/project/conf.py\n',
      'sub/project/conf.py': '',
    };
    const { config, file } = await load(files, { yamlPath: './sub/project/.readthedocs.yaml' });
    expect(file).toBe('sub/project/.readthedocs.yaml');
    expect(config.formats).toEqual(['epub']);
    expect(config.sphinx?.configuration).toBe('sub/project/conf.py'); // paths stay relative to the checkout
    expect((await load(files, { yamlPath: null })).file).toBe('.readthedocs.yaml');
    expect((await load(files, { yamlPath: '' })).file).toBe('.readthedocs.yaml');
  });

  it('requires the custom path to exist', async () => {
    const error = await failure(load({ 'docs/conf.py': '' }, { yamlPath: 'docs/rtd.yaml' }));
    expect(error.message).toBe(
      'The project\'s configuration file "docs/rtd.yaml" was not found in the repository; fix the path in the project\'s settings or add the file.',
    );
    expect(error.file).toBe('docs/rtd.yaml');
  });

  it.each([
    ['../.readthedocs.yaml', 'The project\'s configuration file path "../.readthedocs.yaml" points outside the repository; give a path inside it.'],
    ['docs/../../x.yaml', 'The project\'s configuration file path "docs/../../x.yaml" points outside the repository; give a path inside it.'],
    ['/etc/passwd', 'The project\'s configuration file path "/etc/passwd" is an absolute path; give a path relative to the repository root.'],
  ])('refuses the custom path %s', async (yamlPath, message) => {
    await expect(load({ 'docs/conf.py': '' }, { yamlPath })).rejects.toThrow(message);
  });

  it('refuses a configuration file that is a symbolic link out of the checkout', async () => {
    const outside = await checkout({ 'secret.yaml': 'version: 2\n' });
    const dir = await checkout({ 'docs/conf.py': '' });
    await symlink(path.join(outside, 'secret.yaml'), path.join(dir, '.readthedocs.yaml'));
    await expect(loadBuildConfig(dir)).rejects.toThrow('.readthedocs.yaml is a symbolic link that points outside the repository.');
    await expect(loadBuildConfig(dir, { yamlPath: '.readthedocs.yaml' })).rejects.toThrow(
      'The project\'s configuration file ".readthedocs.yaml" is a symbolic link that points outside the repository.',
    );
  });

  it('refuses a custom path that goes through a linked folder out of the checkout', async () => {
    const outside = await checkout({ 'rtd.yaml': 'version: 2\n' });
    const dir = await checkout({ 'docs/conf.py': '' });
    await symlink(outside, path.join(dir, 'config'));
    await expect(loadBuildConfig(dir, { yamlPath: 'config/rtd.yaml' })).rejects.toThrow(
      'The project\'s configuration file "config/rtd.yaml" is a symbolic link that points outside the repository.',
    );
  });

  it('reads a configuration file linked inside the checkout', async () => {
    const dir = await checkout({ 'ci/rtd.yaml': 'version: 2\nformats: all\n', 'docs/conf.py': '' });
    await symlink('ci/rtd.yaml', path.join(dir, '.readthedocs.yaml'));
    expect((await loadBuildConfig(dir)).config.formats).toEqual(['htmlzip', 'pdf', 'epub']);
  });

  it('refuses a broken link and a folder in its place', async () => {
    const dir = await checkout({ 'docs/conf.py': '' });
    await symlink('nowhere.yaml', path.join(dir, '.readthedocs.yaml'));
    await expect(loadBuildConfig(dir)).rejects.toThrow('.readthedocs.yaml is a symbolic link that points nowhere.');
    const other = await checkout({ '.readthedocs.yaml/x': '' });
    await expect(loadBuildConfig(other)).rejects.toThrow('.readthedocs.yaml is not a file.');
  });

  it("refuses a configuration file linked to the server's environment", async () => {
    const dir = await checkout({ 'docs/conf.py': '' });
    await symlink('/proc/self/environ', path.join(dir, '.readthedocs.yaml'));
    await expect(loadBuildConfig(dir)).rejects.toThrow('.readthedocs.yaml is a symbolic link that points outside the repository.');
  });

  it('refuses a configuration file that is a hard link to a file outside the checkout', async () => {
    const outside = await checkout({ 'secret.yaml': 'version: 2\nformats: all\n' });
    const dir = await checkout({ 'docs/conf.py': '' });
    await link(path.join(outside, 'secret.yaml'), path.join(dir, '.readthedocs.yaml'));
    const error = await failure(loadBuildConfig(dir));
    expect(error.message).toBe('.readthedocs.yaml is a hard link (the file has 2 names): Lectern reads only regular files inside the repository.');
    expect(error.file).toBe('.readthedocs.yaml');
    // Through a link that stays inside, the message names both (the secret has 3 names by now).
    const linked = await checkout({ 'docs/conf.py': '' });
    await mkdir(path.join(linked, 'ci'));
    await link(path.join(outside, 'secret.yaml'), path.join(linked, 'ci/rtd.yaml'));
    await symlink('ci/rtd.yaml', path.join(linked, '.readthedocs.yaml'));
    await expect(loadBuildConfig(linked)).rejects.toThrow(
      '.readthedocs.yaml (a link to ci/rtd.yaml) cannot be read: ci/rtd.yaml is a hard link (the file has 3 names): Lectern reads only regular files inside the repository.',
    );
  });

  it('refuses a fifo or a socket in place of the file, without waiting on it', async () => {
    const dir = await checkout({ 'docs/conf.py': '' });
    execFileSync('mkfifo', [path.join(dir, '.readthedocs.yaml')]);
    await expect(loadBuildConfig(dir)).rejects.toThrow('.readthedocs.yaml is not a file.');
    const other = await checkout({ 'docs/conf.py': '' });
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(path.join(other, '.readthedocs.yaml'), resolve));
    try {
      await expect(loadBuildConfig(other)).rejects.toThrow('.readthedocs.yaml is not a file.');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('works from a checkout path that is itself a symbolic link', async () => {
    const dir = await checkout({ '.readthedocs.yaml': 'version: 2\n', 'docs/conf.py': '' });
    const link = path.join(await checkout(), 'link');
    await symlink(dir, link);
    expect((await loadBuildConfig(link)).config).toEqual(sphinxDefaults());
    expect(await realpath(link)).toBe(await realpath(dir));
  });
});

describe('reading the YAML', () => {
  it('fills in every default for a file holding only the version', async () => {
    expect(await load({ '.readthedocs.yaml': 'version: 2\n', 'docs/conf.py': '' })).toEqual({
      config: sphinxDefaults(),
      file: '.readthedocs.yaml',
      // The file as read, which the build's log shows as `cat` of it.
      text: 'version: 2\n',
    });
  });

  it('takes version "2" as a string', async () => {
    expect(await config('version: "2"\n')).toEqual(sphinxDefaults());
  });

  it.each([
    ['', '.readthedocs.yaml is empty; it must be a mapping that starts with "version: 2".'],
    ['# only a comment\n', '.readthedocs.yaml is empty; it must be a mapping that starts with "version: 2".'],
    ['- version: 2\n', '.readthedocs.yaml must be a mapping of keys to values (starting with "version: 2"), not a list.'],
    ['just text\n', '.readthedocs.yaml must be a mapping of keys to values (starting with "version: 2"), not "just text".'],
    ['formats: []\n', '.readthedocs.yaml: version: missing; Lectern reads version 2 of the file, so start it with "version: 2".'],
    ['version: 1\n', '.readthedocs.yaml: version: must be 2, not 1; Lectern reads version 2 of the file only.'],
    ['version: 2.5\n', '.readthedocs.yaml: version: must be 2, not 2.5; Lectern reads version 2 of the file only.'],
    ['version: "3"\n', '.readthedocs.yaml: version: must be 2, not "3"; Lectern reads version 2 of the file only.'],
    [
      'version: 2\nformats: [pdf\n',
      '.readthedocs.yaml is not valid YAML: Flow sequence in block collection must be sufficiently indented and end with a ] at line 3, column 1.',
    ],
    ['version: 2\nversion: 2\n', '.readthedocs.yaml is not valid YAML: Map keys must be unique at line 2, column 1.'],
    ['version: 2\n---\nversion: 2\n', '.readthedocs.yaml holds more than one YAML document (a "---" line); keep only one.'],
  ])('%j: %s', async (yaml, message) => {
    const error = await failure(config(yaml));
    expect(error.message).toBe(message);
    expect(error.file).toBe('.readthedocs.yaml');
  });

  it('refuses a file over 1 MB', async () => {
    const big = `version: 2\n${'#'.repeat(1024 * 1024)}\n`;
    expect(await configError(big)).toBe(`.readthedocs.yaml is ${big.length} bytes; a build configuration may be at most 1 MB.`);
  });

  it('refuses an alias bomb', async () => {
    const lines = ['version: 2', 'x:', '  a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]'];
    for (let i = 1; i < 9; i++) {
      const name = String.fromCharCode(97 + i);
      const prev = `*${String.fromCharCode(96 + i)}`;
      lines.push(`  ${name}: &${name} [${Array(9).fill(prev).join(', ')}]`);
    }
    expect(await configError(`${lines.join('\n')}\n`)).toBe(
      '.readthedocs.yaml uses YAML anchors and aliases too heavily to be read (Excessive alias count indicates a resource exhaustion attack).',
    );
  });

  it("takes modest anchors and merge keys, and yes/no booleans, as Read the Docs' PyYAML does", async () => {
    const yaml = [
      'version: 2',
      'build:',
      '  jobs:',
      '    pre_build: &setup [make setup]',
      '    post_build: *setup',
      'sphinx: &base',
      '  fail_on_warning: yes',
      'submodules:',
      '  recursive: on',
      '  include: all',
    ].join('\n');
    const c = await config(yaml);
    expect(c.build.jobs.pre_build).toEqual(['make setup']);
    expect(c.build.jobs.post_build).toEqual(['make setup']);
    expect(c.sphinx?.fail_on_warning).toBe(true);
    expect(c.submodules).toEqual({ include: 'all', exclude: [], recursive: true });
  });

  it('reports a __proto__ key as unknown rather than touching any prototype', async () => {
    const error = await failure(config('version: 2\n__proto__: {polluted: true}\nsphinx:\n  constructor: 1\n'));
    expect(error.problems).toEqual([
      '__proto__: unknown key (the file takes version, formats, python, conda, build, sphinx, mkdocs, submodules, search)',
      'sphinx.constructor: unknown key (sphinx takes builder, configuration, fail_on_warning)',
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('treats a key left empty (null) as not given', async () => {
    expect(await config('version: 2\nformats:\npython:\nbuild:\nsphinx:\nmkdocs:\nsubmodules:\nsearch:\nconda:\n')).toEqual(sphinxDefaults());
  });
});

describe('unknown keys and types', () => {
  it('names every unknown key, with the keys its mapping takes', async () => {
    const error = await failure(config('version: 2\nformat: [pdf]\nsphinx:\n  buildr: html\nbuild:\n  image: latest\npython:\n  version: "3.8"\n'));
    expect(error.problems).toEqual([
      'format: unknown key (the file takes version, formats, python, conda, build, sphinx, mkdocs, submodules, search)',
      'python.version: unknown key (it is no longer read; set build.tools.python instead)',
      'build.image: unknown key (it is no longer read; use build.os)',
      'sphinx.buildr: unknown key (sphinx takes builder, configuration, fail_on_warning)',
    ]);
    expect(error.message).toBe(`.readthedocs.yaml: ${error.problems.join('; ')}`);
    expect(error.file).toBe('.readthedocs.yaml');
  });

  it.each([
    ['formats: pdf', 'formats: must be a list, not "pdf"'],
    ['formats: [pdf, html]', 'formats[1]: must be one of htmlzip, pdf, epub (or formats: all), not "html"'],
    ['python: [x]', 'python: must be a mapping, not a list'],
    ['python:\n  install: {requirements: r.txt}', 'python.install: must be a list, not a mapping'],
    ['build: ubuntu', 'build: must be a mapping, not "ubuntu"'],
    ['build:\n  os: 22', 'build.os: must be a string, not 22'],
    ['build:\n  os: "ubuntu 22.04; rm -rf /"', 'build.os: "ubuntu 22.04; rm -rf /" is not an operating system name'],
    ['build:\n  tools: [python]', 'build.tools: must be a mapping, not a list'],
    ['build:\n  tools:\n    java: "17"', 'build.tools.java: unknown tool (build.tools takes python, nodejs, ruby, rust, golang)'],
    ['build:\n  tools:\n    python: [3]', 'build.tools.python: must be a string, not a list'],
    ['build:\n  tools:\n    python: "3 && evil"', 'build.tools.python: "3 && evil" is not a version'],
    ['build:\n  commands: make html', 'build.commands: must be a list, not "make html"'],
    ['build:\n  commands: [make, {x: 1}]', 'build.commands[1]: must be a string, not a mapping'],
    ['build:\n  jobs: [x]', 'build.jobs: must be a mapping, not a list'],
    [
      'build:\n  jobs:\n    post_biuld: [x]',
      'build.jobs.post_biuld: unknown job (build.jobs takes pre_checkout, post_checkout, pre_system_dependencies, post_system_dependencies, pre_create_environment, post_create_environment, pre_install, post_install, pre_build, post_build, create_environment, install, build)',
    ],
    ['build:\n  jobs:\n    pre_build: echo hi', 'build.jobs.pre_build: must be a list, not "echo hi"'],
    ['build:\n  jobs:\n    build:\n      latex: [x]', 'build.jobs.build.latex: unknown key (build.jobs.build takes html, pdf, epub, htmlzip)'],
    ['build:\n  apt_packages: graphviz', 'build.apt_packages: must be a list, not "graphviz"'],
    ['sphinx: true', 'sphinx: must be a mapping, not true'],
    ['sphinx:\n  fail_on_warning: "sometimes"', 'sphinx.fail_on_warning: must be true or false, not "sometimes"'],
    ['sphinx:\n  fail_on_warning: 2', 'sphinx.fail_on_warning: must be true or false, not 2'],
    ['submodules:\n  include: some', 'submodules.include: must be a list, not "some"'],
    ['submodules:\n  recursive: deep', 'submodules.recursive: must be true or false, not "deep"'],
    ['search: []', 'search: must be a mapping, not a list'],
    ['search:\n  ranking:\n    api/*: 11', 'search.ranking.api/*: must be a whole number from -10 to 10, not 11'],
    ['search:\n  ranking:\n    api/*: 1.5', 'search.ranking.api/*: must be a whole number from -10 to 10, not 1.5'],
    ['search:\n  ranking:\n    ../*: 1', 'search.ranking.../*: is not a pattern of pages inside the documentation'],
    ['search:\n  ignore: [404.html, ../x]', 'search.ignore[1]: "../x" is not a pattern of pages inside the documentation'],
    ['conda: environment.yml', 'conda: must be a mapping, not "environment.yml"'],
    ['conda: {}', 'conda.environment: missing; set it to the path of the environment file'],
  ])('%j: %s', async (yaml, problem) => {
    const error = await failure(config(`version: 2\n${yaml}\n`));
    expect(error.problems).toEqual([problem]);
  });

  it('lists every problem of the file, not only the first', async () => {
    const error = await failure(config('version: 2\nconda:\n  file: environment.yml\nformats: [html]\n'));
    expect(error.problems).toEqual([
      'formats[0]: must be one of htmlzip, pdf, epub (or formats: all), not "html"',
      'conda.file: unknown key (conda takes environment)',
      'conda.environment: missing; set it to the path of the environment file',
    ]);
    expect(error.message).toBe(`.readthedocs.yaml: ${error.problems.join('; ')}`);
  });
});

describe('formats', () => {
  it.each([
    ['[pdf]', ['pdf']],
    ['[epub, htmlzip]', ['epub', 'htmlzip']],
    ['[pdf, pdf, epub]', ['pdf', 'epub']],
    ['[]', []],
    ['all', ['htmlzip', 'pdf', 'epub']],
  ])('formats: %s -> %j', async (yaml, formats) => {
    expect(await config(`version: 2\nformats: ${yaml}\n`)).toEqual({ ...sphinxDefaults(), formats });
  });
});

describe('python.install', () => {
  it('normalizes requirements files and package paths, method pip by default', async () => {
    const c = await config(
      [
        'version: 2',
        'python:',
        '  install:',
        '    - requirements: ./docs/requirements.txt',
        '    - path: .',
        '    - path: ./pkg/',
        '      method: pip',
        '      extra_requirements: [docs, test-extra]',
      ].join('\n'),
    );
    expect(c).toEqual({
      ...sphinxDefaults(),
      python: {
        install: [
          { requirements: 'docs/requirements.txt' },
          { path: '.', method: 'pip', extra_requirements: [] },
          { path: 'pkg', method: 'pip', extra_requirements: ['docs', 'test-extra'] },
        ],
        use_system_site_packages: true,
      },
    });
  });

  it('takes a uv entry as Read the Docs keeps it: every key, null where not given', async () => {
    const sync = await config('version: 2\npython:\n  install:\n    - method: uv\n      command: sync\n      groups: [docs]\n      extras: all\n');
    expect(sync.python.install).toEqual([{ method: 'uv', command: 'sync', path: null, requirements: null, groups: ['docs'], extras: 'all' }]);
    const pip = await config('version: 2\npython:\n  install:\n    - method: uv\n      command: pip\n      path: ./pkg/\n      extras: [docs]\n');
    expect(pip.python.install).toEqual([{ method: 'uv', command: 'pip', path: 'pkg', requirements: null, groups: null, extras: ['docs'] }]);
    const req = await config('version: 2\npython:\n  install:\n    - {method: uv, command: pip, requirements: docs/requirements.txt}\n');
    expect(req.python.install).toEqual([{ method: 'uv', command: 'pip', path: null, requirements: 'docs/requirements.txt', groups: null, extras: null }]);
  });

  it('refuses a uv entry beside another one, as Read the Docs does', async () => {
    const error = await failure(config('version: 2\npython:\n  install:\n    - {method: uv, command: sync}\n    - requirements: r.txt\n'));
    expect(error.problems).toEqual(['python.install: a uv entry (method: uv) must be the only entry; list the rest in its project or requirements file']);
  });

  it('does not require the files to exist yet (a job may make them)', async () => {
    const c = await config('version: 2\npython:\n  install:\n    - requirements: generated/req.txt\n');
    expect(c.python.install).toEqual([{ requirements: 'generated/req.txt' }]);
  });

  it.each([
    ['- {}', 'python.install[0]: needs requirements (a requirements file) or path (a package to pip install)'],
    ['- null', 'python.install[0]: must be a mapping with requirements or path'],
    ['- docs/requirements.txt', 'python.install[0]: must be a mapping, not "docs/requirements.txt"'],
    ['- {requirements: r.txt, path: .}', 'python.install[0]: has both requirements and path; give each its own entry'],
    ['- {requirements: r.txt, upgrade: true}', 'python.install[0].upgrade: unknown key (a requirements entry takes only requirements)'],
    ['- {path: ., extras: [docs]}', 'python.install[0].extras: unknown key (a path entry takes path, method, extra_requirements)'],
    ['- {path: ., method: setuptools}', 'python.install[0].method: must be pip (or uv, with command), not "setuptools"'],
    ['- {path: ., method: uv}', 'python.install[0].command: missing; set it to sync or pip'],
    ['- {method: uv, command: install}', 'python.install[0].command: must be sync or pip, not "install"'],
    [
      '- {method: uv, command: sync, requirements: r.txt}',
      'python.install[0].requirements: is not taken by uv sync (it installs the project at path); use command: pip for a requirements file',
    ],
    [
      '- {method: uv, command: pip, path: ., groups: [docs]}',
      'python.install[0].groups: is taken by uv sync only (uv pip installs a requirements file or a path)',
    ],
    ['- {method: uv, command: pip}', 'python.install[0]: needs requirements (a requirements file) or path (a package) for uv pip'],
    ['- {method: uv, command: pip, path: ., requirements: r.txt}', 'python.install[0]: has both requirements and path; uv pip installs one of them'],
    ['- {method: uv, command: sync, groups: []}', 'python.install[0].groups: must name at least one group (or be "all"), or be left out'],
    ['- {method: uv, command: sync, extras: docs}', 'python.install[0].extras: must be a list of extra names or "all", not "docs"'],
    ['- {method: uv, command: sync, groups: ["--index-url=http://x"]}', 'python.install[0].groups[0]: "--index-url=http://x" is not a valid group name'],
    [
      '- {method: uv, command: sync, frozen: true}',
      'python.install[0].frozen: unknown key (a uv entry takes method, command, path, requirements, groups, extras)',
    ],
    ['- {method: uv, command: sync, path: ../elsewhere}', 'python.install[0].path: "../elsewhere" points outside the repository; give a path inside it'],
    ['- {path: ., extra_requirements: docs}', 'python.install[0].extra_requirements: must be a list, not "docs"'],
    ['- {path: ., extra_requirements: ["docs] @ https://x"]}', 'python.install[0].extra_requirements[0]: "docs] @ https://x" is not a valid extra name'],
    ['- {requirements: 3}', 'python.install[0].requirements: must be a string, not 3'],
  ])('%s: %s', async (entry, problem) => {
    const error = await failure(config(`version: 2\npython:\n  install:\n    ${entry}\n`));
    expect(error.problems).toEqual([problem]);
  });
});

describe('sphinx', () => {
  it.each([
    ['html', 'sphinx'],
    ['dirhtml', 'sphinx_htmldir'],
    ['htmldir', 'sphinx_htmldir'],
    ['singlehtml', 'sphinx_singlehtml'],
  ])('builder %s is %s, and so is the doctype', async (builder, mapped) => {
    expect(await config(`version: 2\nsphinx:\n  builder: ${builder}\n`)).toEqual({
      ...sphinxDefaults(),
      doctype: mapped,
      sphinx: { builder: mapped, configuration: 'docs/conf.py', fail_on_warning: false },
    });
  });

  it.each(['latex', 'toString', '1'])('refuses builder %s', async (builder) => {
    const error = await failure(config(`version: 2\nsphinx:\n  builder: ${builder}\n`));
    expect(error.problems).toEqual([`sphinx.builder: must be one of html, dirhtml, singlehtml, not ${builder === '1' ? '1' : `"${builder}"`}`]);
  });

  it('takes the configuration as given, normalized, and fail_on_warning', async () => {
    const c = await config('version: 2\nsphinx:\n  configuration: ./source/../src/conf.py\n  fail_on_warning: true\n', {
      'docs/conf.py': '',
      'src/conf.py': '',
    });
    expect(c.sphinx).toEqual({ builder: 'sphinx', configuration: 'src/conf.py', fail_on_warning: true });
    expect(c.doctype).toBe('sphinx');
  });

  it.each([
    [1, true],
    [0, false],
    ['false', false],
  ])('fail_on_warning: %s is %s', async (value, expected) => {
    expect((await config(`version: 2\nsphinx:\n  fail_on_warning: ${value}\n`)).sphinx?.fail_on_warning).toBe(expected);
  });

  it('fills in the conf.py found when the configuration is not given', async () => {
    expect((await config('version: 2\nsphinx:\n  builder: dirhtml\n', { 'doc/conf.py': '' })).sphinx?.configuration).toBe('doc/conf.py');
  });

  it.each([
    ['sphinx:\n  configuration: docs/conf.py', {}, 'sphinx.configuration: docs/conf.py does not exist in the repository'],
    ['sphinx:\n  configuration: docs', { 'docs/x': '' }, 'sphinx.configuration: docs is not a file'],
    ['sphinx:\n  configuration: docs/config.py', { 'docs/config.py': '' }, 'sphinx.configuration: must name a conf.py file, not docs/config.py'],
    ['sphinx:\n  configuration: ../conf.py', {}, 'sphinx.configuration: "../conf.py" points outside the repository; give a path inside it'],
    ['sphinx:\n  configuration: /srv/conf.py', {}, 'sphinx.configuration: "/srv/conf.py" is an absolute path; give a path relative to the repository root'],
    ['sphinx:\n  configuration: ""', {}, 'sphinx.configuration: "" is empty; give a path inside the repository'],
    ['sphinx:\n  configuration: [conf.py]', {}, 'sphinx.configuration: must be a string, not a list'],
  ])('%j refused: %s', async (yaml, files, problem) => {
    const error = await failure(config(`version: 2\n${yaml}\n`, files));
    expect(error.problems).toEqual([problem]);
  });

  it('says what to do when sphinx is named but there is no conf.py', async () => {
    expect(await configError('version: 2\nsphinx:\n  fail_on_warning: true\n', { 'mkdocs.yml': '' })).toBe(
      '.readthedocs.yaml: sphinx.configuration: not set, and the repository has no conf.py; set it to the path of conf.py.',
    );
  });
});

describe('mkdocs', () => {
  it('builds with MkDocs: sphinx is null, doctype mkdocs', async () => {
    const c = await config('version: 2\nmkdocs:\n  configuration: ./site/mkdocs.yml\n  fail_on_warning: true\n', {
      'site/mkdocs.yml': '',
      'docs/conf.py': '',
    });
    expect(c).toEqual({
      ...sphinxDefaults(),
      doctype: 'mkdocs',
      sphinx: null,
      mkdocs: { configuration: 'site/mkdocs.yml', fail_on_warning: true },
    });
  });

  it('fills in the mkdocs.yml found when the configuration is not given', async () => {
    const c = await config('version: 2\nmkdocs: {}\n', { 'docs/mkdocs.yml': '', 'docs/conf.py': '' });
    expect(c.mkdocs).toEqual({ configuration: 'docs/mkdocs.yml', fail_on_warning: false });
    expect(c.doctype).toBe('mkdocs');
  });

  it('says what to do when mkdocs is named but there is no mkdocs.yml', async () => {
    expect(await configError('version: 2\nmkdocs:\n  fail_on_warning: false\n')).toBe(
      '.readthedocs.yaml: mkdocs.configuration: not set, and there is no mkdocs.yml at the root or in docs/; set it to the path of mkdocs.yml.',
    );
  });

  it('refuses a configuration that does not exist', async () => {
    const error = await failure(config('version: 2\nmkdocs:\n  configuration: mkdocs.yml\n'));
    expect(error.problems).toEqual(['mkdocs.configuration: mkdocs.yml does not exist in the repository']);
  });

  it('refuses sphinx and mkdocs together', async () => {
    const error = await failure(config('version: 2\nsphinx: {}\nmkdocs: {}\n', { 'docs/conf.py': '', 'mkdocs.yml': '' }));
    expect(error.problems).toEqual(['sphinx: sphinx and mkdocs cannot both be configured; keep the one that builds these docs']);
  });

  it('is chosen for a file that names neither when the repository has only an mkdocs.yml', async () => {
    const c = await config('version: 2\nformats: [pdf]\n', { 'mkdocs.yml': '' });
    expect(c).toEqual({
      ...sphinxDefaults(),
      formats: ['pdf'],
      doctype: 'mkdocs',
      sphinx: null,
      mkdocs: { configuration: 'mkdocs.yml', fail_on_warning: false },
    });
  });

  it('a file that names neither, in a repository with neither, is an error saying what to set', async () => {
    expect(await configError('version: 2\n', { 'README.md': '' })).toBe(
      '.readthedocs.yaml: names neither sphinx nor mkdocs, and the repository has no Sphinx conf.py and no MkDocs mkdocs.yml ' +
        '(at the root or in docs/); set sphinx.configuration or mkdocs.configuration, or use build.commands.',
    );
  });
});

describe('build', () => {
  it('records os and tools as written, a number version as its text', async () => {
    const c = await config(
      ['version: 2', 'build:', '  os: ubuntu-24.04', '  tools:', '    python: 3.10', '    nodejs: 20', '    rust: latest', '    golang: "1.22"'].join('\n'),
    );
    expect(c.build).toEqual({
      os: 'ubuntu-24.04',
      tools: {
        python: { version: '3.10', full_version: '3.10' },
        nodejs: { version: '20', full_version: '20' },
        rust: { version: 'latest', full_version: 'latest' },
        golang: { version: '1.22', full_version: '1.22' },
      },
      jobs: JOBS,
      commands: [],
      apt_packages: [],
    });
  });

  it('build.commands replace the steps: doctype generic, no conf.py needed', async () => {
    const c = await config(
      'version: 2\nbuild:\n  os: ubuntu-22.04\n  commands:\n    - mkdir -p $READTHEDOCS_OUTPUT/html\n    - cp -r site/* $READTHEDOCS_OUTPUT/html\n',
      {},
    );
    expect(c).toEqual({
      ...sphinxDefaults(null),
      build: {
        os: 'ubuntu-22.04',
        tools: {},
        jobs: JOBS,
        commands: ['mkdir -p $READTHEDOCS_OUTPUT/html', 'cp -r site/* $READTHEDOCS_OUTPUT/html'],
        apt_packages: [],
      },
      doctype: 'generic',
    });
  });

  it('build.commands with mkdocs named stay generic', async () => {
    const c = await config('version: 2\nbuild:\n  commands: [make]\nmkdocs:\n  configuration: mkdocs.yml\n', { 'mkdocs.yml': '' });
    expect(c.doctype).toBe('generic');
    expect(c.sphinx).toBeNull();
    expect(c.mkdocs).toEqual({ configuration: 'mkdocs.yml', fail_on_warning: false });
  });

  it('refuses build.commands with build.jobs', async () => {
    const error = await failure(config('version: 2\nbuild:\n  commands: [make]\n  jobs:\n    pre_build: [x]\n'));
    expect(error.problems).toEqual(['build: build.commands and build.jobs cannot be used together; build.commands replaces every step']);
  });

  it('records build.jobs with every job present', async () => {
    const c = await config(
      [
        'version: 2',
        'formats: [pdf]',
        'build:',
        '  jobs:',
        '    post_checkout: [git fetch --unshallow]',
        '    pre_build: [python gen.py, echo done]',
        '    build:',
        '      pdf: [make pdf]',
      ].join('\n'),
    );
    expect(c.build.jobs).toEqual({
      ...JOBS,
      post_checkout: ['git fetch --unshallow'],
      pre_build: ['python gen.py', 'echo done'],
      build: { html: null, pdf: ['make pdf'], epub: null, htmlzip: null },
    });
    expect(c.doctype).toBe('generic'); // a build job overridden, and neither sphinx nor mkdocs named
  });

  it.each([
    ['    install: [pip install .]', 'generic'],
    ['    create_environment: []', 'generic'],
    ['    build:\n      html: [make html]', 'generic'],
    ['    pre_install: [pip install -U pip]', 'sphinx'],
  ])('doctype with jobs %j and no sphinx key is %s', async (jobs, doctype) => {
    expect((await config(`version: 2\nbuild:\n  jobs:\n${jobs}\n`)).doctype).toBe(doctype);
  });

  it('a job overridden with sphinx named keeps the sphinx doctype', async () => {
    expect((await config('version: 2\nbuild:\n  jobs:\n    install: [x]\nsphinx:\n  builder: singlehtml\n')).doctype).toBe('sphinx_singlehtml');
  });

  it('refuses a build job for a format that is not built', async () => {
    const error = await failure(config('version: 2\nbuild:\n  jobs:\n    build:\n      epub: [make epub]\n'));
    expect(error.problems).toEqual(['build.jobs.build.epub: builds epub, which is not in formats; add it to formats or remove this job']);
  });

  it('validates and records apt packages, trimmed', async () => {
    const c = await config('version: 2\nbuild:\n  apt_packages: [graphviz, " libxml2-dev ", g++, libfoo1.2]\n');
    expect(c.build.apt_packages).toEqual(['graphviz', 'libxml2-dev', 'g++', 'libfoo1.2']);
  });

  it.each([
    ['-o Dpkg::Options=x', 'build.apt_packages[0]: "-o Dpkg::Options=x" must not start with "-": name a package'],
    ['/tmp/evil.deb', 'build.apt_packages[0]: "/tmp/evil.deb" must not start with "/": name a package'],
    ['./evil.deb', 'build.apt_packages[0]: "./evil.deb" must not start with ".": name a package'],
    ['foo bar', 'build.apt_packages[0]: "foo bar" is not a valid package name'],
    ['foo;rm', 'build.apt_packages[0]: "foo;rm" is not a valid package name'],
  ])('refuses apt package %j', async (pkg, problem) => {
    const error = await failure(config(`version: 2\nbuild:\n  apt_packages: [${JSON.stringify(pkg)}]\n`));
    expect(error.problems).toEqual([problem]);
  });
});

describe('submodules', () => {
  it.each([
    ['include: [a, b]', { include: ['a', 'b'], exclude: [], recursive: false }],
    ['include: all\n  recursive: true', { include: 'all', exclude: [], recursive: true }],
    ['exclude: [c]', { include: [], exclude: ['c'], recursive: false }],
    ['exclude: all', { include: [], exclude: 'all', recursive: false }],
    ['include: []\n  exclude: []', { include: [], exclude: [], recursive: false }],
    ['include: [a]\n  exclude: []', { include: ['a'], exclude: [], recursive: false }],
  ])('%s', async (yaml, submodules) => {
    expect(await config(`version: 2\nsubmodules:\n  ${yaml}\n`)).toEqual({ ...sphinxDefaults(), submodules });
  });

  it.each(['include: [a]\n  exclude: [b]', 'include: all\n  exclude: all'])('refuses %j', async (yaml) => {
    const error = await failure(config(`version: 2\nsubmodules:\n  ${yaml}\n`));
    expect(error.problems).toEqual(['submodules: include and exclude cannot be used together; list only the ones to include']);
  });
});

describe('search and conda', () => {
  it('records search ranking and ignore, patterns without a leading slash', async () => {
    const c = await config('version: 2\nsearch:\n  ranking:\n    api/v1/*: -1\n    /guides/*: 5\n  ignore: [/404.html, changelog/*]\n');
    expect(c.search).toEqual({ ranking: { 'api/v1/*': -1, 'guides/*': 5 }, ignore: ['404.html', 'changelog/*'] });
  });

  it('an empty ignore list ignores nothing', async () => {
    expect((await config('version: 2\nsearch:\n  ignore: []\n')).search).toEqual({ ranking: {}, ignore: [] });
  });

  it('records the conda environment, normalized', async () => {
    expect((await config('version: 2\nconda:\n  environment: ./docs/environment.yml\n')).conda).toEqual({ environment: 'docs/environment.yml' });
  });
});

describe('paths from the repository stay inside the checkout', () => {
  it.each([
    ['../outside.txt', '"../outside.txt" points outside the repository; give a path inside it'],
    ['docs/../../outside.txt', '"docs/../../outside.txt" points outside the repository; give a path inside it'],
    ['/etc/passwd', '"/etc/passwd" is an absolute path; give a path relative to the repository root'],
    ['C:\\req.txt', '"C:\\\\req.txt" is an absolute path; give a path relative to the repository root'],
  ])('refuses %j', async (p, problem) => {
    const error = await failure(config(`version: 2\npython:\n  install:\n    - requirements: ${JSON.stringify(p)}\n`));
    expect(error.problems).toEqual([`python.install[0].requirements: ${problem}`]);
  });

  it('takes a path with .. that stays inside', async () => {
    const c = await config('version: 2\npython:\n  install:\n    - requirements: docs/../requirements.txt\n');
    expect(c.python.install).toEqual([{ requirements: 'requirements.txt' }]);
  });

  it('refuses a path through a symbolic link out of the checkout, even to a file that is not there', async () => {
    const outside = await checkout({ 'req.txt': 'secret' });
    const dir = await checkout({ 'docs/conf.py': '' });
    await symlink(path.join(outside, 'req.txt'), path.join(dir, 'req.txt'));
    await symlink(outside, path.join(dir, 'vendor'));
    await symlink('/nonexistent/lectern', path.join(dir, 'dangling'));
    const yaml = [
      'version: 2',
      'python:',
      '  install:',
      '    - requirements: req.txt',
      '    - requirements: vendor/other.txt',
      '    - path: dangling',
      'conda:',
      '  environment: vendor/env.yml',
    ].join('\n');
    await writeFile(path.join(dir, '.readthedocs.yaml'), yaml);
    const error = await failure(loadBuildConfig(dir));
    expect(error.problems).toEqual([
      'python.install[0].requirements: req.txt is a symbolic link that points outside the repository',
      'python.install[1].requirements: vendor/other.txt is a symbolic link that points outside the repository',
      // A link out of the checkout gets one answer, whether its target exists or not (no oracle).
      'python.install[2].path: dangling is a symbolic link that points outside the repository',
      'conda.environment: vendor/env.yml is a symbolic link that points outside the repository',
    ]);
  });

  it('refuses a sphinx configuration linked out of the checkout', async () => {
    const outside = await checkout({ 'conf.py': '' });
    const dir = await checkout({ '.readthedocs.yaml': 'version: 2\nsphinx:\n  configuration: docs/conf.py\n' });
    await symlink(outside, path.join(dir, 'docs'));
    const error = await failure(loadBuildConfig(dir));
    expect(error.problems).toEqual(['sphinx.configuration: docs/conf.py is a symbolic link that points outside the repository']);
  });

  it('takes paths through links that stay inside', async () => {
    const dir = await checkout({ 'real/requirements.txt': '', 'docs/conf.py': '' });
    await symlink('real', path.join(dir, 'alias'));
    await writeFile(path.join(dir, '.readthedocs.yaml'), 'version: 2\npython:\n  install:\n    - requirements: alias/requirements.txt\n');
    expect((await loadBuildConfig(dir)).config.python.install).toEqual([{ requirements: 'alias/requirements.txt' }]);
  });
});

describe('a full file', () => {
  it('normalizes every key at once', async () => {
    const yaml = `
version: 2
formats: [htmlzip, pdf]
build:
  os: ubuntu-22.04
  tools:
    python: "3.12"
  apt_packages: [graphviz]
  jobs:
    post_install: [pip list]
python:
  install:
    - requirements: docs/requirements.txt
    - path: .
      extra_requirements: [docs]
sphinx:
  configuration: docs/conf.py
  builder: dirhtml
  fail_on_warning: true
submodules:
  include: [themes/x]
  recursive: true
search:
  ranking:
    changelog.html: -5
`;
    expect(await load({ '.readthedocs.yaml': yaml, 'docs/conf.py': '', 'conf.py': '' })).toEqual({
      file: '.readthedocs.yaml',
      text: yaml,
      config: {
        version: '2',
        formats: ['htmlzip', 'pdf'],
        python: {
          install: [{ requirements: 'docs/requirements.txt' }, { path: '.', method: 'pip', extra_requirements: ['docs'] }],
          use_system_site_packages: true,
        },
        conda: null,
        build: {
          os: 'ubuntu-22.04',
          tools: { python: { version: '3.12', full_version: '3.12' } },
          jobs: { ...JOBS, post_install: ['pip list'] },
          commands: [],
          apt_packages: ['graphviz'],
        },
        doctype: 'sphinx_htmldir',
        sphinx: { builder: 'sphinx_htmldir', configuration: 'docs/conf.py', fail_on_warning: true },
        mkdocs: null,
        submodules: { include: ['themes/x'], exclude: [], recursive: true },
        search: { ranking: { 'changelog.html': -5 }, ignore: ['search.html', 'search/index.html', '404.html', '404/index.html'] },
      },
    });
  });

  it("keeps Read the Docs' key order", async () => {
    expect(Object.keys(await config('version: 2\n'))).toEqual([
      'version',
      'formats',
      'python',
      'conda',
      'build',
      'doctype',
      'sphinx',
      'mkdocs',
      'submodules',
      'search',
    ]);
  });
});
