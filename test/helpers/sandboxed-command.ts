// Run as a program of its own (node --import tsx test/helpers/sandboxed-command.ts <workdir> <uid|-> <net|nonet> <command>):
// runs one bash command in a build's sandbox the way the pipeline does (prepareSandbox, runCommand,
// retried while bubblewrap cannot set up), and prints {open, exitCode, output} as JSON, where
// `open` is what this process itself had open above 2 (what it would pass on). A test starts it
// with descriptors of its choosing to see what the sandboxed command inherits. With
// SANDBOX_IMAGE=<rootfs> and SANDBOX_LAYER=<dir>, the command runs in that build image over that
// layer (SANDBOX_AS_ROOT=1: as root, as Lectern's own package installs do).
import { readdirSync, readlinkSync } from 'node:fs';
import { DEFAULT_BUILD_LIMITS } from '../../src/config.ts';
import { prepareSandbox, retryingSandboxSetup } from '../../src/sandbox/sandbox.ts';
import { runCommand } from '../../src/sandbox/subprocess.ts';

const [workdir, uid, network, command] = process.argv.slice(2);
if (!workdir || !uid || !network || command === undefined) throw new Error('usage: sandboxed-command.ts <workdir> <uid|-> <net|nonet> <command>');
const open = Object.fromEntries(
  readdirSync('/proc/self/fd')
    .map(Number)
    .filter((fd) => fd > 2)
    .map((fd) => {
      try {
        return [fd, readlinkSync(`/proc/self/fd/${fd}`)];
      } catch {
        return [fd, null];
      }
    }),
);
const argv = ['bash', '-c', command];
const r = await retryingSandboxSetup(() =>
  runCommand(argv, {
    cwd: workdir,
    env: { PATH: '/usr/bin:/bin', HOME: workdir, LANG: 'C.UTF-8' },
    timeoutMs: 60_000,
    sandbox: prepareSandbox(argv, {
      workdir,
      hide: [],
      cwd: workdir,
      network: network === 'net',
      uid: uid === '-' ? null : Number(uid),
      limits: { ...DEFAULT_BUILD_LIMITS, networkAllow: [] },
      image: process.env.SANDBOX_IMAGE ? { rootfs: process.env.SANDBOX_IMAGE, layer: process.env.SANDBOX_LAYER! } : null,
      asRoot: process.env.SANDBOX_AS_ROOT === '1',
    }),
  }),
);
process.stdout.write(JSON.stringify({ open, exitCode: r.exitCode, output: r.output }));
