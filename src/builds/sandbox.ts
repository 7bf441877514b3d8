// The walls around a build's commands, with bubblewrap when the machine has it: the system
// read-only, only the build's own directory writable, Lectern's data dir (database, secret key,
// other builds) not there at all, no capabilities, and no network while building.
// @see ../../../shared/spec/decisions.md §4, ../../../shared/reference/toolchain.md "Sandboxing"
import { execFileSync } from 'node:child_process';

let available: boolean | undefined;

export function bwrapAvailable(): boolean {
  if (available === undefined) {
    try {
      execFileSync('bwrap', ['--ro-bind', '/', '/', '--unshare-all', '--', '/bin/true'], { stdio: 'ignore', timeout: 10_000 });
      available = true;
    } catch {
      available = false;
    }
  }
  return available;
}

export interface SandboxOptions {
  /** The only writable directory. */
  workdir: string;
  /** Directories to hide entirely (Lectern's data dir). */
  hide: string[];
  cwd: string;
  network: boolean;
}

export function sandboxed(argv: string[], o: SandboxOptions): string[] {
  return [
    'bwrap',
    '--ro-bind', '/', '/',
    '--dev', '/dev',
    '--proc', '/proc',
    '--tmpfs', '/tmp',
    // Parents before children: a hidden directory inside another is mounted over the first one's tmpfs.
    ...[...new Set(o.hide)].sort((a, b) => a.length - b.length).flatMap((d) => ['--tmpfs', d]),
    '--bind', o.workdir, o.workdir,
    '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try',
    ...(o.network ? [] : ['--unshare-net']),
    '--die-with-parent', '--new-session',
    '--cap-drop', 'ALL',
    '--chdir', o.cwd,
    '--',
    ...argv,
  ];
}
