// `build.tools`: which version of each tool a build runs, and where it comes from. Python is the
// image's own (or, with no image installed, this machine's); nodejs, ruby, rust and golang are the
// image's Debian packages, installed into the build's layer when asked. A version nothing here
// provides fails the build at once, naming what is available.
// @see docs/design/images.md "Tools"
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { BuildTool } from './config.ts';
import { IMAGE_NAMES, type InstalledImage } from './images.ts';

/** A tool a build asked for, and what it got. */
export interface ToolChoice {
  tool: string;
  /** As written in build.tools. */
  asked: string;
  /** The full version it runs. */
  version: string;
  /** Debian packages that bring it into the build's layer (none for Python, which every image holds). */
  packages: string[];
  /** A relocatable build from the tool directory (LECTERN_BUILD_TOOLS_DIR), bound read-only at its own path; absent: the image's own. */
  path?: string;
}

/** A Python of the tool directory: `<dir>/python/<version>/bin/python3`. */
export interface ToolPython {
  version: string;
  path: string;
}

/** The Pythons in the tool directory (LECTERN_BUILD_TOOLS_DIR), newest first; none without one. */
export function listToolPythons(dir: string | null): ToolPython[] {
  if (!dir) return [];
  return listVersions(path.join(dir, 'python'), /^\d+\.\d+\.\d+$/, 'bin/python3').map((version) => ({ version, path: path.join(dir, 'python', version) }));
}

/** The Debian packages of each tool besides Python, and the part of their version `build.tools` names (`20`, `1.63`, `3.1`). */
const PACKAGED: Record<string, { packages: string[]; key: keyof InstalledImage['tools']; named: (v: string) => string }> = {
  nodejs: { packages: ['nodejs'], key: 'nodejs', named: (v) => v.split('.')[0]! },
  ruby: { packages: ['ruby'], key: 'ruby', named: (v) => v.split('.').slice(0, 2).join('.') },
  rust: { packages: ['rustc', 'cargo'], key: 'rust', named: (v) => v.split('.').slice(0, 2).join('.') },
  golang: { packages: ['golang-go'], key: 'golang', named: (v) => v.split('.').slice(0, 2).join('.') },
};

/** A Debian version without its epoch and revision: `2:1.19~1` is 1.19, `20.19.2+dfsg-1` is 20.19.2. */
export const upstreamVersion = (debian: string) =>
  debian
    .replace(/^\d+:/, '')
    .replace(/-[^-]*$/, '')
    .replace(/[~+].*$/, '');

const matches = (asked: string, version: string, named: (v: string) => string) => asked === 'latest' || asked === named(version) || asked === version;

let hostPython: string | undefined;
/** This machine's /usr/bin/python3 version (builds run it when no image is installed). */
export function hostPythonVersion(): string {
  hostPython ??= execFileSync('/usr/bin/python3', ['-c', 'import platform; print(platform.python_version())'], { encoding: 'utf8', timeout: 10_000 }).trim();
  return hostPython;
}

/**
 * What each of `tools` runs on `image` (null: this machine's own system), or the problem that fails
 * the build: a version no image here provides, with what is available.
 */
export function chooseTools(
  tools: Record<string, BuildTool>,
  image: InstalledImage | null,
  installed: InstalledImage[],
  toolPythons: ToolPython[] = [],
): { chosen: ToolChoice[] } | { problem: string } {
  const chosen: ToolChoice[] = [];
  for (const [tool, { version: asked }] of Object.entries(tools)) {
    if (tool === 'python') {
      const version = image ? image.tools.python : hostPythonVersion();
      const named = (v: string) => v.split('.').slice(0, 2).join('.');
      if (asked === '3' || matches(asked, version, named)) {
        chosen.push({ tool, asked, version, packages: [] });
        continue;
      }
      const fromTools = toolPythons.find((p) => matches(asked, p.version, named));
      if (fromTools) {
        chosen.push({ tool, asked, version: fromTools.version, packages: [], path: fromTools.path });
        continue;
      }
      const where = image ? image.name : 'this machine (no build image is installed)';
      const others = installed.filter((i) => i !== image && matches(asked, i.tools.python, named)).map((i) => i.name);
      return {
        problem: `build.tools.python: Python ${asked} is not available on ${where}, which has Python ${named(version)} ("${named(version)}" or "3").${
          others.length
            ? ` ${others.join(' and ')} ${others.length > 1 ? 'have' : 'has'} it: set build.os to ${others.map(osFor).join(' or ')}.`
            : ` The images Lectern makes have ${IMAGE_NAMES.map((n) => n).join(', ')}'s Pythons.`
        }${
          toolPythons.length
            ? ` The tool directory has Python ${toolPythons.map((p) => p.version).join(', ')}.`
            : ' Other versions come from a directory of relocatable Pythons (LECTERN_BUILD_TOOLS_DIR).'
        }`,
      };
    }
    const packaged = PACKAGED[tool];
    if (!packaged) return { problem: `build.tools.${tool}: Lectern provides no ${tool}.` };
    if (!image) {
      return {
        problem: `build.tools.${tool}: ${tool} comes from a build image, and none is installed on this machine (lectern images build ${IMAGE_NAMES.join('|')}).`,
      };
    }
    const candidate = image.tools[packaged.key] ?? null;
    const version = candidate ? upstreamVersion(candidate) : null;
    if (version && matches(asked, version, packaged.named)) {
      chosen.push({ tool, asked, version, packages: packaged.packages });
      continue;
    }
    return {
      problem: `build.tools.${tool}: ${tool} ${asked} is not available on ${image.name}${version ? `, which has ${tool} ${version} ("${packaged.named(version)}")` : `, which has no ${tool}`}.`,
    };
  }
  return { chosen };
}

/** The `build.os` name that maps to image `name`. */
const osFor = (name: string) => (name === 'debian-12' ? '"ubuntu-22.04"' : name === 'debian-13' ? '"ubuntu-24.04"' : `"${name}"`);

/** Where builds find uv on a system of their own (an image's or this machine's), first found first. */
const SYSTEM_UV = ['/usr/local/bin/uv', '/usr/bin/uv'];

/**
 * uv, for a build whose `python.install` uses it (docs/design/images.md "uv"): the newest of the
 * tool directory (`<dir>/uv/<version>/uv`, the binary of uv's release archive), bound read-only at
 * its own path; else the build system's own (the image's, or this machine's when no image is
 * installed); or why the build cannot have it.
 */
export function chooseUv(image: InstalledImage | null, toolsDir: string | null): { uv: ToolChoice & { bin: string } } | { problem: string } {
  const versions = toolsDir ? listVersions(path.join(toolsDir, 'uv'), /^\d+\.\d+\.\d+$/, 'uv') : [];
  const newest = versions[0];
  if (newest) {
    const dir = path.join(toolsDir!, 'uv', newest);
    return { uv: { tool: 'uv', asked: 'python.install method uv', version: newest, packages: [], path: dir, bin: path.join(dir, 'uv') } };
  }
  const root = image?.rootfs ?? '/';
  const system = SYSTEM_UV.find((bin) => existsSync(path.join(root, bin)));
  if (system)
    return { uv: { tool: 'uv', asked: 'python.install method uv', version: `${system} of ${image ? image.name : 'this machine'}`, packages: [], bin: system } };
  return {
    problem: `python.install: the entry with method: uv needs uv, and no uv is available to builds on this machine: an operator puts the uv binary of a release of uv at ${
      toolsDir ? `${toolsDir}/uv/<version>/uv` : 'LECTERN_BUILD_TOOLS_DIR/uv/<version>/uv'
    }, or installs it ${image ? `into the build image ${image.name}` : 'on this machine'} (${SYSTEM_UV.join(' or ')}).`,
  };
}

/** The version directories of `dir` holding `file`, newest first. */
function listVersions(dir: string, pattern: RegExp, file: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const key = (v: string) =>
    v
      .split('.')
      .map((n) => n.padStart(6, '0'))
      .join('.');
  return names.filter((n) => pattern.test(n) && existsSync(path.join(dir, n, file))).sort((a, b) => (key(a) < key(b) ? 1 : -1));
}
