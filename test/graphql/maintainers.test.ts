// A project's maintainers and translations through /graphql (issue 12, for the dashboard's project
// settings): maintainers are added by username and removed, and a project keeps one; translations
// follow Read the Docs' dashboard rules (docs/design/read-the-docs.md §4.5) and are served under the main project.
// Only maintainers change either; a refused change changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';

let t: TestApp;
let alice: string;
let bob: string;
let carol: string;

const ERRORS = `... on Error { code status message } ... on ValidationError { fieldErrors { field messages } } ... on NotFoundError { model }`;
const PROJECT = 'slug users { username } translations { nodes { slug language { code } documentationUrl } }';
const op = (name: string, arg: string) =>
  `mutation($project: String!, $v: String!) { ${name}(project: $project, ${arg}: $v) { __typename ... on Mutation${name[0]!.toUpperCase()}${name.slice(1)}Success { data { ${PROJECT} } } ${ERRORS} } }`;
const ADD_MAINTAINER = op('addMaintainer', 'username');
const REMOVE_MAINTAINER = op('removeMaintainer', 'username');
const ADD_TRANSLATION = op('addTranslation', 'translation');
const REMOVE_TRANSLATION = op('removeTranslation', 'translation');

async function importProject(token: string, name: string, language = 'en') {
  const res = await t.gql(
    `mutation($input: ImportProjectInput!) { importProject(input: $input) { __typename ... on MutationImportProjectSuccess { data { slug } } ${ERRORS} } }`,
    { input: { name, language, repository: { url: `https://github.com/acme/${name}.git` } } },
    token,
  );
  expect(res.data.importProject.__typename, JSON.stringify(res.data.importProject)).toBe('MutationImportProjectSuccess');
}

const usersOf = async (slug: string) =>
  (await t.db.prisma.user.findMany({ where: { projects: { some: { slug } } }, orderBy: { username: 'asc' } })).map((u) => u.username);
const call = async (query: string, project: string, v: string, token?: string) => {
  const res = await t.gql(query, { project, v }, token);
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return Object.values(res.data)[0] as Record<string, any>;
};

beforeAll(async () => {
  t = await testApp();
  alice = await t.user('alice');
  bob = await t.user('bob');
  carol = await t.user('carol');
  await importProject(alice, 'handbook');
  await importProject(alice, 'handbook-es', 'es');
  await importProject(alice, 'handbook-es-two', 'es');
  await importProject(alice, 'handbook-de', 'de');
  await importProject(bob, 'bobs-fr', 'fr');
});
afterAll(() => t.close());

describe('maintainers', () => {
  it('are added by username, and the new one can change the project', async () => {
    const res = await call(ADD_MAINTAINER, 'handbook', 'bob', alice);
    expect(res.data.users).toEqual([{ username: 'alice' }, { username: 'bob' }]);
    const update = await t.gql(`mutation { updateProject(slug: "handbook", input: { description: "by bob" }) { __typename } }`, {}, bob);
    expect(update.data.updateProject.__typename).toBe('MutationUpdateProjectSuccess');
  });

  it('are changed by maintainers only, and an unknown user is named', async () => {
    expect(await call(ADD_MAINTAINER, 'handbook', 'carol', carol)).toMatchObject({ __typename: 'ForbiddenError', status: 403 });
    expect(await call(ADD_MAINTAINER, 'handbook', 'carol')).toMatchObject({ __typename: 'UnauthenticatedError', status: 401 });
    expect(await call(REMOVE_MAINTAINER, 'handbook', 'alice', carol)).toMatchObject({ __typename: 'ForbiddenError' });
    const unknown = await call(ADD_MAINTAINER, 'handbook', 'nobody', alice);
    expect(unknown).toMatchObject({ __typename: 'ValidationError', fieldErrors: [{ field: 'username', messages: ['No user named "nobody".'] }] });
    expect(await usersOf('handbook')).toEqual(['alice', 'bob']);
  });

  it('are removed, but a project keeps its last one', async () => {
    expect(await call(REMOVE_MAINTAINER, 'handbook', 'carol', alice)).toMatchObject({ __typename: 'NotFoundError', model: 'User' });
    expect((await call(REMOVE_MAINTAINER, 'handbook', 'alice', bob)).data.users).toEqual([{ username: 'bob' }]);
    const last = await call(REMOVE_MAINTAINER, 'handbook', 'bob', bob);
    expect(last).toMatchObject({ __typename: 'ConflictError', status: 409 });
    expect(await usersOf('handbook')).toEqual(['bob']);
    // alice is no longer one: her write is refused.
    expect(await call(ADD_MAINTAINER, 'handbook', 'alice', alice)).toMatchObject({ __typename: 'ForbiddenError' });
    expect((await call(ADD_MAINTAINER, 'handbook', 'alice', bob)).data.users).toEqual([{ username: 'alice' }, { username: 'bob' }]);
  });
});

describe('translations', () => {
  it('are added from projects the caller maintains, served under the main project with their own language', async () => {
    const res = await call(ADD_TRANSLATION, 'handbook', 'handbook-es', alice);
    expect(res.data.translations.nodes).toEqual([
      { slug: 'handbook-es', language: { code: 'es' }, documentationUrl: 'http://lectern.test/docs/handbook/es/latest/' },
    ]);
    const es = await t.gql(`{ project(slug: "handbook-es") { translationOf { slug } superproject { slug } } }`);
    expect(es.data.project).toEqual({ translationOf: { slug: 'handbook' }, superproject: null });
  });

  it("follow Read the Docs' rules, and a refused one changes nothing", async () => {
    const refusals: [string, string, string, string][] = [
      ['handbook', 'handbook-es-two', alice, 'translation'], // a second Spanish translation
      ['handbook', 'handbook', alice, 'translation'], // itself
      ['handbook', 'bobs-fr', alice, 'translation'], // not alice's
      ['handbook', 'handbook-es', alice, 'translation'], // a translation already
      ['handbook-es', 'handbook-de', alice, 'nonFieldErrors'], // a translation cannot have translations
      ['handbook-de', 'handbook', alice, 'translation'], // has translations of its own
      ['handbook', 'nobody', alice, 'translation'],
    ];
    for (const [project, translation, token, field] of refusals) {
      const res = await call(ADD_TRANSLATION, project, translation, token);
      expect(res, `${project} ← ${translation}`).toMatchObject({ __typename: 'ValidationError', fieldErrors: [{ field }] });
    }
    expect(await call(ADD_TRANSLATION, 'handbook', 'handbook-de', carol)).toMatchObject({ __typename: 'ForbiddenError' });
    const rows = await t.db.prisma.project.findMany({ where: { mainLanguageProject: { isNot: null } }, select: { slug: true } });
    expect(rows.map((r) => r.slug)).toEqual(['handbook-es']);
  });

  it('are removed, and the translation is served on its own again', async () => {
    expect(await call(REMOVE_TRANSLATION, 'handbook', 'handbook-de', alice)).toMatchObject({ __typename: 'NotFoundError' });
    const res = await call(REMOVE_TRANSLATION, 'handbook', 'handbook-es', alice);
    expect(res.data.translations.nodes).toEqual([]);
    const es = await t.gql(`{ project(slug: "handbook-es") { translationOf { slug } documentationUrl } }`);
    expect(es.data.project).toEqual({ translationOf: null, documentationUrl: 'http://lectern.test/docs/handbook-es/es/latest/' });
  });
});
