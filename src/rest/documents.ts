// The GraphQL documents a REST API runs, one per route, built and validated against the schema on
// the route's first request (docs/design/rest-api.md, "One document per route"): a request never
// parses GraphQL but a route's first, which builds its document. A route's document selects its
// resource whole, each field and expansion under an @include directive whose variable the
// request's fields, omit and expand set (resource.ts ResourceSelection), as SOFA builds one
// operation per field.
import type { DocumentNode, GraphQLError, GraphQLSchema, OperationDefinitionNode } from 'graphql';
import type { Yoga } from '../graphql/yoga.ts';
import { buildOperation } from './operation.ts';
import { ResourceSelection } from './resource.ts';
import type { Route } from './route.ts';

/** The path parameters below a project that name an object, and how the project finds it (for 404s in DRF's order). */
const LOOKUPS: Record<string, { variable: string; select: string; model: string }> = {
  version: { variable: '$version: String!', select: 'version(slug: $version) { id }', model: 'Version' },
  build: { variable: '$build: Int!', select: 'build(id: $build) { id }', model: 'Build' },
  alias: { variable: '$alias: String!', select: 'subproject(alias: $alias) { id }', model: 'ProjectRelationship' },
  redirect: { variable: '$redirect: Int!', select: 'redirect(id: $redirect) { id }', model: 'Redirect' },
  environmentvariable: {
    variable: '$environmentvariable: Int!',
    select: 'environmentVariable(id: $environmentvariable) { id }',
    model: 'EnvironmentVariable',
  },
};

export interface RouteDocuments {
  /** The route's operation. */
  document: DocumentNode;
  /** The variables it declares. */
  declared: ReadonlySet<string>;
  /** Its resource's selection, which sets the @include variables from a request's parameters; null where the route selects its own. */
  selection: ResourceSelection | null;
  /** The query that finds the objects its path names, one by one (the project, then each below it); null without a project. */
  lookups: { document: DocumentNode; names: { param: string; model: string }[] } | null;
}

export class ApiDocuments {
  readonly #known: ReadonlySet<Route>;
  readonly #routes = new Map<Route, RouteDocuments>();
  #maintainer: DocumentNode | undefined;
  readonly #schema: GraphQLSchema;
  readonly #parse: (text: string) => DocumentNode;
  readonly #validate: (document: DocumentNode) => readonly GraphQLError[];

  constructor(yoga: Yoga, routes: readonly Route[]) {
    // yoga's own parse and validate: under some loaders a second copy of graphql-js is loaded for
    // src/, and its classes would not match the schema's.
    const { schema, parse, validate } = yoga.getEnveloped();
    this.#schema = schema as GraphQLSchema;
    this.#parse = (text) => parse(text) as DocumentNode;
    this.#validate = (document) => validate(schema, document) as readonly GraphQLError[];
    this.#known = new Set(routes);
  }

  /** Whether the caller maintains the project `$project`. */
  get maintainer(): DocumentNode {
    this.#maintainer ??= this.#checked('the maintainer check', this.#parse('query($project: String!) { project(slug: $project) { viewerIsMaintainer } }'));
    return this.#maintainer;
  }

  /**
   * The documents of `route`, one of the routes the API was made with; built and validated the
   * first time (all of them at once took 0.1-0.15 s of a server's start, before it listened;
   * test/unit/rest-documents.test.ts builds and validates every route's).
   */
  of(route: Route): RouteDocuments {
    const found = this.#routes.get(route);
    if (found) return found;
    if (!this.#known.has(route)) throw new Error(`route ${route.name} is not one of this API's`);
    const built = this.#build(route);
    this.#checked(`route ${route.name}`, built.document);
    if (built.lookups) this.#checked(`route ${route.name}'s lookups`, built.lookups.document);
    this.#routes.set(route, built);
    return built;
  }

  #build(route: Route): RouteDocuments {
    const selection = !route.select && route.resource ? new ResourceSelection(route.resource) : null;
    const text = route.select ?? (selection ? `${route.selectAlso ?? ''} ${selection.text}` : 'id');
    const document = buildOperation(this.#schema, route, text, selection?.variableNames);
    const op = document.definitions[0] as OperationDefinitionNode;
    const declared = new Set((op.variableDefinitions ?? []).map((v) => v.variable.name.value));
    return { document, declared, selection, lookups: this.#lookups(route) };
  }

  #lookups(route: Route): RouteDocuments['lookups'] {
    const params = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
    if (!params.includes('project')) return null;
    const names = params.filter((n) => n in LOOKUPS);
    const vars = ['$project: String!', ...names.map((n) => LOOKUPS[n]!.variable)].join(', ');
    const text = `query(${vars}) { project(slug: $project) { id ${names.map((n) => `${n}: ${LOOKUPS[n]!.select}`).join(' ')} } }`;
    return { document: this.#parse(text), names: names.map((param) => ({ param, model: LOOKUPS[param]!.model })) };
  }

  /** `document`, validated against the schema: one that does not validate is a bug in the route table. */
  #checked(what: string, document: DocumentNode): DocumentNode {
    const errors = this.#validate(document);
    if (errors.length) throw new Error(`${what}: its operation does not validate: ${errors.map((e) => e.message).join('; ')}`);
    return document;
  }
}
