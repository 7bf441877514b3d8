// The dashboard's GraphQL client: urql with graphcache, a normalized cache (a version toggled on the
// project page is the same record in every list that shows it), and subscriptions over SSE (yoga's
// GraphQL over Server-Sent Events, by fetch: `fetchSubscriptions`). The cache knows each interface's
// and union's members (keyless.ts), so a mutation's `... on Error { message }` is always read. A
// change updates what the cache holds, so no page asks again after one: a mutation answers with the
// entity it changed, and one that adds to or takes from a list says so in cache-updates.ts,
// organization-updates.ts and account-updates.ts (docs/design/dashboard-data.md). Requests are same-origin POSTs
// of JSON, the only kind the session cookie speaks in. An UNAUTHENTICATED answer (a session that
// expired or was ended elsewhere) sends the reader to sign in, and back afterwards.
import { cacheExchange } from '@urql/exchange-graphcache';
import { Client, fetchExchange, mapExchange } from 'urql';
import { ACCOUNT_UPDATES } from './account-updates.ts';
import { PROJECT_UPDATES } from './cache-updates.ts';
import { KEYLESS, POSSIBLE_TYPES } from './keyless.ts';
import { ORGANIZATION_UPDATES } from './organization-updates.ts';

const keys = Object.fromEntries(KEYLESS.map((name) => [name, () => null]));

/** Where to send a reader whose session is over: the sign-in page, which comes back here. */
export function signInUrl(): string {
  const here = window.location.pathname + window.location.search;
  return here.startsWith('/sign-in') ? here : `/sign-in?next=${encodeURIComponent(here)}`;
}

export function makeClient(onSignedOut: () => void): Client {
  return new Client({
    url: '/graphql',
    preferGetMethod: false,
    fetchSubscriptions: true,
    fetchOptions: { credentials: 'same-origin' },
    exchanges: [
      cacheExchange({ keys, possibleTypes: POSSIBLE_TYPES, updates: { Mutation: { ...PROJECT_UPDATES, ...ORGANIZATION_UPDATES, ...ACCOUNT_UPDATES } } }),
      mapExchange({
        onResult(result) {
          const unauthenticated = result.error?.graphQLErrors.some((e) => e.extensions?.code === 'UNAUTHENTICATED');
          if (unauthenticated) onSignedOut();
        },
      }),
      fetchExchange,
    ],
  });
}
