// The dashboard's project page for a project with 50 versions, each with a finished build, in
// Debian's Chromium (its headless shell, test/helpers/publish.ts) on this machine: from navigation
// to the 50 rows on screen (p50 and p90 of N loads after two warm-ups), the GraphQL requests the
// page makes, and the JavaScript and CSS it loads, gzipped. The page's data is the same read the
// REST and GraphQL APIs serve, so the raw GraphQL operation's own time is measured beside it in the
// same run (from the browser, fetch).
//
//   npm run web:build && npx tsx test/bench/dashboard.ts [loads=20]
import './production-mode.ts';

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { DASHBOARD_DIR } from '../../src/dashboard.ts';
import { createUser } from '../../src/domain/users.ts';
import { launchChromium } from '../helpers/publish.ts';
import { servedApp } from './served-app.ts';

const LOADS = Number(process.argv[2] ?? 20);
const VERSIONS = 50;

const { origin, db, close } = await servedApp('dashboard');

const { user } = await createUser(db.prisma, 'bench', { password: 'bench-password-1' });
const project = await db.prisma.project.create({
  data: { name: 'Bench', slug: 'bench', repositoryUrl: 'https://github.com/acme/bench', users: { connect: { id: user.id } } },
});
for (let i = 0; i < VERSIONS; i++) {
  const slug = i === 0 ? 'latest' : `v${i}.0`;
  const version = await db.prisma.version.create({
    data: { projectId: project.id, slug, verboseName: slug, type: i === 0 ? 'branch' : 'tag', active: true, built: true, identifier: 'main' },
  });
  const now = new Date();
  const build = await db.prisma.build.create({
    data: {
      projectId: project.id,
      versionId: version.id,
      versionSlug: slug,
      state: 'finished',
      success: i % 7 !== 3,
      startedAt: now,
      finishedAt: now,
      duration: 12,
    },
  });
  await db.prisma.version.update({ where: { id: version.id }, data: { lastBuildId: build.id } });
}

const browser = await launchChromium();
const page = await browser.newPage();
await page.goto(`${origin}/sign-in`);
await page.getByLabel('Username').fill('bench');
await page.getByLabel('Password').fill('bench-password-1');
await page.getByRole('button', { name: 'Sign in' }).click();
await page.waitForURL(`${origin}/`);

const graphqlRequests: string[] = [];
const scripts = new Set<string>();
page.on('request', (r) => {
  if (r.url().endsWith('/graphql')) graphqlRequests.push(JSON.parse(r.postData() ?? '{}').operationName ?? '?');
  if (r.resourceType() === 'script' || r.resourceType() === 'stylesheet') scripts.add(new URL(r.url()).pathname);
});

const times: number[] = [];
const requestsPerLoad: number[] = [];
for (let i = 0; i < LOADS + 2; i++) {
  graphqlRequests.length = 0;
  // A new document each time (no app state kept): the browser's own cache of the hashed assets stays, as for a returning user.
  await page.goto('about:blank');
  const start = Date.now();
  await page.goto(`${origin}/projects/bench`);
  await page
    .locator('table.list tbody tr')
    .nth(VERSIONS - 1)
    .waitFor();
  if (i >= 2) {
    times.push(Date.now() - start);
    requestsPerLoad.push(graphqlRequests.length);
  }
}

// The page's operation alone, sent from the page (its cookie, its origin), as many times.
const operationMs = await page.evaluate(async (loads) => {
  const body = JSON.stringify({
    query:
      'query ProjectPage($slug: String!) { viewer { id username isAdmin } setupNeeded project(slug: $slug) { id slug name versions(limit: 500) { totalCount nodes { id slug verboseName active hidden privacyLevel built type documentationUrl lastBuild { id state success createdAt } } } } }',
    variables: { slug: 'bench' },
  });
  const out: number[] = [];
  for (let i = 0; i < loads + 2; i++) {
    const t0 = performance.now();
    await (await fetch('/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body })).json();
    if (i >= 2) out.push(performance.now() - t0);
  }
  return out;
}, LOADS);

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const assets = readdirSync(path.join(DASHBOARD_DIR, 'assets'));
const loaded = [...scripts].map((p) => p.replace(/^\/assets\//, '')).filter((f) => assets.includes(f));
const gz = (f: string) => gzipSync(readFileSync(path.join(DASHBOARD_DIR, 'assets', f))).length;

console.log(`Project page, ${VERSIONS} versions with their last builds, ${LOADS} loads (after 2 warm-ups), Chromium headless, embedded database:`);
console.log(`  navigation to 50 rows rendered: p50 ${pct(times, 50)} ms, p90 ${pct(times, 90)} ms, max ${Math.max(...times)} ms`);
console.log(`  its GraphQL operation alone, fetched from the page: p50 ${pct(operationMs, 50).toFixed(1)} ms, p90 ${pct(operationMs, 90).toFixed(1)} ms`);
console.log(`  GraphQL requests per load: ${[...new Set(requestsPerLoad)].join(', ')}`);
for (const f of loaded) console.log(`  ${f}: ${(gz(f) / 1024).toFixed(1)} kB gzipped`);
console.log(`  JavaScript and CSS loaded, gzipped: ${(loaded.reduce((n, f) => n + gz(f), 0) / 1024).toFixed(1)} kB`);

await browser.close();
await close();
