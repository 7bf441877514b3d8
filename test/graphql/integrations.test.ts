// Incoming-webhook integrations through /graphql: the secret is shown once, by the mutation that
// creates it, and is stored encrypted (docs/design/settings.md, docs/design/read-the-docs.md §6).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cipher } from '../../src/secrets.ts';
import { type TestApp, testApp } from '../helpers/app.ts';

// The key test/helpers/app.ts builds the app with.
const cipher = new Cipher('test-secret-key-0123456789abcdef0123456789');

let t: TestApp;
let alice: string;
let bob: string;
const ids: Record<string, number> = {};

const ERRORS = `... on Error { code status message }
    ... on NotFoundError { model }
    ... on ValidationError { fieldErrors { field messages } }`;
const FIELDS = 'id provider createdAt webhookUrl project { slug }';

const CREATE = `mutation($project: String!, $provider: IntegrationProvider!) {
  createIntegration(project: $project, provider: $provider) {
    __typename ... on MutationCreateIntegrationSuccess { data { secret integration { ${FIELDS} } } } ${ERRORS}
  }
}`;
const DELETE = `mutation($project: String!, $id: Int!) {
  deleteIntegration(project: $project, id: $id) {
    __typename ... on MutationDeleteIntegrationSuccess { data { ${FIELDS} } } ${ERRORS}
  }
}`;
const LIST = `query($project: String!) { project(slug: $project) { integrations { ${FIELDS} } } }`;

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
const create = (project: string, provider: unknown, token: string | null = alice) => t.gql(CREATE, { project, provider }, token ?? undefined);
const remove = (project: string, id: number, token: string | null = alice) => t.gql(DELETE, { project, id }, token ?? undefined);

async function created(project: string, provider: string): Promise<{ secret: string; integration: { id: number; webhookUrl: string; createdAt: string } }> {
  const res = await create(project, provider);
  expect(res.data.createIntegration.__typename, JSON.stringify(res.data.createIntegration)).toBe('MutationCreateIntegrationSuccess');
  return res.data.createIntegration.data;
}

const allIntegrations = () => t.db.prisma.integration.findMany({ orderBy: { id: 'asc' } });

beforeAll(async () => {
  t = await testApp();
  alice = await t.user('alice');
  bob = await t.user('bob');
  for (const name of ['docs', 'other']) await importProject(alice, name);
  await importProject(bob, 'bobs');
});
afterAll(() => t.close());

describe('createIntegration', () => {
  it.each(['github', 'gitlab', 'bitbucket', 'generic'])('creates a %s integration with its webhook URL and a fresh secret', async (provider) => {
    const { secret, integration } = await created('docs', provider);
    expect(integration).toMatchObject({ provider, project: { slug: 'docs' }, webhookUrl: `http://lectern.test/api/v2/webhook/docs/${integration.id}/` });
    expect(secret).toMatch(/^[0-9a-f]{48}$/);
    const row = await t.db.prisma.integration.findUniqueOrThrow({ where: { id: integration.id } });
    expect(row).toMatchObject({ projectId: ids.docs, provider });
  });

  it('gives every integration its own secret', async () => {
    const secrets = new Set<string>();
    for (let i = 0; i < 4; i++) secrets.add((await created('other', 'github')).secret);
    expect(secrets.size).toBe(4);
  });

  describe('the secret', () => {
    it('is stored encrypted: the column does not hold it, and the instance key recovers it', async () => {
      const { secret, integration } = await created('docs', 'gitlab');
      const row = await t.db.prisma.integration.findUniqueOrThrow({ where: { id: integration.id } });
      expect(row.secretEncrypted).toEqual(expect.any(String));
      expect(row.secretEncrypted).not.toContain(secret);
      expect(row.secretEncrypted).not.toContain(Buffer.from(secret).toString('base64'));
      expect(cipher.decrypt(row.secretEncrypted!)).toBe(secret);
    });

    it('is never shown again: no Integration field holds it, and lists and deletes leave it out', async () => {
      const { secret, integration } = await created('docs', 'bitbucket');
      const type = await t.gql(`{ __type(name: "Integration") { fields { name } } }`, {}, alice);
      expect(type.data.__type.fields.map((f: { name: string }) => f.name).sort()).toEqual([
        'apiUrl',
        'createdAt',
        'hasToken',
        'id',
        'project',
        'provider',
        'webhookUrl',
      ]);
      const asked = await t.gql(`{ project(slug: "docs") { integrations { id secret } } }`, {}, alice);
      expect(asked.data).toBeUndefined();
      expect(asked.errors?.[0]?.message).toMatch(/^Cannot query field "secret" on type "Integration"/);

      const list = await t.gql(LIST, { project: 'docs' }, alice);
      expect(list.errors).toBeUndefined();
      expect(list.data.project.integrations.map((i: { id: number }) => i.id)).toContain(integration.id);
      expect(JSON.stringify(list)).not.toContain(secret);
      const del = await remove('docs', integration.id);
      expect(del.data.deleteIntegration.__typename).toBe('MutationDeleteIntegrationSuccess');
      expect(JSON.stringify(del)).not.toContain(secret);
    });
  });

  it('rejects an unknown or missing provider before running, naming it, and writes nothing', async () => {
    const before = await allIntegrations();
    for (const provider of ['svn', '', null, 42]) {
      const res = await create('docs', provider);
      expect(res.status).toBe(400);
      expect(res.data).toBeUndefined();
      expect(res.errors?.[0]?.message).toMatch(/\$provider/);
    }
    expect(await allIntegrations()).toEqual(before);
  });

  it('answers 401, 403 and 404 (project) and writes nothing', async () => {
    const before = await allIntegrations();
    expect((await create('docs', 'github', null)).data.createIntegration).toEqual({
      __typename: 'UnauthenticatedError',
      code: 'UNAUTHENTICATED',
      status: 401,
      message: 'Authentication credentials were not provided.',
    });
    expect((await create('docs', 'github', bob)).data.createIntegration).toEqual({
      __typename: 'ForbiddenError',
      code: 'FORBIDDEN',
      status: 403,
      message: 'You do not have permission to perform this action.',
    });
    expect((await create('no-such-project', 'github')).data.createIntegration).toEqual({
      __typename: 'NotFoundError',
      code: 'NOT_FOUND',
      status: 404,
      model: 'Project',
      message: 'No Project matches the given query.',
    });
    expect((await create('no-such-project', 'github', null)).data.createIntegration.__typename).toBe('UnauthenticatedError');
    expect(await allIntegrations()).toEqual(before);
  });
});

describe('deleteIntegration', () => {
  it('deletes the integration and answers with it as it was', async () => {
    const { integration } = await created('docs', 'generic');
    const res = await remove('docs', integration.id);
    expect(res.data.deleteIntegration).toEqual({
      __typename: 'MutationDeleteIntegrationSuccess',
      data: {
        id: integration.id,
        provider: 'generic',
        createdAt: integration.createdAt,
        webhookUrl: `http://lectern.test/api/v2/webhook/docs/${integration.id}/`,
        project: { slug: 'docs' },
      },
    });
    expect(await t.db.prisma.integration.findUnique({ where: { id: integration.id } })).toBeNull();
    const list = await t.gql(LIST, { project: 'docs' }, alice);
    expect(list.data.project.integrations.map((i: { id: number }) => i.id)).not.toContain(integration.id);
  });

  it("answers NotFoundError for an id the project does not have, even another project's, and deletes nothing", async () => {
    const elsewhere = await t.db.prisma.integration.findFirstOrThrow({ where: { projectId: ids.other } });
    const before = await allIntegrations();
    for (const id of [999_999, elsewhere.id]) {
      expect((await remove('docs', id)).data.deleteIntegration).toEqual({
        __typename: 'NotFoundError',
        code: 'NOT_FOUND',
        status: 404,
        model: 'Integration',
        message: 'No Integration matches the given query.',
      });
    }
    expect(await allIntegrations()).toEqual(before);
  });

  it('answers 401, 403 and 404 (project) and deletes nothing', async () => {
    const target = await t.db.prisma.integration.findFirstOrThrow({ where: { projectId: ids.docs } });
    const before = await allIntegrations();
    expect((await remove('docs', target.id, null)).data.deleteIntegration).toMatchObject({ __typename: 'UnauthenticatedError', status: 401 });
    expect((await remove('docs', target.id, bob)).data.deleteIntegration).toMatchObject({ __typename: 'ForbiddenError', status: 403 });
    expect((await remove('no-such-project', target.id)).data.deleteIntegration).toMatchObject({ __typename: 'NotFoundError', status: 404, model: 'Project' });
    expect(await allIntegrations()).toEqual(before);
  });
});
