// The version and language switcher: the script tag put into served pages, the script, the JSON
// it reads (active, non-hidden, public versions and the translations), and the project setting
// that turns it off (Project.versionSwitcher, also through GraphQL updateProject).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeWorld, type World } from './world.ts';

let w: World;
beforeAll(async () => {
  w = await makeWorld();
});
afterAll(() => w?.t.close());

const get = (p: string) => w.t.http.get(p);

describe('the switcher', () => {
  it('puts one script tag before </body> of served HTML pages, naming the page', async () => {
    const res = await get('/docs/fixture/en/latest/guide/install.html');
    const tags = res.text.match(/<script src="\/docs\/fixture\/_\/switcher\.js[^>]*><\/script>/g) ?? [];
    expect(tags).toHaveLength(1);
    expect(tags[0]).toContain('data-versions="/docs/fixture/_/versions/en.json"');
    expect(tags[0]).toContain('data-version="latest"');
    expect(tags[0]).toContain('data-page="guide/install.html"');
    expect(res.text).toMatch(/<\/script>\s*<\/body>/);
  });

  it('leaves other files as they were stored', async () => {
    const stored = await w.t.storage.list('projects/fixture/latest/');
    const key = stored.find((k) => k.endsWith('/_static/basic.css'))!;
    const obj = await w.t.storage.get(key);
    if (!obj || obj.notModified) throw new Error('fixture file missing');
    const chunks: Buffer[] = [];
    for await (const c of obj.body) chunks.push(c as Buffer);
    const res = await get('/docs/fixture/en/latest/_static/basic.css');
    expect(res.text).toBe(Buffer.concat(chunks).toString('utf8'));
  });

  it('serves the script as JavaScript that browsers may keep', async () => {
    const res = await get('/docs/fixture/_/switcher.js?v=1');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(res.headers['cache-control']).toBe('public, max-age=86400');
    expect(res.text).toContain('lectern-switcher');
  });

  it('lists the active, non-hidden, public versions and the translations', async () => {
    const res = await get('/docs/fixture/_/versions/en.json');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      project: 'fixture',
      language: 'en',
      defaultVersion: 'latest',
      versions: [
        { slug: 'latest', name: 'latest', url: '/docs/fixture/en/latest/' },
        { slug: 'v2.0', name: 'v2.0', url: '/docs/fixture/en/v2.0/' },
      ],
      translations: [
        { language: 'en', name: 'English', project: 'fixture', url: '/docs/fixture/en/' },
        { language: 'es', name: 'Spanish', project: 'fixture-es', url: '/docs/fixture/es/' },
      ],
    });
  });

  it("lists a translation's own versions, and a subproject's under its parent", async () => {
    const es = await get('/docs/fixture/_/versions/es.json');
    expect(es.body.project).toBe('fixture-es');
    expect(es.body.versions).toEqual([{ slug: 'latest', name: 'latest', url: '/docs/fixture/es/latest/' }]);
    const kid = await get('/docs/fixture/projects/kid/_/versions/en.json');
    expect(kid.body.versions).toEqual([{ slug: 'latest', name: 'latest', url: '/docs/fixture/projects/kid/en/latest/' }]);
    const page = await get('/docs/fixture/projects/kid/en/latest/about/');
    expect(page.text).toContain('data-versions="/docs/fixture/projects/kid/_/versions/en.json"');
    expect(page.text).toContain('data-page="about/"');
  });

  it('is on hidden versions too (served, not listed)', async () => {
    const res = await get('/docs/fixture/en/old/');
    expect(res.text).toContain('data-version="old"');
  });

  it('answers 404 for the JSON of a language the project lacks', async () => {
    expect((await get('/docs/fixture/_/versions/fr.json')).status).toBe(404);
  });

  it('can be turned off by a maintainer, which changes the ETag of the page', async () => {
    const before = await get('/docs/fixture/en/latest/glossary.html');
    const off = await w.t.gql(
      'mutation { updateProject(slug: "fixture", input: { versionSwitcher: false }) { __typename ... on MutationUpdateProjectSuccess { data { versionSwitcher } } } }',
      {},
      w.alice,
    );
    expect(off.data.updateProject).toEqual({ __typename: 'MutationUpdateProjectSuccess', data: { versionSwitcher: false } });
    const after = await get('/docs/fixture/en/latest/glossary.html').set('if-none-match', before.headers.etag);
    expect(after.status).toBe(200);
    expect(after.text).not.toContain('switcher.js');
    expect(after.headers.etag).not.toBe(before.headers.etag);
    await w.t.gql('mutation { updateProject(slug: "fixture", input: { versionSwitcher: true }) { __typename } }', {}, w.alice);
    expect((await get('/docs/fixture/en/latest/glossary.html')).text).toContain('switcher.js');
  });
});
