// The embed API on a docs host (issue 22, its fourth point): sphinx-hoverxref asks
// `/_/api/v3/embed/?url=<the page's own URL>#<section>` of the host its page came from, and a docs
// domain with a port (`docs.test:<port>`) is the docs' own domain, on docs hosts and on Lectern's.
// A real Sphinx build, served on `<project>.docs.test:<port>`; Chromium resolves `*.docs.test` to
// this machine (--host-resolver-rules) and a docs page fetches its own section as hoverxref does.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { CHROMIUM, makeProject, publish, removePages, sphinxBuild } from '../helpers/publish.ts';

let t: TestApp;
let server: Server;
let port: number;
let browser: Browser | undefined;
/** `http://<project>.docs.test:<port>`. */
const docs = (project: string) => `http://${project}.docs.test:${port}`;
const host = (project: string) => `${project}.docs.test:${port}`;
const q = (url: string) => `url=${encodeURIComponent(url)}`;

beforeAll(async () => {
  let app: TestApp | undefined;
  server = createServer((req, res) => (app ? app.handler(req, res) : res.writeHead(503).end()));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  app = await testApp({ LECTERN_PUBLIC_URL: `http://127.0.0.1:${port}`, LECTERN_DOCS_DOMAIN: `docs.test:${port}` });
  t = app;
  const html = await sphinxBuild('../embed-sphinx');
  await publish(t, { project: await makeProject(t, { slug: 'embed' }), version: 'latest', html });
  await publish(t, { project: await makeProject(t, { slug: 'secret', privacyLevel: 'private' }), version: 'latest', html });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((r) => server?.close(r));
  await t?.close();
  removePages();
});

describe('GET <project>.<docs domain>/_/api/v3/embed/', () => {
  it("answers a section of the host's own page, with CORS as Read the Docs answers public docs", async () => {
    const res = await t.http
      .get(`/_/api/v3/embed/?${q(`${docs('embed')}/en/latest/page.html#requirements`)}`)
      .set('host', host('embed'))
      .set('origin', docs('embed'));
    expect(res.status, res.text).toBe(200);
    expect(res.body.content).toMatch(/^<section id="requirements">/);
    expect(res.body.url).toBe(`${docs('embed')}/en/latest/page.html#requirements`);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    // hoverxref's custom header makes its request preflighted.
    const pre = await t.http
      .options('/_/api/v3/embed/')
      .set('host', host('embed'))
      .set('origin', 'http://other.example')
      .set('access-control-request-method', 'GET')
      .set('access-control-request-headers', 'x-hoverxref-version');
    expect(pre.status).toBeLessThan(300);
    expect(pre.headers['access-control-allow-origin']).toBe('*');
    expect(pre.headers['access-control-allow-headers']).toMatch(/X-Hoverxref-Version/i);
  });

  it('answers the v2 embed at /_/api/v2/embed/ too', async () => {
    const res = await t.http.get(`/_/api/v2/embed/?${q(`${docs('embed')}/en/latest/page.html#requirements`)}`).set('host', host('embed'));
    expect(res.status, res.text).toBe(200);
    expect(res.body.meta).toEqual({ project: 'embed', version: 'latest', doc: 'page', section: 'requirements' });
  });

  it("accepts the docs' own URLs on Lectern's host, port and all, and refuses another port's", async () => {
    const res = await t.http.get(`/api/v3/embed/?${q(`${docs('embed')}/en/latest/page.html#requirements`)}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.content).toMatch(/^<section id="requirements">/);
    const other = await t.http.get(`/api/v3/embed/?${q(`http://embed.docs.test:${port + 1}/en/latest/page.html`)}`);
    expect(other.status).toBe(400);
    expect(other.body.error).toMatch(/External domain not allowed/);
  });

  it("tells an anonymous reader nothing of a private project's page, on its own host or another", async () => {
    for (const h of [host('secret'), host('embed')]) {
      const res = await t.http.get(`/_/api/v3/embed/?${q(`${docs('secret')}/en/latest/page.html#requirements`)}`).set('host', h);
      expect(res.status).toBe(404);
      expect(res.text).not.toMatch(/Requirements/);
      expect(res.headers['access-control-allow-origin']).not.toBe('*');
    }
  });

  it('is what a page on the docs host gets when it fetches its own section, as hoverxref does, in Chromium', async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', `--host-resolver-rules=MAP *.docs.test 127.0.0.1`],
    });
    const page = await browser.newPage();
    const errors: string[] = [];
    // Every answer the page gets but the browser's own favicon request (the fixture has none).
    page.on('response', (r) => r.status() >= 400 && !r.url().endsWith('/favicon.ico') && errors.push(`${r.status()} ${r.url()}`));
    page.on('console', (m) => m.type() === 'error' && !/status of 404/.test(m.text()) && errors.push(m.text()));
    await page.goto(`${docs('embed')}/en/latest/index.html`);
    const answer = await page.evaluate(async () => {
      const url = new URL('page.html#requirements', location.href).href;
      const r = await fetch(`/_/api/v3/embed/?doctool=sphinx&doctoolversion=5.3.0&url=${encodeURIComponent(url)}`, {
        headers: { 'X-HoverXRef-Version': '1.3.0' },
      });
      return { status: r.status, body: await r.json() };
    });
    expect(answer.status).toBe(200);
    expect(answer.body.content).toMatch(/^<section id="requirements">/);
    await page.screenshot({ path: 'test-results/docs-host-embed.png' });
    expect(errors).toEqual([]);
  }, 120_000);
});
