// Clickjacking (issue 21, item 3): no page may frame an answer of Lectern's own, neither another
// site nor a docs host of the same site (a project's docs are untrusted pages). GraphiQL at GET
// /graphql sent no frame-ancestors, so a hostile docs page framed it with a prepared mutation at 5%
// opacity and one click of a signed-in maintainer ran it. Every answer of Lectern's own now carries
// `Content-Security-Policy: frame-ancestors 'none'` and `X-Frame-Options: DENY` (app.ts notFramed);
// docs pages choose their own framing. First every route Lectern renders, over HTTP; then, in
// Chromium, hostile pages on another site and on a docs host frame them.
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/domain/users.ts';
import { servedTestApp, type TestApp, testApp } from '../helpers/app.ts';
import { htmlPage, launchChromium, makeProject, publish, removePages } from '../helpers/publish.ts';
import { until } from '../helpers/wait.ts';

const NOT_FRAMED = /(^|[;,]\s*)frame-ancestors 'none'\s*(;|,|$)/;

/** Lectern's own pages: every dashboard route (src/dashboard.ts ROUTES), GraphiQL, and what answers errors and missing pages. */
const PAGES = [
  '/',
  '/sign-in',
  '/sign-in?next=%2Faccount',
  '/setup?code=abc',
  '/import',
  '/account',
  '/admin',
  '/projects/acme',
  '/projects/acme/builds',
  '/projects/acme/builds/7',
  '/projects/acme/settings/',
  '/graphql',
  '/no-such-page',
  '/projects/a/b/c/d',
  '/assets/no-such-file.js',
  '/api/no-such-route',
  '/api/v3/no-such-route/',
];

const answers = (t: TestApp, path: string, host?: string) => {
  const req = t.http.get(path).set('accept', 'text/html,application/xhtml+xml');
  return host ? req.set('host', host) : req;
};

function expectNotFramed(res: { headers: Record<string, string | string[] | undefined> }, what: string) {
  const csp = ([] as string[]).concat(res.headers['content-security-policy'] ?? []).join(', ');
  expect(csp, what).toMatch(NOT_FRAMED);
  expect(res.headers['x-frame-options'], what).toBe('DENY');
}

describe("every answer of Lectern's own, over HTTP", () => {
  let t: TestApp;
  let plain: TestApp;
  beforeAll(async () => {
    t = await testApp({ LECTERN_DOCS_DOMAIN: 'docs.lectern.test' });
    plain = await testApp();
    for (const app of [t, plain]) {
      const p = await makeProject(app, { slug: 'acme' });
      await publish(app, { project: p, version: 'latest', html: htmlPage('<h1>Acme docs</h1>') });
    }
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await plain?.close();
    removePages();
  });

  it('the dashboard, GraphiQL, sign-in, setup, 404s and error pages: HTML, and never frameable', async () => {
    for (const app of [t, plain]) {
      for (const path of PAGES) {
        const res = await answers(app, path);
        expectNotFramed(res, path);
        if (!/^\/(api|assets)\//.test(path)) expect(res.headers['content-type'], path).toMatch(/^text\/html/);
      }
      // The dashboard keeps its own policy, with frame-ancestors added to it.
      const dash = await answers(app, '/');
      expect(dash.headers['content-security-policy']).toMatch(/^default-src 'self'; script-src 'self';.*; frame-ancestors 'none'$/);
      // GraphiQL is the page the issue framed.
      const graphiql = await answers(app, '/graphql');
      expect(graphiql.status).toBe(200);
      expect(graphiql.text).toMatch(/graphiql/i);
    }
  });

  it('error answers of the APIs and the body parser are not frameable either', async () => {
    const malformed = await t.http.post('/graphql').set('content-type', 'application/json').send('{"query": ');
    expect(malformed.status).toBe(400);
    expectNotFramed(malformed, 'malformed JSON');
    const tooLarge = await t.http
      .post('/graphql')
      .set('content-type', 'application/json')
      .send(JSON.stringify({ query: 'x'.repeat(2 * 1_048_576) }));
    expect(tooLarge.status).toBe(413);
    expectNotFramed(tooLarge, 'too large');
    const badQuery = await t.http.get('/graphql?query=%7B').set('accept', 'application/json');
    expectNotFramed(badQuery, 'bad query');
    for (const path of ['/healthz', '/readyz', '/api/v3/projects/', '/metrics']) expectNotFramed(await t.http.get(path), path);
  });

  it("/_/docs-access and the redirects of /docs/… to the docs hosts are Lectern's too", async () => {
    for (const path of [
      '/_/docs-access?next=https%3A%2F%2Facme.docs.lectern.test%2Fen%2Flatest%2F',
      '/_/docs-access?next=not-a-url',
      '/_/docs-access?next=https%3A%2F%2Fevil.example%2F',
      '/docs/acme/en/latest/',
    ]) {
      const res = await answers(t, path);
      expect(res.status, path).toBeLessThan(500);
      expectNotFramed(res, path);
    }
  });

  it('docs pages choose their own framing: on a docs host, and sandboxed on Lectern’s host without one', async () => {
    for (const [app, path, host] of [
      [t, '/en/latest/', 'acme.docs.lectern.test'],
      [t, '/en/latest/missing.html', 'acme.docs.lectern.test'],
      [plain, '/docs/acme/en/latest/', undefined],
      [plain, '/docs/acme/en/latest/missing.html', undefined],
    ] as const) {
      for (let i = 0; i < 2; i++) {
        // The second time from the docs fast path.
        const res = await answers(app, path, host);
        expect(res.headers['x-frame-options'], path).toBeUndefined();
        expect(res.headers['content-security-policy'] ?? '', path).not.toMatch(/frame-ancestors/);
      }
    }
  });
});

describe('hostile pages framing Lectern, in Chromium', () => {
  let t: TestApp;
  let stop: () => Promise<void>;
  let origin: string;
  let sameSite: string;
  let docs: string;
  let browser: Browser;
  let prizes: Server;

  /** The pages framed: GraphiQL, the dashboard, sign-in, an error page (a 404), each by its absolute URL under `base`. */
  const targets = (base: string) => [`${base}/graphql`, `${base}/`, `${base}/sign-in`, `${base}/no-such-page`, `${base}/projects/acme/builds/99`];

  /** A page framing every target, and one docs page (which allows framing: the control that frames do render here). */
  const framer = (urls: string[], control: string) =>
    `<!doctype html><html><head><title>Win a prize</title></head><body><h1>Click the button</h1>
${urls.map((u, i) => `<iframe id="f${i}" src="${u}" style="opacity:0.05" width="800" height="600"></iframe>`).join('\n')}
<iframe id="control" src="${control}"></iframe></body></html>`;

  beforeAll(async () => {
    ({ t, origin, stop } = await servedTestApp({ LECTERN_DOCS_DOMAIN: 'docs.localhost' }));
    // Chromium resolves *.localhost to this machine: docs.localhost:<port> is Lectern by another
    // name (no docs host: it has no project label), of the same site as every
    // <project>.docs.localhost:<port> (registrable domain docs.localhost). localhost itself is not:
    // to the browser it is a public suffix, and <project>.localhost a site of its own.
    sameSite = origin.replace('127.0.0.1', 'docs.localhost');
    docs = origin.replace('127.0.0.1', 'evil.docs.localhost');
    const { user: victim } = await createUser(t.db.prisma, 'victim', { password: 'victim-password-1' });
    const { user: attacker } = await createUser(t.db.prisma, 'attacker', { password: 'attacker-password-1' });
    await makeProject(t, { slug: 'acme', maintainers: [victim.id] });
    const evil = await makeProject(t, { slug: 'evil', maintainers: [attacker.id] });
    // The hostile project's own docs, on its docs host: frames Lectern by the same-site name and by its own.
    const site = htmlPage(framer([...targets(sameSite), ...targets(origin)], `${docs}/en/latest/plain.html`));
    writeFileSync(join(site, 'plain.html'), '<!doctype html><html><body><h1>Frameable docs</h1></body></html>');
    await publish(t, { project: evil, version: 'latest', html: site });
    // Another site: a page of its own server, on another loopback address (a site is its host, so
    // 127.0.0.2 is not 127.0.0.1's; Chromium lets a local page frame local addresses).
    prizes = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(framer([...targets(origin), ...targets(sameSite)], `${docs}/en/latest/plain.html`));
    }).listen(0, '127.0.0.2');
    await new Promise((r) => prizes.once('listening', r));
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise((r) => (prizes ? prizes.close(r) : r(undefined)));
    await stop?.();
    removePages();
  });

  /** What each iframe of the page shows: its URL, and whether anything of Lectern rendered in it. */
  async function framed(page: Page, ids: string[]) {
    const out: Record<string, { url: string; lectern: boolean; text: string }> = {};
    for (const id of ids) {
      const frame = (await (await page.$(`#${id}`))!.contentFrame()) as Frame;
      await until(`frame ${id} to navigate`, () => frame.url() !== 'about:blank' && frame.url() !== '', 20_000);
      await frame.waitForLoadState('load', { timeout: 60_000 });
      const seen = await frame.evaluate(() => ({
        lectern: document.querySelector('#root, .graphiql-container, #graphiql, main') !== null,
        text: document.body?.textContent?.slice(0, 200) ?? '',
      }));
      out[id] = { url: frame.url(), ...seen };
    }
    return out;
  }

  async function signedInContext() {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${origin}/sign-in`);
    await page.getByLabel('Username').fill('victim');
    await page.getByLabel('Password').fill('victim-password-1');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${origin}/`);
    await page.close();
    return context;
  }

  it('a docs host page of the same site (<project>.docs.localhost) frames GraphiQL, the dashboard, sign-in and error pages: none renders', async () => {
    const context = await signedInContext();
    const page = await context.newPage();
    const response = await page.goto(`${docs}/en/latest/`, { waitUntil: 'domcontentloaded' });
    expect(response?.status()).toBe(200);
    const all = [...targets(sameSite), ...targets(origin)];
    const seen = await framed(page, [...all.map((_, i) => `f${i}`), 'control']);
    // The control: a page that allows framing renders in the same page.
    expect(seen.control!.text).toContain('Frameable docs');
    all.forEach((url, i) => {
      const f = seen[`f${i}`]!;
      expect(f.lectern, `${url} rendered in the frame: ${JSON.stringify(f)}`).toBe(false);
      expect(f.url, url).toMatch(/^chrome-error:/);
    });
    await context.close();
  }, 120_000);

  it('a page of another site frames them: none renders', async () => {
    const context = await signedInContext();
    const all = [...targets(origin), ...targets(sameSite)];
    const page = await context.newPage();
    await page.goto(`http://127.0.0.2:${(prizes.address() as AddressInfo).port}/`, { waitUntil: 'domcontentloaded' });
    const seen = await framed(page, [...all.map((_, i) => `f${i}`), 'control']);
    expect(seen.control!.text).toContain('Frameable docs');
    all.forEach((url, i) => {
      const f = seen[`f${i}`]!;
      expect(f.lectern, `${url} rendered in the frame: ${JSON.stringify(f)}`).toBe(false);
      expect(f.url, url).toMatch(/^chrome-error:/);
    });
    await context.close();
  }, 120_000);
});

describe('redirects after signing in, in Chromium', () => {
  let t: TestApp;
  let stop: () => Promise<void>;
  let origin: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const elsewhere: string[] = [];
  beforeAll(async () => {
    ({ t, origin, stop } = await servedTestApp());
    await createUser(t.db.prisma, 'reader', { password: 'reader-password-1' });
    browser = await launchChromium();
    context = await browser.newContext();
    // The machine is shared: a page may take a while to come under load.
    context.setDefaultTimeout(60_000);
    // Every other site answers with a page of its own, so landing there would show.
    await context.route(
      (url) => url.origin !== origin,
      (route) => {
        elsewhere.push(route.request().url());
        return route.fulfill({ contentType: 'text/html', body: '<h1>Evil</h1>' });
      },
    );
    // Where the dashboard goes after signing in, only the address matters: a small page stands in
    // for whatever Lectern would show there (the sign-in page itself, its scripts and /graphql are real).
    await context.route(
      (url) => url.origin === origin && url.pathname !== '/sign-in' && url.pathname !== '/graphql' && !url.pathname.startsWith('/assets/'),
      (route) => (route.request().isNavigationRequest() ? route.fulfill({ contentType: 'text/html', body: '<h1>Landed</h1>' }) : route.fallback()),
    );
    page = await context.newPage();
    page.on('dialog', (d) => d.dismiss());
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await stop?.();
  });

  /** Signs in at /sign-in?<query> (written as it would be in a link) and answers where the browser landed. */
  async function signInWith(query: string): Promise<{ url: string; pwned: unknown }> {
    await page.goto(`${origin}/sign-in?${query}`);
    await page.getByLabel('Username').fill('reader');
    await page.getByLabel('Password').fill('reader-password-1');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((u) => !u.pathname.startsWith('/sign-in'));
    await page.waitForLoadState('load');
    const url = page.url();
    const pwned = url.startsWith(origin) ? await page.evaluate(() => (window as unknown as { pwned?: unknown }).pwned) : undefined;
    return { url, pwned };
  }

  it('a hostile next in any spelling lands on Lectern (at /), never on another site; a next of its own is followed', async () => {
    const hostile = [
      'next=/%09/evil.example/',
      'next=/%0a/evil.example/',
      'next=/%0d/evil.example/',
      'next=%2F%09%2Fevil.example%2F',
      'next=//evil.example/',
      'next=%2F%2Fevil.example',
      'next=/%5Cevil.example/',
      'next=%5C%5Cevil.example',
      'next=/%5C/evil.example/',
      'next=/./%2Fevil.example/',
      'next=https://evil.example/',
      'next=https:evil.example',
      `next=${encodeURIComponent('http://127.0.0.1@evil.example/')}`,
      'next=javascript:window.pwned=1',
      'next=%20javascript:window.pwned=1',
      'next=/%2509/evil.example/',
      'next=/&next=//evil.example/',
    ];
    for (const query of hostile) {
      const landed = await signInWith(query).catch((e: Error) => {
        throw new Error(`signing in at /sign-in?${query}: ${e.message}`);
      });
      expect(landed.url, query).toBe(`${origin}/`);
      expect(landed.pwned, query).toBeUndefined();
      expect(elsewhere, query).toEqual([]);
    }
    expect((await signInWith(`next=${encodeURIComponent('/account?tab=tokens#new')}`)).url).toBe(`${origin}/account?tab=tokens#new`);
  }, 300_000);
});
