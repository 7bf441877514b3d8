// Importing, reading and updating projects through /graphql, as a frontend would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';

let t: TestApp;
let alice: string;
let bob: string;

const IMPORT = `mutation($input: ImportProjectInput!) {
  importProject(input: $input) {
    __typename
    ... on MutationImportProjectSuccess { data { id slug name language { code name } programmingLanguage { code } defaultBranch users { username }
      versions { totalCount nodes { slug active machine type lastBuild { id state success } } } } }
    ... on Error { code status message }
    ... on ValidationError { fieldErrors { field messages } }
  }
}`;

beforeAll(async () => {
  t = await testApp();
  alice = await t.user('alice');
  bob = await t.user('bob');
});
afterAll(() => t.close());

describe('importProject', () => {
  it('creates the project, its `latest` version and one triggered build of it', async () => {
    const res = await t.gql(
      IMPORT,
      { input: { name: 'Test Project', repository: { url: 'https://github.com/acme/docs.git' }, language: 'es', programmingLanguage: 'py' } },
      alice,
    );
    expect(res.status).toBe(200);
    const p = res.data.importProject.data;
    expect(p).toMatchObject({
      slug: 'test-project',
      name: 'Test Project',
      language: { code: 'es', name: 'Spanish' },
      programmingLanguage: { code: 'py' },
      defaultBranch: 'master',
      users: [{ username: 'alice' }],
      versions: { totalCount: 1, nodes: [{ slug: 'latest', active: true, machine: true, type: 'branch', lastBuild: { state: 'triggered', success: null } }] },
    });
    expect(await t.db.prisma.build.count({ where: { projectId: p.id } })).toBe(1);
  });

  it('refuses a slug that exists, naming the field, and writes nothing', async () => {
    const before = await t.db.prisma.project.count();
    const res = await t.gql(IMPORT, { input: { name: 'test project', repository: { url: 'https://github.com/acme/other' } } }, bob);
    expect(res.data.importProject).toMatchObject({
      __typename: 'ValidationError',
      code: 'VALIDATION',
      status: 400,
      fieldErrors: [{ field: 'name', messages: ['Project with slug "test-project" already exists.'] }],
    });
    expect(await t.db.prisma.project.count()).toBe(before);
  });

  it('lists every bad field at once: missing name, bad URL scheme, unknown language', async () => {
    const res = await t.gql(IMPORT, { input: { repository: { url: 'ftp://example.com/repo' }, language: 'xx', programmingLanguage: 'cobol' } }, alice);
    expect(res.data.importProject.fieldErrors).toEqual([
      { field: 'name', messages: ['This field is required.'] },
      { field: 'repository.url', messages: ['Invalid scheme for URL'] },
      { field: 'language', messages: ['"xx" is not a valid choice.'] },
      { field: 'programmingLanguage', messages: ['"cobol" is not a valid choice.'] },
    ]);
  });

  it('refuses names that make no slug and oversized names', async () => {
    const star = await t.gql(IMPORT, { input: { name: '*', repository: { url: 'https://x.org/r' } } }, alice);
    expect(star.data.importProject.fieldErrors).toEqual([{ field: 'name', messages: ['Invalid project name "*": no slug generated.'] }]);
    const long = await t.gql(IMPORT, { input: { name: 'x'.repeat(64), repository: { url: 'https://x.org/r' } } }, alice);
    expect(long.data.importProject.fieldErrors).toEqual([{ field: 'name', messages: ['Ensure this field has no more than 63 characters.'] }]);
  });

  it('answers anonymous callers with an UnauthenticatedError (401)', async () => {
    const res = await t.gql(IMPORT, { input: { name: 'Anon', repository: { url: 'https://x.org/r' } } });
    expect(res.data.importProject).toMatchObject({ __typename: 'UnauthenticatedError', status: 401, code: 'UNAUTHENTICATED' });
  });

  it('rejects a wrong type in the input before running, naming the field', async () => {
    const res = await t.gql(IMPORT, { input: { name: 42, repository: { url: 'https://x.org/r' } } }, alice);
    expect(res.status).toBe(400);
    expect(res.errors?.[0]?.message).toMatch(/input\.name/);
  });
});
