// Benchmark (not a test): how long a person waits for the command line and for the first start.
// For R rounds, alternating the order, it runs each command as a person types it (`lectern …` with
// node_modules/.bin first on PATH, as the README says: src/bin.js started by its shebang, on the
// Node 24 of node_modules/.bin) on an existing embedded data dir, wall clock from spawn to exit;
// `serve` as `npm start` runs it (`node src/bin.js serve`, the server's bundle made current first):
//   node -e 0          Node's own start, the floor every command stands on
//   --help, migrate, user create, token create, user set-password, search reindex
//   … (server running) `token create`, `user create`, `user set-password`, `search reindex` and
//                      `migrate` while `lectern serve` holds the data dir: since the control socket
//                      (docs/design/startup.md), the server runs them; a revision before it refuses
//                      (exit 1), which is timed the same
//   serve (new dir)    `lectern serve` on a new, empty data dir until it logs that it listens, with
//                      its default settings (a build worker beside it), and until its first answer
//                      (`/healthz` asked every 10 ms from the spawn on)
//   serve (existing)   the same on the data dir the commands used
// With `--base <git rev>` the same commands of that revision run side by side in the same rounds (a
// git worktree in a temporary directory sharing this checkout's node_modules and generated client).
// Prints every round, then the median of each command and its ratio to Node's own start.
//
//   npx tsx test/bench/cli.ts [rounds=5] [--base <rev>]
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import path from 'node:path';
import { benchArgs, cleanUp, median, ROOT, tempDir, worktree } from './side-by-side.ts';

const NODE = path.join(ROOT, 'node_modules/.bin/node');
const { rounds: ROUNDS, base: BASE } = benchArgs('usage: npx tsx test/bench/cli.ts [rounds=5] [--base <rev>]', 5);

const env = (dataDir: string) => ({
  ...process.env,
  PATH: `${path.join(ROOT, 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
  LECTERN_DATA_DIR: dataDir,
  NODE_ENV: 'production',
  PORT: '0',
  LECTERN_LOG_LEVEL: 'info',
});

/** Seconds from spawn to exit; the command must exit with `expect` (any code when null). */
function timed(cwd: string, argv: string[], dataDir: string, expect: number | null = 0, input?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const [file, args] = argv[0] === 'src/bin.js' ? [path.join(cwd, 'src/bin.js'), argv.slice(1)] : [NODE, argv];
    const child = spawn(file, args, { cwd, env: env(dataDir), stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (b: Buffer) => (err += b));
    child.stdin.end(input ?? '');
    child.on('exit', (code) =>
      expect === null || code === expect ? resolve((performance.now() - started) / 1000) : reject(new Error(`${argv.join(' ')} exited ${code}: ${err}`)),
    );
  });
}

/** A TCP port free now on localhost. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
    s.once('error', reject);
  });
}

/**
 * Starts `lectern serve` as `npm start` does (its default settings: a build worker beside it);
 * resolves with the seconds until it logged that it listens, until its first answer (/healthz
 * asked every 10 ms from the spawn on), and the process.
 */
async function serve(cwd: string, dataDir: string): Promise<{ seconds: number; answered: number; stop: () => Promise<void> }> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(NODE, ['src/bin.js', 'serve'], { cwd, env: { ...env(dataDir), PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let exited = false;
  const stop = () =>
    new Promise<void>((done) => {
      child.once('exit', () => done());
      child.kill('SIGTERM');
    });
  const listening = new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (b: Buffer) => {
      out += b;
      if (/Lectern listening/.test(out)) resolve((performance.now() - started) / 1000);
    });
    child.on('exit', (code) => {
      exited = true;
      reject(new Error(`serve exited ${code} before listening: ${out.slice(-2000)}`));
    });
  });
  const answered = (async () => {
    while (!exited) {
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return (performance.now() - started) / 1000;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error('serve exited before it answered');
  })();
  const [seconds, first] = await Promise.all([listening, answered]);
  return { seconds, answered: first, stop };
}

interface Subject {
  name: string;
  cwd: string;
  dataDir: string;
}

type Row = Record<string, number>;

async function round(s: Subject, r: number): Promise<Row> {
  const row: Row = {};
  const run = async (label: string, argv: string[], expect: number | null = 0, input?: string) => {
    row[label] = await timed(s.cwd, argv, s.dataDir, expect, input);
  };
  row['node -e 0'] = await timed(s.cwd, ['-e', '0'], s.dataDir);
  await run('--help', ['src/bin.js', '--help']);
  await run('migrate', ['src/bin.js', 'migrate']);
  await run('user create', ['src/bin.js', 'user', 'create', `user${r}`, '--password-stdin'], 0, 'a long bench passphrase\n');
  await run('token create', ['src/bin.js', 'token', 'create', `user${r}`]);
  await run('user set-password', ['src/bin.js', 'user', 'set-password', `user${r}`], 0, 'another bench passphrase\n');
  await run('search reindex', ['src/bin.js', 'search', 'reindex']);
  const held = await serve(s.cwd, s.dataDir);
  row['serve (existing)'] = held.seconds;
  row['serve (existing): first answer'] = held.answered;
  try {
    const beside = (label: string) => `${label} (server running)`;
    await run(beside('token create'), ['src/bin.js', 'token', 'create', `user${r}`], null);
    await run(beside('user create'), ['src/bin.js', 'user', 'create', `beside${r}`, '--password-stdin'], null, 'a long bench passphrase\n');
    await run(beside('user set-password'), ['src/bin.js', 'user', 'set-password', `user${r}`], null, 'a third bench passphrase\n');
    await run(beside('search reindex'), ['src/bin.js', 'search', 'reindex'], null);
    await run(beside('migrate'), ['src/bin.js', 'migrate'], null);
  } finally {
    await held.stop();
  }
  const fresh = tempDir('lectern-bench-new-');
  const first = await serve(s.cwd, fresh);
  row['serve (new dir)'] = first.seconds;
  row['serve (new dir): first answer'] = first.answered;
  await first.stop();
  return row;
}

try {
  const subjects: Subject[] = [{ name: 'this checkout', cwd: ROOT, dataDir: tempDir('lectern-bench-cli-') }];
  if (BASE) subjects.push({ name: `base ${BASE}`, cwd: worktree(BASE, tempDir('lectern-bench-base-')), dataDir: tempDir('lectern-bench-cli-') });
  for (const s of subjects) {
    // The server's bundle made current, as `npm start` makes it before `serve` (its prestart): after
    // a change to the sources, `serve` would otherwise time the sources, which only a person who
    // changed them and skipped `npm start` runs (a revision from before the bundle has none).
    if (existsSync(path.join(s.cwd, 'src/setup/server-bundle.ts'))) execFileSync(NODE, ['src/setup/server-bundle.ts'], { cwd: s.cwd, stdio: 'ignore' });
    await timed(s.cwd, ['src/bin.js', 'migrate'], s.dataDir); // the existing data dir
  }
  const rows = new Map<string, Row[]>(subjects.map((s) => [s.name, []]));
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 ? [...subjects].reverse() : subjects;
    for (const s of order) {
      const row = await round(s, r);
      rows.get(s.name)!.push(row);
      console.log(
        `round ${r + 1} ${s.name}: ${Object.entries(row)
          .map(([k, v]) => `${k} ${v.toFixed(2)} s`)
          .join(', ')}`,
      );
    }
  }
  console.log(`\nmedian of ${ROUNDS} rounds, seconds (ratio to node -e 0)`);
  const labels = Object.keys(rows.get(subjects[0]!.name)![0]!);
  console.log(['command'.padEnd(36), ...subjects.map((s) => s.name.padStart(22))].join(''));
  for (const label of labels) {
    const cells = subjects.map((s) => {
      const all = rows.get(s.name)!;
      const m = median(all.map((x) => x[label]!));
      const floor = median(all.map((x) => x['node -e 0']!));
      return `${m.toFixed(2)} (${(m / floor).toFixed(1)}x)`.padStart(22);
    });
    console.log([label.padEnd(36), ...cells].join(''));
  }
} finally {
  cleanUp();
}
