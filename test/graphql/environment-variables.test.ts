// Build environment variables through /graphql: the value goes in and never comes out, is stored
// encrypted, and is bounded per variable and per project (docs/design/read-the-docs.md §4.8); names must be
// something a build's shell can export.
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
const FIELDS = 'id name public createdAt modifiedAt project { slug }';

const CREATE = `mutation($project: String!, $input: EnvironmentVariableInput!) {
  createEnvironmentVariable(project: $project, input: $input) {
    __typename ... on MutationCreateEnvironmentVariableSuccess { data { ${FIELDS} } } ${ERRORS}
  }
}`;
const DELETE = `mutation($project: String!, $id: Int!) {
  deleteEnvironmentVariable(project: $project, id: $id) {
    __typename ... on MutationDeleteEnvironmentVariableSuccess { data { ${FIELDS} } } ${ERRORS}
  }
}`;
const LIST = `query($project: String!) { project(slug: $project) { environmentVariables(limit: 100) { totalCount nodes { ${FIELDS} } } } }`;

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
const remove = (project: string, id: number, token: string | null = alice) => t.gql(DELETE, { project, id }, token ?? undefined);

async function created(project: string, input: Input) {
  const res = await create(project, input);
  expect(res.data.createEnvironmentVariable.__typename, JSON.stringify(res.data.createEnvironmentVariable)).toBe('MutationCreateEnvironmentVariableSuccess');
  return res.data.createEnvironmentVariable.data;
}

const allVariables = () => t.db.prisma.environmentVariable.findMany({ orderBy: { id: 'asc' } });

/** The field errors of a refused create, after checking it wrote nothing. */
async function refused(project: string, input: Input) {
  const before = await allVariables();
  const res = await create(project, input);
  expect(res.data.createEnvironmentVariable).toMatchObject({ __typename: 'ValidationError', code: 'VALIDATION', status: 400 });
  expect(await allVariables()).toEqual(before);
  return res.data.createEnvironmentVariable.fieldErrors;
}

const nameError = (message: string) => [{ field: 'name', messages: [message] }];
const TOTAL = [{ field: 'nonFieldErrors', messages: ['The total size of all environment variables in the project cannot exceed 256 KB.'] }];

beforeAll(async () => {
  t = await testApp();
  alice = await t.user('alice');
  bob = await t.user('bob');
  for (const name of ['docs', 'other', 'sizes', 'quoted', 'race']) await importProject(alice, name);
  await importProject(bob, 'bobs');
});
afterAll(() => t.close());

describe('createEnvironmentVariable', () => {
  it('creates the variable and answers without its value; public defaults to false', async () => {
    const v = await created('docs', { name: 'API_TOKEN', value: 's3cr3t-value-1' });
    expect(v).toMatchObject({ name: 'API_TOKEN', public: false, project: { slug: 'docs' } });
    expect(Object.keys(v).sort()).toEqual(['createdAt', 'id', 'modifiedAt', 'name', 'project', 'public']);
    const pub = await created('docs', { name: 'PUBLIC_FLAG', value: 'yes', public: true });
    expect(pub.public).toBe(true);
    const list = await t.gql(LIST, { project: 'docs' }, alice);
    expect(list.data.project.environmentVariables.nodes.map((n: { name: string; public: boolean }) => [n.name, n.public])).toEqual([
      ['API_TOKEN', false],
      ['PUBLIC_FLAG', true],
    ]);
  });

  describe('the value', () => {
    it('cannot be asked for: no field of any type exposes it', async () => {
      const res = await t.gql(`{ __type(name: "EnvironmentVariable") { fields { name } } }`, {}, alice);
      expect(res.data.__type.fields.map((f: { name: string }) => f.name).sort()).toEqual(['createdAt', 'id', 'modifiedAt', 'name', 'project', 'public']);
      const schema = await t.gql(`{ __schema { types { name fields { name } } } }`, {}, alice);
      const suspicious = schema.data.__schema.types
        .filter((ty: { name: string }) => !ty.name.startsWith('__'))
        .flatMap((ty: { name: string; fields: { name: string }[] | null }) =>
          (ty.fields ?? []).filter((f) => /value|encrypt|secret/i.test(f.name)).map((f) => `${ty.name}.${f.name}`),
        );
      // An integration's and an outgoing webhook's secrets are shown once, by the write that sets them; nothing else.
      expect(suspicious).toEqual(['CreatedIntegration.secret', 'WrittenWebhook.secret']);
      const asked = await t.gql(`{ project(slug: "docs") { environmentVariables { nodes { name value } } } }`, {}, alice);
      expect(asked.data).toBeUndefined();
      expect(asked.errors?.[0]?.message).toMatch(/^Cannot query field "value" on type "EnvironmentVariable"\./);
    });

    it('appears in no answer about the variable or its project', async () => {
      const secret = 'do-not-show-me-7f3a9';
      const v = await created('docs', { name: 'HIDDEN', value: secret });
      const answers = [
        await t.gql(LIST, { project: 'docs' }, alice),
        await t.gql(`query($id: Int!) { project(slug: "docs") { environmentVariable(id: $id) { ${FIELDS} } } }`, { id: v.id }, alice),
        await t.gql(`{ project(slug: "docs") { id slug name description builds { nodes { id config error } } versions { nodes { slug } } } }`, {}, alice),
      ];
      for (const a of answers) {
        expect(a.errors).toBeUndefined();
        expect(JSON.stringify(a)).not.toContain(secret);
      }
      const del = await remove('docs', v.id);
      expect(del.data.deleteEnvironmentVariable.data.name).toBe('HIDDEN');
      expect(JSON.stringify(del)).not.toContain(secret);
    });

    it('is stored encrypted: the column does not hold it, and the instance key recovers it', async () => {
      const value = 'plain text "with" spaces & $SHELL chars';
      const a = await created('docs', { name: 'STORED_A', value });
      const b = await created('docs', { name: 'STORED_B', value });
      const rows = await t.db.prisma.environmentVariable.findMany({ where: { id: { in: [a.id, b.id] } }, orderBy: { id: 'asc' } });
      for (const row of rows) {
        expect(row.valueEncrypted).not.toContain(value);
        expect(row.valueEncrypted).not.toContain('spaces');
        expect(row.valueEncrypted).not.toContain(Buffer.from(value).toString('base64'));
        expect(cipher.decrypt(row.valueEncrypted)).toBe(value);
      }
      // The same value encrypts differently each time, so equal secrets cannot be spotted.
      expect(rows[0]!.valueEncrypted).not.toBe(rows[1]!.valueEncrypted);
      // Nothing else in the database holds it either.
      const dump = JSON.stringify(
        await t.db.prisma.project.findUniqueOrThrow({ where: { id: ids.docs }, include: { environmentVariables: true, builds: true, versions: true } }),
      );
      expect(dump).not.toContain(value);
    });

    it('is required, and may not be blank', async () => {
      expect(await refused('docs', { name: 'NO_VALUE' })).toEqual([{ field: 'value', messages: ['This field is required.'] }]);
      expect(await refused('docs', { name: 'NO_VALUE', value: null })).toEqual([{ field: 'value', messages: ['This field is required.'] }]);
      expect(await refused('docs', { name: 'NO_VALUE', value: '' })).toEqual([{ field: 'value', messages: ['This field may not be blank.'] }]);
      expect(await refused('docs', { name: 'NO_VALUE', value: '   ' })).toEqual([{ field: 'value', messages: ['This field may not be blank.'] }]);
    });

    it('may be 48000 characters, not one more', async () => {
      expect(await refused('other', { name: 'TOO_LONG', value: 'x'.repeat(48_001) })).toEqual([
        { field: 'value', messages: ['Ensure this field has no more than 48000 characters.'] },
      ]);
      const v = await created('other', { name: 'LONGEST', value: 'x'.repeat(48_000) });
      const row = await t.db.prisma.environmentVariable.findUniqueOrThrow({ where: { id: v.id } });
      expect(cipher.decrypt(row.valueEncrypted)).toBe('x'.repeat(48_000));
    });
  });

  describe('the 256 KB total per project', () => {
    it('allows exactly 256000 characters of values and refuses more', async () => {
      for (let i = 0; i < 5; i++) await created('sizes', { name: `BIG_${i}`, value: 'v'.repeat(48_000) });
      expect(await refused('sizes', { name: 'OVER', value: 'v'.repeat(16_001) })).toEqual(TOTAL);
      await created('sizes', { name: 'FILL', value: 'v'.repeat(16_000) });
      expect(await refused('sizes', { name: 'ONE_MORE', value: 'v' })).toEqual(TOTAL);
      // The limit is per project.
      expect(await created('other', { name: 'ELSEWHERE', value: 'v'.repeat(16_000) })).toMatchObject({ project: { slug: 'other' } });
    });

    it('counts values in their shell-quoted form, as a build exports them', async () => {
      for (let i = 0; i < 5; i++) await created('quoted', { name: `BIG_${i}`, value: 'q'.repeat(48_000) });
      await created('quoted', { name: 'MOST', value: 'q'.repeat(15_995) });
      // 5 characters, 7 once quoted: 'a b c'.
      expect(await refused('quoted', { name: 'SPACED', value: 'a b c' })).toEqual(TOTAL);
      await created('quoted', { name: 'PLAIN', value: 'abcde' });
      expect(await t.db.prisma.environmentVariable.count({ where: { projectId: ids.quoted } })).toBe(7);
    });

    it('frees room when a variable is deleted', async () => {
      const big = await t.db.prisma.environmentVariable.findFirstOrThrow({ where: { projectId: ids.sizes, name: 'BIG_0' } });
      await remove('sizes', big.id);
      expect(await created('sizes', { name: 'BIG_AGAIN', value: 'v'.repeat(48_000) })).toMatchObject({ name: 'BIG_AGAIN' });
    });
  });

  describe('names', () => {
    it.each([
      [undefined, 'This field is required.'],
      [null, 'This field is required.'],
      ['', 'This field may not be blank.'],
      ['   ', 'This field may not be blank.'],
      ['N'.repeat(129), 'Ensure this field has no more than 128 characters.'],
      ['__DUNDER', "Variable name can't start with __ (double underscore)"],
      ['READTHEDOCS_VERSION', "Variable name can't start with READTHEDOCS"],
      ['readthedocs_lower', "Variable name can't start with READTHEDOCS"],
      ['HAS SPACE', 'Only letters, numbers and underscore are allowed'],
      ['DASH-NAME', 'Only letters, numbers and underscore are allowed'],
      ['DOT.NAME', 'Only letters, numbers and underscore are allowed'],
      ['ÜMLAUT', 'Only letters, numbers and underscore are allowed'],
      ['SEMI;rm', 'Only letters, numbers and underscore are allowed'],
    ])('refuses %j: %s', async (name, message) => {
      const input: Input = { value: 'v' };
      if (name !== undefined) input.name = name;
      expect(await refused('docs', input)).toEqual(nameError(message));
    });

    it.each(['A', 'lower_case', '_SINGLE_LEADING', 'X1_2_3', 'N'.repeat(128), 'MY_READTHEDOCS'])('accepts %j', async (name) => {
      expect(await created('other', { name, value: 'v' })).toMatchObject({ name });
    });

    // Names that change how the build's programs load or run (or route its traffic): each family
    // once, in the case a project might write it, with the rule named.
    const LECTERN_SETS = 'Lectern sets it for the build (it decides where programs and files are found)';
    const SHELL = 'the shell reads it (start-up code, options, how commands are split)';
    const LOADER = 'the program loader or the C library reads it (it can load other code into every program)';
    const PROXY = "it would route the build's network traffic";
    it.each([
      ['PATH', `Variable name can't be PATH (in any case): ${LECTERN_SETS}`],
      ['path', `Variable name can't be PATH (in any case): ${LECTERN_SETS}`],
      ['HOME', `Variable name can't be HOME (in any case): ${LECTERN_SETS}`],
      ['TMPDIR', `Variable name can't be TMPDIR (in any case): ${LECTERN_SETS}`],
      ['SHELL', `Variable name can't be SHELL (in any case): ${SHELL}`],
      ['IFS', `Variable name can't be IFS (in any case): ${SHELL}`],
      ['ENV', `Variable name can't be ENV (in any case): ${SHELL}`],
      ['BASH_ENV', `Variable name can't start with BASH_ (in any case): ${SHELL}`],
      ['BASH_FUNC_ls', `Variable name can't start with BASH_ (in any case): ${SHELL}`],
      ['LD_PRELOAD', `Variable name can't start with LD_ (in any case): ${LOADER}`],
      ['ld_library_path', `Variable name can't start with LD_ (in any case): ${LOADER}`],
      ['GCONV_PATH', `Variable name can't be GCONV_PATH (in any case): ${LOADER}`],
      ['GLIBC_TUNABLES', `Variable name can't be GLIBC_TUNABLES (in any case): ${LOADER}`],
      ['HOSTALIASES', `Variable name can't be HOSTALIASES (in any case): ${LOADER}`],
      ['LOCPATH', `Variable name can't be LOCPATH (in any case): ${LOADER}`],
      ['MALLOC_CHECK_', `Variable name can't start with MALLOC_ (in any case): ${LOADER}`],
      ['TZDIR', `Variable name can't be TZDIR (in any case): ${LOADER}`],
      ['GIT_CONFIG_COUNT', "Variable name can't start with GIT_ (in any case): git reads it (configuration, hooks and helper programs)"],
      ['GIT_SSH_COMMAND', "Variable name can't start with GIT_ (in any case): git reads it (configuration, hooks and helper programs)"],
      ['PYTHONPATH', "Variable name can't start with PYTHON (in any case): Python reads it at start-up (module paths, start-up scripts)"],
      ['PYTHONSTARTUP', "Variable name can't start with PYTHON (in any case): Python reads it at start-up (module paths, start-up scripts)"],
      ['PYTHONHOME', "Variable name can't start with PYTHON (in any case): Python reads it at start-up (module paths, start-up scripts)"],
      ['NODE_OPTIONS', "Variable name can't be NODE_OPTIONS (in any case): Node.js reads it at start-up"],
      ['NODE_PATH', "Variable name can't be NODE_PATH (in any case): Node.js reads it at start-up"],
      ['PERL5LIB', "Variable name can't be PERL5LIB (in any case): Perl or Ruby reads it at start-up"],
      ['PERL5OPT', "Variable name can't be PERL5OPT (in any case): Perl or Ruby reads it at start-up"],
      ['RUBYOPT', "Variable name can't be RUBYOPT (in any case): Perl or Ruby reads it at start-up"],
      ['RUBYLIB', "Variable name can't be RUBYLIB (in any case): Perl or Ruby reads it at start-up"],
      ['JAVA_TOOL_OPTIONS', "Variable name can't be JAVA_TOOL_OPTIONS (in any case): Java reads it at start-up"],
      ['_JAVA_OPTIONS', "Variable name can't be _JAVA_OPTIONS (in any case): Java reads it at start-up"],
      ['OPENSSL_CONF', "Variable name can't be OPENSSL_CONF (in any case): it makes programs load or run other code"],
      ['XDG_CONFIG_HOME', "Variable name can't start with XDG_ (in any case): programs read their configuration from where it points"],
      ['http_proxy', `Variable name can't end with _PROXY (in any case): ${PROXY}`],
      ['HTTPS_PROXY', `Variable name can't end with _PROXY (in any case): ${PROXY}`],
      ['All_Proxy', `Variable name can't end with _PROXY (in any case): ${PROXY}`],
      ['no_proxy', `Variable name can't be NO_PROXY (in any case): ${PROXY}`],
      ['LECTERN_SECRET_KEY', "Variable name can't start with LECTERN (in any case): Lectern reserves these names"],
    ])('refuses %j, naming the rule, and creates nothing', async (name, message) => {
      expect(await refused('docs', { name, value: 'v' })).toEqual(nameError(message));
    });

    it.each(['PIP_INDEX_URL', 'PIP_EXTRA_INDEX_URL', 'LANG', 'LC_ALL', 'TZ', 'SSL_CERT_FILE', 'GITHUB_TOKEN', 'MY_PATH', 'SPHINX_THEME'])(
      'accepts %j: it changes what a build does, not how its programs load',
      async (name) => {
        expect(await created('other', { name, value: 'v' })).toMatchObject({ name });
      },
    );

    it('refuses a name the project already has, but not one another project has', async () => {
      expect(await refused('docs', { name: 'API_TOKEN', value: 'again' })).toEqual(nameError('There is already a variable with this name for this project'));
      expect(await created('other', { name: 'API_TOKEN', value: 'again' })).toMatchObject({ name: 'API_TOKEN', project: { slug: 'other' } });
    });

    it('lists a bad name and a bad value together', async () => {
      expect(await refused('docs', { name: 'BAD NAME', value: 'x'.repeat(48_001) })).toEqual([
        { field: 'name', messages: ['Only letters, numbers and underscore are allowed'] },
        { field: 'value', messages: ['Ensure this field has no more than 48000 characters.'] },
      ]);
    });
  });

  describe('at once', () => {
    it('of two variables with the same name created together, one is kept', async () => {
      const results = await Promise.all(Array.from({ length: 4 }, (_, i) => create('race', { name: 'SAME', value: `v${i}` })));
      const kinds = results.map((r) => r.data.createEnvironmentVariable.__typename);
      expect(kinds.filter((k) => k === 'MutationCreateEnvironmentVariableSuccess')).toHaveLength(1);
      for (const r of results.filter((x) => x.data.createEnvironmentVariable.__typename === 'ValidationError')) {
        expect(r.data.createEnvironmentVariable.fieldErrors).toEqual(nameError('There is already a variable with this name for this project'));
      }
      expect(await t.db.prisma.environmentVariable.count({ where: { projectId: ids.race, name: 'SAME' } })).toBe(1);
    });

    it('the total holds when the last room is claimed by several at once', async () => {
      for (let i = 0; i < 5; i++) await created('race', { name: `BIG_${i}`, value: 'r'.repeat(48_000) });
      // 240002 used, 15998 left: one of these fits, not two.
      const results = await Promise.all(Array.from({ length: 4 }, (_, i) => create('race', { name: `LAST_${i}`, value: 'r'.repeat(10_000) })));
      expect(results.filter((r) => r.data.createEnvironmentVariable.__typename === 'MutationCreateEnvironmentVariableSuccess')).toHaveLength(1);
      const rows = await t.db.prisma.environmentVariable.findMany({ where: { projectId: ids.race } });
      expect(rows.reduce((sum, r) => sum + cipher.decrypt(r.valueEncrypted).length, 0)).toBeLessThanOrEqual(256_000);
    });
  });

  it('rejects a wrong type in the input before running, naming the field, and writes nothing', async () => {
    const before = await allVariables();
    const res = await create('docs', { name: 'TYPED', value: 42 });
    expect(res.status).toBe(400);
    expect(res.errors?.[0]?.message).toMatch(/input\.value/);
    expect(await allVariables()).toEqual(before);
  });

  it('answers 401, 403 and 404 (project) before looking at the input, and writes nothing', async () => {
    const before = await allVariables();
    const input = { name: 'STOLEN', value: 'x' };
    expect((await create('docs', input, null)).data.createEnvironmentVariable).toMatchObject({
      __typename: 'UnauthenticatedError',
      code: 'UNAUTHENTICATED',
      status: 401,
      message: 'Authentication credentials were not provided.',
    });
    expect((await create('docs', input, bob)).data.createEnvironmentVariable).toMatchObject({
      __typename: 'ForbiddenError',
      code: 'FORBIDDEN',
      status: 403,
      message: 'You do not have permission to perform this action.',
    });
    expect((await create('docs', { name: '__bad' }, bob)).data.createEnvironmentVariable.__typename).toBe('ForbiddenError');
    expect((await create('no-such-project', input)).data.createEnvironmentVariable).toMatchObject({
      __typename: 'NotFoundError',
      code: 'NOT_FOUND',
      status: 404,
      model: 'Project',
      message: 'No Project matches the given query.',
    });
    expect(await allVariables()).toEqual(before);
  });
});

describe('deleteEnvironmentVariable', () => {
  it('deletes the variable and answers with it as it was, without its value', async () => {
    const v = await created('docs', { name: 'GOING', value: 'bye-bye-value' });
    const res = await remove('docs', v.id);
    expect(res.data.deleteEnvironmentVariable).toEqual({
      __typename: 'MutationDeleteEnvironmentVariableSuccess',
      data: { id: v.id, name: 'GOING', public: false, createdAt: v.createdAt, modifiedAt: v.modifiedAt, project: { slug: 'docs' } },
    });
    expect(await t.db.prisma.environmentVariable.findUnique({ where: { id: v.id } })).toBeNull();
    const list = await t.gql(LIST, { project: 'docs' }, alice);
    expect(list.data.project.environmentVariables.nodes.map((n: { name: string }) => n.name)).not.toContain('GOING');
    // The name is free again.
    expect(await created('docs', { name: 'GOING', value: 'back' })).toMatchObject({ name: 'GOING' });
  });

  it('of two deletes of the same variable at once, one removes it and the other finds nothing', async () => {
    const v = await created('docs', { name: 'TWICE', value: 'x' });
    const results = await Promise.all([remove('docs', v.id), remove('docs', v.id)]);
    expect(results.map((r) => r.data.deleteEnvironmentVariable.__typename).sort()).toEqual(['MutationDeleteEnvironmentVariableSuccess', 'NotFoundError']);
    expect(await t.db.prisma.environmentVariable.count({ where: { id: v.id } })).toBe(0);
  });

  it("answers NotFoundError for an id the project does not have, even another project's, and deletes nothing", async () => {
    const elsewhere = await t.db.prisma.environmentVariable.findFirstOrThrow({ where: { projectId: ids.other } });
    const before = await allVariables();
    for (const id of [999_999, elsewhere.id]) {
      expect((await remove('docs', id)).data.deleteEnvironmentVariable).toEqual({
        __typename: 'NotFoundError',
        code: 'NOT_FOUND',
        status: 404,
        model: 'EnvironmentVariable',
        message: 'No EnvironmentVariable matches the given query.',
      });
    }
    expect(await allVariables()).toEqual(before);
  });

  it('answers 401, 403 and 404 (project) and deletes nothing', async () => {
    const target = await t.db.prisma.environmentVariable.findFirstOrThrow({ where: { projectId: ids.docs } });
    const before = await allVariables();
    expect((await remove('docs', target.id, null)).data.deleteEnvironmentVariable).toMatchObject({ __typename: 'UnauthenticatedError', status: 401 });
    expect((await remove('docs', target.id, bob)).data.deleteEnvironmentVariable).toMatchObject({ __typename: 'ForbiddenError', status: 403 });
    expect((await remove('no-such-project', target.id)).data.deleteEnvironmentVariable).toMatchObject({
      __typename: 'NotFoundError',
      status: 404,
      model: 'Project',
    });
    const bad = await t.gql(DELETE, { project: 'docs' }, alice);
    expect(bad.status).toBe(400);
    expect(bad.errors?.[0]?.message).toMatch(/\$id/);
    expect(await allVariables()).toEqual(before);
  });
});
