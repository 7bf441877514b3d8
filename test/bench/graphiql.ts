// GraphiQL's weight on the wire (issue 22): the bytes a browser receives for GET /graphql and the
// files the page loads (scripts, stylesheet; fonts not counted, a browser fetches only the few its
// text uses, and they are woff2, sent as they are), with Accept-Encoding none, gzip and br; all of
// dist/graphiql's assets too, fonts included (an upper bound for any visit). And the time to the
// first byte of the page and of its main script (median of 5). Needs `npm run web:build` first.
//
//   npx tsx test/bench/graphiql.ts
//
// Before, render-graphiql's page (GraphiQL 5 with Monaco, everything inlined, sent uncompressed):
// 9,053,778 bytes (8.8 MB) each visit. Then (d8c44e2) the same bundle in parts from immutable URLs,
// compressed at runtime: 8,237,560 identity, 2,022,465 gzip, 1,581,043 br, after half a minute of
// one core per process making the brotli copies.
import './production-mode.ts';

import { readdirSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { GRAPHIQL_DIR } from '../../src/graphiql.ts';
import { rawRequest } from '../serve/world.ts';
import { servedApp } from './served-app.ts';

const { origin, close } = await servedApp('graphiql');

const kb = (n: number) => `${(n / 1024).toFixed(0)} KB`;
console.log('before: render-graphiql, identity only: 8842 KB (9053778 bytes), no caching');
console.log('d8c44e2: identity 8237560, gzip 2022465, br 1581043 bytes (br made at runtime, ~30 s of a core per process)');

const first = await rawRequest(`${origin}/graphql`, { accept: 'text/html' });
if (first.status !== 200) throw new Error(`GET /graphql: ${first.status}; run npm run web:build first`);
const page = first.body.toString();
const named = [...page.matchAll(/(?:href|src)="(\/_\/graphiql\/[^"]+)"/g)].map((m) => m[1]!);
const all = readdirSync(path.join(GRAPHIQL_DIR, 'assets'))
  .filter((f) => !/\.(?:br|gz)$/.test(f))
  .map((f) => `/_/graphiql/assets/${f}`);
const scripts = all.filter((u) => /\.(?:js|css)$/.test(u));

async function total(urls: string[], coding: string): Promise<{ bytes: number; sizes: string[] }> {
  const headers = { accept: 'text/html', 'accept-encoding': coding };
  let bytes = (await rawRequest(`${origin}/graphql`, headers)).body.length;
  const sizes = [`page ${bytes}`];
  for (const url of urls) {
    const n = (await rawRequest(`${origin}${url}`, headers)).body.length;
    if (n > 20_000) sizes.push(`${path.basename(url)} ${n}`);
    bytes += n;
  }
  return { bytes, sizes };
}

for (const coding of ['identity', 'gzip', 'br']) {
  const loads = await total(named, coding);
  const code = await total(scripts, coding);
  const everything = await total(all, coding);
  console.log(
    `after, ${coding}: the page and what it names ${kb(loads.bytes)} (${loads.bytes} bytes); ` +
      `with every script and stylesheet ${kb(code.bytes)} (${code.bytes}); with every font too ${kb(everything.bytes)} (${everything.bytes}); ` +
      `largest: ${code.sizes.join(', ')}`,
  );
}

/** Milliseconds to the response's first byte (its headers), median of 5. */
async function ttfb(url: string, headers: Record<string, string>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
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
const main = /<script type="module" crossorigin src="([^"]+)"/.exec(page)![1]!;
console.log(
  `time to first byte, br: page ${(await ttfb(`${origin}/graphql`, br)).toFixed(1)} ms, main script ${(await ttfb(`${origin}${main}`, br)).toFixed(1)} ms`,
);
console.log('a second visit: the page only (the assets are immutable), 304 when unchanged');

await close();
