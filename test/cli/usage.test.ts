// The `lectern` command's usage and configuration errors (docs/design/settings.md): `node src/bin.js …` in
// child processes that stop before opening any database, so this file runs once (the `unit`
// project, vitest.config.ts) rather than once per database like test/cli/cli.test.ts.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDirs } from '../helpers/cli-databases.ts';
import { cliEnv, killChildren, root, runCli, show } from '../helpers/cli-process.ts';

const dirs = tempDirs();

afterAll(async () => {
  await killChildren();
  dirs.cleanup();
});

describe('configuration and usage errors', () => {
  it('an invalid PORT exits 1 naming PORT, without echoing the value', async () => {
    const r = await runCli(['serve'], cliEnv({ LECTERN_DATA_DIR: dirs.make('lectern-cli-'), PORT: 'abc' }));
    expect(r.code, show(['serve'], r)).toBe(1);
    expect(r.stderr).toMatch(/^lectern: invalid configuration:\n\s+PORT: /m);
    expect(r.stderr).not.toContain('abc');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('every invalid variable is listed at once', async () => {
    const r = await runCli(['migrate'], cliEnv({ PORT: '99999', LECTERN_LOG_LEVEL: 'loud', DATABASE_URL: 'mysql://x' }));
    expect(r.code, show(['migrate'], r)).toBe(1);
    for (const key of ['PORT', 'LECTERN_LOG_LEVEL', 'DATABASE_URL']) expect(r.stderr).toMatch(new RegExp(`^\\s+${key}: `, 'm'));
  });

  it('an unknown command or option exits 2 with the usage; --help exits 0', async () => {
    // Three separate processes, started together (nothing is shared between them).
    const [unknown, option, help] = await Promise.all([
      runCli(['frobnicate'], cliEnv({})),
      runCli(['user', 'create', 'x', '--emial', 'x@example.com'], cliEnv({})),
      runCli(['--help'], cliEnv({})),
    ]);
    expect(unknown.code, show(['frobnicate'], unknown)).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command "frobnicate"/);
    expect(unknown.stderr).toMatch(/usage: lectern/);
    expect(option.code, show(['user', 'create', 'x', '--emial'], option)).toBe(2);
    expect(option.stderr).toMatch(/--emial/);
    expect(option.stderr).not.toMatch(/\n\s+at /);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/usage: lectern/);
    expect(help.stdout).toMatch(/--version/);
  });

  it('--version (and -V) prints the version package.json gives, and exits 0', async () => {
    const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const r = await runCli([flag], cliEnv({}));
      expect(r.code, show([flag], r)).toBe(0);
      expect(r.stdout).toBe(`lectern ${version}\n`);
      expect(r.stderr).toBe('');
    }
  });
});
