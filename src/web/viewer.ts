// The signed-in user, read once by the shell (main.tsx) and given to every page.
import { createContext, useContext } from 'react';
import { graphql, type ResultOf } from './graphql.ts';

export const ViewerQuery = graphql(`
  query Viewer { viewer { id username isAdmin } setupNeeded }
`);
export type Viewer = NonNullable<ResultOf<typeof ViewerQuery>['viewer']>;

export const ViewerContext = createContext<Viewer | null>(null);
/** The signed-in user, once known (null while a page's own operation has not answered yet). */
export const useViewer = (): Viewer | null => useContext(ViewerContext);
