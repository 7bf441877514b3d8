// Read the Docs' addons API on a docs root (docs/design/addons.md), on the shared scenario
// (test/serve/world.ts: `fixture` with versions latest and v2.0, `old` hidden, `v0.9` inactive,
// `internal` private; its Spanish translation `fixture-es`; the subproject `child`; the private
// project `secret`): what Read the Docs answers, valid against the addons script's own schemas
// (test/fixtures/addons/data-validation.ts), and nothing a reader may not read.
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schemas } from '../fixtures/addons/data-validation.ts';
import { makeWorld, type World } from './world.ts';

let w: World;
let publicUrl: string;
beforeAll(async () => {
  w = await makeWorld();
  publicUrl = w.t.config.publicUrl;
});
afterAll(() => w?.t.close());

const get = (q: string, token?: string) => {
  const r = w.t.http.get(`/docs/fixture/_/addons/?${q}`);
  return token ? r.set('Authorization', `Token ${token}`) : r;
};

describe('the parameters', () => {
  it('are checked as Read the Docs checks them, each refusal a 400 naming what is wrong', async () => {
    const cases: [string, number, unknown][] = [
      ['api-version=1', 400, { error: "'project-slug' and 'version-slug' GET attributes are required when not sending 'url'" }],
      ['project-slug=fixture&version-slug=latest', 400, { error: "'api-version' GET attribute is required" }],
      ['api-version=one&project-slug=fixture&version-slug=latest', 400, { error: "The version specified in 'api-version' is invalid" }],
      ['api-version=3&project-slug=fixture&version-slug=latest', 400, { error: "The version specified in 'api-version' is currently not supported" }],
      ['api-version=2&project-slug=fixture&version-slug=latest', 200, { api_version: '2', comment: 'Undefined yet. Use v1 for now' }],
    ];
    for (const [q, status, body] of cases) {
      const res = await get(q);
      expect([res.status, res.body], q).toEqual([status, body]);
    }
  });
});

describe('api-version 1', () => {
  it('answers the project, its translations, the version, the versions a menu lists and the last build', async () => {
    const res = await get('api-version=1.0.0&project-slug=fixture&version-slug=latest&client-version=0.49.0');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const d = res.body;
    expect(d.api_version).toBe('1');
    expect(d.projects.current).toMatchObject({
      slug: 'fixture',
      language: { code: 'en', name: 'English' },
      default_version: 'latest',
      versioning_scheme: 'multiple_versions_with_translations',
      translation_of: null,
      urls: { documentation: `${publicUrl}/docs/fixture/en/latest/`, home: `${publicUrl}/projects/fixture/` },
    });
    expect(
      d.projects.translations.map((t: { slug: string; language: { code: string }; urls: { documentation: string } }) => [
        t.slug,
        t.language.code,
        t.urls.documentation,
      ]),
    ).toEqual([['fixture-es', 'es', `${publicUrl}/docs/fixture/es/latest/`]]);
    expect(d.versions.current).toMatchObject({
      slug: 'latest',
      hidden: false,
      type: 'branch',
      aliases: [],
      urls: { documentation: `${publicUrl}/docs/fixture/en/latest/` },
    });
    expect(d.versions.active.map((v: { slug: string }) => v.slug)).toEqual(['latest', 'v2.0']);
    const published = await w.t.db.prisma.version.findFirstOrThrow({ where: { slug: 'latest', project: { slug: 'fixture' } } });
    expect(d.builds.current).toMatchObject({
      id: published.publishedBuildId,
      project: 'fixture',
      version: 'latest',
      success: true,
      state: { code: 'finished', name: 'Finished' },
    });
    expect(d.readthedocs.resolver.filename).toBeNull();
    expect(d.addons.flyout.enabled).toBe(true);
    expect(d.addons.search.default_filter).toBe('project:fixture/latest');
    expect(d.addons).not.toHaveProperty('doc_diff');
  });

  it("is valid against each addon's schema in the addons script", async () => {
    const ajv = new Ajv({ allErrors: true, strict: false });
    for (const q of ['project-slug=fixture&version-slug=latest', `url=${encodeURIComponent(`${publicUrl}/docs/fixture/en/v2.0/index.html`)}`]) {
      const d = (await get(`api-version=1&${q}`)).body;
      for (const [name, schema] of Object.entries(schemas)) {
        // Lectern shows no ads, and diffs no file trees: the script leaves those two out, as it should.
        if (name === 'ethicalads' || name === 'filetreediff') continue;
        // The doc diff is answered for a page asked by its URL only, as Read the Docs answers it.
        if (name === 'docdiff' && !q.startsWith('url=')) continue;
        const valid = ajv.validate(schema, d);
        expect(valid, `${name} (${q}): ${ajv.errorsText()}`).toBe(true);
      }
    }
  });

  it('reads the page from its URL: the version, the file, and the doc diff’s base in latest', async () => {
    const url = `${publicUrl}/docs/fixture/en/v2.0/guide/install.html`;
    const res = await get(`api-version=1&url=${encodeURIComponent(url)}`);
    const d = res.body;
    expect(res.status, JSON.stringify(d)).toBe(200);
    expect(d.versions.current.slug).toBe('v2.0');
    expect(d.readthedocs.resolver.filename).toBe('/guide/install.html');
    expect(d.addons.doc_diff).toEqual({ enabled: true, base_url: `${publicUrl}/docs/fixture/en/latest/guide/install.html`, inject_styles: true });
    const esRes = await get(`api-version=1&url=${encodeURIComponent(`${publicUrl}/docs/fixture/es/latest/`)}`);
    const es = esRes.body;
    expect(esRes.status, JSON.stringify(es)).toBe(200);
    expect([es.projects.current.slug, es.versions.current.slug, es.projects.translations.map((t: { slug: string }) => t.slug)]).toEqual([
      'fixture-es',
      'latest',
      ['fixture'],
    ]);
    const child = (await get(`api-version=1&url=${encodeURIComponent(`${publicUrl}/docs/fixture/projects/kid/en/latest/`)}`)).body;
    expect([child.projects.current.slug, child.projects.current.subproject_of]).toEqual(['child', { slug: 'fixture' }]);
  });

  it('answers nothing of what the reader may not read: a private or inactive version is no version, a private project none', async () => {
    for (const version of ['internal', 'v0.9', 'nope']) {
      const d = (await get(`api-version=1&project-slug=fixture&version-slug=${version}`)).body;
      expect([d.versions.current, d.builds.current], version).toEqual([null, null]);
      expect(JSON.stringify(d)).not.toContain('internal');
    }
    const secret = await get('api-version=1&project-slug=secret&version-slug=latest');
    expect([secret.status, secret.body]).toEqual([404, { detail: 'No Project matches the given query.' }]);
    expect((await w.t.http.get('/docs/secret/_/addons/?api-version=1&project-slug=secret&version-slug=latest')).status).toBe(404);
  });

  it("follows the reader: a maintainer's answer names the private version, kept private to them", async () => {
    const res = await get('api-version=1&project-slug=fixture&version-slug=internal', w.alice);
    expect(res.body.versions.current?.slug).toBe('internal');
    expect(res.body.versions.active.map((v: { slug: string }) => v.slug)).toContain('internal');
    expect(res.headers['cache-control']).toBe('private, no-cache');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it("keeps the answer to anonymous readers only until what it says changes, and never hands it a maintainer's", async () => {
    const slugs = async (token?: string) =>
      (await get('api-version=1&project-slug=fixture&version-slug=latest', token)).body.versions.active.map((v: { slug: string }) => v.slug);
    expect(await slugs(w.alice)).toContain('internal');
    expect(await slugs()).toEqual(['latest', 'v2.0']);
    expect(await slugs()).toEqual(['latest', 'v2.0']);
    const hide = (hidden: boolean) =>
      w.t.gql(`mutation { updateVersion(project: "fixture", slug: "v2.0", input: { hidden: ${hidden} }) { __typename } }`, {}, w.alice);
    expect((await hide(true)).data.updateVersion.__typename).toBe('MutationUpdateVersionSuccess');
    try {
      expect(await slugs()).toEqual(['latest']);
    } finally {
      await hide(false);
    }
    expect(await slugs()).toEqual(['latest', 'v2.0']);
  });

  it("answers about this docs root's projects only, never another site's", async () => {
    const res = await get('api-version=1&project-slug=secret&version-slug=latest', w.alice);
    expect(res.status).toBe(404);
    const other = await w.t.http.get('/docs/child/_/addons/?api-version=1&project-slug=fixture&version-slug=latest');
    expect(other.status).toBe(404);
    const elsewhere = await get(`api-version=1&url=${encodeURIComponent(`${publicUrl}/docs/secret/en/latest/`)}`, w.alice);
    expect(elsewhere.status).toBe(404);
  });
});
