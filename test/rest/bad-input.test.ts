// Hostile and clumsy input to REST v3: broken JSON, bodies and fields of the wrong type, huge
// bodies and query strings, ids that are not ids, odd slugs, bad paging. Every case answers a
// DRF-shaped 4xx (never 500), and none of them writes anything.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.ts';
import { type Caller, rowCounts, send, snapshot, worldApp } from './v3-calls.ts';

let t: TestApp;
const statuses: { what: string; status: number }[] = [];
const EXTRA_REDIRECTS = 11; // 12 with the world's, to page through

beforeAll(async () => {
  t = await worldApp({ LECTERN_MAX_BODY_BYTES: '65536' });
  for (let i = 0; i < EXTRA_REDIRECTS; i++) {
    await t.db.prisma.redirect.create({
      data: { projectId: 1, type: 'exact', fromUrl: `/en/latest/old-${i}.html`, toUrl: `/en/latest/new-${i}.html`, position: i + 1 },
    });
  }
});
afterAll(() => t.close());

/** Sends a request and checks that it wrote nothing and did not fail on the server. */
async function refused(method: string, path: string, body?: unknown, caller: Caller | string = 'me', contentType?: string) {
  const counts = await rowCounts(t);
  const before = await snapshot(t);
  let req = send(t, method, path, caller);
  if (body !== undefined) {
    req = req.set('content-type', contentType ?? 'application/json').send(typeof body === 'string' ? body : JSON.stringify(body));
  }
  const res = await req;
  statuses.push({ what: `${method} ${path}`, status: res.status });
  expect(res.status, `${method} ${path}: ${res.text.slice(0, 300)}`).toBeLessThan(500);
  expect(res.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
  expect(await rowCounts(t), `${method} ${path} wrote rows`).toEqual(counts);
  expect(await snapshot(t), `${method} ${path} changed rows`).toEqual(before);
  if (res.text) expect(res.headers['content-type']).toMatch(/^application\/json/);
  return res;
}

const WRITES: [string, string][] = [
  ['POST', '/projects/'],
  ['PATCH', '/projects/project/'],
  ['PUT', '/projects/project/'],
  ['PATCH', '/projects/project/versions/v1.0/'],
  ['POST', '/projects/project/subprojects/'],
  ['POST', '/projects/project/redirects/'],
  ['PUT', '/projects/project/redirects/1/'],
  ['PATCH', '/projects/project/redirects/1/'],
  ['POST', '/projects/project/environmentvariables/'],
];

describe('malformed JSON', () => {
  it.each(WRITES)('%s %s: 400 {"detail": "JSON parse error - …"}', async (method, path) => {
    for (const text of ['{"name": "x",', '{name: 1}', "{'a': 1}", '[1, 2', '{"a": 1}}', 'nul', '\u0000', '{"a": "\\x"}']) {
      const res = await refused(method, path, text);
      expect(res.status).toBe(400);
      expect(Object.keys(res.body)).toEqual(['detail']);
      expect(res.body.detail).toMatch(/^JSON parse error - ./);
    }
  });

  it('is read only after authentication and permission: 401 without a token, 403 for a non-maintainer', async () => {
    const anonymous = await refused('PATCH', '/projects/project/', '{"name":', 'anonymous');
    expect(anonymous.status).toBe(401);
    const other = await refused('PATCH', '/projects/project/', '{"name":', 'other');
    expect(other.status).toBe(403);
    const missing = await refused('PATCH', '/projects/no-such-project/', '{"name":', 'me');
    expect(missing.body).toEqual({ detail: 'No Project matches the given query.' });
  });

  it('is not read by a route that takes no body: the lookup answers first', async () => {
    const res = await refused('DELETE', '/projects/project/redirects/999/', '{"broken":');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'No Redirect matches the given query.' });
  });

  it('whatever the content type says', async () => {
    const res = await refused('POST', '/projects/project/redirects/', '{"from_url": ', 'me', 'text/plain');
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/^JSON parse error - /);
  });
});

describe('a body that is not an object', () => {
  it.each([
    ['[]', 'list'],
    ['[{"name": "x"}]', 'list'],
    ['"a string"', 'str'],
    ['42', 'int'],
    ['4.2', 'float'],
    ['true', 'bool'],
  ])('%s: 400 non_field_errors "…but got %s."', async (text, type) => {
    for (const [method, path] of WRITES) {
      const res = await refused(method, path, text);
      expect(res.status).toBe(400);
      expect(res.body, `${method} ${path}`).toEqual({ non_field_errors: [`Invalid data. Expected a dictionary, but got ${type}.`] });
    }
  });

  it('null: 400 "No data provided"', async () => {
    for (const [method, path] of WRITES) {
      const res = await refused(method, path, 'null');
      expect(res.body, `${method} ${path}`).toEqual({ non_field_errors: ['No data provided'] });
    }
  });
});

describe('fields of the wrong type', () => {
  const repository = { url: 'https://github.com/rtfd/typed', type: 'git' };

  it('name: true is "Not a valid string."', async () => {
    const res = await refused('POST', '/projects/', { name: true, repository });
    expect(res.body).toEqual({ name: ['Not a valid string.'] });
  });

  it.each([[['a']], [{ a: 1 }]])('name: %j is "Not a valid string."', async (name) => {
    expect((await refused('PATCH', '/projects/project/', { name })).body).toEqual({ name: ['Not a valid string.'] });
  });

  it('tags: "x" is "Expected a list of items…"', async () => {
    const res = await refused('POST', '/projects/', { name: 'Typed', repository, tags: 'x' });
    expect(res.body).toEqual({ tags: ['Expected a list of items but got type "str".'] });
  });

  it('repository: "x" is the nested serializer’s message', async () => {
    const res = await refused('POST', '/projects/', { name: 'Typed', repository: 'x' });
    expect(res.body).toEqual({ repository: { non_field_errors: ['Invalid data. Expected a dictionary, but got str.'] } });
  });

  it('several wrong fields are all reported at once', async () => {
    const res = await refused('POST', '/projects/', { name: false, repository: [], tags: { a: 1 }, privacy_level: 'secret' });
    expect(res.body).toEqual({
      name: ['Not a valid string.'],
      repository: { non_field_errors: ['Invalid data. Expected a dictionary, but got list.'] },
      tags: ['Expected a list of items but got type "dict".'],
      privacy_level: ['"secret" is not a valid choice.'],
    });
  });

  it('booleans, integers and choices', async () => {
    expect((await refused('PATCH', '/projects/project/versions/v1.0/', { active: 'maybe' })).body).toEqual({ active: ['Must be a valid boolean.'] });
    expect((await refused('PUT', '/projects/project/redirects/1/', { from_url: '/a/', to_url: '/b/', type: 'page', position: 'first' })).body).toEqual({
      position: ['A valid integer is required.'],
    });
    expect((await refused('POST', '/projects/project/redirects/', { from_url: '/a/', to_url: '/b/', type: 'nope' })).body).toEqual({
      type: ['"nope" is not a valid choice.'],
    });
    expect((await refused('POST', '/projects/project/redirects/', { from_url: '/a/', to_url: '/b/', type: 'page', position: 2 ** 40 })).body).toEqual({
      position: ['Ensure this value is less than or equal to 2147483647.'],
    });
  });

  it('NUL characters and lone surrogates in strings', async () => {
    expect((await refused('POST', '/projects/project/environmentvariables/', { name: 'NUL', value: 'a\u0000b' })).body).toEqual({
      value: ['Null characters are not allowed.'],
    });
    expect((await refused('PATCH', '/projects/project/', '{"name": "bad \\ud800 half"}')).body).toEqual({
      name: ['Surrogate characters are not allowed: U+D800.'],
    });
  });

  it.each([
    ['PATH', "Variable name can't be PATH (in any case): Lectern sets it for the build (it decides where programs and files are found)"],
    ['HOME', "Variable name can't be HOME (in any case): Lectern sets it for the build (it decides where programs and files are found)"],
    ['BASH_ENV', "Variable name can't start with BASH_ (in any case): the shell reads it (start-up code, options, how commands are split)"],
    ['ENV', "Variable name can't be ENV (in any case): the shell reads it (start-up code, options, how commands are split)"],
    [
      'LD_PRELOAD',
      "Variable name can't start with LD_ (in any case): the program loader or the C library reads it (it can load other code into every program)",
    ],
    ['GCONV_PATH', "Variable name can't be GCONV_PATH (in any case): the program loader or the C library reads it (it can load other code into every program)"],
    ['GIT_CONFIG_PARAMETERS', "Variable name can't start with GIT_ (in any case): git reads it (configuration, hooks and helper programs)"],
    ['PYTHONPATH', "Variable name can't start with PYTHON (in any case): Python reads it at start-up (module paths, start-up scripts)"],
    ['NODE_OPTIONS', "Variable name can't be NODE_OPTIONS (in any case): Node.js reads it at start-up"],
    ['PERL5OPT', "Variable name can't be PERL5OPT (in any case): Perl or Ruby reads it at start-up"],
    ['JAVA_TOOL_OPTIONS', "Variable name can't be JAVA_TOOL_OPTIONS (in any case): Java reads it at start-up"],
    ['OPENSSL_CONF', "Variable name can't be OPENSSL_CONF (in any case): it makes programs load or run other code"],
    ['XDG_CONFIG_HOME', "Variable name can't start with XDG_ (in any case): programs read their configuration from where it points"],
    ['https_proxy', "Variable name can't end with _PROXY (in any case): it would route the build's network traffic"],
    ['READTHEDOCS_OUTPUT', "Variable name can't start with READTHEDOCS"],
    ['LECTERN_DATA_DIR', "Variable name can't start with LECTERN (in any case): Lectern reserves these names"],
  ])('environment variable named %j: 400 naming the rule, nothing created', async (name, message) => {
    const res = await refused('POST', '/projects/project/environmentvariables/', { name, value: 'x' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ name: [message] });
  });

  it('a deeply nested value is refused without recursing into it', async () => {
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    const choice = await refused('POST', '/projects/project/redirects/', `{"from_url": "/a/", "to_url": "/b/", "type": ${deep}}`);
    expect(choice.status).toBe(400);
    expect(Object.keys(choice.body)).toEqual(['type']);
    const string = await refused('PATCH', '/projects/project/', `{"name": ${deep}}`);
    expect(string.body).toEqual({ name: ['Not a valid string.'] });
  });

  it('name: 42 is not a type error: DRF coerces it to "42" (the import is refused for another reason)', async () => {
    const res = await refused('POST', '/projects/', { name: 42 });
    expect(res.body.name).toBeUndefined();
    expect(res.body.repository).toBeDefined();
  });

  it('unknown fields are ignored, never reported', async () => {
    const res = await refused('POST', '/projects/project/redirects/', {
      from_url: '/a/',
      type: 'exact',
      id: 999,
      pk: 999,
      project: 'others-project',
      nonsense: [1],
    });
    expect(Object.keys(res.body).sort()).not.toContain('nonsense');
    for (const key of ['id', 'pk', 'project', 'nonsense']) expect(JSON.stringify(res.body)).not.toContain(`"${key}"`);
  });
});

describe('huge input', () => {
  const big = 'x'.repeat(2 * 1024 * 1024);

  it.each(WRITES)('%s %s: a 2 MB string is 413 with a DRF body', async (method, path) => {
    const res = await refused(method, path, { name: big, value: big, from_url: big });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ detail: 'Request body larger than 65536 bytes.' });
  });

  it('is refused after authentication: 401 without a token', async () => {
    const res = await refused('POST', '/projects/', { name: big }, 'anonymous');
    expect(res.status).toBe(401);
  });

  it('is refused on routes that take no body too', async () => {
    const res = await refused('DELETE', '/projects/project/redirects/999/', { junk: big });
    expect(res.status).toBe(413);
  });

  it('just under the limit: the field rules answer, not the server', async () => {
    const almost = 'y'.repeat(60_000);
    const field: Record<string, string> = {
      '/projects/': 'name',
      '/projects/project/': 'name',
      subprojects: 'child',
      redirects: 'from_url',
      environmentvariables: 'value',
    };
    for (const [method, path] of WRITES) {
      if (path.includes('/versions/')) continue; // nothing there takes a string
      const key = Object.entries(field).find(([k]) => path === k || path.includes(`/${k}/`))![1];
      const res = await refused(method, path, { name: 'NAME', to_url: '/b/', type: 'page', [key]: almost });
      expect(res.status, `${method} ${path}`).toBe(400);
    }
  });

  // How fast these are answered is test/bench/liveness.ts's to measure, beside a plain request.
  it('`expand=a.b.c.d.e` 1,000 times is read or refused, never an error', async () => {
    const repeated = Array(1000).fill('expand=a.b.c.d.e').join('&');
    const commas = `expand=${Array.from({ length: 1000 }, (_, i) => `a${i}.b.c.d.e`).join(',')}`;
    for (const query of [repeated, commas, `fields=${'f.'.repeat(3000)}z`]) {
      for (const path of ['/projects/', '/projects/project/', '/projects/project/builds/1/']) {
        const res = await send(t, 'GET', `${path}?${query}`, 'me');
        statuses.push({ what: `GET ${path}?${query.slice(0, 40)}…`, status: res.status });
        expect(res.status, path).toBeLessThan(500);
        // Either read (200; unknown names are ignored) or refused as too long by the HTTP server.
        expect([200, 400, 414, 431], path).toContain(res.status);
      }
    }
  });

  it('`expand=a.b.c.d.e` 500 times (within the HTTP server’s header limit) is read: 200', async () => {
    const res = await send(t, 'GET', `/projects/project/?${Array(500).fill('expand=a.b.c.d.e').join('&')}&${Array(300).fill('fields=x.y.z').join('&')}`, 'me');
    statuses.push({ what: 'expand x500', status: res.status });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
  });

  it('a recursive expansion is 400 ["Recursive expansion found"]', async () => {
    for (const query of ['expand=active_versions.active_versions', 'fields=a.b.a', 'omit=x.x']) {
      const res = await send(t, 'GET', `/projects/project/?${query}`, 'me');
      statuses.push({ what: query, status: res.status });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(['Recursive expansion found']);
    }
  });
});

describe('ids and slugs that cannot match', () => {
  it.each(['abc', '1.5', '-1', '1e3', '0x1', '99999999999999999999', '%20', ''])('build id %j: 404', async (id) => {
    const res = await send(t, 'GET', `/projects/project/builds/${id}/`, 'me');
    statuses.push({ what: `build ${id}`, status: res.status });
    if (id === '') {
      // `/builds//` is no route at all.
      expect(res.status).toBe(404);
      return;
    }
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'Not found.' });
  });

  it.each([
    ['GET', '/projects/project/redirects/abc/'],
    ['PUT', '/projects/project/redirects/1.0/'],
    ['PATCH', '/projects/project/redirects/one/'],
    ['DELETE', '/projects/project/redirects/-1/'],
    ['GET', '/projects/project/environmentvariables/x/'],
    ['DELETE', '/projects/project/environmentvariables/1e0/'],
    ['GET', '/projects/project/versions/v1.0/builds/NaN/'],
  ])('%s %s: 404 {"detail": "Not found."}', async (method, path) => {
    const res = await refused(method, path, method === 'PUT' || method === 'PATCH' ? { from_url: '/a/', to_url: '/b/', type: 'page' } : undefined);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'Not found.' });
  });

  it.each([
    '/projects/%C3%A9t%C3%A9/',
    '/projects/%E6%97%A5%E6%9C%AC%E8%AA%9E/',
    '/projects/%F0%9F%93%9A/',
    '/projects/project%2Fversions/',
    '/projects/%2E%2E/',
    '/projects/%E0%A4%A/',
    '/projects/%ZZ/',
    '/projects/project/versions/v1.0%2F..%2F..%2F/',
    '/projects/project/versions/%C3%A9/',
    '/projects/project/subprojects/sub%2Fproject/',
    '/projects/project/versions/v1.0/builds/1%2F/',
    `/projects/${'a'.repeat(5000)}/`,
  ])('GET %s: 404 JSON, not 500', async (path) => {
    const res = await send(t, 'GET', path, 'me');
    statuses.push({ what: path, status: res.status });
    expect(res.status, res.text).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(Object.keys(res.body)).toEqual(['detail']);
  });

  it.each([
    ['PATCH', '/projects/%C3%A9t%C3%A9/', { name: 'x' }],
    ['POST', '/projects/%E6%97%A5/redirects/', { from_url: '/a/', to_url: '/b/', type: 'page' }],
    ['DELETE', '/projects/project/subprojects/sub%2Fproject/', undefined],
    ['PATCH', '/projects/project/versions/v1.0%2F/', { active: false }],
    ['POST', '/projects/project/versions/no-such-version/builds/', undefined],
  ])('%s %s: 404, nothing written', async (method, path, body) => {
    const res = await refused(method, path, body);
    expect(res.status).toBe(404);
  });

  // A NUL in a path segment was a 404 (no slug holds one); since issue 21 every REST route refuses
  // it as it enters, wherever it is, with a 400 (test/security/input.test.ts walks every route).
  it.each([
    ['GET', '/projects/%00/', undefined],
    ['GET', '/projects/pro%00ject/', undefined],
    ['GET', '/projects/project/versions/%00/', undefined],
    ['GET', '/projects/project/subprojects/%00/', undefined],
    ['GET', '/projects/project/builds/1%00/', undefined],
    ['PATCH', '/projects/%00/', { name: 'x' }],
    ['DELETE', '/projects/project/subprojects/%00/', undefined],
    ['POST', '/projects/project/versions/%00/builds/', undefined],
  ])('%s %s: a NUL in the path is 400, nothing written', async (method, path, body) => {
    const res = await refused(method, path, body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ detail: 'The path holds U+0000: Null characters are not allowed.' });
  });

  it('filters with a NUL or an unknown choice are 400, not 500', async () => {
    for (const [path, key] of [
      ['/projects/?slug=%00', 'slug'],
      ['/projects/?name=a%00b', 'name'],
      ['/projects/project/versions/?slug=%00', 'slug'],
      ['/projects/project/builds/?commit=%00', 'commit'],
      ['/projects/?language=xx-nope', 'language'],
    ] as const) {
      const res = await send(t, 'GET', path, 'me');
      statuses.push({ what: path, status: res.status });
      expect(res.status, path).toBe(400);
      expect(Object.keys(res.body), path).toEqual([key]);
    }
  });

  it('filters with odd but harmless values are read or ignored', async () => {
    for (const path of [
      '/projects/?slug=%C3%A9',
      '/projects/?name=%25',
      '/projects/?name=_',
      '/projects/?name[]=x',
      '/projects/?slug=a&slug=b',
      '/projects/project/versions/?active=maybe',
      '/projects/project/builds/?running=',
      `/projects/?name=${'n'.repeat(4000)}`,
    ]) {
      const res = await send(t, 'GET', path, 'me');
      statuses.push({ what: path, status: res.status });
      expect(res.status, `${path}: ${res.text}`).toBe(200);
    }
  });
});

describe('paging', () => {
  const URL = 'http://lectern.test/api/v3/projects/project/redirects/';
  const page = async (query: string) => {
    const res = await send(t, 'GET', `/projects/project/redirects/${query}`, 'me');
    statuses.push({ what: `redirects ${query}`, status: res.status });
    expect(res.status, query).toBe(200);
    return res.body;
  };

  it('the world has 12 redirects to page through', async () => {
    expect((await page('')).count).toBe(EXTRA_REDIRECTS + 1);
  });

  it.each(['0', '-1', '-0', 'abc', '1e9', '1.5', '', '%20', '0x10', '%E2%91%A4'])('limit=%j falls back to the default of 10', async (limit) => {
    const body = await page(`?limit=${limit}`);
    expect(body.results).toHaveLength(10);
    expect(body.next).toBe(`${URL}?limit=10&offset=10`);
    expect(body.previous).toBeNull();
  });

  it.each(['-1', 'abc', '1e9', '2.5', '', '-0'])('offset=%j falls back to 0', async (offset) => {
    const body = await page(`?limit=5&offset=${offset}`);
    expect(body.results.map((r: { pk: number }) => r.pk)).toEqual((await page('?limit=5')).results.map((r: { pk: number }) => r.pk));
    expect(body.previous).toBeNull();
  });

  it('a huge limit is cut to LECTERN_API_MAX_LIMIT; a huge offset is an empty page', async () => {
    const all = await page('?limit=1000000000');
    expect(all.results).toHaveLength(EXTRA_REDIRECTS + 1);
    expect(all.next).toBeNull();
    const beyond = await page('?offset=1000000000');
    expect(beyond).toMatchObject({ count: EXTRA_REDIRECTS + 1, next: null, results: [] });
    expect(beyond.previous).toBe(`${URL}?limit=10&offset=999999990`);
    for (const offset of ['5000000000', '9'.repeat(40)]) {
      const overflow = await page(`?offset=${offset}&limit=${'9'.repeat(40)}`);
      expect(overflow).toMatchObject({ count: EXTRA_REDIRECTS + 1, next: null, results: [] });
    }
  });

  it('spaces around a number and a plus sign are allowed, as Python’s int() allows them', async () => {
    expect((await page('?limit=%2B3')).results).toHaveLength(3);
    expect((await page('?limit=+4+')).results).toHaveLength(4); // `+` in a query string is a space
    expect((await page('?limit=%205%20&offset=%2B1')).results.map((r: { pk: number }) => r.pk)).toEqual(
      (await page('?limit=6')).results.slice(1).map((r: { pk: number }) => r.pk),
    );
  });

  it('repeated limit/offset: the last value counts, as Django’s QueryDict answers', async () => {
    const body = await page('?limit=50&limit=3&offset=0&offset=3');
    expect(body.results).toHaveLength(3);
    expect(body.previous).toBe(`${URL}?limit=3`);
    expect(body.next).toBe(`${URL}?limit=3&offset=6`);
  });

  it('repeated filters: the last value counts too', async () => {
    const res = await send(t, 'GET', '/projects/?slug=nothing-like-it&slug=sub', 'me');
    expect(res.body.results.map((p: { slug: string }) => p.slug)).toEqual(['subproject']);
    const versions = await send(t, 'GET', '/projects/project/versions/?built=true&built=false', 'me');
    expect(versions.body.results.map((v: { slug: string }) => v.slug)).toEqual(['latest']);
  });
});

describe('nothing above', () => {
  it('was answered with a server error', () => {
    expect(statuses.length).toBeGreaterThan(50);
    expect(statuses.filter((s) => s.status >= 500)).toEqual([]);
  });

  it('a valid write still works afterwards, coercing name: 42 to "42" and ignoring unknown fields', async () => {
    const patched = await send(t, 'PATCH', '/projects/project/', 'me', { name: 42, slug: 'renamed', id: 77, unknown: true });
    expect(patched.status).toBe(204);
    const project = await t.db.prisma.project.findUnique({ where: { id: 1 } });
    expect(project).toMatchObject({ name: '42', slug: 'project' });
    const created = await send(t, 'POST', '/projects/project/redirects/', 'me', {
      from_url: '/x/',
      to_url: '/y/',
      type: 'page',
      pk: 999,
      project: 'others-project',
      created: '2000-01-01T00:00:00Z',
    });
    expect(created.status).toBe(201);
    expect(created.body.pk).not.toBe(999);
    expect(created.body.project).toBe('project');
    expect(created.body.created).not.toBe('2000-01-01T00:00:00Z');
  });
});
