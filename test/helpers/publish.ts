// Real builder output for the docs-server tests: runs Sphinx and MkDocs (Debian's) on the fixture
// sources in test/fixtures/serve/, and publishes the result with the build pipeline's own step 5
// (src/builds/publish.ts).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { type Browser, chromium } from 'playwright-core';
import { inject } from 'vitest';
import { publishBuild } from '../../src/builds/publish.ts';
import type { PrivacyLevel } from '../../src/generated/prisma/client.ts';
import { zipDirectory } from '../../src/storage/output.ts';
import type { TestApp } from './app.ts';

const run = promisify(execFile);

export const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/serve');
export const CHROMIUM = '/usr/bin/chromium-headless-shell';

/** Fails (never skips) when a tool is missing, naming the Debian package that provides it. */
export function requireTool(file: string, debianPackage: string): void {
  if (!existsSync(file))
    throw new Error(`${file} is missing: install it with \`apt-get install -y ${debianPackage}\` (test/setup/system-deps.sh does when run as root)`);
}

const outputs = new Map<string, Promise<string>>();

/**
 * The directory the test files of this vitest project share outputs in (test/setup/outputs.ts);
 * undefined outside one, where each test file builds its own.
 */
function sharedDir(): string | undefined {
  try {
    return inject('testOutputs') || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Built once per vitest project and reused by every test (outputs are only read: published, zipped,
 * printed). Within a test file by promise; across the project's test files through the shared
 * directory, where a file `<hash of key>.path` names the finished output (written when complete).
 */
function cached(key: string, build: () => Promise<string>): Promise<string> {
  let p = outputs.get(key);
  if (!p) {
    p = sharedOutput(key, build);
    outputs.set(key, p);
  }
  return p;
}

async function sharedOutput(key: string, build: () => Promise<string>): Promise<string> {
  const dir = sharedDir();
  if (!dir) return build();
  const record = path.join(dir, `${createHash('sha256').update(key).digest('hex').slice(0, 32)}.path`);
  const done = await readFile(record, 'utf8').catch(() => undefined);
  if (done && existsSync(done)) return done;
  const out = await build();
  // Whole or not at all: another test process may be reading it.
  await writeFile(`${record}.${process.pid}`, out);
  await rename(`${record}.${process.pid}`, record);
  return out;
}

const tmp = (name: string) => mkdtemp(path.join(sharedDir() ?? os.tmpdir(), `lectern-serve-${name}-`));

/** `sphinx-build -b <builder>` of a fixture; `overrides` are -D settings (e.g. release). Returns the output directory. */
export function sphinxBuild(fixture: string, opts: { builder?: 'html' | 'epub' | 'singlehtml'; overrides?: Record<string, string> } = {}): Promise<string> {
  const builder = opts.builder ?? 'html';
  return cached(`sphinx:${fixture}:${builder}:${JSON.stringify(opts.overrides ?? {})}`, async () => {
    requireTool('/usr/bin/sphinx-build', 'python3-sphinx');
    const out = await tmp(`sphinx-${builder}`);
    const defines = Object.entries(opts.overrides ?? {}).flatMap(([k, v]) => ['-D', `${k}=${v}`]);
    await run('/usr/bin/sphinx-build', [
      '-q',
      '-b',
      builder,
      '-d',
      path.join(out, '.doctrees'),
      ...defines,
      path.join(FIXTURES, fixture),
      path.join(out, builder),
    ]);
    return path.join(out, builder);
  });
}

/** `python3 -m mkdocs build` of a fixture (Debian's python3, which sees Debian's mkdocs). */
export function mkdocsBuild(fixture: string): Promise<string> {
  return cached(`mkdocs:${fixture}`, async () => {
    requireTool('/usr/bin/mkdocs', 'mkdocs');
    const out = path.join(await tmp('mkdocs'), 'site');
    await run('/usr/bin/python3', ['-m', 'mkdocs', 'build', '-q', '-f', path.join(FIXTURES, fixture, 'mkdocs.yml'), '-d', out]);
    return out;
  });
}

/** The HTML output zipped under one top folder, with the zipDirectory the pipeline makes the htmlzip download with. */
export function htmlZip(htmlDir: string, name: string): Promise<string> {
  return cached(`zip:${htmlDir}`, async () => {
    const target = path.join(await tmp('zip'), `${name}.zip`);
    await zipDirectory(htmlDir, target, name);
    return target;
  });
}

/** A PDF of a built page, printed by headless Chromium (no LaTeX on these machines). */
export function printPdf(htmlFile: string): Promise<string> {
  return cached(`pdf:${htmlFile}`, async () => {
    requireTool(CHROMIUM, 'chromium-headless-shell');
    const dir = await tmp('pdf');
    const target = path.join(dir, 'doc.pdf');
    await run(CHROMIUM, [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      `--user-data-dir=${path.join(dir, 'profile')}`,
      `--print-to-pdf=${target}`,
      `file://${htmlFile}`,
    ]);
    return target;
  });
}

export interface ProjectSpec {
  slug: string;
  language?: string;
  privacyLevel?: PrivacyLevel;
  defaultVersion?: string;
  /** User ids of the maintainers. */
  maintainers?: number[];
  mainLanguageProjectId?: number;
  versionSwitcher?: boolean;
  /** Read the Docs' addons data script in its pages (and the menu it draws): on by default. */
  addonsEnabled?: boolean;
}

export async function makeProject(t: TestApp, spec: ProjectSpec) {
  return t.db.prisma.project.create({
    data: {
      name: spec.slug,
      slug: spec.slug,
      repositoryUrl: `https://example.com/${spec.slug}.git`,
      language: spec.language ?? 'en',
      privacyLevel: spec.privacyLevel ?? 'public',
      defaultVersion: spec.defaultVersion ?? 'latest',
      mainLanguageProjectId: spec.mainLanguageProjectId ?? null,
      versionSwitcher: spec.versionSwitcher ?? true,
      addonsEnabled: spec.addonsEnabled ?? true,
      users: { connect: (spec.maintainers ?? []).map((id) => ({ id })) },
    },
  });
}

export interface PublishSpec {
  project: { id: number; slug: string };
  version: string;
  /** Directory of HTML builder output. */
  html: string;
  downloads?: Partial<Record<'pdf' | 'htmlzip' | 'epub', string>>;
  /** Version fields to set besides the published build (hidden, privacyLevel, active…). */
  versionData?: { hidden?: boolean; privacyLevel?: PrivacyLevel; active?: boolean; verboseName?: string };
  documentationType?: string;
}

/** Publishes built output as a finished, successful build of the version (created when missing). */
export async function publish(t: TestApp, spec: PublishSpec): Promise<{ buildId: number; versionId: number }> {
  const prisma = t.db.prisma;
  const { project } = spec;
  const version = await prisma.version.upsert({
    where: { projectId_slug: { projectId: project.id, slug: spec.version } },
    create: { projectId: project.id, slug: spec.version, verboseName: spec.versionData?.verboseName ?? spec.version, type: 'branch', active: true },
    update: {},
  });
  const now = new Date();
  const build = await prisma.build.create({
    data: {
      projectId: project.id,
      versionId: version.id,
      versionSlug: version.slug,
      state: 'finished',
      success: true,
      startedAt: now,
      finishedAt: now,
      duration: 1,
    },
  });
  // Step 5 of the pipeline itself: all files first, then the one update that makes them the served ones.
  await publishBuild(t.services, {
    projectSlug: project.slug,
    version,
    buildId: build.id,
    htmlDir: spec.html,
    downloads: spec.downloads,
    documentationType: spec.documentationType,
  });
  await prisma.version.update({ where: { id: version.id }, data: { active: true, lastBuildId: build.id, ...spec.versionData } });
  return { buildId: build.id, versionId: version.id };
}

export async function ensureDir(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  return dir;
}

/**
 * Debian's Chromium as its headless shell (what Playwright itself runs headless), through
 * playwright-core: the same Blink, V8 and network stack as the browser, without the browser's
 * window layer, at less than half its CPU (docs/design/test-suite.md). Fails naming the package
 * when it is missing.
 */
export async function launchChromium(): Promise<Browser> {
  requireTool(CHROMIUM, 'chromium-headless-shell');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

/** A directory holding one `index.html` with this content: a built page, for tests of what is done with it. Removed by `removePages()`. */
export function htmlPage(html: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lectern-page-'));
  pageDirs.push(dir);
  writeFileSync(path.join(dir, 'index.html'), html.includes('<html') ? html : `<html><body>${html}</body></html>`);
  return dir;
}
const pageDirs: string[] = [];
export function removePages(): void {
  for (const d of pageDirs.splice(0)) rmSync(d, { recursive: true, force: true });
}
