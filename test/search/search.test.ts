// Server-side search (issue 13, first part): real Sphinx and MkDocs builds published, indexed as
// they are published, and searched through GraphQL on both databases: sections found by their
// words (stemmed, as prefixes), headings first, highlighted with the page's text escaped, linked
// to their anchors; private projects and versions never found by those who cannot read them; a new
// build's sections replace the old ones; bad input answers an empty result or a named error.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reindexPublished } from '../../src/search/index.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { makeProject, mkdocsBuild, htmlPage as page, publish, removePages, sphinxBuild } from '../helpers/publish.ts';

let t: TestApp;
let alice: string;
let bob: string;

const SEARCH = `query($q: String!, $project: String, $version: String, $sub: Boolean) {
  search(query: $q, project: $project, version: $version, includeSubprojects: $sub, limit: 20) {
    totalCount nodes { project { slug } version { slug } path pageTitle title anchor url highlight }
  }
}`;
type Hit = { project: { slug: string }; version: { slug: string }; path: string; title: string; anchor: string; url: string; highlight: string };

async function search(q: string, vars: Record<string, unknown> = {}, token?: string) {
  const res = await t.gql(SEARCH, { q, ...vars }, token);
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data.search as { totalCount: number; nodes: Hit[] };
}

beforeAll(async () => {
  t = await testApp();
  alice = await t.user('alice');
  bob = await t.user('bob');
  const aliceId = (await t.db.prisma.user.findUniqueOrThrow({ where: { username: 'alice' } })).id;
  const fixture = await makeProject(t, { slug: 'fixture', maintainers: [aliceId] });
  await publish(t, { project: fixture, version: 'latest', html: await sphinxBuild('sphinx') });
  const mk = await makeProject(t, { slug: 'mk', maintainers: [aliceId] });
  await publish(t, { project: mk, version: 'latest', html: await mkdocsBuild('mkdocs') });
  await t.db.prisma.subproject.create({ data: { parentId: fixture.id, childId: mk.id, alias: 'mk' } });
  // A private project, and a private version of a public one, each with a word of its own.
  const secret = await makeProject(t, { slug: 'secret', privacyLevel: 'private', maintainers: [aliceId] });
  await publish(t, { project: secret, version: 'latest', html: page('<html><body><main><h1>Plans</h1><p>The zanzibar launch.</p></main></body></html>') });
  await publish(t, {
    project: fixture,
    version: 'internal',
    html: page('<html><body><main><h1>Internal</h1><p>The quokka budget.</p></main></body></html>'),
    versionData: { privacyLevel: 'private' },
  });
}, 120_000);
afterAll(async () => {
  removePages();
  await t.close();
});

describe('search', () => {
  it('finds a section of a Sphinx build by a stemmed word, heading first, linked to its anchor', async () => {
    const r = await search('installing', { project: 'fixture' });
    expect(r.totalCount).toBeGreaterThan(0);
    expect(r.nodes[0]).toMatchObject({
      project: { slug: 'fixture' },
      version: { slug: 'latest' },
      path: 'guide/install.html',
      title: 'Installation',
      anchor: 'installation',
      url: 'http://lectern.test/docs/fixture/en/latest/guide/install.html#installation',
    });
    expect(r.nodes[0]!.highlight).toContain('<span>Install</span>');
  });

  it('matches words as prefixes (search as you type), and MkDocs builds too', async () => {
    expect((await search('instal', { project: 'fixture' })).nodes[0]?.path).toBe('guide/install.html');
    expect((await search('glossar', { project: 'fixture' })).nodes.map((n) => n.path)).toContain('glossary.html');
    const mk = await search('writes page', { project: 'mk' });
    expect(mk.nodes[0]).toMatchObject({ path: 'about/index.html', title: 'About the child', anchor: 'about-the-child' });
    // A subproject is served under its parent's path.
    expect(mk.nodes[0]!.url).toBe('http://lectern.test/docs/fixture/projects/mk/en/latest/about/index.html#about-the-child');
  });

  it('covers a project and its subprojects when asked, and every visible project without one', async () => {
    expect((await search('child', { project: 'fixture' })).totalCount).toBe(0);
    const both = await search('child', { project: 'fixture', sub: true });
    expect(new Set(both.nodes.map((n) => n.project.slug))).toEqual(new Set(['mk']));
    const all = await search('install');
    expect(all.nodes.map((n) => n.project.slug)).toContain('fixture');
  });

  it('never finds private docs for those who cannot read them, in results, counts or highlights', async () => {
    for (const token of [undefined, bob]) {
      for (const [q, vars] of [
        ['zanzibar', {}],
        ['quokka', {}],
        ['quokka', { project: 'fixture', version: 'internal' }],
      ] as const) {
        const r = await search(q, vars, token);
        expect(r, `${q} ${JSON.stringify(vars)} as ${token ? 'bob' : 'anonymous'}`).toEqual({ totalCount: 0, nodes: [] });
      }
      const named = await t.gql(SEARCH, { q: 'zanzibar', project: 'secret' }, token);
      expect(named.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    }
    expect((await search('zanzibar', {}, alice)).nodes[0]).toMatchObject({ project: { slug: 'secret' }, title: 'Plans' });
    expect((await search('quokka', { project: 'fixture', version: 'internal' }, alice)).totalCount).toBe(1);
  });

  it("escapes the page's text in highlights: a page's markup never comes back as markup", async () => {
    const hostile = await makeProject(t, { slug: 'hostile' });
    await publish(t, {
      project: hostile,
      version: 'latest',
      html: page('<html><body><main><h1>Tricks</h1><p>&lt;img src=x onerror=alert(1)&gt; walrus</p></main></body></html>'),
    });
    const r = await search('walrus', { project: 'hostile' });
    const { highlight } = r.nodes[0]!;
    expect(highlight).toContain('<span>walrus</span>');
    expect(highlight).toContain('&gt;');
    // No markup but the highlight's own spans.
    expect(highlight.replace(/<\/?span>/g, '')).not.toMatch(/[<>]/);
  });

  it("replaces a version's sections when a new build is published", async () => {
    const p = await makeProject(t, { slug: 'changing' });
    await publish(t, { project: p, version: 'latest', html: page('<html><body><main><h1>Old</h1><p>The aardvark.</p></main></body></html>') });
    expect((await search('aardvark', { project: 'changing' })).totalCount).toBe(1);
    await publish(t, { project: p, version: 'latest', html: page('<html><body><main><h1>New</h1><p>The pangolin.</p></main></body></html>') });
    expect((await search('aardvark', { project: 'changing' })).totalCount).toBe(0);
    expect((await search('pangolin', { project: 'changing' })).totalCount).toBe(1);
    const versionId = (await t.db.prisma.version.findFirstOrThrow({ where: { project: { slug: 'changing' } } })).id;
    expect(new Set((await t.db.prisma.searchSection.findMany({ where: { versionId } })).map((s) => s.buildId)).size).toBe(1);
  });

  it('a reader searching while a build is published sees the old build or the new one, never a mix or nothing', async () => {
    const p = await makeProject(t, { slug: 'swapping' });
    await publish(t, { project: p, version: 'latest', html: page('<html><body><main><h1>Old</h1><p>The wombat.</p></main></body></html>') });
    const many = mkdtempSync(path.join(os.tmpdir(), 'lectern-many-'));
    for (let i = 0; i < 100; i++)
      writeFileSync(path.join(many, `p${i}.html`), `<html><body><main><h1>Page ${i}</h1><p>A wombat, number ${i}.</p></main></body></html>`);
    const seen = new Set<number>();
    let publishing = true;
    const readers = (async () => {
      while (publishing) seen.add((await search('wombat', { project: 'swapping' })).totalCount);
    })();
    await publish(t, { project: p, version: 'latest', html: many });
    publishing = false;
    await readers;
    seen.add((await search('wombat', { project: 'swapping' })).totalCount);
    rmSync(many, { recursive: true, force: true });
    expect(
      [...seen].every((n) => n === 1 || n === 100),
      JSON.stringify([...seen]),
    ).toBe(true);
    expect(seen.has(100)).toBe(true);
    // On the embedded database (one connection) each of the publish's statements waits behind a
    // reader's search: on a busy machine that is more than the default 30 s.
  }, 120_000);

  it('indexes again what is published (`lectern search reindex`), for installations that had builds before search', async () => {
    await t.db.prisma.searchSection.deleteMany({});
    expect((await search('installing', { project: 'fixture' })).totalCount).toBe(0);
    const done = await reindexPublished(t.db.prisma, t.storage, 'fixture');
    expect(done.map((d) => d.version).sort()).toEqual(['internal', 'latest']);
    expect(done.find((d) => d.version === 'latest')!.result).toMatchObject({ pages: 4, skipped: [] });
    expect((await search('installing', { project: 'fixture' })).nodes[0]?.anchor).toBe('installation');
    await reindexPublished(t.db.prisma, t.storage);
    expect((await search('pangolin', { project: 'changing' })).totalCount).toBe(1);
  });

  it('answers bad input with an empty result or a named error, never a server error', async () => {
    for (const q of ['', '   ', '"unbalanced', '\'; DROP TABLE "SearchSection"; --', 'a & b | !c <-> d:*', '(((', '\\', '%_*']) {
      const res = await t.gql(SEARCH, { q, project: 'fixture' });
      expect(res.errors, q).toBeUndefined();
      expect(res.data.search.totalCount).toBeGreaterThanOrEqual(0);
    }
    const long = await t.gql(SEARCH, { q: 'x'.repeat(10_000) });
    expect(long.errors?.[0]?.extensions?.code).toBe('VALIDATION');
    const unknown = await t.gql(SEARCH, { q: 'x', project: 'nope' });
    expect(unknown.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(await t.db.prisma.searchSection.count()).toBeGreaterThan(0);
  });
});
