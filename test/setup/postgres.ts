// Vitest global setup for the `postgres` project: a real PostgreSQL server. Uses
// LECTERN_TEST_DATABASE_URL when set; otherwise starts a throwaway cluster on 127.0.0.1 (about a
// second), migrates a template database once, and each test file clones it.
// @see docs/design/toolchain.md "PostgreSQL for tests"
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrate } from '../../src/db/migrate.ts';
import { freePort } from '../helpers/net.ts';

export const TEMPLATE = 'lectern_template';

function postgresBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) {
    const bin = path.join(root, v, 'bin');
    if (existsSync(path.join(bin, 'initdb'))) return bin;
  }
  throw new Error(
    'PostgreSQL server binaries not found (no /usr/lib/postgresql/*/bin/initdb): the postgres test project needs them. ' +
      'Install Debian\'s "postgresql" package (npm test does when run as root) or set LECTERN_TEST_DATABASE_URL.',
  );
}

function asPostgres(cmd: string, args: string[]) {
  const root = process.getuid?.() === 0;
  execFileSync(root ? 'runuser' : cmd, root ? ['-u', 'postgres', '--', cmd, ...args] : args, { stdio: 'pipe' });
}

/** A throwaway PostgreSQL server on 127.0.0.1 (or LECTERN_TEST_DATABASE_URL): its admin URL and a stop function. */
export async function startPostgres(): Promise<{ adminUrl: string; stop: () => Promise<void> }> {
  const configured = process.env.LECTERN_TEST_DATABASE_URL;
  if (configured) return { adminUrl: configured, stop: async () => {} };
  const bin = postgresBin();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lectern-pg-'));
  chmodSync(dir, 0o777);
  const data = path.join(dir, 'data');
  const port = await freePort();
  try {
    asPostgres(path.join(bin, 'initdb'), ['-D', data, '--auth=trust', '--no-sync', '-U', 'postgres', '-E', 'UTF8']);
    asPostgres(path.join(bin, 'pg_ctl'), [
      '-D',
      data,
      '-w',
      '-l',
      path.join(dir, 'server.log'),
      '-o',
      `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c max_connections=200`,
      'start',
    ]);
  } catch (e) {
    const err = e as { stderr?: Buffer };
    throw new Error(`could not start a PostgreSQL server for the tests: ${err.stderr?.toString() ?? String(e)}`);
  }
  return {
    adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: async () => {
      try {
        asPostgres(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

export default async function setup(project: TestProject) {
  const { adminUrl, stop } = await startPostgres();
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE}`);
  await admin.query(`CREATE DATABASE ${TEMPLATE}`);
  await admin.end();
  const templateUrl = withDatabase(adminUrl, TEMPLATE);
  const client = new pg.Client({ connectionString: templateUrl });
  await client.connect();
  await migrate({ exec: async (sql) => void (await client.query(sql)), query: async (sql) => (await client.query(sql)).rows });
  await client.end();
  project.provide('pgAdminUrl', adminUrl);
  return stop;
}

export function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgliteTemplate: string;
    pgliteEmpty: string;
  }
}
