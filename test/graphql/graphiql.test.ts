// GraphiQL at /graphql, served by Lectern itself (issue 12): in a real Chromium whose every
// request off the server is refused, as on a machine without internet, the IDE loads, runs a query
// and shows its answer. Yoga's default page loads its scripts from a CDN and showed only
// "Loading __TITLE__..." there. And light to open (issue 22): a small compressed page whose parts
// (scripts, styles, fonts, Monaco's workers) come compressed from immutable content-hashed URLs,
// where render-graphiql's own page inlined them all, 9 MB uncompressed, sent anew on every visit.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphiqlCompressed } from '../../src/graphiql.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { launchChromium } from '../helpers/publish.ts';
import { type RawResponse, rawRequest } from '../serve/world.ts';

/**
 * Bytes on the wire for the page and every part a browser loads with it, brotli-compressed. Issue
 * 22 asked for 1 MB; GraphiQL 5's main script (Monaco inside) is 1.12 MB at brotli's best on its
 * own, so this bundle cannot reach it: the bound is what it does reach (about 1.6 MB), kept from growing.
 */
const WIRE_BUDGET = 1_700_000;

let t: TestApp;
let server: Server;
let browser: Browser;
let origin: string;

beforeAll(async () => {
  t = await testApp();
  server = createServer(t.handler).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  await t?.close();
});

const BROWSER = { accept: 'text/html,application/xhtml+xml', 'accept-encoding': 'br, gzip' };

function decoded(res: RawResponse): Buffer {
  const coding = res.headers['content-encoding'];
  return coding === 'br' ? brotliDecompressSync(res.body) : coding === 'gzip' ? gunzipSync(res.body) : res.body;
}

/** The parts the page names: its stylesheet, its script, Monaco's three workers. */
function partsOf(html: string): string[] {
  const css = [...html.matchAll(/<link rel="stylesheet" href="([^"]+)"/g)].map((m) => m[1]!);
  const js = [...html.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]!);
  const workers = Object.values(JSON.parse(/const workers = ({[^}]*});/.exec(html)![1]!) as Record<string, string>);
  return [...css, ...js, ...workers];
}

describe('GraphiQL', () => {
  it('loads and runs a query with no network beyond Lectern, in under 2 MB on the wire', async () => {
    const page = await browser.newPage();
    const refused: string[] = [];
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(origin) || url.startsWith('blob:') || url.startsWith('data:')) return route.continue();
      refused.push(url);
      return route.abort();
    });
    // What came over the wire, as Chromium counts it (compressed bodies and headers), workers' scripts included.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Network.enable');
    let wire = 0;
    cdp.on('Network.loadingFinished', (e) => {
      wire += e.encodedDataLength;
    });
    await page.goto(`${origin}/graphql?query=${encodeURIComponent('{ __typename }')}`);
    expect(await page.title()).toBe('Lectern GraphQL');
    const run = page.locator('.graphiql-execute-button');
    await run.waitFor({ state: 'visible', timeout: 20_000 });
    await run.click();
    // The answer pane as a reader sees it (its editor lays out spaces as non-breaking ones).
    const answer = async () => ((await page.locator('.graphiql-response').textContent()) ?? '').replace(/[\s\u00a0]+/g, '');
    await expect.poll(answer, { timeout: 20_000 }).toContain('{"data":{"__typename":"Query"}}');
    expect(refused).toEqual([]);
    console.log(`GraphiQL in Chromium: ${wire} bytes on the wire`);
    expect(wire).toBeGreaterThan(0);
    expect(wire).toBeLessThan(WIRE_BUDGET + 300_000); // gzip for what brotli had not made yet
    await page.close();
  }, 60_000);

  it('sends the page and its parts compressed, within the budget once brotli copies are made', async () => {
    await graphiqlCompressed();
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

    const parts = partsOf(text);
    expect(parts).toHaveLength(5);
    let wire = html.body.length;
    for (const part of parts) {
      expect(part).toMatch(/^\/_\/graphiql\/[0-9a-f]{20}\.(js|css)$/);
      const res = await rawRequest(`${origin}${part}`, { 'accept-encoding': 'br, gzip' });
      expect(res.status).toBe(200);
      expect(res.headers['content-encoding']).toBe('br');
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(Number(res.headers['content-length'])).toBe(res.body.length);
      wire += res.body.length;
    }
    console.log(`GraphiQL page and parts, br: ${wire} bytes`);
    expect(wire).toBeLessThan(WIRE_BUDGET);
  }, 180_000);

  it('answers each coding asked for, the same bytes in each, and 304 to a cache that has them', async () => {
    const text = decoded(await rawRequest(`${origin}/graphql`, BROWSER)).toString();
    const css = partsOf(text)[0]!;
    const identity = await rawRequest(`${origin}${css}`, {});
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.headers.vary).toMatch(/accept-encoding/i);
    const gz = await rawRequest(`${origin}${css}`, { 'accept-encoding': 'gzip, br;q=0' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body)).toEqual(identity.body);
    const br = await rawRequest(`${origin}${css}`, { 'accept-encoding': 'br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.body)).toEqual(identity.body);
    expect(new Set([identity.headers.etag, gz.headers.etag, br.headers.etag]).size).toBe(3);
    for (const res of [identity, gz, br]) {
      const again = await rawRequest(`${origin}${css}`, { 'accept-encoding': 'br, gzip', 'if-none-match': res.headers.etag! });
      expect(again.status).toBe(304);
      expect(again.body.length).toBe(0);
    }
    const page = await rawRequest(`${origin}/graphql`, BROWSER);
    const cached = await rawRequest(`${origin}/graphql`, { ...BROWSER, 'if-none-match': page.headers.etag! });
    expect(cached.status).toBe(304);
    expect(cached.headers['x-frame-options']).toBe('DENY');

    // The stylesheet's fonts are parts of their own, relative to it; woff2 is sent as it is.
    const fonts = [...identity.body.toString().matchAll(/url\(([0-9a-f]{20}\.(?:woff2|woff|ttf))\)/g)].map((m) => m[1]!);
    expect(fonts.length).toBeGreaterThan(10);
    const woff2 = fonts.find((f) => f.endsWith('.woff2'))!;
    const font = await rawRequest(`${origin}/_/graphiql/${woff2}`, { 'accept-encoding': 'br, gzip' });
    expect(font.status).toBe(200);
    expect(font.headers['content-type']).toBe('font/woff2');
    expect(font.headers['content-encoding']).toBeUndefined();
    expect(font.headers['cache-control']).toContain('immutable');
    expect((await rawRequest(`${origin}/_/graphiql/0000000000000000000a.js`)).status).toBe(404);
  });

  it('is the same page each time, sent as HTML only to a browser asking for it', async () => {
    const html = await t.http.get('/graphql').set('accept', 'text/html');
    expect(html.status).toBe(200);
    expect(html.headers['content-type']).toMatch(/^text\/html/);
    expect(html.text).not.toMatch(/unpkg\.com|cdn\.jsdelivr|esm\.sh/);
    expect((await t.http.get('/graphql').set('accept', 'text/html')).text).toBe(html.text);
    const json = await t.http.get('/graphql').query({ query: '{ projects { totalCount } }' }).set('accept', 'application/json');
    expect(json.body).toEqual({ data: { projects: { totalCount: 0 } } });
  });
});
