// Build images: root filesystems made from Debian's packages (mmdebstrap, from the configured
// Debian mirror), kept under the data dir, that builds run in instead of the host's /usr. An image
// is never written once made: each build writes to a layer of its own (an overlay, in
// src/sandbox/sandbox.ts) that goes with the build. `lectern images` lists, builds, updates and
// removes them. Which image a build gets: `chooseImage`, from `build.os`.
// @see docs/design/images.md
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BuildLimits } from '../config.ts';

/** The images Lectern can make, by name: Debian's suite, and the Python it ships (python3). */
export const IMAGE_CATALOGUE = {
  'debian-12': { suite: 'bookworm', python: '3.11' },
  'debian-13': { suite: 'trixie', python: '3.13' },
} as const;
export type ImageName = keyof typeof IMAGE_CATALOGUE;
export const IMAGE_NAMES = Object.keys(IMAGE_CATALOGUE) as ImageName[];
export const isImageName = (s: string): s is ImageName => Object.hasOwn(IMAGE_CATALOGUE, s);

/**
 * What every image holds besides Debian's essential packages: what the sandbox runs (bash,
 * util-linux's prlimit and setpriv), git, Python with venv and pip, Sphinx, MkDocs, the CA
 * certificates, and apt (for `build.apt_packages`). Operators add more with LECTERN_BUILD_IMAGE_PACKAGES.
 */
export const IMAGE_PACKAGES = [
  'bash',
  'util-linux',
  'ca-certificates',
  'git',
  'python3',
  'python3-venv',
  'python3-pip',
  'python3-setuptools',
  'python3-sphinx',
  'mkdocs',
];

/**
 * Read the Docs' `build.os` names, and the image each maps to: the Debian release closest in
 * time and in its Python (Ubuntu 20.04 and 22.04 came before Debian 12; 24.04 and the latest LTS
 * are nearest Debian 13).
 */
export const OS_IMAGES: Record<string, ImageName> = {
  'ubuntu-20.04': 'debian-12',
  'ubuntu-22.04': 'debian-12',
  'ubuntu-24.04': 'debian-13',
  'ubuntu-lts-latest': 'debian-13',
  'debian-12': 'debian-12',
  'debian-13': 'debian-13',
};

/** An image as made, read from its `image.json`. */
export interface InstalledImage {
  name: ImageName;
  suite: string;
  /** The root filesystem, read-only to builds. */
  rootfs: string;
  /** When it was made (ISO 8601). */
  created: string;
  /** The apt sources it was made from, which `build.apt_packages` come from too. */
  sources: string[];
  packages: string[];
  /** Tool versions: its python3 (`3.11.2`), and the Debian versions of nodejs, ruby, rustc and golang its apt sources offer (`18.19.0+dfsg-6~deb12u2`). */
  tools: { python: string; nodejs: string | null; ruby: string | null; rust: string | null; golang: string | null };
}

/** The images made here (in `dir`, LECTERN_BUILD_IMAGES_DIR), newest first; one whose folder is damaged is left out. */
export async function listImages(dir: string): Promise<InstalledImage[]> {
  const out: InstalledImage[] = [];
  for (const name of [...IMAGE_NAMES].reverse()) {
    const image = await readImage(dir, name);
    if (image) out.push(image);
  }
  return out;
}

export async function readImage(dir: string, name: ImageName): Promise<InstalledImage | null> {
  try {
    const version = await readlink(path.join(dir, name, 'current'));
    const meta = JSON.parse(await readFile(path.join(dir, name, version, 'image.json'), 'utf8')) as Omit<InstalledImage, 'rootfs'>;
    const rootfs = path.join(dir, name, version, 'rootfs');
    if (!existsSync(path.join(rootfs, 'usr/bin/python3'))) return null;
    return { ...meta, name, rootfs };
  } catch {
    return null;
  }
}

/** Which image a build of `os` (its `build.os`, or null) runs in, and the line its log says about it. */
export function chooseImage(
  os: string | null,
  installed: InstalledImage[],
): { image: InstalledImage; note: string } | { image: null; problem: string } | { image: null; note: string } {
  if (!installed.length) {
    return {
      image: null,
      note: `No build image is installed on this machine (lectern images build ${IMAGE_NAMES.join('|')}): the build runs on this machine's own system${os ? ` (build.os: ${os})` : ''}.`,
    };
  }
  const newest = installed[0]!;
  if (os === null) return { image: newest, note: `No build.os given: the build runs on ${describe(newest)}, the newest image here.` };
  const wanted = OS_IMAGES[os];
  if (!wanted)
    return {
      image: null,
      problem: `build.os: "${os}" is not an operating system Lectern builds on; it takes ${Object.keys(OS_IMAGES)
        .map((n) => `"${n}"`)
        .join(', ')}.`,
    };
  const exact = installed.find((i) => i.name === wanted);
  if (exact) return { image: exact, note: `build.os ${os}: the build runs on ${describe(exact)}${os === wanted ? '' : `, the image closest to ${os}`}.` };
  // The closest one installed: nearest in the catalogue's order.
  const order = IMAGE_NAMES.indexOf(wanted);
  const closest = [...installed].sort((a, b) => Math.abs(IMAGE_NAMES.indexOf(a.name) - order) - Math.abs(IMAGE_NAMES.indexOf(b.name) - order))[0]!;
  return { image: closest, note: `build.os ${os}: ${wanted} is not installed here, so the build runs on ${describe(closest)}, the closest image installed.` };
}

const describe = (i: InstalledImage) => `${i.name} (Debian ${i.suite}, made ${i.created.slice(0, 10)}, Python ${i.tools.python})`;

/** LECTERN_BUILD_DEBIAN_MIRROR, LECTERN_BUILD_DEBIAN_SECURITY_MIRROR, LECTERN_BUILD_IMAGE_PACKAGES. */
export type ImageSettings = BuildLimits['images'];

/** mmdebstrap's own hooks that run dpkg under eatmydata. */
const EATMYDATA_HOOKS = '/usr/share/mmdebstrap/hooks/eatmydata';

/** A Debian package name, as dpkg allows it: what a setting or `build.apt_packages` may name. */
export const DEBIAN_PACKAGE = /^[a-z0-9][a-z0-9+.-]+$/;

/**
 * Makes image `name` anew with mmdebstrap (its output to `log`, line by line), then makes it the
 * current one; builds that run on the previous one keep it until the next update removes it.
 */
export async function buildImage(name: ImageName, settings: ImageSettings, log: (line: string) => void): Promise<InstalledImage> {
  const mmdebstrap = ['/usr/bin/mmdebstrap', '/bin/mmdebstrap'].find((p) => existsSync(p));
  if (!mmdebstrap) throw new ImageError('mmdebstrap is not installed: apt-get install -y mmdebstrap');
  const bad = settings.packages.find((p) => !DEBIAN_PACKAGE.test(p));
  if (bad !== undefined) throw new ImageError(`LECTERN_BUILD_IMAGE_PACKAGES: ${JSON.stringify(bad)} is not a Debian package name`);
  const { suite } = IMAGE_CATALOGUE[name];
  const home = path.join(settings.dir, name);
  await mkdir(home, { recursive: true, mode: 0o755 });
  const version = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const dir = path.join(home, version);
  const rootfs = path.join(dir, 'rootfs');
  await mkdir(dir, { mode: 0o755 });
  const packages = [...new Set([...IMAGE_PACKAGES, ...settings.packages])];
  const mirror = settings.mirror.replace(/\/+$/, '');
  const sources = [
    `deb ${mirror} ${suite} main`,
    `deb ${mirror} ${suite}-updates main`,
    ...(settings.securityMirror ? [`deb ${settings.securityMirror.replace(/\/+$/, '')} ${suite}-security main`] : []),
  ];
  const started = Date.now();
  try {
    await runLogged(mmdebstrap, mmdebstrapArgs(packages, suite, rootfs, sources), log);
    const tools = await toolVersions(rootfs);
    const meta = {
      name,
      suite,
      created: new Date().toISOString(),
      sources,
      packages,
      tools,
    };
    await writeFile(path.join(dir, 'image.json'), `${JSON.stringify(meta, null, 2)}\n`);
    // One switch makes it current: a link renamed over the old one.
    const link = path.join(home, `current.${process.pid}`);
    await rm(link, { force: true });
    await symlink(version, link);
    await rename(link, path.join(home, 'current'));
    log(`lectern: ${name} made in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    await pruneVersions(home, version);
    return { ...meta, rootfs };
  } catch (e) {
    await rm(dir, { recursive: true, force: true }).catch(() => {});
    throw e;
  }
}

/** Where an image's own customize hook writes the versions of its tools (read back by toolVersions). */
const TOOLS_FILE = '/.lectern-tools';

/**
 * mmdebstrap's arguments for an image of `suite` in `rootfs`: a minimal Debian with `packages`
 * (no recommended ones, no documentation), from the apt `sources`, then the hooks that make the
 * sandbox's mount points and write the versions of its tools (TOOLS_FILE).
 */
function mmdebstrapArgs(packages: string[], suite: string, rootfs: string, sources: string[]): string[] {
  return [
    // root when Lectern is root, else a user namespace of its own
    '--mode=auto',
    '--variant=minbase',
    '--format=directory',
    `--include=${packages.join(',')}`,
    // dpkg without fsync while the image is made (nothing reads it before it is done): about
    // half the time on this project's machines (docs/design/images.md). It leaves nothing in the image.
    ...(existsSync(EATMYDATA_HOOKS) ? [`--hook-dir=${EATMYDATA_HOOKS}`] : []),
    // No recommended packages (what a build needs is named), and no documentation or manuals.
    '--aptopt=APT::Install-Recommends "false"',
    '--dpkgopt=path-exclude=/usr/share/doc/*',
    '--dpkgopt=path-include=/usr/share/doc/*/copyright',
    '--dpkgopt=path-exclude=/usr/share/man/*',
    '--dpkgopt=path-exclude=/usr/share/info/*',
    // Mount points the sandbox needs, and the versions of the tools it holds (read by readImage).
    '--customize-hook=touch "$1/etc/resolv.conf"',
    '--customize-hook=rm -f "$1/etc/machine-id" "$1/var/lib/dbus/machine-id"',
    `--customize-hook=chroot "$1" sh -c 'echo python=$(python3 -c "import platform; print(platform.python_version())"); for p in nodejs ruby rustc golang; do echo $p=$(apt-cache policy $p | sed -n "s/^  Candidate: //p"); done' > "$1${TOOLS_FILE}"`,
    suite,
    rootfs,
    ...sources,
  ];
}

/**
 * The versions of the tools a new image holds, as its customize hook wrote them (TOOLS_FILE):
 * its python3's, which it must say, and the Debian versions of the others its apt sources offer
 * (null for none).
 */
async function toolVersions(rootfs: string): Promise<InstalledImage['tools']> {
  const found = Object.fromEntries(
    (await readFile(path.join(rootfs, TOOLS_FILE), 'utf8'))
      .split('\n')
      .map((l) => l.trim().split('='))
      .filter((kv) => kv.length === 2),
  ) as Record<string, string>;
  const none = (v: string | undefined) => (v && v !== '(none)' ? v : null);
  if (!found.python) throw new ImageError(`the image's python3 did not say its version`);
  return { python: found.python, nodejs: none(found.nodejs), ruby: none(found.ruby), rust: none(found.rustc), golang: none(found.golang) };
}

/** Removes image `name` whole; false when it is not installed. */
export async function removeImage(dir: string, name: ImageName): Promise<boolean> {
  const home = path.join(dir, name);
  if (!existsSync(home)) return false;
  await rm(home, { recursive: true, force: true });
  return true;
}

/** Keeps the current version and the one before it (a build started before the update may still run on it). */
async function pruneVersions(home: string, current: string): Promise<void> {
  const versions = (await readdir(home)).filter((v) => /^\d{8}T\d{6}Z$/.test(v) && v !== current).sort();
  for (const old of versions.slice(0, -1)) await rm(path.join(home, old), { recursive: true, force: true });
}

export class ImageError extends Error {}

function runLogged(cmd: string, args: string[], log: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C.UTF-8' } });
    let tail = '';
    const onData = (b: Buffer) => {
      tail = (tail + b.toString()).slice(-4000);
      for (const line of b.toString().split('\n')) if (line.trim()) log(line);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve() : reject(new ImageError(`mmdebstrap failed (exit code ${code}):\n${tail.trim().split('\n').slice(-10).join('\n')}`)),
    );
  });
}
