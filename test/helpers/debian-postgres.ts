// A PostgreSQL cluster as Debian's initdb leaves one: "local all all trust" (anyone on the machine
// connects as anyone, with no password), its unix socket in /var/run/postgresql, no TCP. For the
// tests of what Lectern does beside such a server (uses it, and keeps builds away from it).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { freePort } from './net.ts';

export const DEBIAN_SOCKET_DIR = '/var/run/postgresql';

export interface DebianCluster {
  /** Its own port: the socket is `/var/run/postgresql/.s.PGSQL.<port>`. */
  port: number;
  /** psql over the socket, as the postgres user: the output, trimmed. */
  psql(sql: string): string;
  stop(): void;
}

function tool(name: string, places: string[]): string {
  const found = places.map((d) => path.join(d, name)).find((p) => existsSync(p));
  if (!found) throw new Error(`${name} is not installed (looked in ${places.join(', ')}): install Debian's postgresql package`);
  return found;
}

/** Starts a cluster of its own, with initdb's own defaults (trust), listening on the socket only. */
export async function startDebianCluster(): Promise<DebianCluster> {
  const versions = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a)) : [];
  const bin = path.dirname(
    tool(
      'initdb',
      versions.map((v) => `/usr/lib/postgresql/${v}/bin`),
    ),
  );
  const psqlBin = tool('psql', ['/usr/bin', bin]);
  tool('runuser', ['/usr/sbin', '/usr/bin', '/sbin']);
  if (!existsSync(DEBIAN_SOCKET_DIR)) {
    mkdirSync(DEBIAN_SOCKET_DIR, { recursive: true, mode: 0o2775 });
    execFileSync('chown', ['postgres:postgres', DEBIAN_SOCKET_DIR]);
  }
  // A port of its own, so that the socket's name (.s.PGSQL.<port>) is this cluster's alone.
  let port: number;
  do port = await freePort();
  while (existsSync(path.join(DEBIAN_SOCKET_DIR, `.s.PGSQL.${port}`)));
  const dir = mkdtempSync('/var/tmp/lectern-debian-pg-');
  execFileSync('chown', ['postgres:postgres', dir]);
  const asPostgres = (cmd: string, args: string[]) => execFileSync('runuser', ['-u', 'postgres', '--', cmd, ...args], { stdio: 'pipe' });
  const data = path.join(dir, 'data');
  asPostgres(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--no-sync']);
  asPostgres(path.join(bin, 'pg_ctl'), [
    '-D',
    data,
    '-w',
    '-l',
    path.join(dir, 'server.log'),
    '-o',
    `-c listen_addresses='' -p ${port} -k ${DEBIAN_SOCKET_DIR}`,
    'start',
  ]);
  return {
    port,
    psql: (sql) =>
      asPostgres(psqlBin, ['-h', DEBIAN_SOCKET_DIR, '-p', String(port), '-U', 'postgres', '-d', 'postgres', '-Atc', sql])
        .toString()
        .trim(),
    stop: () => {
      try {
        if (existsSync(path.join(data, 'postmaster.pid'))) asPostgres(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
