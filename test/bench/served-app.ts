// The app as `lectern serve` answers, on a new embedded database in a temporary data dir, listening
// on 127.0.0.1 with that address as its public URL and no build worker: what the benchmarks that
// drive it over HTTP (a browser, raw requests) start with. `close` stops it and removes the dir.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { createLogger } from '../../src/log.ts';

export async function servedApp(name: string): Promise<{ origin: string; db: Database; close: () => Promise<void> }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `lectern-bench-${name}-`));
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const config = loadConfig({ LECTERN_DATA_DIR: dataDir, LECTERN_PUBLIC_URL: origin, LECTERN_LOG_LEVEL: 'silent', LECTERN_BUILD_CONCURRENCY: '0' });
  const db = await openDatabase({ dataDir });
  const { handler } = buildApp({ config, db, log: createLogger('silent'), secretKey: 'bench-secret-key-0123456789abcdef0123456789' });
  server.on('request', handler);
  return {
    origin,
    db,
    close: async () => {
      server.close();
      await db.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
