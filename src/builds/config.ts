// Reads a checkout's build configuration (`.readthedocs.yaml` version 2) into the normalized
// `config` stored on the build, every default filled in, so the worker and the API see one shape.
// The file comes from an untrusted repository: every path it names must stay inside the checkout.
// Links are followed only while they stay inside it, by reading them (never by looking at what
// they point to), so no answer tells anything of the host's files (docs/design/sandbox.md).
// @see docs/design/sandbox.md, README "Security model" and "Build configuration"
import type { Dirent } from 'node:fs';
import { lstat, readdir, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import { type Document, isScalar, parseDocument } from 'yaml';
import { OutputDir, OutputRefused } from '../storage/output.ts';

export type OfflineFormat = 'htmlzip' | 'pdf' | 'epub';
export type SphinxBuilder = 'sphinx' | 'sphinx_htmldir' | 'sphinx_singlehtml';
export type Doctype = SphinxBuilder | 'mkdocs' | 'generic';

/**
 * A `python.install` entry uv installs, as Read the Docs keeps it: `uv sync` of the project at
 * `path` (the checkout's root when null) with its groups and extras, or `uv pip install` of a
 * requirements file or a local path. It is the only entry when present.
 */
export interface UvInstall {
  method: 'uv';
  command: 'sync' | 'pip';
  path: string | null;
  requirements: string | null;
  groups: string[] | 'all' | null;
  extras: string[] | 'all' | null;
}

export type PythonInstall = { requirements: string } | { path: string; method: 'pip'; extra_requirements: string[] } | UvInstall;

/** Whether a `python.install` entry is uv's. */
export const isUvInstall = (entry: PythonInstall): entry is UvInstall => 'method' in entry && entry.method === 'uv';

/** The uv entry of a configuration's `python.install`, if it has one (then it is the only entry). */
export function uvInstall(config: Pick<BuildConfig, 'python'>): UvInstall | null {
  const first = config.python.install[0];
  return first && isUvInstall(first) ? first : null;
}

export interface BuildTool {
  /** As written in the file (`"3.12"`, `"latest"`). */
  version: string;
  /** Lectern installs no tools (it uses the machine's), so this is the version as written. */
  full_version: string;
}

/** Every job is always present: lists default to `[]`, the steps they replace to null. */
export interface BuildJobs {
  pre_checkout: string[];
  post_checkout: string[];
  pre_system_dependencies: string[];
  post_system_dependencies: string[];
  pre_create_environment: string[];
  create_environment: string[] | null;
  post_create_environment: string[];
  pre_install: string[];
  install: string[] | null;
  post_install: string[];
  pre_build: string[];
  build: { html: string[] | null; pdf: string[] | null; epub: string[] | null; htmlzip: string[] | null };
  post_build: string[];
}

export interface SphinxConfig {
  builder: SphinxBuilder;
  /** Path of conf.py relative to the checkout; null only for a `generic` build that names none. */
  configuration: string | null;
  fail_on_warning: boolean;
}

export interface MkdocsConfig {
  /** Path of mkdocs.yml relative to the checkout; null only for a `generic` build. */
  configuration: string | null;
  fail_on_warning: boolean;
}

/** The build's `config`: docs/design/read-the-docs.md §8.2, keys in Read the Docs' order. */
export interface BuildConfig {
  version: '2';
  formats: OfflineFormat[];
  /** `use_system_site_packages` is always true: the build's virtualenv sees the machine's packages. */
  python: { install: PythonInstall[]; use_system_site_packages: true };
  conda: { environment: string } | null;
  build: {
    os: string | null;
    tools: Record<string, BuildTool>;
    jobs: BuildJobs;
    commands: string[];
    apt_packages: string[];
  };
  doctype: Doctype;
  sphinx: SphinxConfig | null;
  mkdocs: MkdocsConfig | null;
  submodules: { include: string[] | 'all'; exclude: string[] | 'all'; recursive: boolean };
  search: { ranking: Record<string, number>; ignore: string[] };
}

/** A configuration Lectern cannot use; the message names the file, the key and what to change. */
export class BuildConfigError extends Error {
  override name = 'BuildConfigError';
  /** The configuration file (relative to the checkout), or null when there was none. */
  readonly file: string | null;
  /** Each problem found, as `key: what is wrong` (the message lists them all). */
  readonly problems: readonly string[];

  constructor(message: string, file: string | null = null, problems: readonly string[] = [message]) {
    super(message);
    this.file = file;
    this.problems = problems;
  }
}

/** Looked for at the checkout root, in this order. */
export const CONFIG_FILE_NAMES = ['.readthedocs.yaml', '.readthedocs.yml', 'readthedocs.yaml'] as const;
const MAX_CONFIG_BYTES = 1024 * 1024;
/** Aliases resolved (weighted by their size) before the parse is refused as an alias bomb. */
const MAX_ALIAS_COUNT = 100;
/** Bounds on the conf.py search, so a huge repository cannot stall the build. */
const SEARCH_MAX_DEPTH = 8;
const SEARCH_MAX_DIRECTORIES = 10_000;
const SEARCH_SKIP = new Set(['node_modules', '_build']);

const FORMATS: readonly OfflineFormat[] = ['htmlzip', 'pdf', 'epub'];
const SPHINX_BUILDERS: Record<string, SphinxBuilder> = {
  html: 'sphinx',
  dirhtml: 'sphinx_htmldir',
  htmldir: 'sphinx_htmldir',
  singlehtml: 'sphinx_singlehtml',
};
const TOOLS = ['python', 'nodejs', 'ruby', 'rust', 'golang'];
const LIST_JOBS = [
  'pre_checkout',
  'post_checkout',
  'pre_system_dependencies',
  'post_system_dependencies',
  'pre_create_environment',
  'post_create_environment',
  'pre_install',
  'post_install',
  'pre_build',
  'post_build',
] as const;
const JOB_NAMES = [...LIST_JOBS, 'create_environment', 'install', 'build'];
const DEFAULT_SEARCH_IGNORE = ['search.html', 'search/index.html', '404.html', '404/index.html'];

/** Keys each mapping takes; anything else is an error naming the key. */
const KEYS = {
  '': ['version', 'formats', 'python', 'conda', 'build', 'sphinx', 'mkdocs', 'submodules', 'search'],
  python: ['install'],
  conda: ['environment'],
  build: ['os', 'tools', 'jobs', 'commands', 'apt_packages'],
  'build.jobs.build': ['html', 'pdf', 'epub', 'htmlzip'],
  sphinx: ['builder', 'configuration', 'fail_on_warning'],
  mkdocs: ['configuration', 'fail_on_warning'],
  submodules: ['include', 'exclude', 'recursive'],
  search: ['ranking', 'ignore'],
};
/** Keys Read the Docs once read (or reads, for features Lectern lacks): say what to do instead. */
const KEY_HINTS: Record<string, string> = {
  'python.version': 'it is no longer read; set build.tools.python instead',
  'python.system_packages': "the build environment always sees the machine's packages",
  'python.use_system_site_packages': "the build environment always sees the machine's packages",
  'build.image': 'it is no longer read; use build.os',
};
const YAML11_TRUE = /^(yes|Yes|YES|on|On|ON)$/;
const YAML11_FALSE = /^(no|No|NO|off|Off|OFF)$/;
const NAME = /^[A-Za-z0-9][A-Za-z0-9.+_-]*$/;
const APT_PACKAGE = /^[a-zA-Z0-9][a-zA-Z0-9.+-]*$/;
/** A Python extra (PEP 685), so `./path[extras]` stays one requirement for pip. */
const EXTRA = /^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$/;

type Mapping = Record<string, unknown>;

/**
 * Finds, reads and normalizes the build configuration of the checkout at `checkoutDir`.
 * `yamlPath` (the project's custom path, relative to the checkout) must exist when given.
 * Returns the config and the file it came from (relative to the checkout), or null without one.
 * @throws BuildConfigError for anything the repository's author can fix.
 */
export async function loadBuildConfig(
  checkoutDir: string,
  opts: { yamlPath?: string | null } = {},
): Promise<{ config: BuildConfig; file: string | null; text: string | null }> {
  const root = await realpath(checkoutDir);
  const file = await findConfigFile(root, opts.yamlPath || null);
  if (file === null) return { config: await normalize(root, null, { version: 2 }, null), file: null, text: null };
  const doc = await readConfigFile(root, file);
  return { config: await normalize(root, file, doc.raw, doc.doc), file, text: doc.text };
}

async function findConfigFile(root: string, yamlPath: string | null): Promise<string | null> {
  if (yamlPath !== null) {
    const rel = repoPath(yamlPath);
    if (!rel.ok) throw new BuildConfigError(`The project's configuration file path "${yamlPath}" ${rel.problem}.`);
    const where = await locate(root, rel.path);
    if (where.kind === 'missing') {
      throw new BuildConfigError(
        `The project's configuration file "${rel.path}" was not found in the repository; fix the path in the project's settings or add the file.`,
        rel.path,
      );
    }
    checkIsFile(where, rel.path, `The project's configuration file "${rel.path}"`);
    return rel.path;
  }
  for (const name of CONFIG_FILE_NAMES) {
    const where = await locate(root, name);
    if (where.kind === 'missing') continue;
    checkIsFile(where, name, name);
    return name;
  }
  return null;
}

/**
 * Reads `file` (relative to the checkout, as found by locate) the way Lectern reads anything a build
 * controls (src/storage/output.ts): the file it really is (through links that stay inside the
 * checkout) is opened from the checkout without following any link, and must be a regular file
 * with one name at that moment, so a link or fifo swapped in after locate() is refused.
 */
export async function readRepositoryFile(root: string, file: string, maxBytes: number): Promise<string> {
  const where = await locate(root, file);
  checkIsFile(where, file, file);
  if (where.kind !== 'found') throw new BuildConfigError(`${file} was removed while it was being read.`, file);
  const real = path.relative(root, where.real).split(path.sep).join('/');
  const checkout = await OutputDir.open(root, { label: '', reads: 'Lectern reads only regular files inside the repository' });
  try {
    const opened = await checkout.openFile(real);
    try {
      if (opened.size > maxBytes) {
        throw new BuildConfigError(`${file} is ${opened.size} bytes; a build configuration may be at most 1 MB.`, file);
      }
      return await opened.handle.readFile('utf8');
    } finally {
      await opened.handle.close();
    }
  } catch (e) {
    if (e instanceof OutputRefused) {
      throw new BuildConfigError(`${real === file ? '' : `${file} (a link to ${real}) cannot be read: `}${e.message}.`, file);
    }
    throw e;
  } finally {
    await checkout.close();
  }
}

function checkIsFile(where: Location, file: string, what: string): void {
  if (where.kind === 'outside') throw new BuildConfigError(`${what} is a symbolic link that points outside the repository.`, file);
  if (where.kind === 'broken') throw new BuildConfigError(`${what} is a symbolic link that points nowhere.`, file);
  if (where.kind === 'found' && !where.isFile) throw new BuildConfigError(`${what} is not a file.`, file);
}

async function readConfigFile(root: string, file: string): Promise<{ raw: Mapping; doc: Document; text: string }> {
  const text = await readRepositoryFile(root, file, MAX_CONFIG_BYTES);
  // YAML 1.2 (where `path: .` stays a string), with PyYAML's `<<` merges; see also bool().
  const doc = parseDocument(text, { merge: true, uniqueKeys: true, prettyErrors: true, logLevel: 'error' });
  if (doc.errors.length > 0) {
    const error = doc.errors[0];
    if (error.code === 'MULTIPLE_DOCS') {
      throw new BuildConfigError(`${file} holds more than one YAML document (a "---" line); keep only one.`, file);
    }
    throw new BuildConfigError(`${file} is not valid YAML: ${error.message.split('\n')[0].replace(/:$/, '')}.`, file);
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (e) {
    if (e instanceof ReferenceError) {
      throw new BuildConfigError(`${file} uses YAML anchors and aliases too heavily to be read (${e.message}).`, file);
    }
    throw e;
  }
  if (value === null || value === undefined) {
    throw new BuildConfigError(`${file} is empty; it must be a mapping that starts with "version: 2".`, file);
  }
  if (!isMapping(value)) {
    throw new BuildConfigError(`${file} must be a mapping of keys to values (starting with "version: 2"), not ${describe(value)}.`, file);
  }
  return { raw: value, doc, text };
}

/** Validates `raw` (the parsed file, or `{version: 2}` without one) into the normalized config. */
async function normalize(root: string, file: string | null, raw: Mapping, doc: Document | null): Promise<BuildConfig> {
  if (raw.version === undefined || raw.version === null) {
    throw new BuildConfigError(`${file}: version: missing; Lectern reads version 2 of the file, so start it with "version: 2".`, file);
  }
  if (raw.version !== 2 && raw.version !== '2') {
    throw new BuildConfigError(`${file}: version: must be 2, not ${describe(raw.version)}; Lectern reads version 2 of the file only.`, file);
  }
  const c = new Checker(root, doc);
  c.knownKeys(raw, '');
  const formats = c.formats(raw.formats);
  const python = await c.python(raw.python);
  const conda = await c.conda(raw.conda);
  const build = c.build(raw.build, formats);
  if (raw.sphinx != null && raw.mkdocs != null) {
    c.problem('sphinx', 'sphinx and mkdocs cannot both be configured; keep the one that builds these docs');
  }
  const mkdocs = await c.mkdocs(raw.mkdocs);
  const sphinx = mkdocs ? null : await c.sphinx(raw.sphinx);
  const submodules = c.submodules(raw.submodules);
  const search = c.search(raw.search);
  c.throwIfAny(file);

  const docs = await whichDocs(root, file, raw, build, sphinx, mkdocs);
  return {
    version: '2',
    formats,
    python,
    conda,
    build,
    doctype: docs.doctype,
    sphinx: docs.sphinx,
    mkdocs: docs.mkdocs,
    submodules,
    search,
  };
}

/**
 * Which documentation this is, and where its configuration lives (docs/design/read-the-docs.md
 * §8.2 `doctype`): generic for the project's own commands; else what the file names, its
 * configuration found where not set; else Sphinx where there is a conf.py, MkDocs where there is an mkdocs.yml.
 */
async function whichDocs(
  root: string,
  file: string | null,
  raw: Mapping,
  build: BuildConfig['build'],
  sphinxAsked: BuildConfig['sphinx'],
  mkdocsAsked: BuildConfig['mkdocs'],
): Promise<Pick<BuildConfig, 'doctype' | 'sphinx' | 'mkdocs'>> {
  let sphinx = sphinxAsked;
  let mkdocs = mkdocsAsked;
  const hasKey = raw.sphinx != null || raw.mkdocs != null;
  const jobs = build.jobs;
  const newJobsOverridden = [jobs.create_environment, jobs.install, ...Object.values(jobs.build)].some((j) => j !== null);
  let doctype: Doctype;
  if (build.commands.length > 0 || (newJobsOverridden && !hasKey)) {
    doctype = 'generic';
  } else if (!hasKey) {
    // No choice made: Sphinx if there is a conf.py, else MkDocs if there is an mkdocs.yml.
    const conf = await findSphinxConf(root);
    const yml = conf === null ? await findMkdocsConfig(root) : null;
    if (conf !== null) {
      sphinx = { builder: 'sphinx', configuration: conf, fail_on_warning: false };
    } else if (yml !== null) {
      mkdocs = { configuration: yml, fail_on_warning: false };
      sphinx = null;
    } else if (file === null) {
      throw new BuildConfigError(
        `No build configuration found: the repository has no ${CONFIG_FILE_NAMES.join(', ')} at its root, ` +
          'no Sphinx conf.py and no MkDocs mkdocs.yml (at the root or in docs/). ' +
          'Add a .readthedocs.yaml with "version: 2" that says how to build the docs.',
      );
    } else {
      throw new BuildConfigError(
        `${file}: names neither sphinx nor mkdocs, and the repository has no Sphinx conf.py and no MkDocs mkdocs.yml ` +
          '(at the root or in docs/); set sphinx.configuration or mkdocs.configuration, or use build.commands.',
        file,
      );
    }
    doctype = mkdocs ? 'mkdocs' : sphinx!.builder;
  } else if (mkdocs) {
    if (mkdocs.configuration === null) {
      mkdocs.configuration = await findMkdocsConfig(root);
      if (mkdocs.configuration === null) {
        throw new BuildConfigError(
          `${file}: mkdocs.configuration: not set, and there is no mkdocs.yml at the root or in docs/; set it to the path of mkdocs.yml.`,
          file,
        );
      }
    }
    doctype = 'mkdocs';
  } else {
    if (sphinx!.configuration === null) {
      sphinx!.configuration = await findSphinxConf(root);
      if (sphinx!.configuration === null) {
        throw new BuildConfigError(`${file}: sphinx.configuration: not set, and the repository has no conf.py; set it to the path of conf.py.`, file);
      }
    }
    doctype = sphinx!.builder;
  }

  return { doctype, sphinx, mkdocs };
}

/** Collects every problem of a file, so one message lists them all. */
class Checker {
  private readonly problems: string[] = [];

  private readonly root: string;
  private readonly doc: Document | null;
  constructor(root: string, doc: Document | null) {
    this.root = root;
    this.doc = doc;
  }

  problem(key: string, message: string): void {
    this.problems.push(`${key}: ${message}`);
  }

  throwIfAny(file: string | null): void {
    if (this.problems.length === 0) return;
    throw new BuildConfigError(`${file}: ${this.problems.join('; ')}`, file, this.problems);
  }

  /** The mapping at `key`, undefined when absent (null counts as absent) or not a mapping. */
  mapping(value: unknown, key: string): Mapping | undefined {
    if (value === undefined || value === null) return undefined;
    if (!isMapping(value)) {
      this.problem(key, `must be a mapping, not ${describe(value)}`);
      return undefined;
    }
    if (Object.hasOwn(KEYS, key)) this.knownKeys(value, key as keyof typeof KEYS);
    return value;
  }

  knownKeys(value: Mapping, key: keyof typeof KEYS): void {
    const allowed = KEYS[key];
    for (const name of Object.keys(value)) {
      if (allowed.includes(name)) continue;
      const full = key ? `${key}.${name}` : name;
      const hint = Object.hasOwn(KEY_HINTS, full) ? KEY_HINTS[full] : `${key || 'the file'} takes ${allowed.join(', ')}`;
      this.problem(full, `unknown key (${hint})`);
    }
  }

  string(value: unknown, key: string): string | undefined {
    if (typeof value === 'string') return value;
    this.problem(key, `must be a string, not ${describe(value)}`);
    return undefined;
  }

  /** Read the Docs also takes 0 and 1, and PyYAML (YAML 1.1) reads yes/no/on/off as booleans. */
  bool(value: unknown, key: string): boolean {
    if (value === undefined || value === null) return false;
    if (typeof value === 'boolean') return value;
    if (value === 0 || value === 1) return value === 1;
    if (typeof value === 'string' && YAML11_TRUE.test(value)) return true;
    if (typeof value === 'string' && YAML11_FALSE.test(value)) return false;
    this.problem(key, `must be true or false, not ${describe(value)}`);
    return false;
  }

  list(value: unknown, key: string): unknown[] {
    if (value === undefined || value === null) return [];
    if (Array.isArray(value)) return value;
    this.problem(key, `must be a list, not ${describe(value)}`);
    return [];
  }

  strings(value: unknown, key: string): string[] {
    return this.list(value, key).flatMap((item, i) => this.string(item, `${key}[${i}]`) ?? []);
  }

  /** A path inside the checkout, normalized (`./docs/conf.py` → `docs/conf.py`). */
  async path(value: unknown, key: string, opts: { mustBeFile?: boolean } = {}): Promise<string | null> {
    const s = this.string(value, key);
    if (s === undefined) return null;
    const rel = repoPath(s);
    if (!rel.ok) {
      this.problem(key, `${JSON.stringify(s)} ${rel.problem}`);
      return null;
    }
    const where = await locate(this.root, rel.path);
    if (where.kind === 'outside') this.problem(key, `${rel.path} is a symbolic link that points outside the repository`);
    else if (where.kind === 'broken') this.problem(key, `${rel.path} is a symbolic link that points nowhere`);
    else if (opts.mustBeFile && where.kind === 'missing') this.problem(key, `${rel.path} does not exist in the repository`);
    else if (opts.mustBeFile && where.kind === 'found' && !where.isFile) this.problem(key, `${rel.path} is not a file`);
    else return rel.path;
    return null;
  }

  formats(value: unknown): OfflineFormat[] {
    if (value === 'all') return [...FORMATS];
    const formats: OfflineFormat[] = [];
    this.list(value, 'formats').forEach((item, i) => {
      if (FORMATS.includes(item as OfflineFormat)) {
        if (!formats.includes(item as OfflineFormat)) formats.push(item as OfflineFormat);
      } else {
        this.problem(`formats[${i}]`, `must be one of ${FORMATS.join(', ')} (or formats: all), not ${describe(item)}`);
      }
    });
    return formats;
  }

  async python(value: unknown): Promise<BuildConfig['python']> {
    const python = this.mapping(value, 'python') ?? {};
    const install: PythonInstall[] = [];
    const entries = this.list(python.install, 'python.install');
    for (const [i, item] of entries.entries()) {
      const key = `python.install[${i}]`;
      const entry = this.mapping(item, key);
      if (!entry) {
        if (item === null || item === undefined) this.problem(key, 'must be a mapping with requirements or path');
        continue;
      }
      const entryInstall = entry.method === 'uv' ? await this.uvInstall(entry, key) : await this.pythonInstall(entry, key);
      if (entryInstall) install.push(entryInstall);
    }
    if (entries.length > 1 && entries.some((e) => isMapping(e) && e.method === 'uv'))
      this.problem('python.install', 'a uv entry (method: uv) must be the only entry; list the rest in its project or requirements file');
    return { install, use_system_site_packages: true };
  }

  /** A `method: uv` entry, checked as Read the Docs checks it. */
  private async uvInstall(entry: Mapping, key: string): Promise<UvInstall | null> {
    for (const name of Object.keys(entry)) {
      if (!['method', 'command', 'path', 'requirements', 'groups', 'extras'].includes(name)) {
        this.problem(`${key}.${name}`, 'unknown key (a uv entry takes method, command, path, requirements, groups, extras)');
      }
    }
    const command = entry.command;
    if (command !== 'sync' && command !== 'pip') {
      this.problem(`${key}.command`, command == null ? 'missing; set it to sync or pip' : `must be sync or pip, not ${describe(command)}`);
      return null;
    }
    const path = entry.path == null || entry.path === '' ? null : await this.path(entry.path, `${key}.path`);
    const install: UvInstall = { method: 'uv', command, path, requirements: null, groups: null, extras: null };
    if (command === 'sync') {
      if (entry.requirements != null)
        this.problem(`${key}.requirements`, 'is not taken by uv sync (it installs the project at path); use command: pip for a requirements file');
      install.groups = this.uvNames(entry.groups, `${key}.groups`, 'group');
    } else {
      if (entry.groups != null) this.problem(`${key}.groups`, 'is taken by uv sync only (uv pip installs a requirements file or a path)');
      if (entry.requirements != null && entry.path != null) this.problem(key, 'has both requirements and path; uv pip installs one of them');
      else if (entry.requirements == null && entry.path == null) this.problem(key, 'needs requirements (a requirements file) or path (a package) for uv pip');
      if (entry.requirements != null) install.requirements = await this.path(entry.requirements, `${key}.requirements`);
    }
    install.extras = this.uvNames(entry.extras, `${key}.extras`, 'extra');
    return install;
  }

  /** `groups` or `extras` of a uv entry: a non-empty list of names, or "all". */
  private uvNames(value: unknown, key: string, what: string): string[] | 'all' | null {
    if (value == null) return null;
    if (value === 'all') return 'all';
    if (!Array.isArray(value)) {
      this.problem(key, `must be a list of ${what} names or "all", not ${describe(value)}`);
      return null;
    }
    if (!value.length) this.problem(key, `must name at least one ${what} (or be "all"), or be left out`);
    const names = this.strings(value, key);
    names.forEach((name, i) => {
      if (!EXTRA.test(name)) this.problem(`${key}[${i}]`, `${JSON.stringify(name)} is not a valid ${what} name`);
    });
    return names;
  }

  private async pythonInstall(entry: Mapping, key: string): Promise<PythonInstall | null> {
    if (entry.requirements != null && entry.path != null) {
      this.problem(key, 'has both requirements and path; give each its own entry');
      return null;
    }
    if (entry.requirements != null) {
      for (const name of Object.keys(entry)) {
        if (name !== 'requirements') this.problem(`${key}.${name}`, 'unknown key (a requirements entry takes only requirements)');
      }
      const requirements = await this.path(entry.requirements, `${key}.requirements`);
      return requirements === null ? null : { requirements };
    }
    if (entry.path != null) {
      for (const name of Object.keys(entry)) {
        if (!['path', 'method', 'extra_requirements'].includes(name)) {
          this.problem(`${key}.${name}`, 'unknown key (a path entry takes path, method, extra_requirements)');
        }
      }
      const where = await this.path(entry.path, `${key}.path`);
      if (entry.method != null && entry.method !== 'pip') {
        this.problem(`${key}.method`, `must be pip (or uv, with command), not ${describe(entry.method)}`);
      }
      const extras = this.strings(entry.extra_requirements, `${key}.extra_requirements`);
      extras.forEach((extra, j) => {
        if (!EXTRA.test(extra)) this.problem(`${key}.extra_requirements[${j}]`, `${JSON.stringify(extra)} is not a valid extra name`);
      });
      return where === null ? null : { path: where, method: 'pip', extra_requirements: extras };
    }
    this.problem(key, 'needs requirements (a requirements file) or path (a package to pip install)');
    return null;
  }

  async conda(value: unknown): Promise<BuildConfig['conda']> {
    const conda = this.mapping(value, 'conda');
    if (!conda) return null;
    if (conda.environment == null) {
      this.problem('conda.environment', 'missing; set it to the path of the environment file');
      return null;
    }
    const environment = await this.path(conda.environment, 'conda.environment');
    return environment === null ? null : { environment };
  }

  build(value: unknown, formats: OfflineFormat[]): BuildConfig['build'] {
    const build = this.mapping(value, 'build') ?? {};
    let os: string | null = null;
    if (build.os != null) {
      const s = this.string(build.os, 'build.os');
      if (s !== undefined && !NAME.test(s)) this.problem('build.os', `${JSON.stringify(s)} is not an operating system name`);
      else if (s !== undefined) os = s;
    }
    const tools: Record<string, BuildTool> = {};
    for (const [tool, version] of Object.entries(this.mapping(build.tools, 'build.tools') ?? {})) {
      const key = `build.tools.${tool}`;
      if (!TOOLS.includes(tool)) {
        this.problem(key, `unknown tool (build.tools takes ${TOOLS.join(', ')})`);
        continue;
      }
      // `python: 3.10` is a number to YAML; the text as written is what was meant.
      const written = typeof version === 'number' ? (this.source(['build', 'tools', tool]) ?? String(version)) : version;
      const s = this.string(written, key);
      if (s === undefined) continue;
      if (!NAME.test(s)) this.problem(key, `${JSON.stringify(s)} is not a version`);
      else tools[tool] = { version: s, full_version: s };
    }
    const jobs = this.jobs(build.jobs, formats);
    const commands = this.strings(build.commands, 'build.commands');
    const anyJob = isMapping(build.jobs) && Object.values(build.jobs).some((j) => j != null);
    if (commands.length > 0 && anyJob) {
      this.problem('build', 'build.commands and build.jobs cannot be used together; build.commands replaces every step');
    }
    const apt_packages: string[] = [];
    this.list(build.apt_packages, 'build.apt_packages').forEach((item, i) => {
      const key = `build.apt_packages[${i}]`;
      const s = this.string(item, key)?.trim();
      if (s === undefined) return;
      if (/^[-/.]/.test(s)) this.problem(key, `${JSON.stringify(s)} must not start with "${s[0]}": name a package`);
      else if (!APT_PACKAGE.test(s)) this.problem(key, `${JSON.stringify(s)} is not a valid package name`);
      else apt_packages.push(s);
    });
    return { os, tools, jobs, commands, apt_packages };
  }

  private jobs(value: unknown, formats: OfflineFormat[]): BuildJobs {
    const jobs: BuildJobs = {
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
    const raw = this.mapping(value, 'build.jobs');
    if (!raw) return jobs;
    for (const [name, commands] of Object.entries(raw)) {
      const key = `build.jobs.${name}`;
      if (!JOB_NAMES.includes(name)) {
        this.problem(key, `unknown job (build.jobs takes ${JOB_NAMES.join(', ')})`);
      } else if (name === 'build') {
        for (const [type, typeCommands] of Object.entries(this.mapping(commands, key) ?? {})) {
          if (typeCommands == null || !Object.hasOwn(jobs.build, type)) continue; // unknown types are reported by mapping()
          if (type !== 'html' && !formats.includes(type as OfflineFormat)) {
            this.problem(`${key}.${type}`, `builds ${type}, which is not in formats; add it to formats or remove this job`);
          }
          jobs.build[type as keyof BuildJobs['build']] = this.strings(typeCommands, `${key}.${type}`);
        }
      } else if (commands != null) {
        jobs[name as (typeof LIST_JOBS)[number] | 'create_environment' | 'install'] = this.strings(commands, key);
      }
    }
    return jobs;
  }

  async sphinx(value: unknown): Promise<SphinxConfig> {
    const sphinx = this.mapping(value, 'sphinx') ?? {};
    let builder: SphinxBuilder = 'sphinx';
    if (sphinx.builder != null) {
      const mapped = typeof sphinx.builder === 'string' ? SPHINX_BUILDERS[sphinx.builder] : undefined;
      if (mapped && Object.hasOwn(SPHINX_BUILDERS, sphinx.builder as string)) builder = mapped;
      else this.problem('sphinx.builder', `must be one of html, dirhtml, singlehtml, not ${describe(sphinx.builder)}`);
    }
    let configuration: string | null = null;
    if (sphinx.configuration != null) {
      configuration = await this.path(sphinx.configuration, 'sphinx.configuration', { mustBeFile: true });
      if (configuration !== null && path.posix.basename(configuration) !== 'conf.py') {
        this.problem('sphinx.configuration', `must name a conf.py file, not ${configuration}`);
      }
    }
    return { builder, configuration, fail_on_warning: this.bool(sphinx.fail_on_warning, 'sphinx.fail_on_warning') };
  }

  async mkdocs(value: unknown): Promise<MkdocsConfig | null> {
    const mkdocs = this.mapping(value, 'mkdocs');
    if (!mkdocs) return null;
    const configuration = mkdocs.configuration == null ? null : await this.path(mkdocs.configuration, 'mkdocs.configuration', { mustBeFile: true });
    return { configuration, fail_on_warning: this.bool(mkdocs.fail_on_warning, 'mkdocs.fail_on_warning') };
  }

  submodules(value: unknown): BuildConfig['submodules'] {
    const submodules = this.mapping(value, 'submodules') ?? {};
    const allOrList = (v: unknown, key: string, empty: string[] | 'all'): string[] | 'all' => (v === 'all' ? 'all' : v == null ? empty : this.strings(v, key));
    const include = allOrList(submodules.include, 'submodules.include', []);
    const including = include === 'all' || include.length > 0;
    // Read the Docs: with nothing included, everything is excluded.
    const exclude = allOrList(submodules.exclude, 'submodules.exclude', including ? [] : 'all');
    if (including && submodules.exclude != null && (exclude === 'all' || exclude.length > 0)) {
      this.problem('submodules', 'include and exclude cannot be used together; list only the ones to include');
    }
    return { include, exclude, recursive: this.bool(submodules.recursive, 'submodules.recursive') };
  }

  search(value: unknown): BuildConfig['search'] {
    const search = this.mapping(value, 'search') ?? {};
    const ranking: Record<string, number> = {};
    for (const [pattern, rank] of Object.entries(this.mapping(search.ranking, 'search.ranking') ?? {})) {
      const key = `search.ranking.${pattern}`;
      const p = searchPattern(pattern);
      if (p === null) this.problem(key, 'is not a pattern of pages inside the documentation');
      else if (typeof rank !== 'number' || !Number.isInteger(rank) || rank < -10 || rank > 10) {
        this.problem(key, `must be a whole number from -10 to 10, not ${describe(rank)}`);
      } else ranking[p] = rank;
    }
    let ignore = [...DEFAULT_SEARCH_IGNORE];
    if (search.ignore != null) {
      ignore = [];
      this.strings(search.ignore, 'search.ignore').forEach((pattern, i) => {
        const p = searchPattern(pattern);
        if (p === null) this.problem(`search.ignore[${i}]`, `${JSON.stringify(pattern)} is not a pattern of pages inside the documentation`);
        else ignore.push(p);
      });
    }
    return { ranking, ignore };
  }

  /** The scalar at `keys` as written in the file. */
  private source(keys: string[]): string | undefined {
    const node = this.doc?.getIn(keys, true);
    return isScalar(node) && typeof node.source === 'string' ? node.source : undefined;
  }
}

/** A user's path, made relative to the checkout; refused when it is absolute or climbs out. */
function repoPath(value: string): { ok: true; path: string } | { ok: false; problem: string } {
  if (value.trim() === '') return { ok: false, problem: 'is empty; give a path inside the repository' };
  if (value.includes('\0')) return { ok: false, problem: 'contains a NUL character' };
  if (path.posix.isAbsolute(value) || /^[A-Za-z]:[\\/]/.test(value) || value.startsWith('\\')) {
    return { ok: false, problem: 'is an absolute path; give a path relative to the repository root' };
  }
  let normalized = path.posix.normalize(value);
  if (normalized === '..' || normalized.startsWith('../')) {
    return { ok: false, problem: 'points outside the repository; give a path inside it' };
  }
  if (normalized.length > 1 && normalized.endsWith('/')) normalized = normalized.slice(0, -1);
  return { ok: true, path: normalized === '' ? '.' : normalized };
}

/** A search pattern without its leading slash, or null when it would climb out of the docs. */
function searchPattern(pattern: string): string | null {
  const p = path.posix.normalize(pattern.trim()).replace(/^\/+/, '');
  if (p === '' || p === '.' || p === '..' || p.startsWith('../')) return null;
  return p;
}

type Location = { kind: 'missing' } | { kind: 'outside' } | { kind: 'broken' } | { kind: 'found'; real: string; isFile: boolean };

/** Links followed in one path before it is refused as a loop (the kernel's own bound). */
const MAX_LINKS = 40;

/**
 * Where `rel` (normalized, inside the checkout) really is. Links are resolved as text: each one
 * is read (readlink) and its target joined to where it stands, one component at a time, and only
 * names inside the checkout are ever looked at. A link that is absolute or climbs above the
 * checkout is `outside` at once, whatever it names (a host file that exists, one that does not,
 * /etc/shadow, /proc), so the answer tells nothing of the host; `broken` is a link inside the
 * checkout that leads to nothing there (or loops).
 */
async function locate(root: string, rel: string): Promise<Location> {
  const pending = rel === '.' ? [] : rel.split('/');
  /** The real path so far, as components under the checkout (no links among them). */
  const at: string[] = [];
  let links = 0;
  let isFile = false;
  while (pending.length > 0) {
    const segment = pending.shift()!;
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (at.length === 0) return { kind: 'outside' };
      at.pop();
      isFile = false;
      continue;
    }
    let st;
    try {
      st = await lstat(path.join(root, ...at, segment));
    } catch (e) {
      if (isFsError(e, 'ENOENT', 'ENOTDIR')) return links > 0 ? { kind: 'broken' } : { kind: 'missing' };
      throw e;
    }
    if (st.isSymbolicLink()) {
      const target = await readlink(path.join(root, ...at, segment));
      if (path.posix.isAbsolute(target)) return { kind: 'outside' };
      if (++links > MAX_LINKS) return { kind: 'broken' };
      pending.unshift(...target.split('/'));
      continue;
    }
    // A file with more components after it: nothing is there.
    if (!st.isDirectory() && pending.some((p) => p !== '' && p !== '.')) return links > 0 ? { kind: 'broken' } : { kind: 'missing' };
    at.push(segment);
    isFile = st.isFile();
  }
  return { kind: 'found', real: path.join(root, ...at), isFile };
}

/** Is `rel` a file inside the checkout (through links that stay inside)? */
async function isFileInside(root: string, rel: string): Promise<boolean> {
  const where = await locate(root, rel);
  return where.kind === 'found' && where.isFile;
}

/**
 * The conf.py Lectern builds with when none is named: docs/conf.py, doc/conf.py, else the
 * shallowest one (the first by path among equals), never in hidden folders, node_modules or _build.
 */
async function findSphinxConf(root: string): Promise<string | null> {
  for (const preferred of ['docs/conf.py', 'doc/conf.py']) {
    if (await isFileInside(root, preferred)) return preferred;
  }
  let level = ['.'];
  let visited = 0;
  for (let depth = 0; depth <= SEARCH_MAX_DEPTH && level.length > 0; depth++) {
    const found: string[] = [];
    const next: string[] = [];
    for (const dir of level) {
      if (++visited > SEARCH_MAX_DIRECTORIES) break;
      let entries: Dirent[];
      try {
        entries = await readdir(path.join(root, dir), { withFileTypes: true });
      } catch {
        continue;
      }
      for (const entry of entries) {
        const rel = dir === '.' ? entry.name : `${dir}/${entry.name}`;
        // Symbolic links to folders are not followed: the checkout's own tree only.
        if (entry.isDirectory() && !entry.name.startsWith('.') && !SEARCH_SKIP.has(entry.name)) next.push(rel);
        else if (entry.name === 'conf.py' && (entry.isFile() || entry.isSymbolicLink()) && (await isFileInside(root, rel))) {
          found.push(rel);
        }
      }
    }
    if (found.length > 0) return found.sort()[0];
    level = next.sort();
  }
  return null;
}

/** The mkdocs.yml (or .yaml) at the root or in docs/, or null. */
async function findMkdocsConfig(root: string): Promise<string | null> {
  for (const candidate of ['mkdocs.yml', 'mkdocs.yaml', 'docs/mkdocs.yml', 'docs/mkdocs.yaml']) {
    if (await isFileInside(root, candidate)) return candidate;
  }
  return null;
}

function isMapping(value: unknown): value is Mapping {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return JSON.stringify(value);
  return String(value);
}

function isFsError(e: unknown, ...codes: string[]): boolean {
  return typeof e === 'object' && e !== null && codes.includes((e as NodeJS.ErrnoException).code ?? '');
}
