// GraphiQL at GET /graphql (src/graphiql.ts serves this build, dist/graphiql): graphiql 4, whose
// editor is CodeMirror 5, on the dashboard's React. Queries go to Lectern's own /graphql as a POST
// of JSON from this origin with the browser's cookies, so a signed-in user's session counts there
// (app.ts sessionCookies). `?query=` and `?variables=` in the URL open in the editors, as yoga's
// GraphiQL did.
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import { GraphiQL } from 'graphiql';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import 'graphiql/style.css';
import './style.css';

const fetcher = createGraphiQLFetcher({
  url: '/graphql',
  fetch: (input, init) => fetch(input, { ...init, credentials: 'same-origin' }),
});
const params = new URLSearchParams(location.search);

createRoot(document.getElementById('graphiql')!).render(
  <StrictMode>
    <GraphiQL fetcher={fetcher} query={params.get('query') ?? undefined} variables={params.get('variables') ?? undefined} />
  </StrictMode>,
);
