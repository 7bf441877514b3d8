// Adding and removing subprojects through /graphql, with Read the Docs' rules checked in its
// order (docs/design/read-the-docs.md §4.4): permission, child, alias format, nesting, alias uniqueness, slashes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';

let t: TestApp;
let alice: string;
let bob: string;
const ids: Record<string, number> = {};

const ERRORS = `... on Error { code status message }
    ... on NotFoundError { model }
    ... on ValidationError { fieldErrors { field messages } }`;

const CREATE = `mutation($project: String!, $input: CreateSubprojectInput!) {
  createSubproject(project: $project, input: $input) {
    __typename
    ... on MutationCreateSubprojectSuccess { data { id alias createdAt parent { slug } child { slug superproject { slug } } } }
    ${ERRORS}
  }
}`;

const DELETE = `mutation($project: String!, $alias: String!) {
  deleteSubproject(project: $project, alias: $alias) {
    __typename
    ... on MutationDeleteSubprojectSuccess { data { id alias parent { slug } child { slug } } }
    ${ERRORS}
  }
}`;

const LIST = `query($project: String!) {
  project(slug: $project) { subprojects { totalCount nodes { alias child { slug } } } }
}`;

async function importProject(token: string, name: string) {
  const res = await t.gql(
    `mutation($input: ImportProjectInput!) { importProject(input: $input) { __typename ... on MutationImportProjectSuccess { data { id slug } } } }`,
    { input: { name, repository: { url: `https://github.com/acme/${name}.git` } } },
    token,
  );
  expect(res.data.importProject.__typename).toBe('MutationImportProjectSuccess');
  ids[name] = res.data.importProject.data.id;
}

const relationships = () => t.db.prisma.subproject.findMany({ orderBy: { id: 'asc' } });
/** `token` null: anonymous. */
const create = (project: string, input: Record<string, unknown>, token: string | null = alice) => t.gql(CREATE, { project, input }, token ?? undefined);

/** The one validation error of a refused create, after checking nothing was written. */
async function refused(project: string, input: Record<string, unknown>, token: string | null = alice) {
  const before = await relationships();
  const res = await create(project, input, token);
  expect(res.data.createSubproject).toMatchObject({ __typename: 'ValidationError', code: 'VALIDATION', status: 400 });
  expect(await relationships()).toEqual(before);
  return res.data.createSubproject.fieldErrors;
}

const notValid = (slug: string) => [{ field: 'child', messages: [`Project with slug=${slug} is not valid as subproject`] }];
const badAlias = [{ field: 'alias', messages: ['Aliases can contain letters, numbers, underscores, and hyphens.'] }];
const nesting = [{ field: 'nonFieldErrors', messages: ['Subproject nesting is not supported'] }];
const aliasTaken = [{ field: 'alias', messages: ['A subproject with this alias already exists'] }];
const slashes = [{ field: 'nonFieldErrors', messages: ["Aliases can't contain slashes."] }];

beforeAll(async () => {
  t = await testApp();
  alice = await t.user('alice');
  bob = await t.user('bob');
  for (const name of ['main', 'other-main', 'api', 'guide', 'extra', 'solo', 'spare', 'loner']) await importProject(alice, name);
  await importProject(bob, 'bobs');
});
afterAll(() => t.close());

describe('createSubproject', () => {
  it("adds the child under the parent, with the child's slug as alias by default", async () => {
    const res = await create('main', { child: 'api' });
    expect(res.data.createSubproject.__typename).toBe('MutationCreateSubprojectSuccess');
    expect(res.data.createSubproject.data).toMatchObject({
      alias: 'api',
      parent: { slug: 'main' },
      child: { slug: 'api', superproject: { slug: 'main' } },
    });
    const list = await t.gql(LIST, { project: 'main' }, alice);
    expect(list.data.project.subprojects).toEqual({ totalCount: 1, nodes: [{ alias: 'api', child: { slug: 'api' } }] });
    expect(await t.db.prisma.subproject.count({ where: { parentId: ids.main, childId: ids.api, alias: 'api' } })).toBe(1);
  });

  it('a null alias also defaults to the child slug; an explicit alias may use letters, digits, _ and -', async () => {
    const res = await create('main', { child: 'guide', alias: null });
    expect(res.data.createSubproject.data).toMatchObject({ alias: 'guide', child: { slug: 'guide' } });
    const named = await create('main', { child: 'extra', alias: 'User_Guide-2' });
    expect(named.data.createSubproject.data).toMatchObject({ alias: 'User_Guide-2', child: { slug: 'extra' } });
    const list = await t.gql(LIST, { project: 'main' }, alice);
    expect(list.data.project.subprojects.nodes.map((n: { alias: string }) => n.alias)).toEqual(['api', 'guide', 'User_Guide-2']);
  });

  describe('1. the caller must maintain the parent', () => {
    it('answers anonymous callers 401, non-maintainers 403, an unknown parent 404, and writes nothing', async () => {
      const before = await relationships();
      const anon = await create('other-main', { child: 'solo' }, null);
      expect(anon.data.createSubproject).toMatchObject({
        __typename: 'UnauthenticatedError',
        code: 'UNAUTHENTICATED',
        status: 401,
        message: 'Authentication credentials were not provided.',
      });
      const other = await create('other-main', { child: 'bobs' }, bob);
      expect(other.data.createSubproject).toMatchObject({
        __typename: 'ForbiddenError',
        code: 'FORBIDDEN',
        status: 403,
        message: 'You do not have permission to perform this action.',
      });
      const missing = await create('no-such-project', { child: 'solo' });
      expect(missing.data.createSubproject).toMatchObject({
        __typename: 'NotFoundError',
        code: 'NOT_FOUND',
        status: 404,
        model: 'Project',
        message: 'No Project matches the given query.',
      });
      expect(await relationships()).toEqual(before);
    });

    it('is checked before anything about the child or alias', async () => {
      const res = await create('other-main', { child: 'no-such-child', alias: 'bad alias!' }, bob);
      expect(res.data.createSubproject.__typename).toBe('ForbiddenError');
      const anon = await create('no-such-project', { alias: 'bad alias!' }, null);
      expect(anon.data.createSubproject.__typename).toBe('UnauthenticatedError');
    });
  });

  describe('2. the child must be a candidate', () => {
    it('requires a child', async () => {
      const required = [{ field: 'child', messages: ['This field is required.'] }];
      expect(await refused('other-main', {})).toEqual(required);
      expect(await refused('other-main', { child: null })).toEqual(required);
      expect(await refused('other-main', { child: '' })).toEqual(required);
    });

    it('refuses a project that does not exist', async () => {
      expect(await refused('other-main', { child: 'ghost' })).toEqual(notValid('ghost'));
    });

    it('refuses the parent itself', async () => {
      expect(await refused('other-main', { child: 'other-main' })).toEqual(notValid('other-main'));
    });

    it('refuses a project that already has subprojects', async () => {
      expect(await refused('other-main', { child: 'main' })).toEqual(notValid('main'));
    });

    it('refuses a project that already is a subproject, of this parent or another', async () => {
      expect(await refused('other-main', { child: 'api' })).toEqual(notValid('api'));
      expect(await refused('main', { child: 'api', alias: 'api-again' })).toEqual(notValid('api'));
    });

    it('refuses a project the caller does not maintain', async () => {
      expect(await refused('other-main', { child: 'bobs' })).toEqual(notValid('bobs'));
    });

    it('is checked before the alias', async () => {
      expect(await refused('other-main', { child: 'ghost', alias: 'bad alias' })).toEqual(notValid('ghost'));
      expect(await refused('other-main', { alias: 'bad alias' })).toEqual([{ field: 'child', messages: ['This field is required.'] }]);
    });
  });

  describe('3. the alias must be letters, digits, underscores and hyphens', () => {
    it.each(['with space', 'bang!', 'at@sign', 'dollar$', 'v1.0', 'co:lon', 'semi;colon', '', 'a'.repeat(256)])('refuses %j', async (alias) => {
      expect(await refused('other-main', { child: 'solo', alias })).toEqual(badAlias);
    });

    it('is checked before nesting', async () => {
      // `api` is a subproject of `main`, so adding under `api` is nesting.
      expect(await refused('api', { child: 'solo', alias: 'no good' })).toEqual(badAlias);
    });
  });

  describe('4. the parent must not itself be a subproject', () => {
    it('refuses nesting', async () => {
      expect(await refused('api', { child: 'solo' })).toEqual(nesting);
    });

    it('is checked after the child and before slashes', async () => {
      expect(await refused('api', { child: 'bobs' })).toEqual(notValid('bobs'));
      expect(await refused('api', { child: 'solo', alias: 'a/b' })).toEqual(nesting);
    });

    it('is checked before the alias is found taken', async () => {
      // A state the API cannot make (a subproject that has subprojects), as older data might hold.
      const rel = await t.db.prisma.subproject.create({ data: { parentId: ids.api, childId: ids.loner, alias: 'taken' } });
      try {
        expect(await refused('api', { child: 'solo', alias: 'taken' })).toEqual(nesting);
      } finally {
        await t.db.prisma.subproject.delete({ where: { id: rel.id } });
      }
    });
  });

  describe("5. the alias must be unique among the parent's subprojects", () => {
    it('refuses an alias the parent already uses, even when it is the default', async () => {
      expect(await refused('main', { child: 'solo', alias: 'guide' })).toEqual(aliasTaken);
      expect(await refused('main', { child: 'solo', alias: 'User_Guide-2' })).toEqual(aliasTaken);
    });

    it('allows the same alias under another parent', async () => {
      const res = await create('other-main', { child: 'solo', alias: 'guide' });
      expect(res.data.createSubproject.data).toMatchObject({ alias: 'guide', parent: { slug: 'other-main' }, child: { slug: 'solo' } });
    });

    it('is checked before slashes', async () => {
      // A slashed alias the API cannot make (RTD needs a feature flag), as older data might hold.
      const rel = await t.db.prisma.subproject.create({ data: { parentId: ids['other-main'], childId: ids.loner, alias: 'x/y' } });
      try {
        expect(await refused('other-main', { child: 'spare', alias: 'x/y' })).toEqual(aliasTaken);
      } finally {
        await t.db.prisma.subproject.delete({ where: { id: rel.id } });
      }
    });
  });

  describe('6. slashes are not allowed', () => {
    it('refuses an alias with a slash that the format allows', async () => {
      expect(await refused('other-main', { child: 'spare', alias: 'a/b' })).toEqual(slashes);
      expect(await refused('other-main', { child: 'spare', alias: 'deep/er/path' })).toEqual(slashes);
    });

    it('refuses slashes the format does not allow as a bad alias', async () => {
      expect(await refused('other-main', { child: 'spare', alias: '/lead' })).toEqual(badAlias);
      expect(await refused('other-main', { child: 'spare', alias: 'trail/' })).toEqual(badAlias);
    });
  });

  it('rejects a wrong type in the input before running, naming the field, and writes nothing', async () => {
    const before = await relationships();
    const res = await create('other-main', { child: 42 });
    expect(res.status).toBe(400);
    expect(res.errors?.[0]?.message).toMatch(/input\.child/);
    expect(await relationships()).toEqual(before);
  });

  it('of two parents claiming the same child at once, one wins and the other is told the child is not valid', async () => {
    await importProject(alice, 'race-a');
    await importProject(alice, 'race-b');
    await importProject(alice, 'contested');
    const [a, b] = await Promise.all([create('race-a', { child: 'contested' }), create('race-b', { child: 'contested' })]);
    const types = [a.data.createSubproject.__typename, b.data.createSubproject.__typename].sort();
    expect(types).toEqual(['MutationCreateSubprojectSuccess', 'ValidationError']);
    const loser = [a, b].find((r) => r.data.createSubproject.__typename === 'ValidationError')!;
    expect(loser.data.createSubproject.fieldErrors).toEqual(notValid('contested'));
    expect(await t.db.prisma.subproject.count({ where: { childId: ids.contested } })).toBe(1);
  });

  it('two creates at once cannot make a nesting: adding under P while P is added under Q', async () => {
    for (const name of ['nest-q', 'nest-p', 'nest-x']) await importProject(alice, name);
    const [under, over] = await Promise.all([create('nest-p', { child: 'nest-x' }), create('nest-q', { child: 'nest-p' })]);
    const kinds = [under.data.createSubproject.__typename, over.data.createSubproject.__typename];
    expect(kinds.filter((k) => k === 'MutationCreateSubprojectSuccess')).toHaveLength(1);
    const loser = [under, over].find((r) => r.data.createSubproject.__typename === 'ValidationError')!;
    expect([notValid('nest-p'), nesting]).toContainEqual(loser.data.createSubproject.fieldErrors);
    // No project is both a parent and a child.
    const rels = await t.db.prisma.subproject.findMany();
    const parents = new Set(rels.map((r) => r.parentId));
    expect(rels.filter((r) => parents.has(r.childId))).toEqual([]);
  });

  it('of two children claiming the same alias at once, one wins and the other is told the alias is taken', async () => {
    await importProject(alice, 'race-c');
    await importProject(alice, 'race-d');
    const [a, b] = await Promise.all([create('race-a', { child: 'race-c', alias: 'same' }), create('race-a', { child: 'race-d', alias: 'same' })]);
    const results = [a, b].map((r) => r.data.createSubproject);
    expect(results.map((r) => r.__typename).sort()).toEqual(['MutationCreateSubprojectSuccess', 'ValidationError']);
    expect(results.find((r) => r.__typename === 'ValidationError').fieldErrors).toEqual(aliasTaken);
    expect(await t.db.prisma.subproject.count({ where: { parentId: ids['race-a'], alias: 'same' } })).toBe(1);
  });
});

describe('deleteSubproject', () => {
  it('removes only the relationship; both projects stay and the child can be added again', async () => {
    await create('main', { child: 'spare', alias: 'to-remove' });
    const projects = await t.db.prisma.project.count();
    const res = await t.gql(DELETE, { project: 'main', alias: 'to-remove' }, alice);
    expect(res.data.deleteSubproject).toMatchObject({
      __typename: 'MutationDeleteSubprojectSuccess',
      data: { alias: 'to-remove', parent: { slug: 'main' }, child: { slug: 'spare' } },
    });
    expect(await t.db.prisma.project.count()).toBe(projects);
    expect(await t.db.prisma.subproject.count({ where: { childId: ids.spare } })).toBe(0);
    const list = await t.gql(LIST, { project: 'main' }, alice);
    expect(list.data.project.subprojects.nodes.map((n: { alias: string }) => n.alias)).not.toContain('to-remove');
    const child = await t.gql(`{ project(slug: "spare") { superproject { slug } } }`, {}, alice);
    expect(child.data.project.superproject).toBeNull();
    // Free again: it may now be added under another parent.
    const again = await create('other-main', { child: 'spare' });
    expect(again.data.createSubproject.data).toMatchObject({ alias: 'spare', parent: { slug: 'other-main' } });
  });

  it('a parent left without subprojects may itself become a subproject', async () => {
    await importProject(alice, 'top');
    await importProject(alice, 'mid');
    await importProject(alice, 'leaf');
    await create('mid', { child: 'leaf' });
    expect(await refused('top', { child: 'mid' })).toEqual(notValid('mid'));
    await t.gql(DELETE, { project: 'mid', alias: 'leaf' }, alice);
    const res = await create('top', { child: 'mid' });
    expect(res.data.createSubproject.__typename).toBe('MutationCreateSubprojectSuccess');
  });

  it('of two deletes of the same subproject at once, one removes it and the other finds nothing', async () => {
    await importProject(alice, 'twice');
    await create('main', { child: 'twice' });
    const results = await Promise.all([t.gql(DELETE, { project: 'main', alias: 'twice' }, alice), t.gql(DELETE, { project: 'main', alias: 'twice' }, alice)]);
    expect(results.map((r) => r.data.deleteSubproject.__typename).sort()).toEqual(['MutationDeleteSubprojectSuccess', 'NotFoundError']);
    expect(await t.db.prisma.subproject.count({ where: { childId: ids.twice } })).toBe(0);
  });

  it('answers NotFoundError for an alias the parent does not have, even one another parent uses', async () => {
    const before = await relationships();
    for (const alias of ['nope', 'solo']) {
      // `solo` is a subproject (of other-main, as `guide`), but not one of main's aliases.
      const res = await t.gql(DELETE, { project: 'main', alias }, alice);
      expect(res.data.deleteSubproject).toEqual({
        __typename: 'NotFoundError',
        code: 'NOT_FOUND',
        status: 404,
        model: 'ProjectRelationship',
        message: 'No ProjectRelationship matches the given query.',
      });
    }
    const elsewhere = await t.gql(DELETE, { project: 'race-b', alias: 'guide' }, alice);
    expect(elsewhere.data.deleteSubproject.__typename).toBe('NotFoundError');
    expect(await relationships()).toEqual(before);
  });

  it('answers 401, 403 and 404 (project) and removes nothing', async () => {
    const before = await relationships();
    const anon = await t.gql(DELETE, { project: 'main', alias: 'api' });
    expect(anon.data.deleteSubproject).toMatchObject({ __typename: 'UnauthenticatedError', status: 401 });
    const other = await t.gql(DELETE, { project: 'main', alias: 'api' }, bob);
    expect(other.data.deleteSubproject).toMatchObject({ __typename: 'ForbiddenError', status: 403 });
    const missing = await t.gql(DELETE, { project: 'no-such-project', alias: 'api' }, alice);
    expect(missing.data.deleteSubproject).toMatchObject({
      __typename: 'NotFoundError',
      status: 404,
      model: 'Project',
      message: 'No Project matches the given query.',
    });
    const bad = await t.gql(DELETE, { project: 'main', alias: null }, alice);
    expect(bad.status).toBe(400);
    expect(bad.errors?.[0]?.message).toMatch(/\$alias/);
    expect(await relationships()).toEqual(before);
  });
});
