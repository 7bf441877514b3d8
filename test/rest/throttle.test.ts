// Rate limits on REST v3 and the order in which a request is checked (docs/design/read-the-docs.md §1.3,
// §2.3; docs/design/rest-api.md): authentication, permission, throttle, method, lookup, validation.
// Over the rate: 429 {"detail": "Request was throttled. Expected available in N seconds."} with
// Retry-After. Requests refused before the throttle (401, 403, a parent's 404) are not counted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.ts';
import { type Caller, send, worldApp } from './v3-calls.ts';

const THROTTLED = /^Request was throttled\. Expected available in (\d+) seconds?\.$/;

async function expectThrottled(res: { status: number; body: { detail?: string }; headers: Record<string, string> }, max = 60) {
  expect(res.status, JSON.stringify(res.body)).toBe(429);
  expect(Object.keys(res.body)).toEqual(['detail']);
  const m = THROTTLED.exec(res.body.detail ?? '');
  expect(m, res.body.detail).not.toBeNull();
  const n = Number(m![1]);
  expect(n).toBeGreaterThanOrEqual(1);
  expect(n).toBeLessThanOrEqual(max);
  expect(res.body.detail).toBe(`Request was throttled. Expected available in ${n} second${n === 1 ? '' : 's'}.`);
  expect(res.headers['retry-after']).toBe(String(n));
  expect(res.headers['content-type']).toMatch(/^application\/json/);
}

const get = (t: TestApp, path: string, caller: Caller | string) => send(t, 'GET', path, caller);

describe('3/minute', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await worldApp({ LECTERN_API_THROTTLE: '3/minute' });
  });
  afterAll(() => t.close());

  it('refused before the throttle, requests are not counted: 401s, 403s and a missing parent', async () => {
    for (let i = 0; i < 8; i++) {
      expect((await get(t, '/projects/', 'anonymous')).status).toBe(401);
      expect((await get(t, '/projects/', 'invalid')).status).toBe(401);
      expect((await get(t, '/projects/', 'Token')).status).toBe(401);
      // `other` is refused by permission, on a read and on writes.
      expect((await get(t, '/projects/project/redirects/', 'other')).status).toBe(403);
      expect((await send(t, 'PUT', '/projects/project/environmentvariables/1/', 'other', { name: 'X' })).status).toBe(403);
      expect((await send(t, 'DELETE', '/projects/project/redirects/1/', 'other')).status).toBe(403);
      // The parent lookup of a maintainers' route is part of the permission check.
      expect((await get(t, '/projects/no-such-project/redirects/', 'other')).status).toBe(404);
    }
    // …so both users still have their whole allowance.
    for (const caller of ['me', 'other'] as Caller[]) {
      for (let i = 0; i < 3; i++) expect((await get(t, '/projects/', caller)).status, `${caller} #${i + 1}`).toBe(200);
      await expectThrottled(await get(t, '/projects/', caller));
    }
  });

  it('over the rate, every check after permission is the throttle’s', async () => {
    // `me` is over the rate from the test above.
    await expectThrottled(await get(t, '/projects/project/', 'me'));
    // Method (would be 405), lookup (would be 404), validation (would be 400): all 429 now.
    await expectThrottled(await send(t, 'PUT', '/projects/project/environmentvariables/1/', 'me', { name: 'X' }));
    await expectThrottled(await get(t, '/projects/project/builds/abc/', 'me'));
    await expectThrottled(await send(t, 'POST', '/projects/project/redirects/', 'me', '{"broken":'));
    await expectThrottled(await send(t, 'POST', '/projects/', 'me', { name: true }));
    // Before it: authentication and permission still answer first.
    expect((await send(t, 'PUT', '/projects/project/environmentvariables/1/', 'anonymous', { name: 'X' })).status).toBe(401);
    expect((await send(t, 'PUT', '/projects/project/environmentvariables/1/', 'invalid', { name: 'X' })).status).toBe(401);
    const forbidden = await send(t, 'PUT', '/projects/others-project/environmentvariables/1/', 'me', { name: 'X' });
    expect(forbidden.status).toBe(403);
    expect((await get(t, '/projects/no-such-project/environmentvariables/', 'me')).status).toBe(404);
    // Refused requests do not count either: still throttled, never counted past the rate.
    await expectThrottled(await get(t, '/projects/', 'me'));
  });

  it('a throttled write changes nothing', async () => {
    const before = await t.db.prisma.redirect.count();
    await expectThrottled(await send(t, 'POST', '/projects/project/redirects/', 'me', { from_url: '/a/', to_url: '/b/', type: 'page' }));
    await expectThrottled(await send(t, 'DELETE', '/projects/project/redirects/1/', 'me'));
    expect(await t.db.prisma.redirect.count()).toBe(before);
  });

  it('the limit is per user: a third user is not affected', async () => {
    const token = await t.user('third');
    for (let i = 0; i < 3; i++) expect((await get(t, '/projects/', `Token ${token}`)).status).toBe(200);
    await expectThrottled(await get(t, '/projects/', `Token ${token}`));
  });

  it('v2, GraphQL and the OpenAPI document are not throttled', async () => {
    for (let i = 0; i < 5; i++) {
      expect((await t.gql('{ viewer { username } }', {}, 'me')).status).toBe(200);
      expect((await t.http.get('/api/v3/schema/')).status).toBe(200);
    }
  });
});

describe('the order of checks, without throttling', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await worldApp({ LECTERN_API_THROTTLE: '1000/minute' });
  });
  afterAll(() => t.close());

  const ENV = '/projects/project/environmentvariables/1/';

  it.each([
    ['anonymous', 401, { detail: 'Authentication credentials were not provided.' }],
    ['invalid', 401, { detail: 'Invalid token.' }],
    ['other', 403, { detail: 'You do not have permission to perform this action.' }],
    ['me', 405, { detail: 'Method "PUT" not allowed.' }],
  ] as const)('PUT on an environment variable as %s: %i', async (caller, status, body) => {
    const res = await send(t, 'PUT', ENV, caller, { name: 'CHANGED', value: 'x' });
    expect(res.status).toBe(status);
    expect(res.body).toEqual(body);
    if (status === 401) expect(res.headers['www-authenticate']).toBe('Token');
    if (status === 405) expect(res.headers.allow?.split(', ').sort()).toEqual(['DELETE', 'GET']);
  });

  it('a bad token fails even where the route would not exist', async () => {
    expect((await get(t, '/no-such-route/', 'invalid')).status).toBe(401);
    expect((await get(t, '/no-such-route/', 'me')).body).toEqual({ detail: 'Not found.' });
  });

  it.each([
    ['Token', 'Invalid token header. No credentials provided.'],
    ['Token a b', 'Invalid token header. Token string should not contain spaces.'],
    ['Token nope', 'Invalid token.'],
  ])('Authorization %j: 401 %j', async (authorization, detail) => {
    const res = await get(t, '/projects/', authorization);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ detail });
  });

  it('another scheme counts as no credentials', async () => {
    const res = await get(t, '/projects/', 'Bearer me');
    expect(res.body).toEqual({ detail: 'Authentication credentials were not provided.' });
  });

  it('permission before method: PATCH on an environment variable', async () => {
    expect((await send(t, 'PATCH', ENV, 'other', {})).status).toBe(403);
    expect((await send(t, 'PATCH', ENV, 'me', {})).status).toBe(405);
    // A project nobody has: the parent lookup of the permission check answers before the method.
    expect((await send(t, 'PATCH', '/projects/no-such-project/environmentvariables/1/', 'me', {})).body).toEqual({
      detail: 'No Project matches the given query.',
    });
  });

  it('method before lookup: a non-integer id on a method the route lacks is 405', async () => {
    expect((await send(t, 'PUT', '/projects/project/environmentvariables/abc/', 'me', {})).status).toBe(405);
    expect((await send(t, 'POST', '/projects/project/builds/abc/', 'me', {})).status).toBe(405);
    expect((await send(t, 'DELETE', '/projects/project/builds/', 'other')).status).toBe(405);
  });

  it('lookup before validation: a missing object is 404 whatever the body', async () => {
    const before = await t.db.prisma.redirect.count();
    for (const body of [{ type: 'nope' }, '{"broken":', '[]', { position: 'first' }]) {
      const put = await send(t, 'PUT', '/projects/project/redirects/999/', 'me', body);
      expect(put.status, JSON.stringify(body)).toBe(404);
      expect(put.body).toEqual({ detail: 'No Redirect matches the given query.' });
    }
    const version = await send(t, 'PATCH', '/projects/project/versions/no-such-version/', 'me', { active: 'maybe' });
    expect(version.body).toEqual({ detail: 'No Version matches the given query.' });
    expect(await t.db.prisma.redirect.count()).toBe(before);
    // When the object is there, the body's errors are told.
    const invalid = await send(t, 'PUT', '/projects/project/redirects/1/', 'me', { type: 'nope' });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toEqual({ type: ['"nope" is not a valid choice.'] });
  });

  it('a project delete is not a route: 401 anonymous, 405 signed in (never a 500)', async () => {
    expect((await send(t, 'DELETE', '/projects/project/', 'anonymous')).status).toBe(401);
    expect((await send(t, 'DELETE', '/projects/project/', 'me')).status).toBe(405);
  });
});

describe('2/second', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await worldApp({ LECTERN_API_THROTTLE: '2/second' });
  });
  afterAll(() => t.close());

  it('answers "1 second." in the singular, and lets the caller in again once the window has passed', async () => {
    // Requests until one is refused (on a slow machine the window may pass between the first ones).
    let res = await get(t, '/projects/', 'me');
    for (let i = 0; i < 20 && res.status === 200; i++) res = await get(t, '/projects/', 'me');
    await expectThrottled(res, 1);
    expect(res.body.detail).toBe('Request was throttled. Expected available in 1 second.');
    // A fixed wait on purpose: the time passing is what is tested (the 1 s window slides past every
    // request counted), not an event another part signals.
    await new Promise((r) => setTimeout(r, 1100));
    // Every request counted is now older than the window; the refused ones were not counted.
    expect((await get(t, '/projects/', 'me')).status).toBe(200);
  });
});
