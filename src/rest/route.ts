// The shape of a REST route: a declarative entry that names its GraphQL coordinate, how the
// request becomes variables, its representation, envelope and success status. The router
// (router.ts) and the OpenAPI document (openapi.ts) are both made from these entries.

import type { RestError } from './errors.ts';
import type { FlexParams } from './flex.ts';
import type { Node, Resource, RestEnv } from './resource.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface Filter {
  /** Field of the GraphQL filter input. */
  field: string;
  type: 'string' | 'boolean';
  /** The values a string filter takes; anything else is a 400 naming it, as django-filter's ChoiceFilter answers. */
  choices?: { has(value: string): boolean };
}

export interface RouteCall {
  params: Record<string, string | number>;
  query: Record<string, unknown>;
  input?: Record<string, unknown>;
  filter?: Record<string, unknown>;
}

export interface Route {
  name: string;
  method: Method;
  /** OpenAPI-style path below the API root: `/projects/{project}/versions/`. */
  path: string;
  summary: string;
  /**
   * Answered without a token too, as Read the Docs' embed and search APIs answer anyone: such a
   * caller reads public docs only. Every other v3 route needs a valid token (v2 reads none). Who
   * may do what beyond that is the rule of the GraphQL fields the route runs (pre-checks.ts).
   */
  tokenless?: true;
  status: number;
  envelope: 'object' | 'page' | 'none';
  resource?: Resource;
  /** Expands honoured on a list (drf-flex-fields' permit_list_expands). */
  permitExpand?: string[];
  filters?: Record<string, Filter>;
  /** GraphQL input type the JSON body is read as. */
  input?: string;
  /**
   * The variable (an `Upload`) the request's body is: the body is not read as JSON but written to
   * disk as it arrives, once the caller is known to be a maintainer (an archive of built docs).
   */
  upload?: string;
  /**
   * The GraphQL coordinate the route runs, from the root type to the field that answers:
   * `Query.project.versions`, `Mutation.updateVersion`. Its operation is built from the schema
   * (operation.ts); a mutation answers with its union's success member or one of its errors.
   */
  field: string;
  /**
   * Arguments of the fields on the way, by field: `$name` binds a variable, anything else is a
   * literal. Unbound arguments take the variable of their own name when the route has one (a path
   * parameter, a page's limit and offset, the body's input, the query's filter).
   */
  args?: Record<string, Record<string, unknown>>;
  /**
   * The route answers every row, not one page, as Read the Docs' v2 `active_versions` does: its
   * connection takes `$limit` and `$offset` (in `args`), and the adapter reads it page by page,
   * at the largest page, joining the pages' nodes, up to ALL_PAGES_MAX_ROWS (router.ts).
   */
  allPages?: boolean;
  variables?: (call: RouteCall) => Record<string, unknown>;
  /** Model named in the 404 when the result is null. */
  notFound?: string;
  /** Errors from rules checked on save come back as a bare JSON list (redirects, env vars). */
  bareErrors?: boolean;
  /** Formats besides JSON (DRF renderers), by format suffix: `txt` answers `text/plain`. */
  renderers?: Record<string, (body: Node) => string>;
  /** A body other than the resource's representation. */
  respond?: (data: Node, env: RestEnv, flex: FlexParams, call: RouteCall) => { status: number; body: unknown };
  /** A selection other than the resource's, the same for every request. */
  select?: string;
  /** GraphQL fields selected beside the resource's (whose own follow the request's fields, omit and expand). */
  selectAlso?: string;
  /** Rewrites the route's errors (its GraphQL errors and its 404 for a null result) into the body its API answers with. */
  error?: (error: RestError, call: RouteCall) => RestError;
}
