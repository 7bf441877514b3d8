// GraphiQL at /graphql, served by Lectern itself (issue 12): in a real Chromium whose every
// request off the server is refused, as on a machine without internet, the IDE loads, runs a query
// and shows its answer. Yoga's default page loads its scripts from a CDN and showed only
// "Loading __TITLE__..." there.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { launchChromium } from '../helpers/publish.ts';

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

describe('GraphiQL', () => {
  it('loads and runs a query with no network beyond Lectern', async () => {
    const page = await browser.newPage();
    const refused: string[] = [];
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(origin) || url.startsWith('blob:') || url.startsWith('data:')) return route.continue();
      refused.push(url);
      return route.abort();
    });
    const query = '{ projects { totalCount } }';
    await page.goto(`${origin}/graphql?query=${encodeURIComponent(query)}`);
    expect(await page.title()).toBe('Lectern GraphQL');
    const run = page.locator('.graphiql-execute-button');
    await run.waitFor({ state: 'visible', timeout: 20_000 });
    await run.click();
    // The answer pane as a reader sees it (its editor lays out spaces as non-breaking ones).
    const answer = async () => ((await page.locator('.graphiql-response').textContent()) ?? '').replace(/[\s\u00a0]+/g, '');
    await expect.poll(answer, { timeout: 20_000 }).toContain('{"data":{"projects":{"totalCount":0}}}');
    expect(refused).toEqual([]);
    await page.close();
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
