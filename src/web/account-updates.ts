// What a change to the reader's tokens, the site's users or its identity providers does to the
// lists the normalized cache holds (docs/design/dashboard-data.md), as src/web/cache-updates.ts does
// for a project's: a new token goes first among the reader's (newest first), a revoked one leaves
// them; a new user takes their place (by username) in every list of users whose search they match;
// a new identity provider takes its place (by slug), a deleted one leaves the list.
import type { Cache, UpdateResolver, UpdatesConfig } from '@urql/exchange-graphcache';
import { gql } from 'urql';
import { answered, editLinks, inSlugOrder, keyOf, type Row } from './cache-updates.ts';

/** The reader's tokens, edited by `edit`. */
const editTokens = (cache: Cache, edit: (keys: string[]) => string[]) => editLinks(cache, cache.resolve('Query', 'viewer') as string | null, 'tokens', edit);

const createdToken: UpdateResolver = (result, _args, cache, info) => {
  const key = keyOf(cache, (result[info.fieldName] as { data?: { token?: Row } } | null)?.data?.token);
  if (key) editTokens(cache, (keys) => (keys.includes(key) ? keys : [key, ...keys]));
};

const revokedToken: UpdateResolver = (result, _args, cache, info) => {
  const key = keyOf(cache, answered(result, info.fieldName));
  if (!key) return;
  editTokens(cache, (keys) => keys.filter((k) => k !== key));
  cache.invalidate(key);
};

const UsersTotal = gql`
  query UsersTotal($search: String, $limit: Int, $offset: Int) { users(search: $search, limit: $limit, offset: $offset) { totalCount } }
`;

/**
 * A new user, in every list of users from the first that Lectern would show them in: those with no
 * search, and those whose search their username or email contains (ignoring case), by username.
 */
const createdUser: UpdateResolver = (result, _args, cache, info) => {
  const user = answered(result, info.fieldName) as (Row & { username?: string; email?: string | null }) | null;
  const key = keyOf(cache, user);
  if (!user || !key || user.username === undefined) return;
  const name = (k: string) => String(cache.resolve(k, 'username') ?? '');
  for (const f of cache.inspectFields('Query')) {
    if (f.fieldName !== 'users' || f.arguments?.offset) continue;
    const search = String(f.arguments?.search ?? '')
      .trim()
      .toLowerCase();
    if (search && !user.username.toLowerCase().includes(search) && !(user.email ?? '').toLowerCase().includes(search)) continue;
    const page = cache.resolve('Query', f.fieldKey) as string | null;
    const nodes = page ? (cache.resolve(page, 'nodes') as string[] | null) : null;
    if (!page || !nodes || nodes.includes(key)) continue;
    const at = nodes.findIndex((k) => name(k) > user.username!);
    const next = at < 0 ? [...nodes, key] : [...nodes.slice(0, at), key, ...nodes.slice(at)];
    cache.link(page, 'nodes', next.slice(0, (f.arguments?.limit as number | undefined) ?? next.length));
    cache.updateQuery({ query: UsersTotal, variables: { ...f.arguments } }, (data) => {
      const total = data?.users as { totalCount: number } | null;
      if (total) total.totalCount += 1;
      return data;
    });
  }
};

/** The site's identity providers (a plain list, by slug), edited by `edit`. */
const editProviders = (cache: Cache, edit: (keys: string[]) => string[]) => editLinks(cache, 'Query', 'identityProviders', edit);

const createdProvider: UpdateResolver = (result, _args, cache, info) => {
  const key = keyOf(cache, answered(result, info.fieldName));
  if (!key || !cache.resolve(key, 'slug')) return;
  editProviders(cache, (keys) => inSlugOrder(cache, keys, key));
};

const deletedProvider: UpdateResolver = (result, _args, cache, info) => {
  const key = keyOf(cache, answered(result, info.fieldName));
  if (!key) return;
  editProviders(cache, (keys) => keys.filter((k) => k !== key));
  cache.invalidate(key);
};

/** What each mutation of the reader's tokens and the site's administration does to the lists the cache holds. */
export const ACCOUNT_UPDATES: NonNullable<UpdatesConfig['Mutation']> = {
  createToken: createdToken,
  revokeToken: revokedToken,
  createUser: createdUser,
  createIdentityProvider: createdProvider,
  deleteIdentityProvider: deletedProvider,
};
