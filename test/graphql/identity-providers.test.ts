// Identity providers (docs/design/sso.md) as site admins manage them: every bad field named, the
// client secret stored encrypted and never answered, a provider from the LECTERN_OIDC_* settings
// offered on the sign-in page and changed only there, and nobody but site admins reading settings.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { type TestApp, testApp } from '../helpers/app.ts';

const SECRET = 'client-secret-do-not-show-0123456789';
let t: TestApp;
let admin: string;
let user: string;

beforeAll(async () => {
  t = await testApp({
    LECTERN_OIDC_ISSUER: 'https://login.example.com/realms/acme',
    LECTERN_OIDC_CLIENT_ID: 'lectern',
    LECTERN_OIDC_CLIENT_SECRET: SECRET,
    LECTERN_OIDC_NAME: 'Acme SSO',
  });
  admin = await t.user('admin');
  user = await t.user('user');
  await t.db.prisma.user.update({ where: { username: 'admin' }, data: { isAdmin: true } });
});
afterAll(() => t?.close());

const create = (input: Record<string, unknown>, token = admin) =>
  t.gql(
    `mutation($input: IdentityProviderInput!) { createIdentityProvider(input: $input) {
      __typename ... on MutationCreateIdentityProviderSuccess { data { slug callbackUrl } }
      ... on ValidationError { fieldErrors { field messages } } ... on Error { message } } }`,
    { input },
    token,
  );

describe('identity providers', () => {
  it('from the settings: offered on the sign-in page to anyone, read-only to site admins', async () => {
    const options = await t.gql('{ signInOptions { slug name loginUrl } }');
    expect(options.data.signInOptions).toEqual([{ slug: 'sso', name: 'Acme SSO', loginUrl: '/auth/oidc/sso/login' }]);
    const listed = await t.gql('{ identityProviders { slug issuer clientId fromSettings } }', {}, admin);
    expect(listed.data.identityProviders).toEqual([{ slug: 'sso', issuer: 'https://login.example.com/realms/acme', clientId: 'lectern', fromSettings: true }]);
    const change = await t.gql(`mutation { updateIdentityProvider(slug: "sso", input: { name: "x" }) { __typename ... on Error { message } } }`, {}, admin);
    expect(change.data.updateIdentityProvider).toMatchObject({ __typename: 'ForbiddenError', message: expect.stringContaining('LECTERN_OIDC_') });
  });

  it('are added by site admins only, with every bad field named and nothing made', async () => {
    const refused = await create({ slug: 'x', name: 'x', issuer: 'https://a.example', clientId: 'c', clientSecret: 's' }, user);
    expect(refused.data.createIdentityProvider.__typename).toBe('ForbiddenError');
    const bad = await create({ slug: 'Bad Slug', name: '', issuer: 'http://idp.example.com', clientId: 'c', scopes: 'email' });
    expect(bad.data.createIdentityProvider).toMatchObject({
      __typename: 'ValidationError',
      fieldErrors: expect.arrayContaining([
        expect.objectContaining({ field: 'slug' }),
        expect.objectContaining({ field: 'name' }),
        { field: 'issuer', messages: ['The issuer must be an https URL (http only for a provider on this machine).'] },
        { field: 'clientSecret', messages: ['This field is required.'] },
        { field: 'scopes', messages: ['The scopes must include "openid".'] },
      ]),
    });
    expect(await t.db.prisma.identityProvider.count()).toBe(1);
  });

  it('keep the client secret encrypted, and never answer it', async () => {
    const made = await create({ slug: 'okta', name: 'Okta', issuer: 'https://acme.okta.com', clientId: 'abc', clientSecret: SECRET });
    expect(made.data.createIdentityProvider.data).toEqual({ slug: 'okta', callbackUrl: `${t.config.publicUrl}/auth/oidc/okta/callback` });
    const rows = JSON.stringify(await t.db.prisma.identityProvider.findMany());
    expect(rows).not.toContain(SECRET);
    const everything = await t.gql(
      '{ identityProviders { slug name issuer clientId scopes groupsClaim allowSignUp enabled fromSettings callbackUrl } }',
      {},
      admin,
    );
    expect(JSON.stringify(everything)).not.toContain(SECRET);
    expect((await t.gql('{ identityProviders { slug } }', {}, user)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    // Disabled: no longer offered, and its sign-in answers 404.
    await t.gql(`mutation { updateIdentityProvider(slug: "okta", input: { enabled: false }) { __typename } }`, {}, admin);
    expect((await t.gql('{ signInOptions { slug } }')).data.signInOptions).toEqual([{ slug: 'sso' }]);
    expect((await t.http.get('/auth/oidc/okta/login')).status).toBe(404);
  });
});

describe('the LECTERN_OIDC_* settings', () => {
  it('are refused when incomplete or insecure, naming the variable and never the secret', () => {
    const base = { LECTERN_SECRET_KEY: 'k'.repeat(40) };
    expect(() => loadConfig({ ...base, LECTERN_OIDC_ISSUER: 'https://idp.example.com' })).toThrow(
      /LECTERN_OIDC_ISSUER: needs LECTERN_OIDC_CLIENT_ID and LECTERN_OIDC_CLIENT_SECRET/,
    );
    const insecure = () =>
      loadConfig({ ...base, LECTERN_OIDC_ISSUER: 'http://idp.example.com', LECTERN_OIDC_CLIENT_ID: 'c', LECTERN_OIDC_CLIENT_SECRET: SECRET });
    expect(insecure).toThrow(/https URL/);
    try {
      insecure();
    } catch (e) {
      expect((e as Error).message).not.toContain(SECRET);
    }
    expect(
      loadConfig({ ...base, LECTERN_OIDC_ISSUER: 'http://127.0.0.1:9000', LECTERN_OIDC_CLIENT_ID: 'c', LECTERN_OIDC_CLIENT_SECRET: 's' }).oidc,
    ).toMatchObject({
      issuer: 'http://127.0.0.1:9000',
      allowSignUp: true,
    });
  });
});
