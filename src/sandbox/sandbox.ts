// The walls around every command that touches a repository (git included), with bubblewrap:
// - a root of its own, built from what a build needs and nothing else: the system's programs
//   (/usr, and /bin, /lib... as the host has them) read-only, an allowlist of /etc, a fresh /dev
//   and /proc, the build's own directory (the only writable place) with its /tmp, and the few
//   read-only paths a real build needs elsewhere (pip's find-links and index, TeX's formats).
//   Never the host's /, so nothing of /run, /var, /home, /root, /srv, /mnt, /opt, the host's
//   /tmp or Lectern's data dir is there, and no host socket can be reached (docs/design/sandbox.md);
// - every descriptor above 2 closed in the sandbox before the command starts, whatever its number;
// - a user id of its own when Lectern runs as root (build N runs as uidBase + N mod 100000), no
//   capabilities, no new privileges, so it reads only what any user may;
// - bounds: processes (RLIMIT_NPROC for that user, and a pids cgroup where one can be made),
//   memory (a memory cgroup, else RLIMIT_AS per process), file size (RLIMIT_FSIZE) and disk used
//   under the build's directory (watched while it runs);
// - no network, or for the steps that need it (clone, install) a network of its own: a user-mode
//   TCP/IP stack (slirp4netns) attached to the sandbox's own network namespace, and a firewall in
//   that namespace (nftables) that refuses loopback, link-local, this machine's own addresses and
//   private ranges not allowed by LECTERN_BUILD_NETWORK_ALLOW. slirp4netns rather than pasta: it is
//   what rootless container engines used for years, Debian's build of it has
//   --disable-host-loopback, and the firewall sees the real destination of every packet because
//   slirp4netns terminates connections on the host side only after they leave the namespace.
// Without slirp4netns or nft, network steps run with no network at all (fail closed).
// @see docs/design/sandbox.md, README "Security model"
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { chown, lstat, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { BuildLimits } from '../config.ts';
import { runCommand } from './subprocess.ts';

let available: boolean | undefined;

/**
 * Whether bubblewrap runs here with the sandbox's own root (the system directories, /etc's
 * allowlist, the descriptor closer): asked three times before saying no, as its setup can fail
 * under load (SANDBOX_SETUP_FAILED).
 */
export function bwrapAvailable(): boolean {
  for (let attempt = 0; available === undefined && attempt < 3; attempt++) {
    try {
      const { bwrap, bash } = tools();
      if (!bwrap || !bash) throw Object.assign(new Error('bwrap or bash is missing'), { code: 'ENOENT' });
      execFileSync(bwrap, [...systemRoot().args, '--dev', '/dev', '--proc', '/proc', '--unshare-all', '--', ...closeDescriptors(bash), '/usr/bin/true'], {
        stdio: 'ignore',
        timeout: 10_000,
      });
      available = true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' || attempt === 2) available = false;
      else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100 * (attempt + 1));
    }
  }
  return available!;
}

const which = (cmd: string, places: string[]) => places.map((d) => path.join(d, cmd)).find((p) => existsSync(p)) ?? null;
/**
 * The helper programs, looked up once in the system's own directories (every sandboxed command
 * uses them), and always run by that absolute path: a name alone would be looked up in the
 * command's PATH, which starts with the build's own venv/bin, where a build may leave a `bwrap`.
 */
let found: Record<'bwrap' | 'slirp' | 'nft' | 'nsenter' | 'setpriv' | 'prlimit' | 'bash' | 'unshare' | 'mount', string | null> | undefined;
const tools = () =>
  (found ??= {
    bwrap: which('bwrap', ['/usr/bin', '/bin', '/usr/local/bin']),
    slirp: which('slirp4netns', ['/usr/bin', '/usr/local/bin', '/bin']),
    nft: which('nft', ['/usr/sbin', '/sbin', '/usr/bin', '/usr/local/sbin']),
    nsenter: which('nsenter', ['/usr/bin', '/bin']),
    setpriv: which('setpriv', ['/usr/bin', '/bin']),
    prlimit: which('prlimit', ['/usr/bin', '/bin']),
    bash: which('bash', ['/usr/bin', '/bin']),
    unshare: which('unshare', ['/usr/bin', '/bin']),
    mount: which('mount', ['/usr/bin', '/bin']),
  });

// ---------------------------------------------------------------------------------------------
// The sandbox's root. bubblewrap starts from an empty tmpfs; only what is listed here is put in
// it. Why each entry is there: docs/design/sandbox.md.

/** Top-level system paths, reproduced as the host has them: a link stays a link (merged /usr), a directory is bound read-only. */
const SYSTEM_PATHS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/**
 * What programs read in /etc, and only that (each entry only where it exists): name resolution,
 * CA certificates, users and groups (never their shadow files), the dynamic linker's cache,
 * alternatives, time zone and locale, and the files Python, pip, git, ssh, Sphinx, MkDocs, LaTeX,
 * fontconfig and ImageMagick read.
 */
export const ETC_ALLOWED = [
  // name resolution (resolv.conf: the host's for steps without network; slirp4netns' for the others)
  'hosts',
  'host.conf',
  'nsswitch.conf',
  'resolv.conf',
  'gai.conf',
  'networks',
  'protocols',
  'services',
  // certificates
  'ssl',
  'ca-certificates',
  'ca-certificates.conf',
  'pki',
  // users and groups (names for ids; the build's own id has none)
  'passwd',
  'group',
  // the dynamic linker, Debian's alternatives (/usr/bin/python, editor...), time, locale, the system's name
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'alternatives',
  'localtime',
  'timezone',
  'locale.alias',
  'locale.conf',
  'default/locale',
  'os-release',
  'debian_version',
  'lsb-release',
  'mtab',
  // what the build's tools read
  'python3',
  ...pythonEtc(),
  'pip.conf',
  'xdg/pip',
  'gitconfig',
  'gitattributes',
  'ssh/ssh_config',
  'ssh/ssh_config.d',
  'ssh/ssh_known_hosts',
  'mime.types',
  'magic',
  'magic.mime',
  'fonts',
  'texmf',
  'LatexMk',
  'latexmkrc',
  'papersize',
  'paperspecs',
  'xml',
  'sgml',
  'ImageMagick-6',
  'ImageMagick-7',
  'matplotlibrc',
];

/** /etc/python3.X: Debian's sitecustomize for each installed Python. */
function pythonEtc(): string[] {
  try {
    return readdirSync('/etc')
      .filter((n) => /^python3\.\d+$/.test(n))
      .sort();
  } catch {
    return [];
  }
}

/**
 * Read-only paths outside /usr and /etc that real builds need: Debian keeps TeX's generated
 * formats and file database in /var/lib/texmf (PDF builds). Only where they exist.
 */
const DATA_PATHS = ['/var/lib/texmf'];

/** pip settings of Lectern's environment (passed on to builds) whose values may name local files or directories. */
const PIP_PATH_SETTINGS = ['PIP_FIND_LINKS', 'PIP_INDEX_URL', 'PIP_EXTRA_INDEX_URL', 'PIP_CERT', 'PIP_CLIENT_CERT', 'PIP_CONSTRAINT'];

/**
 * The local paths pip is told to read by Lectern's own environment (a wheel directory in
 * PIP_FIND_LINKS, a file:// index, a CA bundle): builds get those PIP_* settings, so they get the
 * paths too, read-only. URLs of other schemes name nothing here.
 */
export function pipPaths(env: NodeJS.ProcessEnv = process.env): string[] {
  const out: string[] = [];
  for (const key of PIP_PATH_SETTINGS) {
    for (const value of (env[key] ?? '').split(/\s+/)) {
      if (value.startsWith('file:')) {
        try {
          out.push(fileURLToPath(value));
        } catch {}
      } else if (path.isAbsolute(value)) out.push(value);
    }
  }
  return [...new Set(out.map((p) => path.resolve(p)))];
}

const isUnder = (p: string, dir: string) => p === dir || p.startsWith(dir === '/' ? '/' : `${dir}/`);

/** Directories already walked: whether each holds nothing but files, directories and links (no socket, fifo or device). */
const walked = new Map<string, boolean>();
const MAX_WALK = 200_000;

/** Whether `dir` holds only regular files, directories and links (a socket bound read-only can still be connected to). */
function onlyPlainFiles(dir: string): boolean {
  const known = walked.get(dir);
  if (known !== undefined) return known;
  let seen = 0;
  const walk = (d: string): boolean => {
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return true; // one Lectern cannot list: a build (never more privileged than Lectern) cannot list it either
    }
    for (const e of entries) {
      if (++seen > MAX_WALK) return false;
      if (e.isDirectory()) {
        if (!walk(path.join(d, e.name))) return false;
      } else if (!e.isFile() && !e.isSymbolicLink()) return false;
    }
    return true;
  };
  const clean = walk(dir);
  walked.set(dir, clean);
  return clean;
}

/**
 * bubblewrap's arguments that put host path `host` at the same place in the sandbox, read-only
 * (its parents made traversable): a link whose target is in the system directories (or /proc)
 * stays a link, any other link is replaced by what it resolves to; only regular files and
 * directories holding nothing else are bound. None when it is missing or is something else.
 */
function bindAsHostHasIt(host: string, madeAbove = '/'): string[] {
  const args = placeAsHostHasIt(host);
  return args.length ? [...parents(host, madeAbove), ...args] : [];
}

function placeAsHostHasIt(host: string): string[] {
  let st;
  try {
    st = lstatSync(host);
  } catch {
    return [];
  }
  let source = host;
  if (st.isSymbolicLink()) {
    const text = readlinkSync(host);
    if (isUnder(path.resolve(path.dirname(host), text), '/proc')) return ['--symlink', text, host];
    try {
      source = realpathSync(host);
      st = statSync(source);
    } catch {
      return [];
    }
    if (isUnder(source, '/usr')) return ['--symlink', text, host];
  }
  if (st.isFile()) return ['--ro-bind', source, host];
  if (st.isDirectory() && onlyPlainFiles(source)) return ['--ro-bind', source, host];
  return [];
}

let root: { args: string[]; bound: string[] } | undefined;

/**
 * The sandbox's root, made once: SYSTEM_PATHS as the host has them, /etc's allowlist, DATA_PATHS,
 * and /var/tmp as a link to the build's /tmp. Every command of every build has the same one.
 */
export function systemRoot(): { args: string[]; bound: string[] } {
  if (root) return root;
  const args: string[] = [];
  const bound: string[] = [];
  const add = (more: string[]) => {
    args.push(...more);
    const i = more.indexOf('--ro-bind');
    if (i >= 0) bound.push(more[i + 2]!);
  };
  for (const p of SYSTEM_PATHS) {
    let st;
    try {
      st = lstatSync(p);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) add(['--symlink', readlinkSync(p), p]);
    else if (st.isDirectory()) add(['--ro-bind', p, p]);
  }
  args.push('--perms', '0755', '--dir', '/etc'); // there, and traversable, whatever of it is bound
  for (const name of ETC_ALLOWED) {
    // resolv.conf is chosen per step (see prepareSandbox).
    if (name !== 'resolv.conf') add(bindAsHostHasIt(path.join('/etc', name), '/etc'));
  }
  for (const p of DATA_PATHS) add(bindAsHostHasIt(p));
  args.push('--perms', '0755', '--dir', '/var', '--symlink', '../tmp', '/var/tmp');
  root = { args, bound };
  return root;
}

/** The host's /etc/resolv.conf as the sandbox gets it (resolved when it is a link, say into /run). */
const hostResolvConf = () => bindAsHostHasIt('/etc/resolv.conf', '/etc');

/**
 * A step inside the sandbox, before the command: closes every descriptor above 2, whatever its
 * number (the ones Lectern's process inherited without close-on-exec, bubblewrap's own), as listed
 * by /proc/self/fd, then runs the command. bash, as dash cannot name descriptors above 9; `-p`
 * so that no BASH_ENV or exported function runs in it. No /proc/self/fd: the command does not run.
 */
const CLOSER = [
  '[ -d /proc/self/fd ] || { echo "Lectern: the sandbox has no /proc/self/fd to close descriptors with" >&2; exit 125; }',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell's parameter expansion, not a template
  'for f in /proc/self/fd/*; do n=${f##*/}; if [ "$n" -gt 2 ]; then eval "exec $n>&-"; fi; done',
  'exec "$@"',
].join('\n');
export const closeDescriptors = (bash: string) => [bash, '-p', '-c', CLOSER, 'lectern-sandbox'];

/** Whether network steps can have a filtered network here (else they run with none). */
export function filteredNetworkAvailable(): boolean {
  return Boolean(tools().slirp && tools().nft && tools().nsenter);
}

/** The environment every git command gets: no prompts, and only network transports (no file://, no ext::). */
export const GIT_ENV = { GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: '/bin/true', GIT_ALLOW_PROTOCOL: 'http:https:git:ssh' };

export const isRoot = () => process.getuid?.() === 0;

export interface SandboxOptions {
  /** The only writable directory (its owner must be `uid`). */
  workdir: string;
  /** Directories never seen (the data dir, storage, the home of Lectern's user): not in the root; covered when inside something bound. */
  hide: string[];
  cwd: string;
  /** No network (false), or the filtered outside network (true). */
  network: boolean;
  /**
   * Host directories put read-only at their own path (a clone's allowed local repositories,
   * LECTERN_BUILD_LOCAL_REPOSITORIES): only for the git commands that read them.
   */
  readOnly?: string[];
  /** Host directories bound writable inside the build's directory (the project's cache at `home/.cache`): their mount points must exist. */
  writable?: { host: string; at: string }[];
  /** Run as this user id (only when Lectern runs as root); null: as Lectern's user. */
  uid: number | null;
  limits: BuildLimits;
  /**
   * A build image to run in instead of the host's system (docs/design/images.md): its root
   * filesystem, read-only, under the build's own layer (an overlay whose `upper` and `work` are in
   * `layer`), which keeps what the command writes outside the build's directory.
   */
  image?: { rootfs: string; layer: string } | null;
  /**
   * Run as root in the sandbox, with the few capabilities a package manager needs, the image's
   * root writable (into the layer): only for Lectern's own `apt-get` of `build.apt_packages`.
   */
  asRoot?: boolean;
}

/** The capabilities `apt-get install` keeps when it runs as root in a build's layer: files' owners and modes, and apt's drop to its own user. */
const PACKAGE_MANAGER_CAPS = ['CAP_CHOWN', 'CAP_DAC_OVERRIDE', 'CAP_FOWNER', 'CAP_FSETID', 'CAP_SETUID', 'CAP_SETGID', 'CAP_SETFCAP'];

/** A path as overlayfs's mount options may carry it (they are separated by `,` and `:`). */
const PLAIN_PATH = /^[\w./@+-]+$/;

/** The directories of a build's layer: what the image shows changed (`upper`), overlayfs's scratch (`work`), and the mount point (`merged`). */
export const layerDirs = (layer: string) => ({ upper: path.join(layer, 'upper'), work: path.join(layer, 'work'), merged: path.join(layer, 'merged') });

/**
 * Makes the layer's directories (root's, when Lectern is root) and, in `upper`, the mount points
 * the sandbox binds over (the build's directory and what it reads, as the host has them;
 * `directories` that exist only in the sandbox), as the image lacks them.
 */
function prepareLayer(image: { rootfs: string; layer: string }, targets: string[], directories: string[]): string[] {
  const { upper, work, merged } = layerDirs(image.layer);
  for (const p of [image.rootfs, upper, work, merged]) {
    if (!PLAIN_PATH.test(p)) throw new Error(`the build image's path ${JSON.stringify(p)} has characters an overlay mount cannot take`);
  }
  // The layer is root's alone on the host: what a package install leaves in it (a set-user-id
  // program, say) is reached only through the sandbox, where no-new-privileges holds.
  mkdirSync(image.layer, { recursive: true, mode: 0o700 });
  for (const d of [upper, work, merged]) mkdirSync(d, { recursive: true, mode: 0o755 });
  for (const d of directories) mkdirSync(path.join(upper, d), { recursive: true, mode: 0o755 });
  for (const t of targets) {
    const inUpper = path.join(upper, t);
    let st;
    try {
      st = statSync(t);
    } catch {
      continue;
    }
    if (st.isDirectory()) mkdirSync(inUpper, { recursive: true, mode: 0o755 });
    else if (!existsSync(inUpper)) {
      mkdirSync(path.dirname(inUpper), { recursive: true, mode: 0o755 });
      writeFileSync(inUpper, '');
    }
  }
  return ['-o', `lowerdir=${image.rootfs},upperdir=${upper},workdir=${work}`, merged];
}

/** The user id build `buildId` runs as when Lectern runs as root; null otherwise. */
export function buildUid(limits: BuildLimits, buildId: number): number | null {
  return isRoot() ? limits.uidBase + (buildId % 100_000) : null;
}

/** Why a sandboxed command was stopped by a bound, for the build's log. */
export type LimitHit = { kind: 'disk' | 'memory' | 'processes'; message: string };

/** A prepared sandbox: argv to spawn (with fds 3 and 4 for bubblewrap, closed before the command runs), then `start` with the child. */
export interface SandboxRun {
  argv: string[];
  /** Called right after spawn: joins cgroups, sets up the network, then lets the command run. */
  start(child: ChildProcess): Promise<void>;
  /** Called when the command has ended: stops the network helper, removes cgroups; says which bound it hit. */
  stop(exitCode: number | null): Promise<LimitHit | null>;
  /** Lines for the log about how this sandbox is weaker than asked (no filtered network here). */
  notes: string[];
  /** Called every few seconds while running; returns a hit when the command must be killed. */
  watch(): Promise<LimitHit | null>;
}

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
export const formatBytes = (n: number) =>
  n >= GiB ? `${+(n / GiB).toFixed(1)} GiB` : n >= MiB ? `${+(n / MiB).toFixed(1)} MiB` : `${Math.round(n / 1024)} KiB`;

let sequence = 0;

/** What bubblewrap is started with: the root it shows, the namespaces it unshares, then the command as the build's user. docs/design/sandbox.md. */
function bwrapArgv(p: {
  bwrap: string;
  bash: string;
  /** prlimit and its limits, when it is installed. */
  prlimit: string[] | null;
  system: { args: string[]; bound: string[] };
  pipArgs: string[];
  bound: string[];
  tmp: string;
  /** The sandbox's own resolv.conf (a network of its own), else the host's entries are used. */
  resolv: string | null;
  dropUser: string[];
  /** Capabilities kept (all are dropped first). */
  caps: string[];
  argv: string[];
  o: SandboxOptions;
}): string[] {
  const { bwrap, bash, prlimit, system, pipArgs, bound, tmp, resolv, dropUser, caps, argv, o } = p;
  return [
    bwrap,
    ...system.args,
    ...pipArgs,
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    // /tmp is on the build's disk, counted with it (first: the data dir may itself be under /tmp).
    '--bind',
    tmp,
    '/tmp',
    // An image has its own /var/tmp (the host's root gets a link to /tmp instead).
    ...(o.image ? ['--bind', tmp, '/var/tmp'] : []),
    // Hidden directories are not in the root at all; one that lies inside something bound (a data
    // dir under /usr/local, say) is covered by an empty tmpfs. Parents before children.
    // Directories bubblewrap makes for mount points inside a tmpfs are made traversable (0755) first.
    ...[...new Set(o.hide)]
      .filter((d) => bound.some((b) => isUnder(d, b)))
      .sort((a, b) => a.length - b.length)
      .flatMap((d) => [...parents(d), '--tmpfs', d]),
    ...parents(o.workdir),
    '--bind',
    o.workdir,
    o.workdir,
    ...(o.writable ?? []).flatMap((w) => [...parents(w.at), '--bind', w.host, w.at]),
    ...(o.readOnly ?? []).flatMap((d) => [...parents(d), '--ro-bind', d, d]),
    ...(resolv ? ['--ro-bind', resolv, '/etc/resolv.conf'] : o.image ? [] : hostResolvConf()),
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--unshare-net',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    ...caps.flatMap((c) => ['--cap-add', c]),
    '--info-fd',
    '3',
    '--block-fd',
    '4',
    '--chdir',
    o.cwd,
    '--',
    ...closeDescriptors(bash),
    ...(prlimit ? [...prlimit, '--'] : []),
    ...dropUser,
    ...argv,
  ];
}

/**
 * The sandbox of one command: its files made (the build's /tmp, its resolv.conf, its cgroups, an
 * image's layer), the whole argv to spawn (bubblewrap's, after an image's mount), and what
 * runCommand calls around it (sandboxRun). docs/design/sandbox.md.
 */
export function prepareSandbox(argv: string[], o: SandboxOptions): SandboxRun {
  const network = o.network && filteredNetworkAvailable();
  const notes = o.network && !network ? ['slirp4netns or nftables is not installed: this step runs without network.'] : [];
  const root = isRoot();
  const id = `${process.pid}-${++sequence}`;
  // The sandbox's own /etc/resolv.conf: slirp4netns answers DNS at 10.0.2.3 and forwards it.
  const resolv = path.join(o.workdir, '.resolv.conf');
  if (network) writeFileSync(resolv, 'nameserver 10.0.2.3\n');
  const tmp = path.join(o.workdir, '.tmp');
  mkdirSync(tmp, { recursive: true });

  if (o.asRoot && !(root && o.image)) throw new Error('a command runs as root only in a build image, and only when Lectern runs as root');
  const { bwrap, prlimit, bash } = tools();
  if (!bwrap || !bash) throw new Error('bubblewrap (bwrap) or bash is not installed: Lectern runs no command without its sandbox');
  // Made last of what can be refused: a refusal after them would leave their directories behind.
  const cgroups = root ? makeCgroups(`lectern-${id}`, o.limits) : null;
  try {
    return sandboxRun(sandboxArgv(argv, o, { root, network, tmp, resolv, bwrap, prlimit, bash, cgroups }), notes, network, cgroups, o);
  } catch (e) {
    cgroups?.remove();
    throw e;
  }
}

/** bubblewrap's argv around `argv`, with an image's layer mounted first where the build has one. */
function sandboxArgv(
  argv: string[],
  o: SandboxOptions,
  s: { root: boolean; network: boolean; tmp: string; resolv: string; bwrap: string; prlimit: string | null; bash: string; cgroups: Cgroups | null },
): string[] {
  const { root, network, tmp, resolv, bwrap, prlimit, bash, cgroups } = s;
  const rlimits = rlimitsFor(o, cgroups?.memory ?? false);
  const { dropUser, caps } = privileges(o, root);
  // pip's local index and wheels, unless they overlap a hidden directory (the data dir, a home).
  const pip = pipPaths().filter((p) => !o.hide.some((h) => isUnder(p, h) || isUnder(h, p)));
  const pipArgs = pip.flatMap((p) => bindAsHostHasIt(p));
  const { layer, system } = rootOf(o, pip);
  const bound = [...system.bound, ...pip];
  const { unshare, mount } = tools();
  if (layer && (!unshare || !mount)) throw new Error('unshare or mount (util-linux) is not installed: a build image cannot be mounted');
  const full = bwrapArgv({
    bwrap,
    bash,
    prlimit: prlimit ? [prlimit, ...rlimits] : null,
    system,
    pipArgs,
    bound,
    tmp,
    resolv: network ? resolv : null,
    dropUser,
    caps,
    argv,
    o,
  });
  // An image: bubblewrap starts in a mount namespace of its own where the build's layer is
  // mounted over the image, and gone with the namespace when the command ends.
  if (layer) full.unshift(...layerMount(unshare!, mount!, bash, layer));
  return full;
}

/**
 * The prepared sandbox around its argv `full`: what runCommand calls once bubblewrap is spawned
 * (`start`: the cgroups joined and the filtered network connected before the command may run),
 * while it runs (`watch`: the disk used) and when it has ended (`stop`: the network helper killed,
 * which bound was hit, the cgroups removed).
 */
function sandboxRun(full: string[], notes: string[], network: boolean, cgroups: Cgroups | null, o: SandboxOptions): SandboxRun {
  let slirp: ChildProcess | null = null;
  return {
    argv: full,
    notes,
    async start(child) {
      const info = child.stdio[3] as Readable;
      const block = child.stdio[4] as Writable;
      // bubblewrap may be gone already (a bad mount, a killed build): its pipes must not throw.
      info.on('error', () => {});
      block.on('error', () => {});
      const pid = await readChildPid(info, child);
      cgroups?.add(pid);
      if (network) slirp = await connectNetwork(pid, o.limits.networkAllow);
      block.end('1');
    },
    async stop(exitCode) {
      if (slirp && slirp.exitCode === null) {
        slirp.kill('SIGKILL');
      }
      // A file cut short at the disk limit (RLIMIT_FSIZE) makes its writer fail: only then is the disk walked again.
      const disk = exitCode !== 0 ? await this.watch() : null;
      const hit: LimitHit | null = cgroups?.oomKilled()
        ? {
            kind: 'memory',
            message: `the build's memory limit of ${formatBytes(o.limits.maxMemoryBytes)} was reached (${o.limits.limitSources.memory})`,
          }
        : cgroups?.pidsMaxed()
          ? {
              kind: 'processes',
              message: `the build reached its limit of ${o.limits.maxProcesses} processes (${o.limits.limitSources.processes})`,
            }
          : disk;
      cgroups?.remove();
      return hit;
    },
    async watch() {
      // What the command wrote into the image (its layer) and the project's cache count with the build's directory.
      let used = 0;
      for (const dir of [...(o.image ? [layerDirs(o.image.layer).upper] : []), ...(o.writable ?? []).map((w) => w.host), o.workdir]) {
        used += await diskUsage(dir, o.limits.maxDiskBytes - used);
      }
      // A file as large as the whole limit was stopped by RLIMIT_FSIZE: that is the limit reached too.
      return used >= o.limits.maxDiskBytes
        ? { kind: 'disk', message: `the build used more than its disk limit of ${formatBytes(o.limits.maxDiskBytes)} (LECTERN_BUILD_MAX_DISK_BYTES)` }
        : null;
    },
  };
}

/**
 * The sandbox's root: the host's system directories (systemRoot), or a build image over the
 * build's layer, where nothing of the host is bound but what the sandbox names; the image is
 * read-only (writable into the layer only for Lectern's own package installs).
 */
function rootOf(o: SandboxOptions, pip: string[]): { layer: string[] | null; system: { args: string[]; bound: string[] } } {
  if (!o.image) return { layer: null, system: systemRoot() };
  const layer = prepareLayer(
    o.image,
    [o.workdir, ...(o.readOnly ?? []), ...pip],
    (o.writable ?? []).map((w) => w.at),
  );
  return { layer, system: { args: [o.asRoot ? '--bind' : '--ro-bind', layerDirs(o.image.layer).merged, '/'], bound: [] } };
}

/** prlimit's bounds of a command: processes, file size, no core dumps, and memory where no cgroup bounds it. */
function rlimitsFor(o: SandboxOptions, memoryCgroup: boolean): string[] {
  return [
    // RLIMIT_NPROC counts every process of the user: for root, the host's too (the pids cgroup bounds it instead).
    ...(o.asRoot ? [] : [`--nproc=${o.limits.maxProcesses}`]),
    `--fsize=${o.limits.maxDiskBytes}`,
    `--core=0`,
    ...(memoryCgroup ? [] : [`--as=${o.limits.maxMemoryBytes}`]),
  ];
}

/** Who the command runs as: the build's user (setpriv, from root), Lectern's own user, or root with a package manager's capabilities. */
function privileges(o: SandboxOptions, root: boolean): { dropUser: string[]; caps: string[] } {
  if (o.asRoot) return { dropUser: [], caps: PACKAGE_MANAGER_CAPS };
  const { setpriv } = tools();
  if (o.uid === null || !root || !setpriv) return { dropUser: [], caps: [] };
  return {
    dropUser: [setpriv, `--reuid=${o.uid}`, `--regid=${o.uid}`, '--clear-groups', '--bounding-set=-all', '--inh-caps=-all', '--no-new-privs', '--'],
    // Kept only until setpriv changes the user (which clears them all): the user and group changes,
    // and entering the build's directories (its user's, mode 700) as root without caps.
    caps: ['CAP_SETUID', 'CAP_SETGID', 'CAP_SETPCAP', 'CAP_DAC_READ_SEARCH'],
  };
}

/**
 * The start of a command in an image: a mount namespace of its own (private: the host never sees
 * the mount), the layer mounted there over the image, then bubblewrap. All by absolute path: the
 * child's PATH starts with the build's venv/bin.
 */
function layerMount(unshare: string, mount: string, bash: string, layer: string[]): string[] {
  const script = '"$1" -t overlay lectern-layer "$2" "$3" "$4" || { echo "Lectern: the build image could not be mounted" >&2; exit 125; }; shift 4; exec "$@"';
  // Not root: a user namespace of its own, whose root may mount an overlay (Linux 5.11 and later).
  const user = isRoot() ? [] : ['--user', '--map-root-user'];
  return [unshare, ...user, '--mount', '--propagation', 'private', '--', bash, '-p', '-c', script, 'lectern-layer', mount, ...layer];
}

/** `--dir` for each ancestor of `dir` below `above` (existing ones are left as they are), traversable. */
function parents(dir: string, above = '/'): string[] {
  const out: string[] = [];
  let p = path.dirname(path.resolve(dir));
  const chain: string[] = [];
  while (p !== '/' && p !== above) {
    chain.unshift(p);
    p = path.dirname(p);
  }
  for (const c of chain) out.push('--perms', '0755', '--dir', c);
  return out;
}

/** bubblewrap writes `{"child-pid": N}` on its info fd once the namespaces exist. */
function readChildPid(info: Readable, child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let text = '';
    const done = (e?: Error, pid?: number) => {
      info.off('data', onData);
      child.off('exit', onExit);
      if (e) reject(e);
      else resolve(pid!);
    };
    const onData = (b: Buffer) => {
      text += b.toString();
      const m = /"child-pid"\s*:\s*(\d+)/.exec(text);
      if (m) done(undefined, Number(m[1]));
    };
    const onExit = () => done(new Error(`bubblewrap exited before the sandbox was ready`));
    info.on('data', onData);
    child.once('exit', onExit);
  });
}

/** IPv4 ranges no network step reaches, whatever is allowed. */
const NEVER = ['0.0.0.0/8', '127.0.0.0/8', '169.254.0.0/16', '10.0.2.0/24', '224.0.0.0/4', '240.0.0.0/4', '255.255.255.255/32'];
/** Private and shared ranges, reached only when LECTERN_BUILD_NETWORK_ALLOW names them. */
const PRIVATE = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '192.0.0.0/24', '198.18.0.0/15'];

/** This machine's own addresses (what a build could otherwise reach Lectern and its database on). */
export function ownAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .filter((a): a is NonNullable<typeof a> => Boolean(a) && a!.family === 'IPv4')
    .map((a) => a.address);
}

const ipv4 = (a: string) => a.split('.').reduce((n, part) => n * 256 + Number(part), 0);
const inCidr = (address: string, cidr: string) => {
  const [base, bits = '32'] = cidr.split('/');
  if (isIP(base!) !== 4) return false;
  const size = 2 ** (32 - Number(bits));
  return Math.floor(ipv4(address) / size) === Math.floor(ipv4(base!) / size);
};

/**
 * Why the build firewall refuses `address` (an IP address), naming the setting that changes it,
 * or null when a network step may reach it. The same ranges as firewallRules.
 */
export function firewallRefusal(address: string, allow: string[], own = ownAddresses()): string | null {
  const local = `a repository on this machine is cloned from a directory LECTERN_BUILD_LOCAL_REPOSITORIES names (file:///… or a path), never over the network`;
  if (isIP(address) === 6) {
    if (address === '::1') return `${address} is loopback, which builds never reach: ${local}`;
    return `${address} is an IPv6 address, which builds cannot reach (their network is IPv4 only)`;
  }
  if (isIP(address) !== 4) return null;
  if (inCidr(address, '127.0.0.0/8')) return `${address} is loopback, which builds never reach: ${local}`;
  if (own.includes(address)) return `${address} is an address of this machine, which builds never reach: ${local}`;
  const never = NEVER.find((c) => inCidr(address, c));
  if (never) return `${address} is in ${never} (link-local, reserved or the build network's own), which builds never reach`;
  if (allow.some((c) => inCidr(address, c))) return null;
  const priv = PRIVATE.find((c) => inCidr(address, c));
  if (priv)
    return `${address} is in the private range ${priv}, which builds reach only when LECTERN_BUILD_NETWORK_ALLOW names it (for example LECTERN_BUILD_NETWORK_ALLOW=${address}/32)`;
  return null;
}

/** The firewall of a network step's namespace, in nft's language. */
export function firewallRules(allow: string[], own = ownAddresses()): string {
  const reject = (cidr: string) => `    ip daddr ${cidr} reject with icmp type admin-prohibited`;
  return [
    'table ip lectern {',
    '  chain out {',
    '    type filter hook output priority 0; policy accept;',
    '    oifname "lo" accept',
    '    ip daddr 10.0.2.3 udp dport 53 accept',
    '    ip daddr 10.0.2.3 tcp dport 53 accept',
    ...[...NEVER, ...own.map((a) => `${a}/32`)].map(reject),
    ...allow.map((cidr) => `    ip daddr ${cidr} accept`),
    ...PRIVATE.map(reject),
    '  }',
    '}',
    'table ip6 lectern6 {',
    '  chain out {',
    '    type filter hook output priority 0; policy drop;',
    '    oifname "lo" accept',
    '  }',
    '}',
    '',
  ].join('\n');
}

async function connectNetwork(pid: number, allow: string[]): Promise<ChildProcess> {
  const nsArgs = isRoot() ? [`--net=/proc/${pid}/ns/net`] : [`--user=/proc/${pid}/ns/user`, `--net=/proc/${pid}/ns/net`, '--preserve-credentials'];
  // The firewall first: nothing leaves before it holds.
  await new Promise<void>((resolve, reject) => {
    const nft = spawn(tools().nsenter!, [...nsArgs, tools().nft!, '-f', '-'], { stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    nft.stderr!.on('data', (b: Buffer) => (err += b.toString()));
    nft.once('error', reject);
    nft.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`the build network's firewall could not be set up: ${err.trim()}`))));
    nft.stdin!.end(firewallRules(allow));
  });
  const slirp = spawn(
    tools().slirp!,
    ['--configure', '--mtu=65520', '--disable-host-loopback', '--ready-fd=3', ...(isRoot() ? [] : [`--userns-path=/proc/${pid}/ns/user`]), String(pid), 'tap0'],
    { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] },
  );
  let err = '';
  slirp.stderr!.on('data', (b: Buffer) => (err = (err + b.toString()).slice(-2000)));
  await new Promise<void>((resolve, reject) => {
    const ready = slirp.stdio[3] as Readable;
    ready.once('data', () => resolve());
    slirp.once('error', reject);
    slirp.once('exit', () => reject(new Error(`slirp4netns stopped before the network was up: ${err.trim()}`)));
  });
  slirp.removeAllListeners('exit');
  slirp.on('error', () => {});
  return slirp;
}

// ---------------------------------------------------------------------------------------------
// cgroups: memory and pids of one sandbox, v1 (a controller per hierarchy) or v2 (unified), made
// under Lectern's own cgroup. Where they can't be made, rlimits stand alone.

interface Cgroups {
  memory: boolean;
  add(pid: number): void;
  oomKilled(): boolean;
  pidsMaxed(): boolean;
  remove(): void;
}

function ownCgroup(controller: string | null): string | null {
  try {
    for (const line of readFileSync('/proc/self/cgroup', 'utf8').split('\n')) {
      const [, ctrls, p] = line.split(':');
      if (p === undefined) continue;
      if (controller === null ? ctrls === '' : ctrls!.split(',').includes(controller)) return p;
    }
  } catch {}
  return null;
}

/**
 * Makes the memory and pids cgroups of sandbox `name` under Lectern's own, bounded by `limits`
 * (v1: one per controller; v2: one for both, with no swap); null when none could be made.
 */
function makeCgroups(name: string, limits: BuildLimits): Cgroups | null {
  const dirs: string[] = [];
  let memoryDir: string | null = null;
  let pidsDir: string | null = null;
  let v2 = false;
  const tryMake = (dir: string, files: [string, string][]) => {
    try {
      mkdirSync(dir);
      for (const [f, v] of files) writeFileSync(path.join(dir, f), v);
      dirs.push(dir);
      return true;
    } catch {
      try {
        rmdirSync(dir);
      } catch {}
      return false;
    }
  };
  const memV1 = ownCgroup('memory');
  if (memV1 !== null && existsSync('/sys/fs/cgroup/memory/memory.limit_in_bytes')) {
    const dir = path.join('/sys/fs/cgroup/memory', memV1, name);
    const swap = existsSync(path.join('/sys/fs/cgroup/memory', memV1, 'memory.memsw.limit_in_bytes'));
    if (
      tryMake(dir, [
        ['memory.limit_in_bytes', String(limits.maxMemoryBytes)],
        ...(swap ? ([['memory.memsw.limit_in_bytes', String(limits.maxMemoryBytes)]] as [string, string][]) : []),
      ])
    )
      memoryDir = dir;
    const pidsV1 = ownCgroup('pids');
    const pids = pidsV1 !== null && existsSync('/sys/fs/cgroup/pids') ? path.join('/sys/fs/cgroup/pids', pidsV1, name) : null;
    if (pids && tryMake(pids, [['pids.max', String(limits.maxProcesses)]])) pidsDir = pids;
  } else {
    const unified = ownCgroup(null);
    if (unified !== null && existsSync('/sys/fs/cgroup/cgroup.controllers')) {
      const dir = path.join('/sys/fs/cgroup', unified, name);
      if (
        tryMake(dir, [
          ['memory.max', String(limits.maxMemoryBytes)],
          ['memory.swap.max', '0'],
          ['pids.max', String(limits.maxProcesses)],
        ])
      ) {
        memoryDir = dir;
        pidsDir = dir;
        v2 = true;
      }
    }
  }
  if (!dirs.length) return null;
  return cgroupsOf(dirs, memoryDir, pidsDir, v2);
}

/**
 * The cgroups `makeCgroups` made (`dirs`; the memory and pids ones among them, v1 or v2): a
 * process is added to each, their events say which bound was hit, and they are removed once the
 * sandbox's last processes have left.
 */
function cgroupsOf(dirs: string[], memoryDir: string | null, pidsDir: string | null, v2: boolean): Cgroups {
  return {
    memory: memoryDir !== null,
    add(pid) {
      for (const d of dirs) writeFileSync(path.join(d, 'cgroup.procs'), String(pid));
    },
    oomKilled() {
      if (!memoryDir) return false;
      try {
        if (v2) return /oom_kill [1-9]/.test(readFileSync(path.join(memoryDir, 'memory.events'), 'utf8'));
        const oom = readFileSync(path.join(memoryDir, 'memory.oom_control'), 'utf8');
        if (/oom_kill [1-9]/.test(oom)) return true;
        return Number(readFileSync(path.join(memoryDir, 'memory.failcnt'), 'utf8')) > 0 && /under_oom 1/.test(oom);
      } catch {
        return false;
      }
    },
    pidsMaxed() {
      try {
        return pidsDir !== null && /max [1-9]/.test(readFileSync(path.join(pidsDir, 'pids.events'), 'utf8'));
      } catch {
        return false;
      }
    },
    remove() {
      // In the background: the sandbox's last processes may still be exiting, and nothing waits for this.
      const rest = [...dirs].reverse();
      const next = (tries: number) => {
        while (rest.length) {
          try {
            rmdirSync(rest[0]!);
            rest.shift();
          } catch {
            if (tries < 40) setTimeout(() => next(tries + 1), 50).unref();
            return;
          }
        }
      };
      next(0);
    },
  };
}

/** Bytes used under `dir` (allocated blocks), stopping early once past `stopAt`. */
export async function diskUsage(dir: string, stopAt = Infinity): Promise<number> {
  let total = 0;
  const seen = new Set<string>();
  const walk = async (d: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (total > stopAt) return;
      const p = path.join(d, e.name);
      try {
        const st = await lstat(p, { bigint: false });
        const key = `${st.dev}:${st.ino}`;
        if (seen.has(key)) continue;
        seen.add(key);
        total += Math.max(st.blocks * 512, 0);
        if (st.isDirectory()) await walk(p);
      } catch {}
    }
  };
  await walk(dir);
  return total;
}

/**
 * Output of bubblewrap failing before the command ran: nothing but its own one-line complaint
 * about setting up the namespaces (seen under load, several sandboxes starting at once:
 * `bwrap: loopback: Failed RTM_NEWADDR: No child processes`).
 */
export const SANDBOX_SETUP_FAILED = /^\s*bwrap: (loopback: Failed RTM_NEWADDR|Creating new namespace failed|setting up uid map)[^\n]*\s*$/;

/**
 * Runs `attempt` again (up to 3 times, 100 ms then 400 ms later) while bubblewrap could not set
 * the sandbox up: this machine's trouble, not the command's, so it must not fail a build or a sync.
 */
export async function retryingSandboxSetup<T extends { exitCode: number; output: string }>(
  attempt: () => Promise<T>,
  mayRetry: () => boolean = () => true,
  /** Told of an attempt that is tried again (a build forgets its recorded command: it never ran). */
  discard: (failed: T) => Promise<unknown> = async () => {},
): Promise<T> {
  let r = await attempt();
  for (const wait of [100, 400]) {
    if (r.exitCode === 0 || !SANDBOX_SETUP_FAILED.test(r.output) || !mayRetry()) return r;
    await discard(r);
    await new Promise((resolve) => setTimeout(resolve, wait));
    r = await attempt();
  }
  return r;
}

/**
 * Runs one command that touches a remote or repository outside a build (`git ls-remote` for
 * version sync) in a sandbox of its own, with the filtered network, as a build user, in a
 * throwaway directory under `scratch`.
 */
export async function runSandboxedOnce(
  argv: string[],
  o: {
    scratch: string;
    hide: string[];
    limits: BuildLimits;
    env: Record<string, string>;
    timeoutMs: number;
    /** A local repository's allowed directory, read-only, and then no network (it needs none). */
    readOnly?: string[];
  },
): Promise<{ exitCode: number; output: string; timedOut: boolean }> {
  await mkdir(o.scratch, { recursive: true, mode: 0o700 });
  const workdir = await mkdtemp(path.join(o.scratch, 'once-'));
  const uid = isRoot() ? o.limits.uidBase + 99_999 : null;
  try {
    if (uid !== null) await chown(workdir, uid, uid);
    const r = await retryingSandboxSetup(() =>
      runCommand(argv, {
        cwd: workdir,
        env: { ...o.env, HOME: workdir, TMPDIR: '/tmp' },
        timeoutMs: o.timeoutMs,
        sandbox: prepareSandbox(argv, {
          workdir,
          hide: o.hide,
          cwd: workdir,
          network: !o.readOnly?.length,
          readOnly: o.readOnly,
          uid,
          limits: o.limits,
        }),
        maxOutputBytes: 64 * MiB,
      }),
    );
    return { exitCode: r.exitCode, output: r.output, timedOut: r.timedOut };
  } finally {
    await rm(workdir, { recursive: true, force: true }).catch(() => {});
  }
}
