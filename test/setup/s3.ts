// A real S3 server for the storage tests: Ceph's radosgw on a throwaway one-node cluster (one
// monitor, one in-memory OSD) on 127.0.0.1, free ports and a temp dir, `auth * required = none`.
// About a second to start with the tuning below (the monitor's default 1 s Paxos interval would
// make it ≈ 12 s). Installs nothing: test/setup/system-deps.sh does, when run as root.
// @see docs/design/toolchain.md "S3 for tests"

import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { freePort } from '../helpers/net.ts';

export interface S3Server {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** S3_ENDPOINT, S3_REGION and the AWS_* keys, as openStorage() reads them. */
  env: Record<string, string>;
  stop: () => Promise<void>;
}

/** Binary -> the Debian package that provides it. */
const BINARIES: Record<string, string> = {
  'ceph-mon': 'ceph-mon',
  'ceph-osd': 'ceph-osd',
  radosgw: 'radosgw',
  'radosgw-admin': 'radosgw',
  monmaptool: 'ceph-common',
  ceph: 'ceph-common',
};

function findBinary(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(':'), '/usr/bin', '/usr/sbin', '/usr/local/bin'];
  return dirs
    .filter((d) => d.startsWith('/'))
    .map((d) => path.join(d, name))
    .find((p) => existsSync(p));
}

function run(cmd: string, args: string[], timeout = 30_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout, encoding: 'utf8' }, (err, stdout, stderr) => {
      const said = (stderr || err?.message || '').trimEnd().split('\n').slice(-12).join('\n');
      if (err) reject(new Error(`${path.basename(cmd)} ${args.join(' ')} failed: ${said}`));
      else resolve(stdout);
    });
  });
}

function cephConf(dir: string, fsid: string, monPort: number, rgwPort: number): string {
  return `[global]
fsid = ${fsid}
mon host = v2:127.0.0.1:${monPort}
mon initial members = a
public addr = 127.0.0.1
cluster addr = 127.0.0.1
ms bind ipv6 = false
auth cluster required = none
auth service required = none
auth client required = none
# radosgw asks for "secure" monitor connections by default, which auth none cannot provide
ms mon client mode = crc
keyring = /dev/null
run dir = ${dir}/run
admin socket = ${dir}/run/$name.asok
log file = ${dir}/log/$name.log
pid file = ${dir}/run/$name.pid
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 1
osd pool default pgp num = 1
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon warn on pool no redundancy = false
mon max pg per osd = 1000
mon data avail warn = 0
mon data avail crit = 0
[mon]
mon data = ${dir}/mon/$id
# every pool radosgw creates is one Paxos round: 1 s each by default
paxos propose interval = 0.05
paxos min wait = 0.01
[osd]
osd data = ${dir}/osd/$id
osd objectstore = memstore
memstore device bytes = 1073741824
[client]
rgw frontends = beast endpoint=127.0.0.1:${rgwPort}
rgw data = ${dir}/rgw
rgw thread pool size = 64
rgw enable gc threads = false
rgw enable lc threads = false
rgw dynamic resharding = false
`;
}

function tail(file: string, lines = 10): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

async function waitFor(what: string, deadline: number, check: () => Promise<boolean>, daemons: ChildProcess[]): Promise<void> {
  for (;;) {
    const dead = daemons.find((d) => d.exitCode !== null || d.signalCode !== null);
    if (dead) throw new Error(`${dead.spawnfile} exited (${dead.exitCode ?? dead.signalCode}) while waiting for ${what}`);
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Starts a one-node Ceph cluster with radosgw and creates a bucket; throws naming whatever is missing. */
export async function startS3(opts: { bucket?: string; timeoutMs?: number } = {}): Promise<S3Server> {
  const missing = Object.keys(BINARIES).filter((b) => !findBinary(b));
  if (missing.length) {
    const packages = [...new Set(missing.map((b) => BINARIES[b]))];
    throw new Error(
      `the S3 storage tests need a real S3 server (Ceph radosgw), but ${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} not installed ` +
        `(Debian packages: ${packages.join(' ')}). Install them with "apt-get install -y --no-install-recommends radosgw ceph-mon ceph-osd" ` +
        '(npm test does when run as root, through test/setup/system-deps.sh).',
    );
  }
  const bin = (name: string) => findBinary(name)!;
  const deadline = Date.now() + (opts.timeoutMs ?? 45_000);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lectern-s3-'));
  const conf = path.join(dir, 'ceph.conf');
  const pidsFile = path.join(dir, 'pids');
  const fsid = randomUUID();
  const [monPort, rgwPort] = [await freePort(), await freePort()];
  for (const sub of ['run', 'log', 'mon/a', 'osd', 'rgw']) mkdirSync(path.join(dir, sub), { recursive: true });
  writeFileSync(conf, cephConf(dir, fsid, monPort, rgwPort));
  writeFileSync(pidsFile, '');

  const daemons: ChildProcess[] = [];
  // If this test process dies without stop(), nothing else would end the daemons: a watchdog
  // shell kills the pids recorded in the pids file once this process is gone.
  const watchdog = spawn(
    'sh',
    ['-c', 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; kill -9 $(cat "$2") 2>/dev/null; rm -rf "$3"', 'watchdog', String(process.pid), pidsFile, dir],
    { detached: true, stdio: 'ignore' },
  );
  watchdog.unref();

  const daemon = (name: string, args: string[]) => {
    const out = openSync(path.join(dir, 'log', `${name}.out`), 'a');
    const child = spawn(bin(name), ['-f', '-c', conf, ...args], { stdio: ['ignore', out, out] });
    closeSync(out);
    if (child.pid) appendFileSync(pidsFile, `${child.pid}\n`);
    child.on('error', () => {}); // surfaced through exitCode by waitFor
    daemons.push(child);
    return child;
  };

  const stop = async () => {
    // SIGKILL: a memstore OSD would otherwise write its whole store to disk on the way out.
    const exits = daemons.map((d) => (d.exitCode !== null || d.signalCode !== null ? Promise.resolve() : new Promise<void>((r) => d.once('exit', () => r()))));
    for (const d of daemons) d.kill('SIGKILL');
    await Promise.race([Promise.all(exits), new Promise((r) => setTimeout(r, 5000).unref())]);
    if (watchdog.pid) {
      try {
        process.kill(watchdog.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };

  const accessKeyId = 'lectern-test';
  const secretAccessKey = 'lectern-test-secret';
  const bucket = opts.bucket ?? 'lectern-test';
  const endpoint = `http://127.0.0.1:${rgwPort}`;
  const region = 'us-east-1';
  try {
    await run(bin('monmaptool'), ['--create', '--fsid', fsid, '--addv', 'a', `[v2:127.0.0.1:${monPort}]`, path.join(dir, 'monmap')]);
    await run(bin('ceph-mon'), ['-c', conf, '--mkfs', '-i', 'a', '--monmap', path.join(dir, 'monmap')]);
    daemon('ceph-mon', ['-i', 'a']);
    const osdUuid = randomUUID();
    const osdId = (await run(bin('ceph'), ['-c', conf, '--connect-timeout', '20', 'osd', 'new', osdUuid])).trim();
    mkdirSync(path.join(dir, 'osd', osdId));
    await run(bin('ceph-osd'), ['-c', conf, '-i', osdId, '--mkfs', '--osd-uuid', osdUuid]);
    daemon('ceph-osd', ['-i', osdId]);
    daemon('radosgw', ['-n', 'client.rgw']);
    await waitFor('radosgw to answer HTTP', deadline, async () => (await fetch(endpoint)).ok, daemons);
    await run(bin('radosgw-admin'), [
      '-c',
      conf,
      'user',
      'create',
      '--uid',
      'lectern',
      '--display-name',
      'lectern tests',
      '--access-key',
      accessKeyId,
      '--secret-key',
      secretAccessKey,
    ]);
    const client = new S3Client({ endpoint, region, forcePathStyle: true, credentials: { accessKeyId, secretAccessKey } });
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
    client.destroy();
  } catch (e) {
    const logs = ['client.rgw', 'osd.0', 'mon.a'].map((n) => `--- ${n}.log (last lines)\n${tail(path.join(dir, 'log', `${n}.log`))}`).join('\n');
    await stop();
    throw new Error(`could not start radosgw (Ceph) for the S3 storage tests: ${(e as Error).message}\n${logs}`);
  }
  return {
    endpoint,
    bucket,
    region,
    accessKeyId,
    secretAccessKey,
    env: { S3_ENDPOINT: endpoint, S3_REGION: region, AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey },
    stop,
  };
}
