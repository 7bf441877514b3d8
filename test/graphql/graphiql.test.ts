// GraphiQL at /graphql, served by Lectern itself (issue 12): in a real Chromium whose every
// request off the server is refused, as on a machine without internet, the IDE loads, runs a query
// and shows its answer, a signed-in reader's session included. Yoga's default page loads its
// scripts from a CDN and showed only "Loading __TITLE__..." there. And light to open (issue 22):
// at most 1 MB on the wire, a small page whose assets (graphiql 4's scripts, stylesheet, fonts,
// built by `npm run web:build` into dist/graphiql) come from immutable content-hashed URLs, in the
// brotli and gzip copies the build made: the server compresses nothing.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import express from 'express';
import type { Browser } from 'playwright-core';
import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLAIN_SESSION_COOKIE, startSession } from '../../src/domain/sessions.ts';
import { createUser } from '../../src/domain/users.ts';
import { GRAPHIQL_DIR, graphiql } from '../../src/graphiql.ts';
import { servedTestApp, type TestApp } from '../helpers/app.ts';
import { launchChromium } from '../helpers/publish.ts';
import { type RawResponse, rawRequest } from '../serve/world.ts';

/** Issue 22: GraphiQL, page and assets, in at most 1 MB on the wire. */
const WIRE_BUDGET = 1_000_000;

let t: TestApp;
let stop: () => Promise<void>;
let browser: Browser;
let origin: string;

beforeAll(async () => {
  ({ t, origin, stop } = await servedTestApp());
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await stop?.();
});

const BROWSER = { accept: 'text/html,application/xhtml+xml', 'accept-encoding': 'br, gzip' };

function decoded(res: RawResponse): Buffer {
  const coding = res.headers['content-encoding'];
  return coding === 'br' ? brotliDecompressSync(res.body) : coding === 'gzip' ? gunzipSync(res.body) : res.body;
}

/** Every file of the build a browser may load: all of assets/ (the page loads some of them lazily, and fonts as its text needs). */
function assetUrls(): string[] {
  return readdirSync(path.join(GRAPHIQL_DIR, 'assets'))
    .filter((f) => !/\.(?:br|gz)$/.test(f))
    .map((f) => `/_/graphiql/assets/${f}`);
}

describe('GraphiQL', () => {
  it('loads and runs a query with no network beyond Lectern, in under 1 MB on the wire, and as a signed-in reader', async () => {
    const { user } = await createUser(t.db.prisma, 'reader', { password: 'reader-password-1' });
    const context = await browser.newContext();
    await context.addCookies([{ name: PLAIN_SESSION_COOKIE, value: await startSession(t.db.prisma, user.id), url: origin }]);
    const page = await context.newPage();
    const refused: string[] = [];
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(origin) || url.startsWith('blob:') || url.startsWith('data:')) return route.continue();
      refused.push(url);
      return route.abort();
    });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // What came over the wire, as Chromium counts it (compressed bodies and headers), for every response.
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    let wire = 0;
    const loaded: string[] = [];
    cdp.on('Network.responseReceived', (e) =>
      loaded.push(`${e.response.url} ${e.response.headers['content-encoding'] ?? e.response.headers['Content-Encoding'] ?? '-'}`),
    );
    cdp.on('Network.loadingFinished', (e) => {
      wire += e.encodedDataLength;
    });
    /** The answer pane as a reader sees it, spaces left out. */
    const answer = async () => ((await page.locator('.graphiql-response').textContent()) ?? '').replace(/[\s\u00a0]+/g, '');
    const run = async (query: string, expected: string) => {
      await page.goto(`${origin}/graphql?query=${encodeURIComponent(query)}`);
      expect(await page.title()).toBe('Lectern GraphQL');
      const button = page.locator('.graphiql-execute-button');
      await button.waitFor({ state: 'visible', timeout: 20_000 });
      // Run only once the editor holds the query from the address: a click before GraphiQL has
      // read it ran nothing (the answer pane stayed empty) when the machine was busy.
      const word = /\w+/.exec(query.replace(/^\{\s*/, ''))![0];
      await expect.poll(async () => (await page.locator('.graphiql-query-editor').textContent()) ?? '', { timeout: 20_000 }).toContain(word);
      await button.click();
      await expect.poll(answer, { timeout: 20_000 }).toContain(expected);
    };

    await run('{ __typename }', '{"data":{"__typename":"Query"}}');
    expect(refused).toEqual([]);
    expect(errors).toEqual([]);
    console.log(`GraphiQL in Chromium: ${wire} bytes on the wire\n${loaded.join('\n')}`);
    expect(wire).toBeGreaterThan(0);
    expect(wire).toBeLessThanOrEqual(WIRE_BUDGET);
    // Scripts and the stylesheet came brotli-compressed.
    expect(loaded.filter((l) => /\.(js|css) /.test(l)).every((l) => l.endsWith(' br'))).toBe(true);

    // The session cookie counts for GraphiQL's requests (a POST of JSON from Lectern's own origin).
    await run('{ viewer { username } }', '{"data":{"viewer":{"username":"reader"}}}');
    await context.close();
  }, 90_000);

  it('sends the page and every asset compressed, at most 1 MB in all, from the copies the build made', async () => {
    const html = await rawRequest(`${origin}/graphql`, BROWSER);
    expect(html.status).toBe(200);
    expect(html.headers['content-type']).toMatch(/^text\/html/);
    expect(html.headers['content-encoding']).toBe('br');
    expect(html.headers['cache-control']).toBe('no-cache');
    expect(html.headers.vary).toMatch(/accept-encoding/i);
    // The headers every answer of Lectern's own has: no page may frame it.
    expect(html.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(html.headers['x-frame-options']).toBe('DENY');
    const text = decoded(html).toString();
    expect(text).toContain('<title>Lectern GraphQL</title>');
    expect(text.length).toBeLessThan(4096);

    // What the page names, and every other file it may load, each once.
    const named = [...text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(named.some((u) => u.endsWith('.js'))).toBe(true);
    expect(named.some((u) => u.endsWith('.css'))).toBe(true);
    const all = assetUrls();
    for (const u of named) expect(all).toContain(u);

    let wire = html.body.length;
    const byKind: Record<string, number> = {};
    for (const url of all) {
      expect(url).toMatch(/^\/_\/graphiql\/assets\/[\w-]+-[\w-]{8}\.(js|css|woff2?|png|svg)$/);
      const res = await rawRequest(`${origin}${url}`, { 'accept-encoding': 'br, gzip' });
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(Number(res.headers['content-length'])).toBe(res.body.length);
      const file = path.join(GRAPHIQL_DIR, url.replace('/_/graphiql/', ''));
      if (/\.(js|css|svg)$/.test(url)) {
        // The build's own brotli copy, byte for byte (Buffer.equals: toEqual walks a buffer element by element, for seconds).
        expect(res.headers['content-encoding']).toBe('br');
        expect(res.body.equals(readFileSync(`${file}.br`))).toBe(true);
      } else {
        // Fonts and images are compressed already: sent as they are.
        expect(res.headers['content-encoding']).toBeUndefined();
        expect(res.body.equals(readFileSync(file))).toBe(true);
      }
      wire += res.body.length;
      const kind = url.split('.').pop()!;
      byKind[kind] = (byKind[kind] ?? 0) + res.body.length;
    }
    console.log(`GraphiQL page and all ${all.length} assets, br: ${wire} bytes (${JSON.stringify(byKind)})`);
    expect(wire).toBeLessThanOrEqual(WIRE_BUDGET);
  });

  it('answers each coding asked for, the same bytes in each, and 304 to a cache that has them', async () => {
    const text = decoded(await rawRequest(`${origin}/graphql`, BROWSER)).toString();
    const script = /<script type="module" crossorigin src="([^"]+)"/.exec(text)![1]!;
    const identity = await rawRequest(`${origin}${script}`, {});
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(identity.headers['x-content-type-options']).toBe('nosniff');
    expect(identity.headers.vary).toMatch(/accept-encoding/i);
    const gz = await rawRequest(`${origin}${script}`, { 'accept-encoding': 'gzip, br;q=0' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).equals(identity.body)).toBe(true);
    const br = await rawRequest(`${origin}${script}`, { 'accept-encoding': 'br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.body).equals(identity.body)).toBe(true);
    expect(new Set([identity.headers.etag, gz.headers.etag, br.headers.etag]).size).toBe(3);
    for (const res of [identity, gz, br]) {
      const again = await rawRequest(`${origin}${script}`, { 'accept-encoding': 'br, gzip', 'if-none-match': res.headers.etag! });
      expect(again.status).toBe(304);
      expect(again.body.length).toBe(0);
    }
    const head = await rawRequest(`${origin}${script}`, { 'accept-encoding': 'br' }, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe(String(br.body.length));
    expect(head.body.length).toBe(0);

    const page = await rawRequest(`${origin}/graphql`, BROWSER);
    const plain = await rawRequest(`${origin}/graphql`, { accept: 'text/html' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.equals(decoded(page))).toBe(true);
    const cached = await rawRequest(`${origin}/graphql`, { ...BROWSER, 'if-none-match': page.headers.etag! });
    expect(cached.status).toBe(304);
    expect(cached.headers['x-frame-options']).toBe('DENY');

    // The stylesheet's fonts are files of their own, relative to it; woff2 is sent as it is.
    const css = /<link rel="stylesheet" crossorigin href="([^"]+)"/.exec(text)![1]!;
    const stylesheet = (await rawRequest(`${origin}${css}`)).body.toString();
    expect(stylesheet).not.toContain('data:font/');
    const fonts = [...stylesheet.matchAll(/url\(([\w-]+\.woff2)\)/g)].map((m) => m[1]!);
    expect(fonts.length).toBeGreaterThan(10);
    const font = await rawRequest(`${origin}/_/graphiql/assets/${fonts[0]}`, { 'accept-encoding': 'br, gzip' });
    expect(font.status).toBe(200);
    expect(font.headers['content-type']).toBe('font/woff2');
    expect(font.headers['content-encoding']).toBeUndefined();
    expect(font.headers['cache-control']).toContain('immutable');
    expect((await rawRequest(`${origin}/_/graphiql/assets/index-00000000.js`)).status).toBe(404);
    expect((await rawRequest(`${origin}/_/graphiql/index.html`)).status).toBe(404);
    expect((await rawRequest(`${origin}/_/graphiql/assets/${fonts[0]}/../../index.html`)).status).toBe(404);
  });

  it('is the same page each time, sent as HTML only to a browser asking for it', async () => {
    const html = await t.http.get('/graphql').set('accept', 'text/html');
    expect(html.status).toBe(200);
    expect(html.headers['content-type']).toMatch(/^text\/html/);
    expect(html.text).not.toMatch(/unpkg\.com|cdn\.jsdelivr|esm\.sh/);
    expect((await t.http.get('/graphql').set('accept', 'text/html')).text).toBe(html.text);
    const json = await t.http.get('/graphql').query({ query: '{ projects { totalCount } }' }).set('accept', 'application/json');
    expect(json.body).toEqual({ data: { projects: { totalCount: 0 } } });
    const inUrl = await t.http.get('/graphql').query({ query: '{ __typename }' });
    expect(inUrl.body).toEqual({ data: { __typename: 'Query' } });
  });

  it('says to run npm run web:build when GraphiQL is not built', async () => {
    const app = express().get('/graphql', graphiql(path.join(GRAPHIQL_DIR, 'not-built')).page);
    const res = await supertest(app).get('/graphql').set('accept', 'text/html');
    expect(res.status).toBe(503);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain('npm run web:build');
  });
});
