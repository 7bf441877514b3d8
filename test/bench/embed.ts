// Benchmark (not a test): what the parsed-page cache saves the v2 embed API. In one process and
// one run, on the embedded database, it builds a large Sphinx page (300 sections, some nested,
// with links and code) with the real sphinx-build, publishes it, and times
//   uncached  GET /api/v2/embed/?project=…&doc=big&section=… with the page cache emptied first
//   cached    the same request with the page already parsed
// through the whole in-process HTTP stack, printing p50/p90 of each and the ratio.
// Run: npx tsx test/bench/embed.ts [iterations]
// First: the app runs as `lectern serve` runs it, in production mode (src/bin.js).
import './production-mode.ts';

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import supertest from 'supertest';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { pageCache } from '../../src/embed/cache.ts';
import { parsePage } from '../../src/embed/sphinx.ts';
import { createLogger } from '../../src/log.ts';
import { publishHtml, sphinxHtml } from '../helpers/publish-embed.ts';

const iterations = Number(process.argv[2] ?? 40);
const SECTIONS = 300;

const work = mkdtempSync(path.join(os.tmpdir(), 'lectern-bench-embed-'));
const source = path.join(work, 'src');
mkdirSync(source);
writeFileSync(path.join(source, 'conf.py'), "project = 'Bench'\nmaster_doc = 'index'\nhtml_theme = 'alabaster'\n");
writeFileSync(path.join(source, 'index.rst'), 'Bench\n=====\n\n.. toctree::\n\n   big\n');
const parts = ['A Big Page', '==========', '', 'The introduction.', ''];
for (let i = 0; i < SECTIONS; i++) {
  parts.push(`Section ${i}`, '-'.repeat(`Section ${i}`.length), '');
  parts.push(`Paragraph of section ${i} with a link to :doc:\`index\`, \`the next one <#section-${i + 1}>\`_ and \`\`code_${i}()\`\`.`, '');
  parts.push('.. code-block:: python', '', `   def f_${i}(x):`, `       return x * ${i}`, '');
  if (i % 3 === 0) parts.push(`Detail ${i}`, '~'.repeat(`Detail ${i}`.length), '', `A nested part of section ${i}, with *emphasis* and **strong** text.`, '');
}
writeFileSync(path.join(source, 'big.rst'), parts.join('\n'));
console.log(`building a page of ${SECTIONS} sections with sphinx-build…`);
const html = await sphinxHtml(source);

const dataDir = path.join(work, 'data');
const config = loadConfig({ LECTERN_DATA_DIR: dataDir, LECTERN_PUBLIC_URL: 'http://lectern.bench', LECTERN_LOG_LEVEL: 'silent', LECTERN_API_THROTTLE: '0' });
const db = await openDatabase({ dataDir });
const { app, storage, services } = buildApp({ config, db, log: createLogger('silent'), secretKey: 'bench-secret-key-0123456789abcdef0123456789' });
const project = await db.prisma.project.create({ data: { name: 'Bench', slug: 'bench', repositoryUrl: 'https://github.com/acme/bench' } });
await db.prisma.version.create({ data: { projectId: project.id, slug: 'latest', verboseName: 'latest', type: 'branch' } });
await publishHtml(services, { project: 'bench', version: 'latest', htmlDir: html });
const { readFileSync, statSync } = await import('node:fs');
const pageBytes = statSync(path.join(html, 'big.html')).size;

const http = supertest(app);
const url = '/api/v2/embed/?project=bench&doc=big&section=section-150';
async function once(): Promise<number> {
  const start = process.hrtime.bigint();
  const res = await http.get(url);
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (res.status !== 200 || !res.body.content?.[0]?.includes('Section 150')) throw new Error(`unexpected answer ${res.status} ${res.text.slice(0, 200)}`);
  return ms;
}
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;

const cache = pageCache(storage);
for (let i = 0; i < 5; i++) await once(); // warm up the process (JIT, database, operation cache)

const uncached: number[] = [];
const cached: number[] = [];
// Interleaved, so both see the same machine load (the machine is shared).
for (let i = 0; i < iterations; i++) {
  cache.clear();
  uncached.push(await once());
  cached.push(await once());
}
const parse: number[] = [];
const text = readFileSync(path.join(html, 'big.html'), 'utf8');
for (let i = 0; i < 10; i++) {
  const start = process.hrtime.bigint();
  parsePage(text);
  parse.push(Number(process.hrtime.bigint() - start) / 1e6);
}

const f = (n: number) => `${n.toFixed(2)} ms`;
console.log(`page: big.html, ${(pageBytes / 1024).toFixed(0)} KiB, ${SECTIONS} sections; ${iterations} requests each`);
console.log(`uncached  p50 ${f(pct(uncached, 50))}  p90 ${f(pct(uncached, 90))}`);
console.log(`cached    p50 ${f(pct(cached, 50))}  p90 ${f(pct(cached, 90))}`);
console.log(`parse only (cheerio, the page) p50 ${f(pct(parse, 50))}`);
console.log(`ratio uncached/cached at p50: ${(pct(uncached, 50) / pct(cached, 50)).toFixed(1)}x`);

await db.close();
rmSync(work, { recursive: true, force: true });
rmSync(html, { recursive: true, force: true });
