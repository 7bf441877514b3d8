// The docs server's cache of what a URL resolves to (LECTERN_SERVE_CACHE_SECONDS): what a page
// costs in SQL, that writes made through this process are seen at once, and that a write this
// process never saw (straight to the database) shows once the TTL has passed, never later.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { artifactPrefix, buildPrefix } from '../../src/storage/artifacts.ts';
import { publish, sphinxBuild } from '../helpers/publish.ts';
import { makeWorld, type World } from './world.ts';

const PAGE = '/docs/fixture/en/latest/guide/install.html';

describe('with the default TTL', () => {
  let w: World;
  beforeAll(async () => {
    w = await makeWorld();
  });
  afterAll(() => w?.t.close());

  const sqlOf = async (path: string, token?: string) => {
    w.t.queries.length = 0;
    const req = w.t.http.get(path);
    if (token) req.set('authorization', `Token ${token}`);
    const res = await req;
    return { res, sql: [...w.t.queries] };
  };

  it('looks a page up in two SQL statements, then answers it again with none; anonymous readers cost no token lookup', async () => {
    const cold = await sqlOf('/docs/fixture/en/v2.0/glossary.html');
    expect(cold.res.status).toBe(200);
    // The project with its redirects and relations in one statement, the version in another.
    expect(cold.sql).toHaveLength(2);
    expect(cold.sql.join('\n')).not.toMatch(/ApiToken/);
    const warm = await sqlOf('/docs/fixture/en/v2.0/glossary.html');
    expect(warm.res.status).toBe(200);
    expect(warm.sql).toEqual([]);
    const translation = await sqlOf('/docs/fixture/es/latest/');
    expect(translation.res.status).toBe(200);
    expect(translation.sql.length).toBeLessThanOrEqual(2);
    expect((await sqlOf('/docs/fixture/es/latest/')).sql).toEqual([]);
    const sub = await sqlOf('/docs/fixture/projects/kid/en/latest/about/');
    expect(sub.res.status).toBe(200);
    expect((await sqlOf('/docs/fixture/projects/kid/en/latest/about/')).sql).toEqual([]);
  });

  it('still checks the token of a request that carries one', async () => {
    await sqlOf('/docs/fixture/en/internal/', w.alice);
    const again = await sqlOf('/docs/fixture/en/internal/', w.alice);
    expect(again.res.status).toBe(200);
    expect(again.sql.join('\n')).toMatch(/ApiToken/);
    expect((await sqlOf('/docs/fixture/en/internal/', w.bob)).res.status).toBe(404);
    expect((await sqlOf('/docs/fixture/en/internal/')).res.status).toBe(404);
  });

  it('serves a new publish at once', async () => {
    expect((await w.t.http.get('/docs/fixture/en/latest/')).text).toContain('Fixture 1.0 documentation');
    await publish(w.t, {
      project: { id: w.ids.fixture, slug: 'fixture' },
      version: 'latest',
      html: await sphinxBuild('sphinx', { overrides: { release: '2.0' } }),
    });
    expect((await w.t.http.get('/docs/fixture/en/latest/')).text).toContain('Fixture 2.0 documentation');
  });

  it('stops serving a version made private at once', async () => {
    expect((await w.t.http.get('/docs/fixture/en/v2.0/')).status).toBe(200);
    const made = await w.t.gql(
      'mutation($input: UpdateVersionInput!) { updateVersion(project: "fixture", slug: "v2.0", input: $input) { __typename } }',
      { input: { privacyLevel: 'private' } },
      w.alice,
    );
    expect(made.data.updateVersion.__typename, JSON.stringify(made)).toBe('MutationUpdateVersionSuccess');
    expect((await w.t.http.get('/docs/fixture/en/v2.0/')).status).toBe(404);
    expect((await w.t.http.get('/docs/fixture/en/v2.0/').set('authorization', `Token ${w.alice}`)).status).toBe(200);
  });

  it('follows a new redirect at once', async () => {
    expect((await w.t.http.get('/docs/fixture/en/latest/renamed.html')).status).toBe(404);
    const made = await w.t.gql(
      `mutation($input: RedirectInput!) { createRedirect(project: "fixture", input: $input) { __typename } }`,
      { input: { type: 'page', fromUrl: '/renamed.html', toUrl: '/glossary.html' } },
      w.alice,
    );
    expect(made.data.createRedirect.__typename).toBe('MutationCreateRedirectSuccess');
    const res = await w.t.http.get('/docs/fixture/en/latest/renamed.html');
    expect([res.status, res.headers.location]).toEqual([302, '/docs/fixture/en/latest/glossary.html']);
  });

  it('serves a build another process published (and whose predecessor it removed) without a 404', async () => {
    const first = await w.t.http.get(PAGE);
    expect(first.status).toBe(200);
    await publishElsewhere(w, '3.0');
    // A page kept from the previous build may still be sent (its key is immutable, the resolution
    // naming it at most the TTL old); a page not kept is a miss, looked up afresh in the new build…
    expect((await w.t.http.get(PAGE)).status).toBe(200);
    const other = await w.t.http.get('/docs/fixture/en/latest/guide/');
    expect(other.status).toBe(200);
    expect(other.text).toContain('Fixture 3.0 documentation');
    // …and that fresh lookup serves every page of the version from the new build at once.
    const after = await w.t.http.get(PAGE);
    expect(after.status).toBe(200);
    expect(after.text).toContain('Fixture 3.0 documentation');
  });
});

/** What another process's publish does, unseen by this one: new files, the switch, the old files removed. */
async function publishElsewhere(w: World, release: string): Promise<void> {
  const prisma = w.t.db.prisma;
  const version = await prisma.version.findUniqueOrThrow({ where: { projectId_slug: { projectId: w.ids.fixture, slug: 'latest' } } });
  const build = await prisma.build.create({
    data: { projectId: w.ids.fixture, versionId: version.id, versionSlug: 'latest', state: 'finished', success: true },
  });
  await w.t.storage.putDirectory(await sphinxBuild('sphinx', { overrides: { release } }), artifactPrefix('fixture', 'latest', build.id, 'html'));
  await prisma.$executeRaw`UPDATE "Version" SET "publishedBuildId" = ${build.id} WHERE id = ${version.id}`;
  await w.t.storage.deletePrefix(buildPrefix('fixture', 'latest', version.publishedBuildId!));
}

describe('a write this process did not see', () => {
  let w: World;
  beforeAll(async () => {
    w = await makeWorld({ LECTERN_SERVE_CACHE_SECONDS: '5' });
  });
  afterAll(() => w?.t.close());
  afterEach(() => vi.useRealTimers());

  const setDefault = (v: string) => w.t.db.prisma.$executeRaw`UPDATE "Project" SET "defaultVersion" = ${v} WHERE id = ${w.ids.fixture}`;

  it('is seen once the TTL has passed, and not before', async () => {
    // Only the clock the cache reads is stopped; timers and I/O run as usual.
    vi.useFakeTimers({ toFake: ['Date'] });
    const start = Date.now();
    expect((await w.t.http.get('/docs/fixture/')).headers.location).toBe('/docs/fixture/en/latest/');
    await setDefault('v2.0');
    vi.setSystemTime(start + 4_900);
    expect((await w.t.http.get('/docs/fixture/')).headers.location).toBe('/docs/fixture/en/latest/');
    vi.setSystemTime(start + 5_001);
    expect((await w.t.http.get('/docs/fixture/')).headers.location).toBe('/docs/fixture/en/v2.0/');
    await setDefault('latest');
  });

  it('sends a kept page of a build another process replaced and removed no longer than the TTL', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const start = Date.now();
    expect((await w.t.http.get(PAGE)).text).toContain('Fixture 1.0 documentation');
    await publishElsewhere(w, '4.0');
    vi.setSystemTime(start + 4_900);
    const stale = await w.t.http.get(PAGE);
    expect(stale.status).toBe(200);
    expect(stale.text).toContain('Fixture 1.0 documentation');
    vi.setSystemTime(start + 5_001);
    const fresh = await w.t.http.get(PAGE);
    expect(fresh.status).toBe(200);
    expect(fresh.text).toContain('Fixture 4.0 documentation');
  });
});

describe('LECTERN_SERVE_CACHE_SECONDS=0', () => {
  let w: World;
  beforeAll(async () => {
    w = await makeWorld({ LECTERN_SERVE_CACHE_SECONDS: '0' });
  });
  afterAll(() => w?.t.close());

  it('looks every request up, so even a write straight to the database is seen at once', async () => {
    expect((await w.t.http.get('/docs/fixture/')).headers.location).toBe('/docs/fixture/en/latest/');
    await w.t.db.prisma.$executeRaw`UPDATE "Project" SET "defaultVersion" = 'v2.0' WHERE id = ${w.ids.fixture}`;
    w.t.queries.length = 0;
    expect((await w.t.http.get('/docs/fixture/')).headers.location).toBe('/docs/fixture/en/v2.0/');
    expect(w.t.queries.length).toBeGreaterThan(0);
  });
});
