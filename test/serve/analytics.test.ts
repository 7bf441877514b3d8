// Traffic and search analytics (docs/design/analytics.md), counted from real page views and
// searches through the docs server (its fast path included) and read back through GraphQL by the
// project's maintainers: pages read, 404s, searches and those that found nothing; nothing about
// the reader kept; a project that turned analytics off counts nothing; old days are dropped.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeWorld, type World } from './world.ts';

let w: World;
beforeAll(async () => {
  w = await makeWorld();
});
afterAll(() => w?.t.close());

const get = (p: string) => w.t.http.get(p);
const ANALYTICS = `query($p: String!, $d: Int) { project(slug: $p) { analytics(days: $d) {
  days since views notFound daily { day views notFound } pages { path version views } missing { path version views }
  searches { query version searches results } searchesWithoutResults { query searches } } } }`;
const read = async (project: string, token = w.alice, days?: number) => (await w.t.gql(ANALYTICS, { p: project, d: days }, token)).data?.project?.analytics;
const today = () => new Date().toISOString().slice(0, 10);

describe('analytics', () => {
  it('counts pages read (through the fast path too), 404s and searches, and shows them to maintainers', async () => {
    // A day past the retention, to be dropped by the next write.
    await w.t.db.prisma.pageViewDaily.create({
      data: { projectId: w.ids.fixture, versionSlug: 'latest', path: '/old.html', day: new Date('2020-01-01'), status: 200, views: 7 },
    });
    for (let i = 0; i < 5; i++) expect((await get('/docs/fixture/en/latest/guide/install.html')).status).toBe(200);
    expect((await get('/docs/fixture/en/v2.0/')).status).toBe(200);
    // Not pages: a stylesheet, and a HEAD.
    expect((await get('/docs/fixture/en/latest/_static/basic.css')).status).toBe(200);
    expect((await w.t.http.head('/docs/fixture/en/latest/glossary.html')).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await get('/docs/fixture/en/latest/gone.html')).status).toBe(404);
    expect((await get('/docs/fixture/_/search.json?q=Installation&version=latest')).status).toBe(200);
    expect((await get('/docs/fixture/_/search.json?q=%20installation%20&version=latest')).status).toBe(200);
    expect((await get('/docs/fixture/_/search.json?q=zzzqqq&version=latest')).status).toBe(200);
    await w.t.services.analytics!.flush();

    const a = await read('fixture');
    expect(a).toMatchObject({ days: 30, views: 6, notFound: 2 });
    expect(a.daily).toHaveLength(30);
    expect(a.daily.at(-1)).toEqual({ day: today(), views: 6, notFound: 2 });
    expect(a.pages).toEqual([
      { path: '/guide/install.html', version: 'latest', views: 5 },
      { path: '/', version: 'v2.0', views: 1 },
    ]);
    expect(a.missing).toEqual([{ path: '/en/latest/gone.html', version: 'latest', views: 2 }]);
    expect(a.searches).toEqual([
      { query: 'installation', version: 'latest', searches: 2, results: expect.any(Number) },
      { query: 'zzzqqq', version: 'latest', searches: 1, results: 0 },
    ]);
    expect(a.searches[0].results).toBeGreaterThan(0);
    expect(a.searchesWithoutResults).toEqual([{ query: 'zzzqqq', searches: 1 }]);
    // The day before the retention is gone.
    expect(await w.t.db.prisma.pageViewDaily.count({ where: { path: '/old.html' } })).toBe(0);
  });

  it('keeps nothing about the reader: no address, user or referrer in what is stored', async () => {
    const columns = await w.t.db.prisma.$queryRaw<{ table_name: string; column_name: string }[]>`
      SELECT table_name, column_name FROM information_schema.columns WHERE table_name IN ('PageViewDaily', 'SearchQueryDaily') ORDER BY table_name, ordinal_position`;
    expect(columns.map((c) => `${c.table_name}.${c.column_name}`)).toEqual([
      'PageViewDaily.projectId',
      'PageViewDaily.versionSlug',
      'PageViewDaily.path',
      'PageViewDaily.day',
      'PageViewDaily.status',
      'PageViewDaily.views',
      'SearchQueryDaily.projectId',
      'SearchQueryDaily.versionSlug',
      'SearchQueryDaily.query',
      'SearchQueryDaily.day',
      'SearchQueryDaily.searches',
      'SearchQueryDaily.results',
    ]);
  });

  it('is for maintainers only, over the days kept', async () => {
    expect(await read('fixture', w.bob)).toBeFalsy();
    expect((await w.t.gql(ANALYTICS, { p: 'fixture' })).data?.project?.analytics ?? null).toBeNull();
    const tooLong = await w.t.gql(ANALYTICS, { p: 'fixture', d: 91 }, w.alice);
    expect(JSON.stringify(tooLong.errors)).toContain('Ensure this value is between 1 and 90');
    expect((await read('fixture', w.alice, 1)).daily).toHaveLength(1);
  });

  it('counts nothing for a project that turned analytics off', async () => {
    const off = await w.t.gql('mutation { updateProject(slug: "child", input: { analyticsDisabled: true }) { __typename } }', {}, w.alice);
    expect(off.data.updateProject.__typename).toBe('MutationUpdateProjectSuccess');
    expect((await get('/docs/fixture/projects/kid/en/latest/about/')).status).toBe(200);
    expect((await get('/docs/fixture/projects/kid/en/latest/nothing-here/')).status).toBe(404);
    await w.t.services.analytics!.flush();
    expect(await w.t.db.prisma.pageViewDaily.count({ where: { projectId: w.ids.child } })).toBe(0);
    expect((await read('child')).views).toBe(0);
  });
});
