// Read the Docs' search APIs on Lectern (issue 13): v3's `GET /api/v3/search/?q=` with its query
// syntax (project:, subprojects:, user:@me), page-number pagination and page results with their
// sections and highlights, as readthedocs/search/api/v3 answers; v2's `GET /api/v2/search/` as the
// readthedocs-sphinx-search extension calls it. Anonymous callers find public docs, a token widens
// it; cross-origin readers are answered; bad input gets Read the Docs' 400s.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { makeProject, mkdocsBuild, htmlPage as page, publish, removePages, sphinxBuild } from '../helpers/publish.ts';

let t: TestApp;
let alice: string;

const v3 = (query: Record<string, string>, token?: string) => {
  const req = t.http.get('/api/v3/search/').query(query);
  return token ? req.set('authorization', `Token ${token}`) : req;
};
const v2 = (query: Record<string, string>) => t.http.get('/api/v2/search/').query(query);

beforeAll(async () => {
  t = await testApp();
  alice = await t.user('alice');
  const aliceId = (await t.db.prisma.user.findUniqueOrThrow({ where: { username: 'alice' } })).id;
  const fixture = await makeProject(t, { slug: 'fixture', maintainers: [aliceId] });
  await publish(t, { project: fixture, version: 'latest', html: await sphinxBuild('sphinx') });
  const mk = await makeProject(t, { slug: 'mk', maintainers: [aliceId] });
  await publish(t, { project: mk, version: 'latest', html: await mkdocsBuild('mkdocs'), documentationType: 'mkdocs' });
  await t.db.prisma.subproject.create({ data: { parentId: fixture.id, childId: mk.id, alias: 'child' } });
  const secret = await makeProject(t, { slug: 'secret', privacyLevel: 'private', maintainers: [aliceId] });
  await publish(t, { project: secret, version: 'latest', html: page('<html><body><main><h1>Plans</h1><p>The zanzibar launch.</p></main></body></html>') });
}, 120_000);
afterAll(async () => {
  removePages();
  await t.close();
});

describe('search API v3', () => {
  it('answers pages with their best sections, highlighted, in the fields Read the Docs serializes', async () => {
    const res = await v3({ q: 'installing project:fixture' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      count: expect.any(Number),
      next: null,
      previous: null,
      query: 'installing',
      projects: [{ slug: 'fixture', versions: [{ slug: 'latest' }] }],
    });
    const [first] = res.body.results;
    expect(Object.keys(first).sort()).toEqual(['blocks', 'domain', 'highlights', 'path', 'project', 'title', 'type', 'version']);
    expect(first).toMatchObject({
      type: 'page',
      project: { slug: 'fixture', alias: null },
      version: { slug: 'latest' },
      title: 'Installation',
      path: '/docs/fixture/en/latest/guide/install.html',
      domain: 'http://lectern.test',
    });
    expect(first.highlights.title).toEqual(['<span>Installation</span>']);
    expect(first.blocks[0]).toMatchObject({ type: 'section', id: 'installation', title: 'Installation' });
    expect(Object.keys(first.blocks[0]).sort()).toEqual(['content', 'highlights', 'id', 'title', 'type']);
    expect(first.blocks[0].highlights.title).toEqual(['<span>Installation</span>']);
  });

  it('searches a project with its subprojects (their alias given), and links directory-URL builds by directory', async () => {
    const res = await v3({ q: 'subprojects:fixture child' });
    expect(res.body.projects).toEqual([
      { slug: 'fixture', versions: [{ slug: 'latest' }] },
      { slug: 'mk', versions: [{ slug: 'latest' }] },
    ]);
    const mk = res.body.results.filter((r: { project: { slug: string } }) => r.project.slug === 'mk');
    expect(mk[0]).toMatchObject({ project: { slug: 'mk', alias: 'child' } });
    expect(mk.map((r: { path: string }) => r.path)).toContain('/docs/fixture/projects/child/en/latest/about/');
  });

  it('needs q, and searches nothing without a project (as Read the Docs does)', async () => {
    const none = await v3({});
    expect([none.status, none.body]).toEqual([400, { q: ['This query parameter is required'] }]);
    const bare = await v3({ q: 'installing' });
    expect(bare.body).toEqual({ count: 0, next: null, previous: null, results: [], projects: [], query: 'installing' });
  });

  it('finds private docs only for callers who may read them; user:@me searches the caller’s own projects', async () => {
    expect((await v3({ q: 'zanzibar project:secret' })).body).toMatchObject({ count: 0, projects: [] });
    const signed = await v3({ q: 'zanzibar project:secret' }, alice);
    expect(signed.body.count).toBe(1);
    expect(signed.body.results[0].path).toBe('/docs/secret/en/latest/index.html');
    const mine = await v3({ q: 'zanzibar user:@me' }, alice);
    expect(mine.body.projects.map((p: { slug: string }) => p.slug).sort()).toEqual(['fixture', 'mk', 'secret']);
    expect(mine.body.count).toBe(1);
  });

  it('pages by page and page_size, with next and previous links, and refuses pages it does not serve', async () => {
    const all = await v3({ q: 'g project:fixture', page_size: '100' });
    expect(all.body.count).toBeGreaterThan(2);
    expect(all.body.results.length).toBe(Math.min(30, all.body.count));
    const one = await v3({ q: 'g project:fixture', page_size: '1' });
    expect(one.body.results.length).toBe(1);
    expect(one.body.next).toBe('http://lectern.test/api/v3/search/?q=g+project%3Afixture&page_size=1&page=2');
    const two = await v3({ q: 'g project:fixture', page_size: '1', page: '2' });
    expect(two.body.previous).toBe('http://lectern.test/api/v3/search/?q=g+project%3Afixture&page_size=1');
    expect(two.body.results[0].path).not.toBe(one.body.results[0].path);
    expect([(await v3({ q: 'x project:fixture', page: '0' })).body, (await v3({ q: 'x project:fixture', page: 'two' })).status]).toEqual([
      ['Invalid page'],
      400,
    ]);
    expect((await v3({ q: 'x project:fixture', page: '100' })).body).toEqual(['Page number is too high.']);
  });

  it('answers bad input with a 400 naming it or an empty result, never a server error', async () => {
    for (const q of [
      '"unbalanced project:fixture',
      '\'; DROP TABLE "SearchSection"; -- project:fixture',
      'a & | ! :* <-> project:fixture',
      '((( project:fixture',
      'project:no-such-project x',
    ]) {
      const res = await v3({ q });
      expect([q, res.status]).toEqual([q, 200]);
    }
    const long = await v3({ q: `${'x'.repeat(10_000)} project:fixture` });
    expect(long.status).toBe(400);
    expect(JSON.stringify(long.body)).toMatch(/query/);
    expect((await v2({ q: 'y'.repeat(10_000), project: 'fixture', version: 'latest' })).status).toBe(400);
  });

  it('answers cross-origin readers without credentials', async () => {
    const res = await v3({ q: 'install project:fixture' }).set('origin', 'https://docs.example.com');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });
});

describe('search API v2', () => {
  it('answers a version and its subprojects, project and version as strings', async () => {
    const res = await v2({ q: 'child', project: 'fixture', version: 'latest' });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['count', 'next', 'previous', 'results']);
    const mk = res.body.results.find((r: { project: string }) => r.project === 'mk');
    expect(mk).toMatchObject({ type: 'page', project: 'mk', project_alias: 'child', version: 'latest' });
  });

  it('names each missing parameter, and answers 404 for a project or version it does not serve', async () => {
    const res = await v2({ q: 'x' });
    expect([res.status, res.body]).toEqual([400, { project: ['This query param is required'], version: ['This query param is required'] }]);
    expect((await v2({ q: 'x', project: 'nope', version: 'latest' })).status).toBe(404);
    expect((await v2({ q: 'x', project: 'fixture', version: 'nope' })).status).toBe(404);
    expect((await v2({ q: 'zanzibar', project: 'secret', version: 'latest' })).status).toBe(404);
  });
});
