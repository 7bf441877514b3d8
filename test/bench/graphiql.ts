// GraphiQL's weight on the wire (issue 22): the bytes a browser receives for GET /graphql and the
// parts the page loads (stylesheet, script, Monaco's three workers; fonts not counted, a browser
// fetches only the few its text uses), with Accept-Encoding none, gzip and br, against
// render-graphiql's own page (everything inlined, sent uncompressed), and the time to the first
// byte of the page and of its main script (median of 5, once the compressed copies are made).
//
//   npx tsx test/bench/graphiql.ts
import './production-mode.ts';

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { graphiqlCompressed } from '../../src/graphiql.ts';
import { createLogger } from '../../src/log.ts';
import { rawRequest } from '../serve/world.ts';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'lectern-bench-graphiql-'));
const server = createServer();
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const config = loadConfig({ LECTERN_DATA_DIR: dataDir, LECTERN_PUBLIC_URL: origin, LECTERN_LOG_LEVEL: 'silent', LECTERN_BUILD_CONCURRENCY: '0' });
const db = await openDatabase({ dataDir });
const { handler } = buildApp({ config, db, log: createLogger('silent'), secretKey: 'bench-secret-key-0123456789abcdef0123456789' });
server.on('request', handler);

const kb = (n: number) => `${(n / 1024).toFixed(0)} KB`;
const before = Buffer.byteLength(renderGraphiQL({ title: 'Lectern GraphQL' }));
console.log(`before: render-graphiql's page, identity only: ${kb(before)} (${before} bytes), no caching`);

let t = performance.now();
await graphiqlCompressed();
console.log(`gzip and brotli copies made in ${((performance.now() - t) / 1000).toFixed(1)} s (once per process, off the event loop)`);

const page = (await rawRequest(`${origin}/graphql`, { accept: 'text/html' })).body.toString();
const parts = [...page.matchAll(/(?:href|src)="(\/_\/graphiql\/[^"]+)"|"(\/_\/graphiql\/[^"]+)"/g)].map((m) => m[1] ?? m[2]!);
for (const coding of ['identity', 'gzip', 'br']) {
  const headers = { accept: 'text/html', 'accept-encoding': coding };
  let total = (await rawRequest(`${origin}/graphql`, headers)).body.length;
  const sizes = [`page ${total}`];
  for (const part of parts) {
    const n = (await rawRequest(`${origin}${part}`, headers)).body.length;
    sizes.push(`${part.split('.').pop()} ${n}`);
    total += n;
  }
  console.log(`after, ${coding}: ${kb(total)} (${total} bytes): ${sizes.join(', ')}`);
}

/** Milliseconds to the response's first byte (its headers), median of 5. */
async function ttfb(url: string, headers: Record<string, string>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    t = performance.now();
    await new Promise<void>((resolve, reject) => {
      request(url, { headers, agent: false }, (res) => {
        times.push(performance.now() - t);
        res.resume().on('end', resolve);
      })
        .on('error', reject)
        .end();
    });
  }
  return times.sort((a, b) => a - b)[2]!;
}
const br = { accept: 'text/html', 'accept-encoding': 'br' };
const main = /<script src="([^"]+)"/.exec(page)![1]!;
console.log(
  `time to first byte, br: page ${(await ttfb(`${origin}/graphql`, br)).toFixed(1)} ms, main script ${(await ttfb(`${origin}${main}`, br)).toFixed(1)} ms`,
);
console.log(`a second visit: the page only (the parts are immutable), 304 when unchanged`);

server.close();
await db.close();
rmSync(dataDir, { recursive: true, force: true });
