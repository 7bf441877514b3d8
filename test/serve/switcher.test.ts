// The addons data script and the version and language menu it draws: the script tag put into
// served pages (naming the page's addons answer, docs/design/addons.md), the script, the versions
// JSON kept for pages served before it read the addons answer, mike's versions.json, and the
// project settings that turn them off (Project.addonsEnabled, Project.versionSwitcher, through
// GraphQL updateProject).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeWorld, type World } from './world.ts';

let w: World;
beforeAll(async () => {
  w = await makeWorld();
});
afterAll(() => w?.t.close());

const get = (p: string) => w.t.http.get(p);

describe('the switcher', () => {
  it('puts one script tag before </body> of served HTML pages, naming the page and its addons answer', async () => {
    const res = await get('/docs/fixture/en/latest/guide/install.html');
    const tags = res.text.match(/<script src="\/docs\/fixture\/_\/switcher\.js[^>]*><\/script>/g) ?? [];
    expect(tags).toHaveLength(1);
    expect(tags[0]).toContain('data-addons="/docs/fixture/_/addons/?api-version=1&amp;project-slug=fixture&amp;version-slug=latest"');
    expect(tags[0]).toContain(`data-root="${w.t.config.publicUrl}/docs/fixture" data-base="/docs/fixture"`);
    expect(tags[0]).toContain('data-version="latest"');
    expect(tags[0]).toContain('data-page="guide/install.html"');
    expect(res.text).toMatch(/<\/script>\s*<\/body>/);
    // The answer it names is the page's, with the menu on.
    const answer = await get('/docs/fixture/_/addons/?api-version=1&project-slug=fixture&version-slug=latest');
    expect(answer.body.versions.current.slug).toBe('latest');
    expect(answer.body.addons.flyout.enabled).toBe(true);
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
    expect(page.text).toContain('data-addons="/docs/fixture/projects/kid/_/addons/?api-version=1&amp;project-slug=child&amp;version-slug=latest"');
    expect(page.text).toContain('data-page="about/"');
    const answer = await get('/docs/fixture/projects/kid/_/addons/?api-version=1&project-slug=child&version-slug=latest');
    expect(answer.body.versions.active.map((v: { urls: { documentation: string } }) => v.urls.documentation)).toEqual([
      `${w.t.config.publicUrl}/docs/fixture/projects/kid/en/latest/`,
    ]);
    const spanish = await get('/docs/fixture/es/latest/');
    expect(spanish.text).toContain('project-slug=fixture-es&amp;version-slug=latest');
  });

  it('is on hidden versions too (served, not listed)', async () => {
    const res = await get('/docs/fixture/en/old/');
    expect(res.text).toContain('data-version="old"');
  });

  it('answers 404 for the JSON of a language the project lacks', async () => {
    expect((await get('/docs/fixture/_/versions/fr.json')).status).toBe(404);
  });

  it('can be turned off by a maintainer, which changes the ETag of the page', async () => {
    const update = (input: string) =>
      w.t.gql(
        `mutation { updateProject(slug: "fixture", input: { ${input} }) { __typename ... on MutationUpdateProjectSuccess { data { addonsEnabled versionSwitcher } } } }`,
        {},
        w.alice,
      );
    const before = await get('/docs/fixture/en/latest/glossary.html');
    const off = await update('addonsEnabled: false');
    expect(off.data.updateProject).toEqual({ __typename: 'MutationUpdateProjectSuccess', data: { addonsEnabled: false, versionSwitcher: true } });
    const after = await get('/docs/fixture/en/latest/glossary.html').set('if-none-match', before.headers.etag);
    expect(after.status).toBe(200);
    expect(after.text).not.toContain('switcher.js');
    expect(after.headers.etag).not.toBe(before.headers.etag);
    // Every addon is then off in the answer too.
    const answer = await get('/docs/fixture/_/addons/?api-version=1&project-slug=fixture&version-slug=latest');
    expect(Object.entries(answer.body.addons).filter(([, a]) => (a as { enabled?: boolean }).enabled)).toEqual([]);
    await update('addonsEnabled: true');
    expect((await get('/docs/fixture/en/latest/glossary.html')).text).toContain('switcher.js');
  });

  it('keeps the addons data when only the menu is turned off: a theme may draw its own', async () => {
    const update = (on: boolean) => w.t.gql(`mutation { updateProject(slug: "fixture", input: { versionSwitcher: ${on} }) { __typename } }`, {}, w.alice);
    await update(false);
    try {
      expect((await get('/docs/fixture/en/latest/glossary.html')).text).toContain('switcher.js');
      const answer = await get('/docs/fixture/_/addons/?api-version=1&project-slug=fixture&version-slug=latest');
      expect(answer.body.addons.flyout.enabled).toBe(false);
      expect(answer.body.addons.search.enabled).toBe(true);
    } finally {
      await update(true);
    }
  });

  it("turns each of the addons answer's switches off", async () => {
    const set = (input: string) => w.t.gql(`mutation { updateProject(slug: "fixture", input: { ${input} }) { __typename } }`, {}, w.alice);
    const ask = async () => (await get('/docs/fixture/_/addons/?api-version=1&url=/docs/fixture/en/latest/glossary.html')).body.addons;
    const on = await ask();
    expect([on.hotkeys.enabled, on.doc_diff.enabled, on.hotkeys.doc_diff.enabled, on.search.enabled]).toEqual([true, true, true, true]);
    await set('hotkeysEnabled: false, docDiffEnabled: false, docsSearch: false');
    try {
      const off = await ask();
      expect([off.hotkeys.enabled, off.doc_diff.enabled, off.hotkeys.doc_diff.enabled, off.search.enabled, off.hotkeys.search.enabled]).toEqual([
        false,
        false,
        false,
        false,
        false,
      ]);
      expect(off.flyout.enabled).toBe(true);
    } finally {
      await set('hotkeysEnabled: true, docDiffEnabled: true, docsSearch: true');
    }
  });
});

describe("mike's versions.json, for Material for MkDocs' version selector", () => {
  it("lists the versions a menu lists, in mike's format, beside them", async () => {
    const res = await get('/docs/fixture/en/versions.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.body).toEqual([
      { version: 'latest', title: 'latest', aliases: [] },
      { version: 'v2.0', title: 'v2.0', aliases: [] },
    ]);
    expect((await get('/docs/fixture/es/versions.json')).body).toEqual([{ version: 'latest', title: 'latest', aliases: [] }]);
    expect((await get('/docs/fixture/projects/kid/en/versions.json')).body).toEqual([{ version: 'latest', title: 'latest', aliases: [] }]);
  });

  it("follows the reader: a maintainer's list names the private version, kept private to them", async () => {
    const res = await get('/docs/fixture/en/versions.json').set('Authorization', `Token ${w.alice}`);
    expect(res.body.map((v: { version: string }) => v.version)).toEqual(['latest', 'v2.0', 'internal']);
    expect(res.headers['cache-control']).toBe('private, no-cache');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    // Nothing of a private project to anyone else.
    expect((await get('/docs/secret/en/versions.json')).status).toBe(404);
    expect((await get('/docs/secret/en/versions.json').set('Authorization', `Token ${w.bob}`)).status).toBe(404);
    expect((await get('/docs/fixture/fr/versions.json')).status).toBe(404);
  });
});
