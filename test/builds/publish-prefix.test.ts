// A build's stored files are found by their build's prefix, `projects/<p>/<v>/<build id>/`. Cleaning
// up one build (the one a newer publish replaced, or a failed publish) must not touch another whose
// id starts with the same digits: replacing build 12 once deleted `projects/<p>/<v>/12*`, the files
// of builds 120 to 129 as well, including the one just published.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { publishBuild } from '../../src/builds/publish.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { htmlPage, removePages } from '../helpers/publish.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  removePages();
  await t.close();
});

it('replacing build 12 leaves build 120, the one published, whole', async () => {
  const project = await t.db.prisma.project.create({ data: { name: 'Digits', slug: 'digits', repositoryUrl: 'https://example.invalid/d.git' } });
  const version = await t.db.prisma.version.create({ data: { projectId: project.id, slug: 'latest', verboseName: 'latest', active: true } });
  for (const id of [12, 120]) {
    await t.db.prisma.build.create({ data: { id, projectId: project.id, versionId: version.id, versionSlug: 'latest', state: 'building' } });
    const r = await publishBuild(t.services, { projectSlug: 'digits', version, buildId: id, htmlDir: htmlPage(`build ${id}`) });
    expect(r.published).toBe(true);
    expect(r.cleanupError).toBeUndefined();
  }
  expect(await t.storage.list('projects/digits/latest/12/')).toEqual([]);
  expect(await t.storage.list('projects/digits/latest/120/')).toEqual(['projects/digits/latest/120/html/index.html']);
  const page = await t.http.get('/docs/digits/en/latest/');
  expect(page.status).toBe(200);
  expect(page.text).toContain('build 120');
});
