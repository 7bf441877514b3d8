// v2's `/api/v2/project/{id}/active_versions/` answers every active public version at once, as Read
// the Docs does (no pagination), however many there are: Lectern reads them page by page at the
// largest page (LECTERN_API_MAX_LIMIT, its smallest, 100, here), in Read the
// Docs' order, with the inactive and the private ones left out (docs/design/rest-api.md "v2 routes").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';

let t: TestApp;

beforeAll(async () => {
  t = await testApp({ LECTERN_API_MAX_LIMIT: '100' });
});
afterAll(async () => {
  await t?.close();
});

/** A public project with `active` active public versions, two inactive ones and a private active one; its id. */
async function projectWith(slug: string, active: number): Promise<number> {
  const p = await t.db.prisma.project.create({ data: { name: slug, slug, repositoryUrl: `https://example.com/${slug}.git` } });
  const tag = (name: string) => ({ projectId: p.id, slug: name, verboseName: name, type: 'tag' as const, identifier: name });
  const numbered = Array.from({ length: active }, (_, i) => tag(`v${String(i + 1).padStart(3, '0')}`));
  await t.db.prisma.version.createMany({
    data: [
      ...numbered.map((v) => ({ ...v, active: true })),
      { ...tag('old-1'), active: false },
      { ...tag('old-2'), active: false },
      { ...tag('secret'), active: true, privacyLevel: 'private' as const },
    ],
  });
  return p.id;
}

/** v<n> for n from `from` down to 1, as the versions are listed (by name, highest first). */
const down = (from: number) => Array.from({ length: from }, (_, i) => `v${String(from - i).padStart(3, '0')}`);

describe('v2 active_versions', () => {
  it('answers every active public version, across several pages of the largest page size', async () => {
    const id = await projectWith('many-versions', 250);
    const res = await t.http.get(`/api/v2/project/${id}/active_versions/`);
    expect(res.status).toBe(200);
    expect((res.body.versions as { slug: string }[]).map((v) => v.slug)).toEqual(down(250));
  });

  it('ends on a full last page (a count that is a multiple of the page size)', async () => {
    const id = await projectWith('two-hundred', 200);
    const res = await t.http.get(`/api/v2/project/${id}/active_versions/`);
    expect((res.body.versions as { slug: string }[]).map((v) => v.slug)).toEqual(down(200));
  });

  it('takes no limit from the query: every version whatever is asked', async () => {
    const id = await projectWith('asked-for-two', 120);
    const res = await t.http.get(`/api/v2/project/${id}/active_versions/?limit=2&offset=4`);
    expect((res.body.versions as unknown[]).length).toBe(120);
  });
});
