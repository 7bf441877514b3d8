// Creating, changing and deleting redirects through /graphql: the seed's five types and their
// required fields (seed 2.7), Read the Docs' wildcard checks, normalization and positions
// (docs/design/read-the-docs.md §4.7), HTTP status and the per-project limit (docs/design/rest-api.md).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';

let t: TestApp;
let alice: string;
let bob: string;
const ids: Record<string, number> = {};

const ERRORS = `... on Error { code status message }
    ... on NotFoundError { model }
    ... on ValidationError { fieldErrors { field messages } }`;
const FIELDS = 'id type fromUrl toUrl httpStatus position enabled force description project { slug }';

const CREATE = `mutation($project: String!, $input: RedirectInput!) {
  createRedirect(project: $project, input: $input) { __typename ... on MutationCreateRedirectSuccess { data { ${FIELDS} } } ${ERRORS} }
}`;
const UPDATE = `mutation($project: String!, $id: Int!, $input: RedirectInput!, $partial: Boolean) {
  updateRedirect(project: $project, id: $id, input: $input, partial: $partial) { __typename ... on MutationUpdateRedirectSuccess { data { ${FIELDS} } } ${ERRORS} }
}`;
const DELETE = `mutation($project: String!, $id: Int!) {
  deleteRedirect(project: $project, id: $id) { __typename ... on MutationDeleteRedirectSuccess { data { ${FIELDS} } } ${ERRORS} }
}`;
const LIST = `query($project: String!) { project(slug: $project) { redirects(limit: 100) { totalCount nodes { id fromUrl position } } } }`;

type Input = Record<string, unknown>;

async function importProject(token: string, name: string) {
  const res = await t.gql(
    `mutation($input: ImportProjectInput!) { importProject(input: $input) { __typename ... on MutationImportProjectSuccess { data { id } } } }`,
    { input: { name, repository: { url: `https://github.com/acme/${name}.git` } } },
    token,
  );
  expect(res.data.importProject.__typename).toBe('MutationImportProjectSuccess');
  ids[name] = res.data.importProject.data.id;
}

/** `token` null: anonymous. */
const create = (project: string, input: Input, token: string | null = alice) => t.gql(CREATE, { project, input }, token ?? undefined);
const update = (project: string, id: number, input: Input, partial = false, token: string | null = alice) =>
  t.gql(UPDATE, { project, id, input, partial }, token ?? undefined);
const remove = (project: string, id: number, token: string | null = alice) => t.gql(DELETE, { project, id }, token ?? undefined);

async function created(project: string, input: Input) {
  const res = await create(project, input);
  expect(res.data.createRedirect.__typename, JSON.stringify(res.data.createRedirect)).toBe('MutationCreateRedirectSuccess');
  return res.data.createRedirect.data;
}

const allRedirects = () => t.db.prisma.redirect.findMany({ orderBy: { id: 'asc' } });

/** The field errors of a refused write, after checking it wrote nothing. */
async function refused(run: () => Promise<{ data: Record<string, any> }>) {
  const before = await allRedirects();
  const res = await run();
  const result = Object.values(res.data)[0];
  expect(result).toMatchObject({ __typename: 'ValidationError', code: 'VALIDATION', status: 400 });
  expect(await allRedirects()).toEqual(before);
  return result.fieldErrors;
}

/** The project's redirects in the order they are tried: `fromUrl@position`. */
async function order(project: string): Promise<string[]> {
  const res = await t.gql(LIST, { project }, alice);
  return res.data.project.redirects.nodes.map((n: { fromUrl: string; position: number }) => `${n.fromUrl}@${n.position}`);
}

const rule = (message: string) => [{ field: 'nonFieldErrors', messages: [message] }];
const required = (...fields: string[]) => fields.map((field) => ({ field, messages: ['This field is required.'] }));

beforeAll(async () => {
  t = await testApp();
  alice = await t.user('alice');
  bob = await t.user('bob');
  for (const name of ['docs', 'other', 'clean', 'positions', 'moves', 'full', 'access']) await importProject(alice, name);
  await importProject(bob, 'bobs');
});
afterAll(() => t.close());

describe('createRedirect', () => {
  it('creates a page redirect with the defaults: first position, 302, enabled, not forced', async () => {
    const r = await created('docs', { type: 'page', fromUrl: '/old.html', toUrl: '/new.html' });
    expect(r).toMatchObject({
      type: 'page',
      fromUrl: '/old.html',
      toUrl: '/new.html',
      httpStatus: 302,
      position: 0,
      enabled: true,
      force: false,
      description: '',
      project: { slug: 'docs' },
    });
    const stored = await t.db.prisma.redirect.findUniqueOrThrow({ where: { id: r.id } });
    expect(stored).toMatchObject({ projectId: ids.docs, type: 'page', fromUrl: '/old.html', toUrl: '/new.html' });
  });

  it('keeps the optional fields it is given', async () => {
    const r = await created('docs', {
      type: 'exact',
      fromUrl: '/en/latest/a.html',
      toUrl: '/en/latest/b.html',
      httpStatus: 301,
      enabled: false,
      force: true,
      description: 'moved',
    });
    expect(r).toMatchObject({ httpStatus: 301, enabled: false, force: true, description: 'moved' });
  });

  describe('required fields per type (seed 2.7)', () => {
    it('needs a type', async () => {
      expect(await refused(() => create('docs', { fromUrl: '/a', toUrl: '/b' }))).toEqual(required('type'));
    });

    it('prefix needs from_url only', async () => {
      expect(await refused(() => create('docs', { type: 'prefix' }))).toEqual(required('fromUrl'));
      expect(await refused(() => create('docs', { type: 'prefix', toUrl: '/new/' }))).toEqual(required('fromUrl'));
      expect(await created('docs', { type: 'prefix', fromUrl: '/old/' })).toMatchObject({ type: 'prefix', fromUrl: '/old', toUrl: '' });
    });

    it.each(['page', 'exact'])('%s needs from_url and to_url', async (type) => {
      expect(await refused(() => create('docs', { type }))).toEqual(required('fromUrl', 'toUrl'));
      expect(await refused(() => create('docs', { type, fromUrl: '/a' }))).toEqual(required('toUrl'));
      expect(await refused(() => create('docs', { type, toUrl: '/b' }))).toEqual(required('fromUrl'));
      expect(await refused(() => create('docs', { type, fromUrl: '', toUrl: '' }))).toEqual(required('fromUrl', 'toUrl'));
      expect(await created('docs', { type, fromUrl: `/${type}-from`, toUrl: `/${type}-to` })).toMatchObject({
        type,
        fromUrl: `/${type}-from`,
        toUrl: `/${type}-to`,
      });
    });

    it.each(['sphinx_html', 'sphinx_htmldir'])('%s needs neither, and stores neither', async (type) => {
      const bare = await created('clean', { type });
      expect(bare).toMatchObject({ type, fromUrl: '', toUrl: '' });
      await remove('clean', bare.id);
      const given = await created('clean', { type, fromUrl: '/a/', toUrl: '/b/' });
      expect(given).toMatchObject({ type, fromUrl: '', toUrl: '' });
      await remove('clean', given.id);
    });

    it('rejects an unknown type before running, naming the field, and writes nothing', async () => {
      const before = await allRedirects();
      const res = await create('docs', { type: 'permanent', fromUrl: '/a' });
      expect(res.status).toBe(400);
      expect(res.errors?.[0]?.message).toMatch(/input\.type/);
      expect(await allRedirects()).toEqual(before);
    });
  });

  describe('normalization', () => {
    it.each([
      ['page', 'old/', 'new/', '/old', '/new/'],
      ['page', '/docs/', '/guide', '/docs', '/guide'],
      ['page', '///twice//', '//there', '/twice', '/there'],
      ['page', '/install.html', 'https://example.com/Install/', '/install.html', 'https://example.com/Install/'],
      ['exact', '/en/latest/api/', 'http://example.com', '/en/latest/api', 'http://example.com'],
      ['exact', '/en/latest/dir/*', '/en/stable/dir/:splat', '/en/latest/dir/*', '/en/stable/dir/:splat'],
      ['prefix', 'en/v1/', 'v2', '/en/v1', '/v2'],
    ])('%s %j → %j stores from %j, to %j', async (type, fromUrl, toUrl, storedFrom, storedTo) => {
      const r = await created('other', { type, fromUrl, toUrl });
      expect(r).toMatchObject({ fromUrl: storedFrom, toUrl: storedTo });
      expect(await t.db.prisma.redirect.findUniqueOrThrow({ where: { id: r.id } })).toMatchObject({ fromUrl: storedFrom, toUrl: storedTo });
    });
  });

  describe('wildcards (page and exact)', () => {
    it.each(['page', 'exact'])('%s: refuses $rest, a * before the end, and :splat without a trailing *', async (type) => {
      expect(await refused(() => create('docs', { type, fromUrl: '/old/$rest', toUrl: '/new/' }))).toEqual(
        rule('The $rest wildcard has been removed in favor of *.'),
      );
      expect(await refused(() => create('docs', { type, fromUrl: '/a/*/b', toUrl: '/c' }))).toEqual(rule('The * wildcard must be at the end of the path.'));
      expect(await refused(() => create('docs', { type, fromUrl: '*/b', toUrl: '/c' }))).toEqual(rule('The * wildcard must be at the end of the path.'));
      expect(await refused(() => create('docs', { type, fromUrl: '/a/', toUrl: '/b/:splat' }))).toEqual(
        rule('The * wildcard must be at the end of from_url to use the :splat placeholder in to_url.'),
      );
    });

    it.each(['page', 'exact'])('%s: accepts a trailing * with or without :splat', async (type) => {
      expect(await created('docs', { type, fromUrl: `/${type}/wild/*`, toUrl: '/b/:splat' })).toMatchObject({ fromUrl: `/${type}/wild/*`, toUrl: '/b/:splat' });
      expect(await created('docs', { type, fromUrl: `/${type}/all/*`, toUrl: '/b/' })).toMatchObject({ fromUrl: `/${type}/all/*` });
    });
  });

  describe('sphinx_html and sphinx_htmldir: at most one of each per project', () => {
    it('refuses a second one of a type, allows one of each and one per project', async () => {
      await created('clean', { type: 'sphinx_html' });
      expect(await refused(() => create('clean', { type: 'sphinx_html' }))).toEqual(rule('Only one redirect of type `sphinx_html` is allowed per project.'));
      await created('clean', { type: 'sphinx_htmldir' });
      expect(await refused(() => create('clean', { type: 'sphinx_htmldir' }))).toEqual(
        rule('Only one redirect of type `sphinx_htmldir` is allowed per project.'),
      );
      expect(await created('other', { type: 'sphinx_html' })).toMatchObject({ type: 'sphinx_html', project: { slug: 'other' } });
    });

    it('keeps to one when several are created at once', async () => {
      await importProject(alice, 'clean-burst');
      const results = await Promise.all(Array.from({ length: 4 }, () => create('clean-burst', { type: 'sphinx_html' })));
      expect(results.filter((r) => r.data.createRedirect.__typename === 'MutationCreateRedirectSuccess')).toHaveLength(1);
      expect(await t.db.prisma.redirect.count({ where: { projectId: ids['clean-burst'], type: 'sphinx_html' } })).toBe(1);
    });
  });

  describe('positions', () => {
    it('inserts at the top by default, at the given position otherwise, clamped to the list', async () => {
      await created('positions', { type: 'prefix', fromUrl: '/a' });
      await created('positions', { type: 'prefix', fromUrl: '/b' });
      await created('positions', { type: 'prefix', fromUrl: '/c' });
      expect(await order('positions')).toEqual(['/c@0', '/b@1', '/a@2']);
      await created('positions', { type: 'prefix', fromUrl: '/d', position: 1 });
      expect(await order('positions')).toEqual(['/c@0', '/d@1', '/b@2', '/a@3']);
      await created('positions', { type: 'prefix', fromUrl: '/e', position: 4 });
      expect(await order('positions')).toEqual(['/c@0', '/d@1', '/b@2', '/a@3', '/e@4']);
      await created('positions', { type: 'prefix', fromUrl: '/f', position: 99 });
      expect(await order('positions')).toEqual(['/c@0', '/d@1', '/b@2', '/a@3', '/e@4', '/f@5']);
      await created('positions', { type: 'prefix', fromUrl: '/g', position: -3 });
      expect(await order('positions')).toEqual(['/g@0', '/c@1', '/d@2', '/b@3', '/a@4', '/e@5', '/f@6']);
    });

    it('keeps positions distinct and contiguous when redirects are created at once', async () => {
      await importProject(alice, 'burst');
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => create('burst', { type: 'page', fromUrl: `/burst${i}`, toUrl: '/x' })));
      for (const r of results) expect(r.data.createRedirect.__typename).toBe('MutationCreateRedirectSuccess');
      const positions = (await order('burst')).map((o) => Number(o.split('@')[1]));
      expect(positions).toEqual([0, 1, 2, 3, 4, 5]);
    });

    it("does not shift another project's redirects", async () => {
      const before = await t.db.prisma.redirect.findMany({ where: { projectId: ids.docs }, orderBy: { id: 'asc' } });
      await created('positions', { type: 'prefix', fromUrl: '/h' });
      expect(await t.db.prisma.redirect.findMany({ where: { projectId: ids.docs }, orderBy: { id: 'asc' } })).toEqual(before);
    });
  });

  it('accepts only 301 and 302 as HTTP status', async () => {
    for (const httpStatus of [303, 307, 200, 0, -301]) {
      expect(await refused(() => create('docs', { type: 'page', fromUrl: '/s', toUrl: '/t', httpStatus }))).toEqual([
        { field: 'httpStatus', messages: [`"${httpStatus}" is not a valid choice.`] },
      ]);
    }
    expect(await created('docs', { type: 'page', fromUrl: '/s301', toUrl: '/t', httpStatus: 301 })).toMatchObject({ httpStatus: 301 });
    expect(await created('docs', { type: 'page', fromUrl: '/s302', toUrl: '/t', httpStatus: 302 })).toMatchObject({ httpStatus: 302 });
  });

  it('refuses overlong URLs and descriptions, listing every bad field', async () => {
    expect(
      await refused(() =>
        create('docs', { type: 'page', fromUrl: `/${'a'.repeat(2048)}`, toUrl: `/${'b'.repeat(2048)}`, description: 'd'.repeat(256), httpStatus: 200 }),
      ),
    ).toEqual([
      { field: 'fromUrl', messages: ['Ensure this field has no more than 2048 characters.'] },
      { field: 'toUrl', messages: ['Ensure this field has no more than 2048 characters.'] },
      { field: 'description', messages: ['Ensure this field has no more than 255 characters.'] },
      { field: 'httpStatus', messages: ['"200" is not a valid choice.'] },
    ]);
  });

  it('allows 100 redirects per project and refuses the 101st', async () => {
    await t.db.prisma.redirect.createMany({
      data: Array.from({ length: 99 }, (_, i) => ({ projectId: ids.full, type: 'page' as const, fromUrl: `/p${i}`, toUrl: '/x', position: i })),
    });
    await created('full', { type: 'page', fromUrl: '/p99', toUrl: '/x' });
    expect(await t.db.prisma.redirect.count({ where: { projectId: ids.full } })).toBe(100);
    expect(await refused(() => create('full', { type: 'page', fromUrl: '/p100', toUrl: '/x' }))).toEqual(
      rule('This project has reached the limit of 100 redirects. Consider replacing some of your redirects with a wildcard redirect.'),
    );
    expect(await t.db.prisma.redirect.count({ where: { projectId: ids.full } })).toBe(100);
    // Other projects are not affected.
    expect(await created('other', { type: 'page', fromUrl: '/not-full', toUrl: '/x' })).toMatchObject({ project: { slug: 'other' } });
  });

  it('holds the limit when the last places are claimed at once', async () => {
    await importProject(alice, 'almost-full');
    await t.db.prisma.redirect.createMany({
      data: Array.from({ length: 98 }, (_, i) => ({ projectId: ids['almost-full'], type: 'page' as const, fromUrl: `/p${i}`, toUrl: '/x', position: i })),
    });
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => create('almost-full', { type: 'page', fromUrl: `/last${i}`, toUrl: '/x' })));
    expect(results.filter((r) => r.data.createRedirect.__typename === 'MutationCreateRedirectSuccess')).toHaveLength(2);
    expect(await t.db.prisma.redirect.count({ where: { projectId: ids['almost-full'] } })).toBe(100);
  });

  it('answers 401, 403 and 404 (project) before looking at the input, and writes nothing', async () => {
    const before = await allRedirects();
    const input = { type: 'page', fromUrl: '/a', toUrl: '/b' };
    const anon = await create('access', input, null);
    expect(anon.data.createRedirect).toMatchObject({
      __typename: 'UnauthenticatedError',
      code: 'UNAUTHENTICATED',
      status: 401,
      message: 'Authentication credentials were not provided.',
    });
    const other = await create('access', input, bob);
    expect(other.data.createRedirect).toMatchObject({
      __typename: 'ForbiddenError',
      code: 'FORBIDDEN',
      status: 403,
      message: 'You do not have permission to perform this action.',
    });
    const otherBad = await create('access', { type: 'page' }, bob);
    expect(otherBad.data.createRedirect.__typename).toBe('ForbiddenError');
    const missing = await create('no-such-project', input);
    expect(missing.data.createRedirect).toMatchObject({
      __typename: 'NotFoundError',
      code: 'NOT_FOUND',
      status: 404,
      model: 'Project',
      message: 'No Project matches the given query.',
    });
    expect(await allRedirects()).toEqual(before);
  });
});

describe('updateRedirect', () => {
  let page: { id: number };
  beforeAll(async () => {
    page = await created('access', { type: 'page', fromUrl: '/from', toUrl: '/to', httpStatus: 301, description: 'keep me' });
  });

  it('replaces the redirect (PUT), normalizing the URLs, and answers with it', async () => {
    const res = await update('access', page.id, { type: 'exact', fromUrl: 'en/latest/x/', toUrl: 'en/latest/y' });
    expect(res.data.updateRedirect).toMatchObject({
      __typename: 'MutationUpdateRedirectSuccess',
      data: { id: page.id, type: 'exact', fromUrl: '/en/latest/x', toUrl: '/en/latest/y', project: { slug: 'access' } },
    });
    expect(await t.db.prisma.redirect.findUniqueOrThrow({ where: { id: page.id } })).toMatchObject({
      type: 'exact',
      fromUrl: '/en/latest/x',
      toUrl: '/en/latest/y',
    });
  });

  it('PUT needs the type and clears the URLs it is not given', async () => {
    expect(await refused(() => update('access', page.id, { fromUrl: '/a', toUrl: '/b' }))).toEqual(required('type'));
    expect(await refused(() => update('access', page.id, { type: 'page' }))).toEqual(required('fromUrl', 'toUrl'));
    expect(await refused(() => update('access', page.id, { type: 'page', fromUrl: '/a' }))).toEqual(required('toUrl'));
    const res = await update('access', page.id, { type: 'prefix', fromUrl: '/a/' });
    expect(res.data.updateRedirect.data).toMatchObject({ type: 'prefix', fromUrl: '/a', toUrl: '' });
  });

  it('PATCH (partial) changes only the fields given', async () => {
    await update('access', page.id, { type: 'page', fromUrl: '/p', toUrl: '/q' });
    const res = await update('access', page.id, { httpStatus: 302, enabled: false }, true);
    expect(res.data.updateRedirect.data).toMatchObject({ type: 'page', fromUrl: '/p', toUrl: '/q', httpStatus: 302, enabled: false, description: 'keep me' });
    const url = await update('access', page.id, { toUrl: 'https://example.com/q' }, true);
    expect(url.data.updateRedirect.data).toMatchObject({ type: 'page', fromUrl: '/p', toUrl: 'https://example.com/q' });
    // A partial update still has to leave a valid redirect.
    expect(await refused(() => update('access', page.id, { fromUrl: '' }, true))).toEqual(required('fromUrl'));
    expect(await refused(() => update('access', page.id, { toUrl: '/:splat' }, true))).toEqual(
      rule('The * wildcard must be at the end of from_url to use the :splat placeholder in to_url.'),
    );
  });

  it('applies the wildcard rules and the HTTP status choice', async () => {
    expect(await refused(() => update('access', page.id, { type: 'page', fromUrl: '/a*b', toUrl: '/c' }))).toEqual(
      rule('The * wildcard must be at the end of the path.'),
    );
    expect(await refused(() => update('access', page.id, { type: 'exact', fromUrl: '/a/$rest', toUrl: '/c' }))).toEqual(
      rule('The $rest wildcard has been removed in favor of *.'),
    );
    expect(await refused(() => update('access', page.id, { httpStatus: 308 }, true))).toEqual([
      { field: 'httpStatus', messages: ['"308" is not a valid choice.'] },
    ]);
  });

  it('changing to a clean-URL type clears both URLs, and only one of each type is allowed', async () => {
    const other = await created('access', { type: 'page', fromUrl: '/o', toUrl: '/p' });
    const res = await update('access', page.id, { type: 'sphinx_html', fromUrl: '/ignored', toUrl: '/ignored' });
    expect(res.data.updateRedirect.data).toMatchObject({ type: 'sphinx_html', fromUrl: '', toUrl: '' });
    // Updating the one that exists is fine; turning another into a second is not.
    expect((await update('access', page.id, { description: 'still one' }, true)).data.updateRedirect.data).toMatchObject({
      type: 'sphinx_html',
      description: 'still one',
    });
    expect(await refused(() => update('access', other.id, { type: 'sphinx_html' }))).toEqual(
      rule('Only one redirect of type `sphinx_html` is allowed per project.'),
    );
    expect(await refused(() => update('access', other.id, { type: 'sphinx_html' }, true))).toEqual(
      rule('Only one redirect of type `sphinx_html` is allowed per project.'),
    );
    expect((await update('access', other.id, { type: 'sphinx_htmldir' })).data.updateRedirect.data).toMatchObject({
      type: 'sphinx_htmldir',
      fromUrl: '',
      toUrl: '',
    });
  });

  it('moves a redirect, shifting the ones in between, clamped to the list', async () => {
    const made: Record<string, number> = {};
    for (const name of ['d', 'c', 'b', 'a']) made[name] = (await created('moves', { type: 'prefix', fromUrl: `/${name}` })).id;
    expect(await order('moves')).toEqual(['/a@0', '/b@1', '/c@2', '/d@3']);
    await update('moves', made.d!, { position: 0 }, true);
    expect(await order('moves')).toEqual(['/d@0', '/a@1', '/b@2', '/c@3']);
    await update('moves', made.d!, { position: 2 }, true);
    expect(await order('moves')).toEqual(['/a@0', '/b@1', '/d@2', '/c@3']);
    await update('moves', made.a!, { position: 50 }, true);
    expect(await order('moves')).toEqual(['/b@0', '/d@1', '/c@2', '/a@3']);
    await update('moves', made.c!, { position: -1 }, true);
    expect(await order('moves')).toEqual(['/c@0', '/b@1', '/d@2', '/a@3']);
    // A full replace may move it too.
    const res = await update('moves', made.a!, { type: 'prefix', fromUrl: '/a', position: 1 });
    expect(res.data.updateRedirect.data.position).toBe(1);
    expect(await order('moves')).toEqual(['/c@0', '/a@1', '/b@2', '/d@3']);
  });

  it("answers NotFoundError for an id the project does not have, even another project's", async () => {
    const elsewhere = await created('docs', { type: 'page', fromUrl: '/elsewhere', toUrl: '/x' });
    const before = await allRedirects();
    for (const id of [999_999, elsewhere.id]) {
      const res = await update('access', id, { type: 'page', fromUrl: '/a', toUrl: '/b' });
      expect(res.data.updateRedirect).toEqual({
        __typename: 'NotFoundError',
        code: 'NOT_FOUND',
        status: 404,
        model: 'Redirect',
        message: 'No Redirect matches the given query.',
      });
    }
    expect(await allRedirects()).toEqual(before);
  });

  it('answers 401, 403 and 404 (project) and changes nothing', async () => {
    const before = await allRedirects();
    const input = { type: 'page', fromUrl: '/hijack', toUrl: '/evil' };
    expect((await update('access', page.id, input, false, null)).data.updateRedirect).toMatchObject({ __typename: 'UnauthenticatedError', status: 401 });
    expect((await update('access', page.id, input, false, bob)).data.updateRedirect).toMatchObject({ __typename: 'ForbiddenError', status: 403 });
    expect((await update('access', 999_999, input, false, bob)).data.updateRedirect.__typename).toBe('ForbiddenError');
    expect((await update('no-such-project', page.id, input)).data.updateRedirect).toMatchObject({
      __typename: 'NotFoundError',
      status: 404,
      model: 'Project',
      message: 'No Project matches the given query.',
    });
    expect(await allRedirects()).toEqual(before);
  });
});

describe('deleteRedirect', () => {
  it('deletes the redirect, answers with it as it was, and closes the gap in the positions', async () => {
    await importProject(alice, 'deletes');
    const made: Record<string, number> = {};
    for (const name of ['d', 'c', 'b', 'a']) made[name] = (await created('deletes', { type: 'page', fromUrl: `/${name}`, toUrl: '/x' })).id;
    const res = await remove('deletes', made.b!);
    expect(res.data.deleteRedirect).toMatchObject({
      __typename: 'MutationDeleteRedirectSuccess',
      data: { id: made.b, type: 'page', fromUrl: '/b', toUrl: '/x', position: 1, project: { slug: 'deletes' } },
    });
    expect(await t.db.prisma.redirect.findUnique({ where: { id: made.b! } })).toBeNull();
    expect(await order('deletes')).toEqual(['/a@0', '/c@1', '/d@2']);
    await remove('deletes', made.a!);
    expect(await order('deletes')).toEqual(['/c@0', '/d@1']);
    await remove('deletes', made.d!);
    expect(await order('deletes')).toEqual(['/c@0']);
    // A new one still goes first.
    await created('deletes', { type: 'page', fromUrl: '/e', toUrl: '/x' });
    expect(await order('deletes')).toEqual(['/e@0', '/c@1']);
  });

  it('frees the slot of a clean-URL type and a place under the limit', async () => {
    const first = await created('deletes', { type: 'sphinx_htmldir' });
    await remove('deletes', first.id);
    expect(await created('deletes', { type: 'sphinx_htmldir' })).toMatchObject({ type: 'sphinx_htmldir' });
    const any = await t.db.prisma.redirect.findFirstOrThrow({ where: { projectId: ids.full } });
    await remove('full', any.id);
    expect(await created('full', { type: 'page', fromUrl: '/again', toUrl: '/x' })).toMatchObject({ project: { slug: 'full' } });
  });

  it("answers NotFoundError for an id the project does not have, even another project's, and deletes nothing", async () => {
    const elsewhere = await t.db.prisma.redirect.findFirstOrThrow({ where: { projectId: ids.docs } });
    const before = await allRedirects();
    for (const id of [999_999, elsewhere.id]) {
      expect((await remove('deletes', id)).data.deleteRedirect).toEqual({
        __typename: 'NotFoundError',
        code: 'NOT_FOUND',
        status: 404,
        model: 'Redirect',
        message: 'No Redirect matches the given query.',
      });
    }
    expect(await allRedirects()).toEqual(before);
  });

  it('answers 401, 403 and 404 (project) and deletes nothing', async () => {
    const target = await t.db.prisma.redirect.findFirstOrThrow({ where: { projectId: ids.deletes } });
    const before = await allRedirects();
    expect((await remove('deletes', target.id, null)).data.deleteRedirect).toMatchObject({ __typename: 'UnauthenticatedError', status: 401 });
    expect((await remove('deletes', target.id, bob)).data.deleteRedirect).toMatchObject({ __typename: 'ForbiddenError', status: 403 });
    expect((await remove('no-such-project', target.id)).data.deleteRedirect).toMatchObject({ __typename: 'NotFoundError', status: 404, model: 'Project' });
    const bad = await t.gql(DELETE, { project: 'deletes', id: 'one' }, alice);
    expect(bad.status).toBe(400);
    expect(bad.errors?.[0]?.message).toMatch(/\$id/);
    expect(await allRedirects()).toEqual(before);
  });
});
