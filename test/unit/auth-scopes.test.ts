// Every rule is declared where GraphQL can see it (issue 10): each root field and mutation, and each
// field that reads maintainers' data, carries Pothos `authScopes`. Resolvers and the REST adapter
// do not check again, so a field without one would be open: this test is what keeps it closed.
import { type GraphQLField, type GraphQLObjectType, getNamedType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/graphql/schema.ts';

type Scopes = unknown;
const scopesOf = (f: GraphQLField<unknown, unknown>): Scopes => (f.extensions as { pothosOptions?: { authScopes?: Scopes } }).pothosOptions?.authScopes;

/** Types only a project's maintainers may read (docs/design/read-the-docs.md §2.2: redirects, variables and integrations are theirs even to read). */
const MAINTAINERS_ONLY = new Set(['Redirect', 'RedirectPage', 'EnvironmentVariable', 'EnvironmentVariablePage', 'Integration']);
/** Answers of writes, reached only through the write (whose own scope is checked above). */
const WRITE_ANSWERS = new Set(['CreatedIntegration']);

describe('authorization declared on the schema', () => {
  const roots = [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].filter((t): t is GraphQLObjectType => !!t);

  it('on every root field: queries, mutations and subscriptions', () => {
    const missing = roots.flatMap((type) =>
      Object.values(type.getFields())
        .filter((f) => scopesOf(f) === undefined)
        .map((f) => `${type.name}.${f.name}`),
    );
    expect(missing).toEqual([]);
  });

  it('on every mutation as a rule about the caller: no write is public but signing in and out, the first account, and a forgotten password', () => {
    const mutation = schema.getMutationType()!;
    // Signing in is what an anonymous caller does; signing out ends only the caller's own session;
    // the first account is made by whoever holds the setup code, while there are no users.
    // A forgotten password: asked for, and set with the emailed link's token, by someone not signed in.
    const PUBLIC_WRITES = new Set(['signIn', 'signOut', 'setUpFirstAdmin', 'requestPasswordReset', 'resetPassword']);
    const open = Object.values(mutation.getFields())
      .filter((f) => !PUBLIC_WRITES.has(f.name))
      .filter((f) => {
        const s = scopesOf(f);
        return typeof s === 'object' && s !== null && 'public' in s;
      })
      .map((f) => f.name);
    expect(open).toEqual([]);
  });

  it('on every field of a read object that reaches maintainers-only data', () => {
    const missing: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (
        !('getFields' in type) ||
        type.name.startsWith('__') ||
        roots.includes(type as GraphQLObjectType) ||
        MAINTAINERS_ONLY.has(type.name) ||
        WRITE_ANSWERS.has(type.name) ||
        /^Mutation\w+Success$/.test(type.name)
      )
        continue;
      if (!('isTypeOf' in type)) continue;
      for (const f of Object.values((type as GraphQLObjectType).getFields())) {
        if (MAINTAINERS_ONLY.has(getNamedType(f.type).name) && scopesOf(f) === undefined) missing.push(`${type.name}.${f.name}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
