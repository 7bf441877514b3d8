// User redirects at serve time (docs/design/rest-api.md, docs/design/read-the-docs.md §4.7 "Legacy behaviour"): every type,
// forced ones before files and the others only for missing pages, position order, 301/302, the
// query kept, no open redirects, no loops; then the project's own 404 page, or a plain one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publish, sphinxBuild } from '../helpers/publish.ts';
import { makeWorld, type World } from './world.ts';

let w: World;
beforeAll(async () => {
  w = await makeWorld();
});
afterAll(() => w?.t.close());

interface RedirectSpec {
  type: 'prefix' | 'page' | 'exact' | 'sphinx_html' | 'sphinx_htmldir' | 'clean_url_to_html' | 'html_to_clean_url';
  fromUrl?: string;
  toUrl?: string;
  httpStatus?: number;
  force?: boolean;
  enabled?: boolean;
  position?: number;
}

/** Created through the API, as a maintainer would, so the stored URLs are normalized as in production. */
async function redirect(project: string, input: RedirectSpec): Promise<number> {
  const r = await w.t.gql(
    `mutation($project: String!, $input: RedirectInput!) { createRedirect(project: $project, input: $input) {
      __typename ... on MutationCreateRedirectSuccess { data { id } } ... on Error { message } } }`,
    { project, input },
    w.alice,
  );
  expect(r.data?.createRedirect?.__typename, JSON.stringify(r)).toBe('MutationCreateRedirectSuccess');
  return r.data.createRedirect.data.id;
}

/** Through the API too, so the docs server forgets the removed ones at once. */
async function clearRedirects() {
  for (const r of await w.t.db.prisma.redirect.findMany({ include: { project: { select: { slug: true } } } })) {
    const gone = await w.t.gql(
      `mutation($p: String!, $id: Int!) { deleteRedirect(project: $p, id: $id) { __typename ... on MutationDeleteRedirectSuccess { data { id } } } }`,
      { p: r.project.slug, id: r.id },
      w.alice,
    );
    expect(gone.data?.deleteRedirect?.__typename, JSON.stringify(gone)).toBe('MutationDeleteRedirectSuccess');
  }
}

const get = (path: string) => w.t.http.get(path);

async function expectRedirect(path: string, status: number, location: string) {
  const res = await get(path);
  expect([path, res.status, res.headers.location]).toEqual([path, status, location]);
  expect(res.headers['x-lectern-redirect']).toBe('user');
}

describe('each redirect type', () => {
  beforeAll(async () => {
    await clearRedirects();
    await redirect('fixture', { type: 'page', fromUrl: '/old-install.html', toUrl: '/guide/install.html' });
    await redirect('fixture', { type: 'page', fromUrl: '/manual/*', toUrl: '/guide/:splat' });
    await redirect('fixture', { type: 'exact', fromUrl: '/en/latest/moved.html', toUrl: '/en/v2.0/glossary.html', httpStatus: 301 });
    await redirect('fixture', { type: 'exact', fromUrl: '/en/v1/*', toUrl: '/en/latest/:splat' });
    await redirect('fixture', { type: 'exact', fromUrl: '/en/latest/external.html', toUrl: 'https://example.com/elsewhere?from=lectern' });
    await redirect('fixture', { type: 'prefix', fromUrl: '/dev/' });
    await redirect('fixture', { type: 'sphinx_html' });
    await redirect('child', { type: 'sphinx_htmldir' });
  });

  it('page: a file inside the current language and version, in every version', async () => {
    await expectRedirect('/docs/fixture/en/latest/old-install.html', 302, '/docs/fixture/en/latest/guide/install.html');
    await expectRedirect('/docs/fixture/en/v2.0/old-install.html', 302, '/docs/fixture/en/v2.0/guide/install.html');
    // A translation is a project of its own, with its own redirects.
    expect((await get('/docs/fixture/es/latest/old-install.html')).status).toBe(404);
  });

  it('page with a wildcard: the rest of the path goes where :splat is', async () => {
    await expectRedirect('/docs/fixture/en/latest/manual/install.html', 302, '/docs/fixture/en/latest/guide/install.html');
  });

  it('exact: the whole path below the docs root, with the http status the redirect asks for', async () => {
    await expectRedirect('/docs/fixture/en/latest/moved.html', 301, '/docs/fixture/en/v2.0/glossary.html');
    // The version in from_url need not exist: the path alone decides.
    await expectRedirect('/docs/fixture/en/v1/guide/install.html', 302, '/docs/fixture/en/latest/guide/install.html');
  });

  it('exact to an absolute URL the project set, with the query merged', async () => {
    await expectRedirect('/docs/fixture/en/latest/external.html?a=1', 302, 'https://example.com/elsewhere?from=lectern&a=1');
  });

  it('prefix: the path after the prefix, kept inside the default language and version', async () => {
    await expectRedirect('/docs/fixture/dev/guide/install.html', 302, '/docs/fixture/en/latest/guide/install.html');
    await expectRedirect('/docs/fixture/dev/', 302, '/docs/fixture/en/latest/');
    // A prefix is a whole path segment: /developer is not under /dev.
    expect((await get('/docs/fixture/developer/x.html')).status).toBe(404);
  });

  it('sphinx_html: foo/ and foo/index.html become foo.html, while existing directories are served', async () => {
    await expectRedirect('/docs/fixture/en/latest/guide/install/', 302, '/docs/fixture/en/latest/guide/install.html');
    await expectRedirect('/docs/fixture/en/latest/glossary/index.html', 302, '/docs/fixture/en/latest/glossary.html');
    const dir = await get('/docs/fixture/en/latest/guide/');
    expect(dir.status).toBe(200);
  });

  it('sphinx_htmldir: foo.html becomes foo/ (an MkDocs subproject under its parent)', async () => {
    await expectRedirect('/docs/fixture/projects/kid/en/latest/about.html', 302, '/docs/fixture/projects/kid/en/latest/about/');
    const page = await get('/docs/fixture/projects/kid/en/latest/about/');
    expect(page.status).toBe(200);
  });

  it('keeps the query string of the request', async () => {
    await expectRedirect('/docs/fixture/en/latest/old-install.html?utm=x&b=2', 302, '/docs/fixture/en/latest/guide/install.html?utm=x&b=2');
  });
});

describe('when redirects apply', () => {
  beforeAll(clearRedirects);
  afterAll(clearRedirects);

  it('tries a redirect that is not forced only when the file is missing', async () => {
    await clearRedirects();
    await redirect('fixture', { type: 'page', fromUrl: '/glossary.html', toUrl: '/guide/index.html' });
    const res = await get('/docs/fixture/en/latest/glossary.html');
    expect(res.status).toBe(200);
    expect(res.text).toContain('Glossary');
  });

  it('tries forced redirects before serving a file', async () => {
    await clearRedirects();
    await redirect('fixture', { type: 'page', fromUrl: '/glossary.html', toUrl: '/guide/index.html', force: true });
    await expectRedirect('/docs/fixture/en/latest/glossary.html', 302, '/docs/fixture/en/latest/guide/index.html');
  });

  it('ignores disabled redirects', async () => {
    await clearRedirects();
    await redirect('fixture', { type: 'page', fromUrl: '/gone.html', toUrl: '/index.html', enabled: false });
    expect((await get('/docs/fixture/en/latest/gone.html')).status).toBe(404);
  });

  it('takes the first match in position order', async () => {
    await clearRedirects();
    await redirect('fixture', { type: 'page', fromUrl: '/twice.html', toUrl: '/second.html', position: 0 });
    await redirect('fixture', { type: 'page', fromUrl: '/twice.html', toUrl: '/first.html', position: 0 });
    await expectRedirect('/docs/fixture/en/latest/twice.html', 302, '/docs/fixture/en/latest/first.html');
    const second = await w.t.db.prisma.redirect.findFirstOrThrow({ where: { toUrl: '/second.html' } });
    const moved = await w.t.gql(
      `mutation($id: Int!) { updateRedirect(project: "fixture", id: $id, partial: true, input: { position: 0 }) { __typename } }`,
      { id: second.id },
      w.alice,
    );
    expect(moved.data.updateRedirect.__typename).toBe('MutationUpdateRedirectSuccess');
    await expectRedirect('/docs/fixture/en/latest/twice.html', 302, '/docs/fixture/en/latest/second.html');
  });
});

describe('redirect safety', () => {
  beforeAll(async () => {
    await clearRedirects();
    await redirect('fixture', { type: 'exact', fromUrl: '/en/latest/go/*', toUrl: '/:splat' });
    await redirect('fixture', { type: 'exact', fromUrl: '/en/latest/ext/*', toUrl: 'https://example.com:splat' });
    await redirect('fixture', { type: 'exact', fromUrl: '/en/latest/ext2/*', toUrl: 'https://example.com/docs/:splat' });
    await redirect('fixture', { type: 'exact', fromUrl: '/en/latest/dir/*', toUrl: '/en/latest/dir/sub/:splat' });
    await redirect('fixture', { type: 'page', fromUrl: '/self.html', toUrl: '/self.html', force: true });
  });
  afterAll(clearRedirects);

  it('never sends a reader to another host through a relative target', async () => {
    for (const path of [
      '/docs/fixture/en/latest/go//evil.example/x',
      '/docs/fixture/en/latest/go/%2F%2Fevil.example',
      '/docs/fixture/en/latest/go/%5Cevil.example',
      '/docs/fixture/en/latest/go/%2F%5Cevil.example',
    ]) {
      const res = await get(path);
      const location = res.headers.location;
      if (location !== undefined) expect(location, path).toMatch(/^\/docs\/fixture\/[^/\\]/);
      else expect(res.status, path).toBe(404);
    }
    // A plain splat stays below the project's docs root.
    await expectRedirect('/docs/fixture/en/latest/go/en/v2.0/', 302, '/docs/fixture/en/v2.0/');
  });

  it('does not let a splat change the host of an absolute target', async () => {
    const res = await get('/docs/fixture/en/latest/ext/@evil.example');
    expect(res.status).toBe(404);
    expect((await get('/docs/fixture/en/latest/ext/:1234/x')).status).toBe(404);
    await expectRedirect('/docs/fixture/en/latest/ext2/a/b.html', 302, 'https://example.com/docs/a/b.html');
  });

  it('does not loop: a target that the rule would match again, or the page itself, is no redirect', async () => {
    await expectRedirect('/docs/fixture/en/latest/dir/page.html', 302, '/docs/fixture/en/latest/dir/sub/page.html');
    expect((await get('/docs/fixture/en/latest/dir/sub/page.html')).status).toBe(404);
    expect((await get('/docs/fixture/en/latest/self.html')).status).toBe(404);
  });
});

describe('404 pages', () => {
  beforeAll(clearRedirects);

  it("answers a missing page with the version's own 404.html and status 404", async () => {
    const res = await get('/docs/fixture/en/latest/no-such-page.html');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.text).toContain('Fixture 404');
  });

  it("falls back to the default version's 404.html when the version has none", async () => {
    await publish(w.t, { project: { id: w.ids.fixture, slug: 'fixture' }, version: 'bare', html: await sphinxBuild('sphinx-es') });
    const res = await get('/docs/fixture/en/bare/no-such-page.html');
    expect(res.status).toBe(404);
    expect(res.text).toContain('Fixture 404');
  });

  it('uses the MkDocs 404 page of a subproject', async () => {
    const res = await get('/docs/fixture/projects/kid/en/latest/missing/');
    expect(res.status).toBe(404);
    expect(res.text).toContain('Child Docs');
    expect(res.text).toContain('404');
  });

  it('answers a plain 404 page when the project has none', async () => {
    const res = await get('/docs/fixture/es/latest/no-such-page.html');
    expect(res.status).toBe(404);
    expect(res.text).toContain('There is no documentation page at this address.');
  });

  it('tries redirects before the 404 page', async () => {
    await redirect('fixture', { type: 'page', fromUrl: '/no-such-page.html', toUrl: '/index.html' });
    await expectRedirect('/docs/fixture/en/latest/no-such-page.html', 302, '/docs/fixture/en/latest/index.html');
    await clearRedirects();
  });
});

describe("Read the Docs' current names for the clean-URL pair (readthedocs.org PR #10881)", () => {
  beforeAll(async () => {
    await clearRedirects();
    await redirect('fixture', { type: 'clean_url_to_html' });
    await redirect('child', { type: 'html_to_clean_url' });
  });

  it('clean_url_to_html does what sphinx_html does: foo/ becomes foo.html', async () => {
    await expectRedirect('/docs/fixture/en/latest/guide/install/', 302, '/docs/fixture/en/latest/guide/install.html');
    await expectRedirect('/docs/fixture/en/latest/glossary/index.html', 302, '/docs/fixture/en/latest/glossary.html');
  });

  it('html_to_clean_url does what sphinx_htmldir does: foo.html becomes foo/', async () => {
    await expectRedirect('/docs/fixture/projects/kid/en/latest/about.html', 302, '/docs/fixture/projects/kid/en/latest/about/');
  });

  it('is one type under two names: a project holds one of either', async () => {
    for (const [project, type] of [
      ['fixture', 'sphinx_html'],
      ['child', 'sphinx_htmldir'],
    ] as const) {
      const r = await w.t.gql(
        `mutation($project: String!, $input: RedirectInput!) { createRedirect(project: $project, input: $input) { __typename ... on ValidationError { fieldErrors { messages } } } }`,
        { project, input: { type } },
        w.alice,
      );
      expect(r.data.createRedirect).toEqual({
        __typename: 'ValidationError',
        fieldErrors: [{ messages: [`Only one redirect of type \`${type}\` is allowed per project.`] }],
      });
    }
  });

  it('keeps the name each redirect was created with', async () => {
    const r = await w.t.gql(
      '{ a: project(slug: "fixture") { redirects { nodes { type } } } b: project(slug: "child") { redirects { nodes { type } } } }',
      {},
      w.alice,
    );
    expect(r.data).toEqual({ a: { redirects: { nodes: [{ type: 'clean_url_to_html' }] } }, b: { redirects: { nodes: [{ type: 'html_to_clean_url' }] } } });
  });
});
