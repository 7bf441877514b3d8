// The first run of an empty installation (issue 12): no open door, and no command line needed.
// `lectern serve` logs a one-time setup code (test/cli/cli.test.ts reads it from the log); here the
// code's rules: `setupNeeded` says whether it is time, a wrong code or a bad password makes nothing,
// the right one makes the first account, a site admin, signed in where sign-in is offered, and
// every code is used up with it; two at once make one account.
import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstRunSetupCode } from '../../src/domain/users.ts';
import { type TestApp, testApp } from '../helpers/app.ts';

const ORIGIN = 'http://lectern.test';
const SET_UP = `mutation($input: SetUpInput!) { setUpFirstAdmin(input: $input) {
  __typename ... on MutationSetUpFirstAdminSuccess { data { username isAdmin hasPassword } }
  ... on Error { code status message } ... on ValidationError { fieldErrors { field messages } } } }`;

let t: TestApp;
beforeAll(async () => {
  t = await testApp({ LECTERN_DOCS_DOMAIN: 'docs.lectern.test' });
});
afterAll(() => t.close());

/** The mutation as the dashboard's setup page sends it. */
async function setUp(input: Record<string, unknown>) {
  const res = await supertest(t.handler)
    .post('/graphql')
    .set('origin', ORIGIN)
    .set('content-type', 'application/json')
    .send({ query: SET_UP, variables: { input } });
  expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
  const cookie = ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith('lectern_session='));
  return { answer: res.body.data.setUpFirstAdmin, cookie: cookie?.split(';')[0] };
}

describe('the first account', () => {
  it('is made once, with a code the server made while there were no users, as a signed-in site admin', async () => {
    expect((await t.gql('{ setupNeeded }')).data).toEqual({ setupNeeded: true });
    const code = (await firstRunSetupCode(t.db.prisma))!;
    const other = (await firstRunSetupCode(t.db.prisma))!; // another process's
    expect(code).toMatch(/^[\w-]{32}$/);
    // Only the codes' hashes are kept.
    expect(JSON.stringify(await t.db.prisma.setupCode.findMany())).not.toContain(code);

    const wrong = await setUp({ code: 'x'.repeat(32), username: 'admin', password: 'admin-password-1' });
    expect(wrong.answer).toMatchObject({ __typename: 'ForbiddenError', status: 403 });
    const weak = await setUp({ code, username: 'admin', password: 'admin' });
    expect(weak.answer).toMatchObject({ __typename: 'ValidationError', fieldErrors: [{ field: 'password' }] });
    expect(await t.db.prisma.user.count()).toBe(0);

    const made = await setUp({ code, username: 'admin', password: 'admin-password-1' });
    expect(made.answer).toEqual({ __typename: 'MutationSetUpFirstAdminSuccess', data: { username: 'admin', isAdmin: true, hasPassword: true } });
    expect(made.cookie).toBeDefined();
    const me = await supertest(t.handler)
      .post('/graphql')
      .set('origin', ORIGIN)
      .set('content-type', 'application/json')
      .set('cookie', made.cookie!)
      .send({ query: '{ viewer { username isAdmin } }' });
    expect(me.body.data.viewer).toEqual({ username: 'admin', isAdmin: true });

    // Used up, with every other code: the door is shut.
    expect((await t.gql('{ setupNeeded }')).data).toEqual({ setupNeeded: false });
    for (const again of [code, other]) {
      const res = await setUp({ code: again, username: 'intruder', password: 'intruder-password-1' });
      expect(res.answer).toMatchObject({ __typename: 'ConflictError', status: 409 });
    }
    expect(await t.db.prisma.setupCode.count()).toBe(0);
    expect(await firstRunSetupCode(t.db.prisma)).toBeNull();
    expect(await t.db.prisma.user.count()).toBe(1);
  });

  it('is made once when two try at the same time', async () => {
    const fresh = await testApp({ LECTERN_DOCS_DOMAIN: 'docs.lectern.test' });
    try {
      const codes = [(await firstRunSetupCode(fresh.db.prisma))!, (await firstRunSetupCode(fresh.db.prisma))!];
      const answers = await Promise.all(
        codes.map(async (code, i) => {
          const res = await supertest(fresh.handler)
            .post('/graphql')
            .set('origin', ORIGIN)
            .set('content-type', 'application/json')
            .send({ query: SET_UP, variables: { input: { code, username: `admin${i}`, password: `admin-password-${i}` } } });
          expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
          return res.body.data.setUpFirstAdmin.__typename;
        }),
      );
      expect(answers.sort()).toEqual(['ConflictError', 'MutationSetUpFirstAdminSuccess']);
      expect(await fresh.db.prisma.user.count()).toBe(1);
    } finally {
      await fresh.close();
    }
  });
});
