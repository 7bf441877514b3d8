// The web layer against a hostile browser or client (issue 9, "Smaller"): CORS on the APIs is off
// unless origins are configured and never hands an arbitrary origin credentials; with a docs
// domain, projects' HTML is never served on the API's host; answers about private projects are
// never `public` in Cache-Control; and X-Forwarded-* count only from proxies the operator names.
// Each attack is tried, and the ordinary use right after it still works.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { firstBuildUpdate } from '../helpers/follow.ts';
import { makeProject, publish } from '../helpers/publish.ts';

const QUERY = JSON.stringify({ query: '{ __typename }' });

/** A small built site: two pages and the project's own 404 page. */
async function site(title: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lectern-web-'));
  await writeFile(path.join(dir, 'index.html'), `<!doctype html><html><body><h1>${title}</h1></body></html>`);
  await writeFile(path.join(dir, 'new.html'), `<!doctype html><html><body><p>${title} new page</p></body></html>`);
  await writeFile(path.join(dir, '404.html'), `<!doctype html><html><body><p>${title} has no such page</p></body></html>`);
  return dir;
}

async function listen(t: TestApp): Promise<{ server: Server; base: string }> {
  const server = createServer(t.handler).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const close = (server: Server | undefined) => new Promise<void>((r) => (server ? (server.closeAllConnections(), server.close(() => r())) : r()));

describe('CORS when no origin is configured', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
  });
  afterAll(() => t?.close());

  it('grants no origin anything on /graphql or /api/v3, preflight included; same-origin calls still work', async () => {
    for (const origin of ['https://evil.example', 'null', 'http://lectern.test']) {
      const gql = await t.http.post('/graphql').set('content-type', 'application/json').set('origin', origin).send(QUERY);
      expect(gql.status).toBe(200);
      expect(gql.body.data).toEqual({ __typename: 'Query' });
      const rest = await t.http.get('/api/v3/projects/').set('origin', origin);
      const preflight = await t.http
        .options('/graphql')
        .set('origin', origin)
        .set('access-control-request-method', 'POST')
        .set('access-control-request-headers', 'authorization, content-type');
      const restPreflight = await t.http.options('/api/v3/projects/').set('origin', origin).set('access-control-request-method', 'GET');
      for (const [what, res] of Object.entries({ gql, rest, preflight, restPreflight })) {
        const granted = Object.keys(res.headers).filter((h) => h.startsWith('access-control-'));
        expect(granted, `${origin} ${what}`).toEqual([]);
      }
    }
  });
});

describe("CORS on the public read endpoints docs pages call (readthedocs.org's CORS_URLS_REGEX)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
    for (const [slug, privacyLevel] of [
      ['open', 'public'],
      ['hidden', 'private'],
    ] as const) {
      const p = await makeProject(t, { slug, privacyLevel });
      await t.db.prisma.version.create({ data: { projectId: p.id, slug: 'latest', verboseName: 'latest', active: true, built: true, type: 'branch' } });
    }
  });
  afterAll(() => t?.close());

  it('lets any origin read embed and the version list, with * and never credentials, and only what anyone may read', async () => {
    for (const path of [
      '/api/v2/version/',
      '/api/v2/embed/?project=open&version=latest&doc=index',
      '/api/v3/embed/?url=http://lectern.test/docs/open/en/latest/',
    ]) {
      const res = await t.http.get(path).set('origin', 'https://docs.elsewhere.example');
      expect([path, res.headers['access-control-allow-origin']]).toEqual([path, '*']);
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      expect(res.status, path).toBeLessThan(500);
    }
    // Cross-origin readers are anonymous readers: the private project's versions never show.
    const versions = await t.http.get('/api/v2/version/?limit=100').set('origin', 'https://docs.elsewhere.example');
    expect(versions.body.results.map((v: { project: { slug: string } }) => v.project.slug)).toEqual(['open']);
  });

  it('answers their preflight for idempotent methods only', async () => {
    const res = await t.http
      .options('/api/v2/embed/')
      .set('origin', 'https://docs.elsewhere.example')
      .set('access-control-request-method', 'GET')
      .set('access-control-request-headers', 'x-hoverxref-version');
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-methods']).toBe('GET, OPTIONS, HEAD');
    expect(res.headers['access-control-allow-headers']).toMatch(/X-Hoverxref-Version/);
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('grants nothing on the other endpoints: they stay same-origin', async () => {
    for (const path of ['/api/v2/project/', '/api/v2/build/', '/api/v3/projects/']) {
      const res = await t.http.get(path).set('origin', 'https://docs.elsewhere.example');
      expect([path, Object.keys(res.headers).filter((h) => h.startsWith('access-control-'))]).toEqual([path, []]);
    }
  });
});

describe('CORS with LECTERN_CORS_ORIGINS', () => {
  let t: TestApp;
  const DASH = 'https://dash.example.com';
  beforeAll(async () => {
    t = await testApp({ LECTERN_CORS_ORIGINS: `${DASH}, https://tools.example.com` });
  });
  afterAll(() => t?.close());

  it('answers a listed origin with exactly that origin, Vary: Origin, and no credentials', async () => {
    const gql = await t.http.post('/graphql').set('content-type', 'application/json').set('origin', DASH).send(QUERY);
    expect(gql.body.data).toEqual({ __typename: 'Query' });
    const rest = await t.http.get('/api/v3/projects/').set('origin', DASH);
    for (const res of [gql, rest]) {
      expect(res.headers['access-control-allow-origin']).toBe(DASH);
      expect(res.headers.vary).toMatch(/\bOrigin\b/);
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    }
    const preflight = await t.http
      .options('/graphql')
      .set('origin', DASH)
      .set('access-control-request-method', 'POST')
      .set('access-control-request-headers', 'authorization, content-type');
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe(DASH);
    expect(preflight.headers['access-control-allow-headers']).toMatch(/Authorization/);
    expect(preflight.headers['access-control-allow-methods']).toMatch(/POST/);
    expect(preflight.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('never reflects an unlisted origin, nor grants its preflight anything', async () => {
    for (const origin of ['https://evil.example', 'null', `${DASH}.evil.example`, 'https://dash.example.co', `http://dash.example.com`]) {
      const gql = await t.http.post('/graphql').set('content-type', 'application/json').set('origin', origin).send(QUERY);
      const rest = await t.http.get('/api/v3/projects/').set('origin', origin);
      const preflight = await t.http
        .options('/graphql')
        .set('origin', origin)
        .set('access-control-request-method', 'POST')
        .set('access-control-request-headers', 'authorization');
      const restPreflight = await t.http.options('/api/v3/projects/').set('origin', origin).set('access-control-request-method', 'DELETE');
      for (const [what, res] of Object.entries({ gql, rest, preflight, restPreflight })) {
        const granted = Object.keys(res.headers).filter((h) => h.startsWith('access-control-'));
        expect(granted, `${origin} ${what}`).toEqual([]);
        // Caches keep one answer per origin, so a listed origin's answer is never given to this one.
        expect(res.headers.vary).toMatch(/\bOrigin\b/);
      }
    }
  });
});

describe('docs with a docs domain', () => {
  let t: TestApp;
  let alice: string;
  beforeAll(async () => {
    t = await testApp({ LECTERN_DOCS_DOMAIN: 'docs.test' });
    alice = await t.user('alice');
    const aliceId = (await t.db.prisma.user.findUniqueOrThrow({ where: { username: 'alice' } })).id;
    const open = await makeProject(t, { slug: 'open_docs', maintainers: [aliceId] });
    await publish(t, { project: open, version: 'latest', html: await site('Open Docs') });
    await publish(t, { project: open, version: 'internal', html: await site('Open Internal'), versionData: { privacyLevel: 'private' } });
    const hidden = await makeProject(t, { slug: 'hidden', privacyLevel: 'private', maintainers: [aliceId] });
    await publish(t, { project: hidden, version: 'latest', html: await site('Hidden Docs') });
    for (const project of [open, hidden]) {
      await t.db.prisma.redirect.create({ data: { projectId: project.id, type: 'page', fromUrl: '/old.html', toUrl: '/new.html', httpStatus: 301 } });
    }
  });
  afterAll(() => t?.close());

  const onHost = (host: string, p: string, token?: string) => {
    const req = t.http.get(p).set('host', host);
    return token ? req.set('authorization', `Token ${token}`) : req;
  };

  describe('are served only on docs hosts', () => {
    it('never serves a project page, download or switcher on the API host: it sends the reader to the docs host', async () => {
      // Warm on the docs host first, so the fast path holds the page.
      for (let i = 0; i < 2; i++) expect((await onHost('open-docs.docs.test', '/en/latest/')).text).toContain('Open Docs');
      const cases = [
        ['/docs/open_docs/en/latest/', 'http://open-docs.docs.test/en/latest/'],
        ['/docs/open_docs/en/latest/?q=1', 'http://open-docs.docs.test/en/latest/?q=1'],
        ['/docs/open_docs/_/downloads/en/latest/pdf/', 'http://open-docs.docs.test/_/downloads/en/latest/pdf/'],
        ['/docs/open_docs/_/switcher.js', 'http://open-docs.docs.test/_/switcher.js'],
        ['/docs/open_docs', 'http://open-docs.docs.test/'],
      ] as const;
      for (const [p, location] of cases) {
        for (const token of [undefined, alice]) {
          for (const host of ['lectern.test', '127.0.0.1']) {
            const res = await onHost(host, p, token);
            expect([p, host, res.status, res.headers.location]).toEqual([p, host, 302, location]);
            expect(res.headers['content-type']).not.toMatch(/html|javascript/);
            expect(res.text ?? '').not.toContain('Open Docs');
          }
        }
      }
    });

    it('tells a private project apart from a missing one in nothing, and answers 404 for what names no project', async () => {
      const hidden = await onHost('lectern.test', '/docs/hidden/en/latest/');
      const missing = await onHost('lectern.test', '/docs/no-such-project/en/latest/');
      expect([hidden.status, hidden.headers.location]).toEqual([302, 'http://hidden.docs.test/en/latest/']);
      expect([missing.status, missing.headers.location]).toEqual([302, 'http://no-such-project.docs.test/en/latest/']);
      expect(hidden.headers['cache-control']).toBe(missing.headers['cache-control']);
      for (const p of ['/docs', '/docs/', '/docs/..%2fhidden/en/latest/', '/docs/Not_A_Slug!/']) {
        const res = await onHost('lectern.test', p);
        expect([p, res.status]).toEqual([p, 404]);
        expect(res.text).not.toContain('Hidden Docs');
      }
    });

    it('still serves docs on their hosts and the API on the main host', async () => {
      expect((await onHost('open-docs.docs.test', '/en/latest/new.html')).text).toContain('Open Docs new page');
      expect((await onHost('hidden.docs.test', '/en/latest/', alice)).text).toContain('Hidden Docs');
      expect((await onHost('lectern.test', '/healthz')).body).toEqual({ status: 'ok' });
      const gql = await t.gql('{ project(slug: "open_docs") { slug } }');
      expect(gql.data.project).toEqual({ slug: 'open_docs' });
    });

    it('takes no X-Forwarded-Host from a peer that is no configured proxy (loopback included)', async () => {
      for (let i = 0; i < 2; i++) {
        const res = await onHost('lectern.test', '/en/latest/').set('x-forwarded-host', 'open-docs.docs.test');
        expect(res.status).toBe(404);
        expect(res.text).not.toContain('Open Docs');
      }
    });
  });

  describe('answers about private projects are never public in Cache-Control', () => {
    it("keeps a private project's redirects, 404 pages and errors out of shared caches", async () => {
      const answers = [
        ['/', 302],
        ['/en/', 302],
        ['/en/latest', 302],
        ['/en/latest/old.html', 301],
        ['/en/latest/nothing.html', 404],
        ['/xx/latest/', 404],
        ['/_/downloads/en/latest/pdf/', 404],
        ['/_/downloads/en/latest/exe/', 404],
        ['/_/versions/en.json', 200],
        ['/en/latest/', 200],
      ] as const;
      for (const [p, status] of answers) {
        const res = await onHost('hidden.docs.test', p, alice);
        expect([p, res.status]).toEqual([p, status]);
        expect([p, res.headers['cache-control']]).toEqual([p, 'private, no-cache']);
      }
      const page404 = await onHost('hidden.docs.test', '/en/latest/nothing.html', alice);
      expect(page404.text).toContain('Hidden Docs has no such page');
    });

    it("does the same for a public project's private version, and tells anonymous readers nothing", async () => {
      for (const [p, status] of [
        ['/en/internal', 302],
        ['/en/internal/nothing.html', 404],
        ['/en/internal/old.html', 301],
        ['/en/internal/', 200],
      ] as const) {
        const res = await onHost('open-docs.docs.test', p, alice);
        expect([p, res.status, res.headers['cache-control']]).toEqual([p, status, 'private, no-cache']);
      }
      // To a reader who may not see them, a private project and its private version are missing, as anything missing is.
      const hidden = await onHost('hidden.docs.test', '/en/latest/old.html');
      const nothing = await onHost('nothing.docs.test', '/en/latest/old.html');
      // The same page (its sign-in link names the address asked for).
      const page = (text: string) => text.replace(/next=[^"]*/, 'next=<the page>');
      expect([hidden.status, hidden.headers['cache-control'], page(hidden.text)]).toEqual([
        nothing.status,
        nothing.headers['cache-control'],
        page(nothing.text),
      ]);
      expect(hidden.headers['cache-control']).not.toMatch(/public/);
    });

    it('keeps public answers cacheable as before', async () => {
      const moved = await onHost('open-docs.docs.test', '/en/latest/old.html');
      expect([moved.status, moved.headers.location, moved.headers['cache-control']]).toEqual([301, '/en/latest/new.html', 'public, max-age=3600']);
      const page = await onHost('open-docs.docs.test', '/en/latest/new.html');
      expect(page.headers['cache-control']).toBe('public, no-cache');
      const missing = await onHost('open-docs.docs.test', '/en/latest/nothing.html');
      expect([missing.status, missing.headers['cache-control']]).toEqual([404, 'no-cache']);
    });
  });
});

/** One anonymous live subscription to a build, from `xff` as its X-Forwarded-For: its first event. */
const follow = (base: string, buildId: number, xff: string, streams: AbortController[]) => firstBuildUpdate(base, buildId, { 'x-forwarded-for': xff }, streams);

describe('X-Forwarded-For and the live-log bound per client', () => {
  const streams: AbortController[] = [];
  afterEach(() => {
    for (const s of streams.splice(0)) s.abort();
  });

  async function appWithBuild(env: Record<string, string>) {
    const t = await testApp(env);
    const alice = await t.user('alice');
    const res = await t.gql(
      `mutation($input: ImportProjectInput!) { importProject(input: $input) { ... on MutationImportProjectSuccess { data { id } } } }`,
      { input: { name: `Live ${Object.keys(env).length}`, repository: { url: 'https://github.com/acme/live.git' } } },
      alice,
    );
    const build = await t.db.prisma.build.findFirstOrThrow({ where: { projectId: res.data.importProject.data.id } });
    return { t, buildId: build.id };
  }

  it('without LECTERN_TRUSTED_PROXIES, a made-up X-Forwarded-For from loopback does not make a new client', async () => {
    const { t, buildId } = await appWithBuild({});
    const { server, base } = await listen(t);
    try {
      expect(t.app.get('trust proxy fn')('127.0.0.1', 0)).toBe(false);
      t.services.live.maxPerClient = 1;
      expect(await follow(base, buildId, '198.51.100.1', streams)).toEqual({ ok: true });
      for (const xff of ['198.51.100.2', '203.0.113.9, 198.51.100.3', '::1']) {
        expect(await follow(base, buildId, xff, streams)).toEqual({ ok: false, error: 'This client already follows 1 builds live: close one first.' });
      }
    } finally {
      for (const s of streams.splice(0)) s.abort();
      await close(server);
      await t.close();
    }
  });

  it('with loopback named as a trusted proxy, the clients behind it are told apart by the address it forwards', async () => {
    const { t, buildId } = await appWithBuild({ LECTERN_TRUSTED_PROXIES: '127.0.0.1, ::1' });
    const { server, base } = await listen(t);
    try {
      t.services.live.maxPerClient = 1;
      expect(await follow(base, buildId, '192.0.2.10', streams)).toEqual({ ok: true });
      expect(await follow(base, buildId, '192.0.2.11', streams)).toEqual({ ok: true });
      // The same client again (a hop the proxy appended last is the one believed): over its bound.
      expect(await follow(base, buildId, '203.0.113.50, 192.0.2.10', streams)).toEqual({
        ok: false,
        error: 'This client already follows 1 builds live: close one first.',
      });
    } finally {
      for (const s of streams.splice(0)) s.abort();
      await close(server);
      await t.close();
    }
  });
});
