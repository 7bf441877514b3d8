// The docs fast path (src/serve/fast.ts) answers warm public pages in front of express: these
// tests check that what it sends is byte for byte what the router sends (identity and gzip, GET
// and HEAD, 304s), that it never answers what it must not (tokens, private versions), and that it
// is no staler than the resolution cache (a publish at once, a write it never saw after the TTL).
// Whether express saw a request is told by a spy on the app's handle().
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { publish, sphinxBuild } from '../helpers/publish.ts';
import { makeWorld, rawRequest, type World } from './world.ts';

const PAGE = '/docs/fixture/en/latest/guide/install.html';
const GZIP = { 'accept-encoding': 'gzip, deflate, br' };

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** Whether express handled the request (the fast path did not answer it). */
  express: boolean;
}

/** A listening server on the handler, and raw requests to it (supertest would decode gzip). */
function serverOf(w: () => World) {
  let server: Server;
  let origin: string;
  beforeAll(async () => {
    server = createServer(w().t.handler).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));

  return async (path: string, headers: Record<string, string | string[]> = {}, method = 'GET'): Promise<Raw> => {
    // handle() is what express's app function calls; its typings do not list it.
    const handle = vi.spyOn(w().t.app as unknown as { handle: () => void }, 'handle');
    try {
      const res = await rawRequest(`${origin}${path}`, headers, method);
      return { ...res, express: handle.mock.calls.length > 0 };
    } finally {
      handle.mockRestore();
    }
  };
}

/** What must be identical between the two paths: all but the per-connection headers. */
const comparable = (r: Raw) => {
  const { date: _d, connection: _c, 'keep-alive': _k, ...headers } = r.headers;
  return { status: r.status, headers, body: r.body.toString('base64') };
};

/** Empties every docs cache of the world's app, as a write through the domain does. */
const forget = (w: World) => w.t.services.events.emit('servedChanged', {});

describe('with the default TTL', () => {
  let w: World;
  beforeAll(async () => {
    w = await makeWorld();
  });
  afterAll(() => w?.t.close());
  const raw = serverOf(() => w);

  for (const method of ['GET', 'HEAD']) {
    for (const [encoding, headers] of [
      ['identity', {}],
      ['gzip', GZIP],
    ] as const) {
      it(`answers ${method} ${encoding} the second time itself, exactly as the router did the first`, async () => {
        forget(w);
        const first = await raw(PAGE, headers, method);
        const second = await raw(PAGE, headers, method);
        expect([first.express, second.express]).toEqual([true, false]);
        expect(first.status).toBe(200);
        expect(first.headers['content-encoding']).toBe(encoding === 'gzip' ? 'gzip' : undefined);
        expect(first.headers.etag).toBeDefined();
        expect(first.body.length).toBe(method === 'HEAD' ? 0 : Number(first.headers['content-length']));
        expect(comparable(second)).toEqual(comparable(first));
      });
    }
  }

  it('keeps the two encodings apart: an answer recorded for one is never sent to the other', async () => {
    forget(w);
    const plain = await raw(PAGE);
    const gz = await raw(PAGE, GZIP);
    expect([plain.express, gz.express]).toEqual([true, true]);
    const again = await raw(PAGE, { 'accept-encoding': 'gzip;q=0, identity' });
    expect(again.express).toBe(false);
    expect(comparable(again)).toEqual(comparable(plain));
    expect(comparable(await raw(PAGE, { 'accept-encoding': 'gzip' }))).toEqual(comparable(gz));
    // Header names in any case; a header given twice is left to express (node joins some, keeps the first of others).
    const mixed = await raw(PAGE, { 'Accept-ENCODING': 'gzip' });
    expect([mixed.express, mixed.headers['content-encoding']]).toEqual([false, 'gzip']);
    const twice = await raw(PAGE, { 'accept-encoding': ['identity', 'gzip'] });
    expect([twice.express, twice.headers['content-encoding']]).toEqual([true, 'gzip']);
    const tokenTwice = await raw(PAGE, { authorization: ['', 'Token nope'] });
    expect(tokenTwice.express).toBe(true);
  });

  it('answers a query string with the same page, and If-None-Match and If-Modified-Since with the same 304 as the router', async () => {
    forget(w);
    const page = await raw(PAGE);
    const conditionals: Record<string, string>[] = [
      { 'if-none-match': page.headers.etag! },
      { 'if-none-match': `"nope", ${page.headers.etag!}` },
      { 'if-none-match': '*' },
      { 'if-none-match': page.headers.etag!, ...GZIP },
      { 'if-modified-since': page.headers['last-modified']! },
      { 'if-none-match': '"nope"' },
    ];
    forget(w);
    const viaRouter: Raw[] = [];
    for (const h of conditionals) viaRouter.push(await raw(PAGE, h));
    expect(viaRouter.map((r) => r.status)).toEqual([304, 304, 304, 304, 304, 200]);
    expect(viaRouter.every((r) => r.express)).toBe(true);
    // The 304s recorded nothing; the last answer (a 200 without gzip) was recorded, gzip not yet.
    expect((await raw(PAGE)).express).toBe(false);
    expect((await raw(PAGE, GZIP)).express).toBe(true);
    for (const [i, h] of conditionals.entries()) {
      const fast = await raw(`${PAGE}?utm=${i}`, h);
      expect(fast.express).toBe(false);
      expect(comparable(fast), JSON.stringify(h)).toEqual(comparable(viaRouter[i]!));
    }
  });

  it('records neither redirects nor 404s nor the versions JSON', async () => {
    for (const path of ['/docs/fixture/en/latest/guide', '/docs/fixture/en/latest/nope.html', '/docs/fixture/_/versions/en.json', '/docs/fixture/']) {
      await raw(path);
      expect((await raw(path)).express, path).toBe(true);
    }
  });

  it('never answers a request with an Authorization header, nor records a private version', async () => {
    forget(w);
    expect((await raw(PAGE)).express).toBe(true);
    expect((await raw(PAGE)).express).toBe(false);
    const withToken = await raw(PAGE, { authorization: `Token ${w.alice}` });
    expect([withToken.status, withToken.express]).toEqual([200, true]);
    const bad = await raw(PAGE, { authorization: 'Token nope' });
    expect([bad.status, bad.express]).toEqual([401, true]);
    for (let i = 0; i < 2; i++) {
      const secret = await raw('/docs/fixture/en/internal/', { authorization: `Token ${w.alice}` });
      expect([secret.status, secret.express]).toEqual([200, true]);
      const anonymous = await raw('/docs/fixture/en/internal/');
      expect([anonymous.status, anonymous.express]).toEqual([404, true]);
      const privateProject = await raw('/docs/secret/en/latest/', { authorization: `Token ${w.alice}` });
      expect([privateProject.status, privateProject.express]).toEqual([200, true]);
    }
  });

  it('sends a new publish at once', async () => {
    forget(w);
    const before = await raw('/docs/fixture/en/latest/');
    expect(before.body.toString()).toContain('Fixture 1.0 documentation');
    expect((await raw('/docs/fixture/en/latest/')).express).toBe(false);
    await publish(w.t, {
      project: { id: w.ids.fixture, slug: 'fixture' },
      version: 'latest',
      html: await sphinxBuild('sphinx', { overrides: { release: '5.0' } }),
    });
    const after = await raw('/docs/fixture/en/latest/');
    expect([after.status, after.express]).toEqual([200, true]);
    expect(after.body.toString()).toContain('Fixture 5.0 documentation');
    const again = await raw('/docs/fixture/en/latest/');
    expect(again.express).toBe(false);
    expect(again.body.toString()).toContain('Fixture 5.0 documentation');
  });

  it('stops answering a version made private through the API at once', async () => {
    await raw('/docs/fixture/en/v2.0/');
    expect((await raw('/docs/fixture/en/v2.0/')).express).toBe(false);
    const made = await w.t.gql(
      'mutation($input: UpdateVersionInput!) { updateVersion(project: "fixture", slug: "v2.0", input: $input) { __typename } }',
      { input: { privacyLevel: 'private' } },
      w.alice,
    );
    expect(made.data.updateVersion.__typename).toBe('MutationUpdateVersionSuccess');
    const now = await raw('/docs/fixture/en/v2.0/');
    expect([now.status, now.express]).toEqual([404, true]);
  });
});

describe('a docs host', () => {
  let w: World;
  beforeAll(async () => {
    // This test's requests come from loopback, named as a trusted proxy (none is by default).
    w = await makeWorld({ LECTERN_DOCS_DOMAIN: 'docs.test', LECTERN_TRUSTED_PROXIES: '127.0.0.1,::1' });
  });
  afterAll(() => w?.t.close());
  const raw = serverOf(() => w);

  it('is answered per host, as the router reads the host', async () => {
    const host = { host: 'fixture.docs.test:8000' };
    const first = await raw('/en/latest/glossary.html', host);
    expect([first.status, first.express]).toEqual([200, true]);
    const second = await raw('/en/latest/glossary.html', { host: 'FIXTURE.docs.test' });
    expect(second.express).toBe(false);
    expect(comparable(second)).toEqual(comparable(first));
    // Another host, the same path: not this page.
    expect((await raw('/en/latest/glossary.html', { host: 'other.docs.test' })).status).toBe(404);
    expect((await raw('/en/latest/glossary.html', { host: 'lectern.test' })).express).toBe(true);
    // A forwarded host from a trusted proxy (loopback, as configured) is the host, as express reads it.
    const forwarded = await raw('/en/latest/glossary.html', { host: 'lectern.test', 'x-forwarded-host': 'fixture.docs.test, proxy.test' });
    expect(forwarded.express).toBe(false);
    expect(comparable(forwarded)).toEqual(comparable(first));
    const elsewhere = await raw('/en/latest/glossary.html', { ...host, 'x-forwarded-host': 'other.docs.test' });
    expect([elsewhere.status, elsewhere.express]).toEqual([404, true]);
  });

  it('never answers /docs paths on the main host: express sends them to the docs host, every time', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await raw('/docs/fixture/en/latest/glossary.html', { host: 'lectern.test' });
      expect([res.status, res.headers.location, res.express]).toEqual([302, 'http://fixture.docs.test/en/latest/glossary.html', true]);
    }
  });
});

describe('a write this process did not see', () => {
  let w: World;
  beforeAll(async () => {
    w = await makeWorld({ LECTERN_SERVE_CACHE_SECONDS: '5' });
  });
  afterAll(() => w?.t.close());
  afterEach(() => vi.useRealTimers());
  const raw = serverOf(() => w);

  it('stops the fast path once the TTL has passed, and not before', async () => {
    // Only the clock the caches read is stopped; timers and I/O run as usual.
    vi.useFakeTimers({ toFake: ['Date'] });
    const start = Date.now();
    expect((await raw(PAGE)).express).toBe(true);
    expect((await raw(PAGE)).express).toBe(false);
    await w.t.db.prisma.$executeRaw`UPDATE "Version" SET "privacyLevel" = 'private' WHERE "projectId" = ${w.ids.fixture} AND slug = 'latest'`;
    vi.setSystemTime(start + 4_900);
    const stale = await raw(PAGE);
    expect([stale.status, stale.express]).toEqual([200, false]);
    vi.setSystemTime(start + 5_001);
    const fresh = await raw(PAGE);
    expect([fresh.status, fresh.express]).toEqual([404, true]);
    expect((await raw(PAGE)).express).toBe(true);
  });

  it('counts the TTL from the lookups a page was made from, not from when it was recorded', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const start = Date.now();
    // The version is looked up now; a page of it first sent 3 s later is made from that lookup.
    expect((await raw('/docs/fixture/en/v2.0/')).status).toBe(200);
    vi.setSystemTime(start + 3_000);
    expect((await raw('/docs/fixture/en/v2.0/glossary.html')).express).toBe(true);
    expect((await raw('/docs/fixture/en/v2.0/glossary.html')).express).toBe(false);
    await w.t.db.prisma.$executeRaw`UPDATE "Version" SET "privacyLevel" = 'private' WHERE "projectId" = ${w.ids.fixture} AND slug = 'v2.0'`;
    vi.setSystemTime(start + 5_001);
    const fresh = await raw('/docs/fixture/en/v2.0/glossary.html');
    expect([fresh.status, fresh.express]).toEqual([404, true]);
  });
});

describe('LECTERN_SERVE_CACHE_SECONDS=0', () => {
  let w: World;
  beforeAll(async () => {
    w = await makeWorld({ LECTERN_SERVE_CACHE_SECONDS: '0' });
  });
  afterAll(() => w?.t.close());
  const raw = serverOf(() => w);

  it('turns the fast path off: express answers every request', async () => {
    for (let i = 0; i < 3; i++) expect((await raw(PAGE)).express).toBe(true);
  });
});
