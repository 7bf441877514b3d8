// Deleting a project (issue 12, the dashboard's danger zone): maintainers only, with its slug typed
// again; its rows and its stored files go, a project whose slug starts the same keeps its own, and
// its docs are no longer served.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { htmlPage, makeProject, publish, removePages } from '../helpers/publish.ts';

let t: TestApp;
let alice: string;
let bob: string;

const DELETE = `mutation($project: String!, $confirm: String!) { deleteProject(project: $project, confirm: $confirm) {
  __typename ... on MutationDeleteProjectSuccess { data { slug users { username } } }
  ... on Error { code status message } ... on ValidationError { fieldErrors { field messages } } } }`;

beforeAll(async () => {
  t = await testApp();
  alice = await t.user('alice');
  bob = await t.user('bob');
  const aliceId = (await t.db.prisma.user.findUniqueOrThrow({ where: { username: 'alice' } })).id;
  for (const slug of ['manual', 'manual-two']) {
    const project = await makeProject(t, { slug, maintainers: [aliceId] });
    await publish(t, { project, version: 'latest', html: htmlPage(`${slug} docs`) });
  }
});
afterAll(async () => {
  removePages();
  await t.close();
});

it('is refused to others and without the slug typed again, and then nothing changes', async () => {
  expect((await t.gql(DELETE, { project: 'manual', confirm: 'manual' }, bob)).data.deleteProject).toMatchObject({ __typename: 'ForbiddenError' });
  expect((await t.gql(DELETE, { project: 'manual', confirm: 'manual' })).data.deleteProject).toMatchObject({ __typename: 'UnauthenticatedError' });
  const unconfirmed = await t.gql(DELETE, { project: 'manual', confirm: 'Manual' }, alice);
  expect(unconfirmed.data.deleteProject).toMatchObject({ __typename: 'ValidationError', fieldErrors: [{ field: 'confirm' }] });
  expect(await t.db.prisma.project.count({ where: { slug: 'manual' } })).toBe(1);
  expect((await t.http.get('/docs/manual/en/latest/')).status).toBe(200);
});

it('deletes the project, its builds and its files, and leaves a project whose slug starts the same', async () => {
  const before = await t.storage.list('projects/manual/');
  expect(before.length).toBeGreaterThan(0);
  const res = await t.gql(DELETE, { project: 'manual', confirm: 'manual' }, alice);
  expect(res.data.deleteProject).toEqual({ __typename: 'MutationDeleteProjectSuccess', data: { slug: 'manual', users: [{ username: 'alice' }] } });
  expect(await t.db.prisma.project.count({ where: { slug: 'manual' } })).toBe(0);
  expect(await t.db.prisma.build.count({ where: { versionSlug: 'latest', project: { slug: 'manual' } } })).toBe(0);
  expect(await t.storage.list('projects/manual/')).toEqual([]);
  expect((await t.gql(`{ project(slug: "manual") { slug } }`, {}, alice)).data.project).toBeNull();
  expect((await t.http.get('/docs/manual/en/latest/')).status).toBe(404);

  expect((await t.storage.list('projects/manual-two/')).length).toBeGreaterThan(0);
  const other = await t.http.get('/docs/manual-two/en/latest/');
  expect(other.status).toBe(200);
  expect(other.text).toContain('manual-two docs');
});
