// The REST adapter: matches a request to its route entry, checks in Read the Docs' order
// (authentication, permission, throttle, method, lookup, validation; docs/design/read-the-docs.md §2.3), turns
// fields/omit/expand, filters and pagination into one GraphQL operation, runs it through yoga and
// writes the JSON. One router serves both APIs: v3 (tokens, flex fields, sorted keys) and, with
// its options, v2 (anonymous public reads, plain representations). It never touches the database.

import express, { type Request, type Response } from 'express';
import type { DocumentNode, ExecutionResult, GraphQLSchema } from 'graphql';
import { disallowedCharacter, findDisallowed } from '../domain/characters.ts';
import type { Yoga } from '../graphql/yoga.ts';
import type { RequestThrottle } from '../throttle.ts';
import { spoolRequestBody } from '../uploads/multipart.ts';
import type { UploadedFile } from '../uploads/spool.ts';
import { oneString } from '../urls.ts';
import { ApiDocuments } from './documents.ts';
import { detail, forbidden, fromDomainError, fromGraphQLErrors, notAuthenticated, notFound, RestError } from './errors.ts';
import { AuthenticationFailed, type Session, session } from './execute.ts';
import { type FlexParams, NO_FLEX, parseFlex, permit, RecursiveExpansionError } from './flex.ts';
import { v3Json } from './format.ts';
import { readInput } from './input.ts';
import { coordinateOf } from './operation.ts';
import { requiresMaintainer } from './pre-checks.ts';
import { type Node, type RestEnv, serialize } from './resource.ts';
import type { Method, Route, RouteCall } from './route.ts';

export interface RouterOptions {
  yoga: Yoga;
  routes: Route[];
  /** Absolute URL of the API root, e.g. `http://localhost:8000/api/v3`. */
  api: string;
  publicUrl: string;
  /** Mount path, e.g. `/api/v3`. */
  mount: string;
  /** Counts v3 requests per user; null: none (v2). */
  throttle: RequestThrottle | null;
  maxBodyBytes: number;
  /**
   * Largest `limit` honoured (LECTERN_API_MAX_LIMIT); a larger one gives that many, as DRF's
   * max_limit does. Read the Docs has none, and clients rely on asking for more than 100.
   */
  maxLimit: number;
  /**
   * `token` (v3, the default): every path needs a valid token. `anonymous` (v2): the
   * Authorization header is not read, and every request sees only what anyone may.
   */
  authentication?: 'token' | 'anonymous';
  /** Whether `fields`, `omit` and `expand` are read (v3, the default); v2 has no such parameters. */
  flex?: boolean;
  /** How a body is written: v3's sorted keys by default; v2 keeps the representation's order. */
  json?: (body: unknown) => string;
  /** Whether DRF's format suffixes are read (`/build/1.txt`, `.json`): v2. */
  formatSuffixes?: boolean;
  /** The body of GET on the API root, given the API's absolute URL. */
  root?: (api: string) => unknown;
  /** Where an upload route's body is written while it is handled, and its largest size (LECTERN_UPLOAD_MAX_BYTES). */
  uploads?: { dir: string; maxBytes: number };
}

const DEFAULT_LIMIT = 10;
const MAX_OFFSET = 2 ** 31 - 1;
/** Most rows a route that answers every row (Route.allPages) reads: Read the Docs sets none. */
export const ALL_PAGES_MAX_ROWS = 10_000;
const INTEGER_PARAMS = new Set(['build', 'redirect', 'environmentvariable', 'id']);
const PARAM_PATTERN: Record<string, string> = { project: '[^/.]+', version: '[^/]+', alias: '[^/]+' };

interface Compiled {
  route: Route;
  regex: RegExp;
  names: string[];
}

function compile(route: Route): Compiled {
  const names: string[] = [];
  const source = route.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    names.push(name);
    return `(${PARAM_PATTERN[name] ?? '[^/]+'})`;
  });
  return { route, regex: new RegExp(`^${source}$`), names };
}

export { oneString };

/**
 * A paging parameter as DRF reads it (`int()` of the text): surrounding spaces and a sign are
 * allowed; a value below `min` is the fallback, a larger one than `max` is `max`.
 */
function intParam(v: unknown, fallback: number, min: number, max: number): number {
  const s = oneString(v)?.trim();
  if (s === undefined || !/^[+-]?\d+$/.test(s)) return fallback;
  const digits = s.replace(/^[+-]/, '').replace(/^0+(?=\d)/, '');
  if (s.startsWith('-') && digits !== '0') return fallback;
  const n = digits.length > 15 ? Number.POSITIVE_INFINITY : Number(digits);
  return n < min ? fallback : Math.min(n, max);
}

function readFilters(route: Route, query: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const errors: Record<string, string[]> = {};
  for (const [param, f] of Object.entries(route.filters ?? {})) {
    const raw = oneString(query[param]);
    if (raw === undefined || raw === '') continue;
    if (raw.includes('\u0000')) {
      // Django's form CharField (ProhibitNullCharactersValidator); PostgreSQL could not take it.
      errors[param] = ['Null characters are not allowed.'];
      continue;
    }
    if (f.type === 'boolean') {
      const v = raw.toLowerCase();
      if (v === 'true' || v === '1') out[f.field] = true;
      else if (v === 'false' || v === '0') out[f.field] = false;
      continue; // anything else: the filter is ignored, as django-filter does
    }
    if (f.choices && !f.choices.has(raw)) {
      errors[param] = [`Select a valid choice. ${raw} is not one of the available choices.`];
      continue;
    }
    out[f.field] = raw;
  }
  if (Object.keys(errors).length) throw new RestError(400, errors);
  return out;
}

/** DRF's messages for a character no text may hold (CharField's, and ours for the other controls). */
function characterMessage(codePoint: string): string {
  if (codePoint === 'U+0000') return 'Null characters are not allowed.';
  if (/^U\+D[89A-F]/.test(codePoint)) return `Surrogate characters are not allowed: ${codePoint}.`;
  return `Control characters are not allowed: ${codePoint}.`;
}

/** The first string in a query's or body's value holding a character no text may, as `{field: [message]}` (nested as DRF nests). */
function characterErrors(value: unknown): unknown {
  const bad = findDisallowed(value);
  if (!bad) return null;
  // A repeated parameter or a list of strings answers for the field; a list of objects, by index.
  const path = bad.path.filter((p, i) => typeof p === 'string' || i < bad.path.length - 1);
  let body: unknown = [characterMessage(bad.codePoint)];
  for (const key of path.reverse()) body = { [key]: body };
  return body;
}

/**
 * A 400 for a request whose path segments, query parameters (names and values) or JSON body (any
 * field, at any depth) hold a control character (tab, line feed and carriage return are text,
 * except in the path), DEL, a C1 control or an unpaired surrogate: refused as it enters, before
 * anything reads it (docs/design/deliveries.md, "Input"). The same characters GraphQL refuses.
 */
function refusedCharacters(req: Request): RestError | null {
  for (const segment of req.path.split('/')) {
    let text: string;
    try {
      text = decodeURIComponent(segment);
    } catch {
      continue; // not UTF-8: no route's parameter, answered as not found
    }
    const control = /[\t\n\r]/.exec(text);
    const bad = disallowedCharacter(text) ?? (control ? { codePoint: `U+${control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}` } : null);
    if (bad) return detail(400, `The path holds ${bad.codePoint}: ${characterMessage(bad.codePoint)}`);
  }
  const query = characterErrors(req.query);
  if (query) return new RestError(400, query);
  const body = characterErrors(req.body);
  if (body) return new RestError(400, body);
  return null;
}

function pageLinks(env: RestEnv, mount: string, req: Request, count: number, limit: number, offset: number) {
  const link = (newOffset: number | null) => {
    const params = new URLSearchParams();
    const query = new URL(req.originalUrl, 'http://x').searchParams;
    const entries = [...query.entries()].filter(([k]) => k !== 'limit' && k !== 'offset');
    entries.push(['limit', String(limit)]);
    if (newOffset !== null) entries.push(['offset', String(newOffset)]);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const [k, v] of entries) params.append(k, v);
    return `${env.publicUrl}${mount}${req.path}?${params.toString()}`;
  };
  return {
    next: offset + limit >= count ? null : link(offset + limit),
    previous: offset <= 0 ? null : link(offset - limit <= 0 ? null : offset - limit),
  };
}

/** A response format other than JSON a request asked for (DRF's format suffix or `?format=`). */
interface Rendering {
  format: string;
  /** The route's renderer for it; undefined: the route has none (404, as DRF answers). */
  render?: (body: Node) => string;
}
const renderings = new WeakMap<Response, Rendering>();

function sendWith(json: (body: unknown) => string) {
  return (res: Response, status: number, body: unknown, headers: Record<string, string> = {}): void => {
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    res.status(status);
    if (body === undefined || status === 204) {
      res.end();
      return;
    }
    const rendering = renderings.get(res);
    if (rendering) {
      // As DRF's plain-text renderers: the answer rendered, or an error's detail as the text.
      const text = status < 400 && rendering.render ? rendering.render(body as Node) : String((body as { detail?: unknown }).detail ?? '');
      res.type('text/plain; charset=utf-8').send(text);
      return;
    }
    res.type('application/json').send(json(body));
  };
}

function dig(data: unknown, path: string[]): unknown {
  return path.reduce<unknown>((at, key) => (at && typeof at === 'object' ? (at as Node)[key] : undefined), data);
}

/** The request the throttle counted (its caller's key), to forget if permission refuses it after all. */
interface Counted {
  throttleKey: string | null;
  maintainersRoute: boolean;
}

/**
 * An answer DRF gives before its throttle counts: 401, 403, and on a maintainers' route the 404 of
 * its project (the parent lookup is part of the permission check, docs/design/read-the-docs.md §2.3).
 */
function isPermissionRefusal(e: unknown, maintainersRoute: boolean): boolean {
  if (!(e instanceof RestError)) return false;
  if (e.status === 401 || e.status === 403) return true;
  return maintainersRoute && e.status === 404 && (e.body as { detail?: unknown } | undefined)?.detail === 'No Project matches the given query.';
}

/** The path a request names, and the routes it matches (before anything is checked). */
interface Matched {
  /** The path with a format suffix taken off, ending with a slash. */
  slashed: string;
  params: Record<string, string>;
  candidates: Compiled[];
}

/**
 * What answers before the operation runs need: the caller's session, and permission, asked first
 * (DRF checks permission before it throttles, and before method, lookup and validation answer).
 */
interface Checks {
  s: Session;
  needsMaintainer: boolean;
  permission(): Promise<void>;
  /** Throws `answer`, unless permission refuses first. */
  refuse(answer: unknown): Promise<never>;
}

/** The operation a request runs, and what its answer is shaped by. */
interface Plan {
  flex: FlexParams;
  call: RouteCall;
  limit: number;
  offset: number;
  permitted: Set<string> | undefined;
  document: DocumentNode;
  variables: Record<string, unknown>;
}

/**
 * One API's adapter: each request goes through `handle`'s steps in Read the Docs' order
 * (docs/design/rest-api.md, docs/design/read-the-docs.md §2.3): locate, authenticate, choose the
 * route, throttle, method, lookup values, read the request, run the operation, shape the answer.
 */
class RestAdapter {
  readonly #opts: RouterOptions;
  readonly #env: RestEnv;
  readonly #anonymous: boolean;
  readonly #compiled: Compiled[];
  /** Every route's GraphQL documents, built and validated here, once. */
  readonly #documents: ApiDocuments;
  /** The routes whose fields let only a maintainer of the project through (pre-checks.ts). */
  readonly #maintainers: Set<Route>;
  readonly #root: (api: string) => unknown;
  readonly send: ReturnType<typeof sendWith>;
  /** Why a request's body could not be read: answered only where the route reads it. */
  readonly bodyErrors = new WeakMap<Request, unknown>();

  constructor(opts: RouterOptions) {
    this.#opts = opts;
    this.#env = { api: opts.api, publicUrl: opts.publicUrl };
    this.#anonymous = opts.authentication === 'anonymous';
    this.send = sendWith(opts.json ?? v3Json);
    this.#root = opts.root ?? ((api: string) => ({ projects: `${api}/projects/` }));
    this.#compiled = opts.routes.map(compile);
    this.#documents = new ApiDocuments(opts.yoga, opts.routes);
    const schema = opts.yoga.getEnveloped().schema as GraphQLSchema;
    this.#maintainers = new Set(opts.routes.filter((r) => requiresMaintainer(schema, r)));
  }

  /** Whether the request is to an upload route, whose body is read only once it is allowed. */
  isUpload(req: Request): boolean {
    const slashed = req.path.endsWith('/') ? req.path : `${req.path}/`;
    return this.#compiled.some((c) => c.route.upload && c.route.method === req.method && c.regex.test(slashed));
  }

  async handle(req: Request, res: Response, counted: Counted): Promise<void> {
    const matched = this.#locate(req, res);
    if (!matched) return;
    const s = await this.#authenticate(req, matched);
    if (matched.slashed === '/') {
      if (req.method !== 'GET') throw detail(405, `Method "${req.method}" not allowed.`);
      this.send(res, 200, this.#root(this.#opts.api));
      return;
    }
    const chosen = this.#choose(req, res, matched);
    const checks = this.#checks(s, matched, chosen);
    await this.#throttle(checks, counted);
    const route = await this.#method(req.method, matched, chosen, checks);
    const typed = await this.#lookupValues(matched.params, checks);
    const plan = await this.#plan(req, route, typed, checks);
    const result = await this.#run(req, route, plan, checks);
    const { status, body } = this.#answer(req, route, plan, result, checks);
    this.send(res, status, body);
  }

  /**
   * The path: characters no text may hold refused, DRF's format suffix and `?format=` read, a GET
   * without its trailing slash redirected (null: answered), and the routes it matches.
   */
  #locate(req: Request, res: Response): Matched | null {
    const refused = refusedCharacters(req);
    if (refused) throw refused;
    let path = req.path;
    // DRF's format suffixes (`/build/1.txt`, `/build/1.json`, with or without the slash) and
    // `?format=`: JSON is the default; another format is the route's renderer (text/plain).
    const suffix = this.#opts.formatSuffixes && req.method === 'GET' ? /^(.*\/[^/.]+)\.(json|txt)\/?$/.exec(path) : null;
    if (suffix) path = `${suffix[1]}/`;
    const format = suffix?.[2] ?? oneString(req.query.format);
    if (format !== undefined && format !== 'json') renderings.set(res, { format });
    if (format !== undefined && format !== 'json' && format !== 'txt') throw notFound();
    if (req.method === 'GET' && !path.endsWith('/')) {
      const q = req.originalUrl.indexOf('?');
      const location = `${this.#opts.mount}${path}/${q >= 0 ? req.originalUrl.slice(q) : ''}`;
      this.send(res, 301, { detail: 'Moved permanently: this URL ends with a slash.' }, { Location: location });
      return null;
    }
    const slashed = path.endsWith('/') ? path : `${path}/`;
    let params: Record<string, string> = {};
    const candidates = this.#compiled.filter((c) => {
      const m = c.regex.exec(slashed);
      if (!m) return false;
      try {
        params = Object.fromEntries(c.names.map((n, i) => [n, decodeURIComponent(m[i + 1]!)]));
      } catch {
        return false;
      }
      // No slug or alias holds a NUL, and PostgreSQL cannot even compare one: not found.
      return !Object.values(params).some((v) => v.includes('\u0000'));
    });
    return { slashed, params, candidates };
  }

  /**
   * 1. Authentication: a bad token fails at once; every v3 path needs a token, but a public route
   * (the embed API) reads public docs without one, as Read the Docs' does. v2 reads public data
   * only, so it does not even look at a token (docs/design/rest-api.md).
   */
  async #authenticate(req: Request, matched: Matched): Promise<Session> {
    let s: Session;
    try {
      s = await session(this.#opts.yoga, req, { anonymous: this.#anonymous });
    } catch (e) {
      if (e instanceof AuthenticationFailed) throw notAuthenticated(e.message);
      throw e;
    }
    const publicRoute = matched.candidates.length > 0 && matched.candidates.every((c) => c.route.tokenless);
    if (!this.#anonymous && !s.context.viewer && !publicRoute) throw notAuthenticated();
    return s;
  }

  /** The route for the request's method (undefined: 405, answered after the throttle), and its renderer when one was asked for. */
  #choose(req: Request, res: Response, matched: Matched): Route | undefined {
    if (matched.candidates.length === 0) throw notFound();
    const route = matched.candidates.find((c) => c.route.method === req.method)?.route;
    const rendering = renderings.get(res);
    if (rendering) {
      rendering.render = route?.renderers?.[rendering.format];
      if (!rendering.render) throw notFound();
    }
    return route;
  }

  /**
   * 2. Permission (maintainers write; redirects and variables are maintainers' even to read) is
   * the operation's own rule, declared on its GraphQL fields, whose typed errors (401, 404, 403)
   * the operation answers with. Only an answer given before the operation runs (429, 405, 400)
   * asks the rule first, so that a caller without permission hears 403, in DRF's order.
   */
  #checks(s: Session, matched: Matched, route: Route | undefined): Checks {
    const needsMaintainer = route ? this.#maintainers.has(route) : matched.candidates.some((c) => this.#maintainers.has(c.route));
    const permission = async () => {
      if (needsMaintainer && matched.params.project !== undefined) await this.#requireMaintainer(s, matched.params.project);
    };
    return {
      s,
      needsMaintainer,
      permission,
      refuse: async (answer) => {
        await permission();
        throw answer;
      },
    };
  }

  /**
   * 3. Throttle (v3's is per user; v2 has none, as in Read the Docs). A request that permission
   * refuses after all is not counted: DRF checks permission before it counts.
   */
  async #throttle(checks: Checks, counted: Counted): Promise<void> {
    const viewer = checks.s.context.viewer;
    const throttleKey = viewer && this.#opts.throttle ? `user:${viewer.id}` : null;
    const wait = throttleKey ? await this.#opts.throttle!.check(throttleKey) : 0;
    if (wait) {
      await checks.refuse(detail(429, `Request was throttled. Expected available in ${wait} second${wait === 1 ? '' : 's'}.`, { 'Retry-After': String(wait) }));
    }
    counted.throttleKey = throttleKey;
    counted.maintainersRoute = checks.needsMaintainer;
  }

  /** 4. Method. */
  async #method(method: string, matched: Matched, route: Route | undefined, checks: Checks): Promise<Route> {
    if (route) return route;
    const allowed = [...new Set(matched.candidates.map((c) => c.route.method))].join(', ');
    return checks.refuse(detail(405, `Method "${method}" not allowed.`, { Allow: allowed }));
  }

  /** 5. Lookup values that cannot be ids are simply not found. */
  async #lookupValues(params: Record<string, string>, checks: Checks): Promise<Record<string, string | number>> {
    const typed: Record<string, string | number> = {};
    for (const [name, value] of Object.entries(params)) {
      if (INTEGER_PARAMS.has(name)) {
        if (!/^\d{1,9}$/.test(value)) await checks.refuse(notFound());
        typed[name] = Number(value);
      } else typed[name] = value;
    }
    return typed;
  }

  /** 6. Validation of the query and the body, then the operation and its variables. */
  async #plan(req: Request, route: Route, typed: Record<string, string | number>, checks: Checks): Promise<Plan> {
    let flex: FlexParams = NO_FLEX;
    try {
      if (this.#opts.flex !== false) flex = parseFlex(req.query as Record<string, unknown>);
    } catch (e) {
      if (e instanceof RecursiveExpansionError) await checks.refuse(new RestError(400, [e.message]));
      throw e;
    }
    const call: RouteCall = { params: typed, query: req.query as Record<string, unknown> };
    await this.#readBody(req, route, call, checks);
    if (route.filters) call.filter = readFilters(route, call.query);
    const limit = route.allPages ? this.#opts.maxLimit : intParam(call.query.limit, DEFAULT_LIMIT, 1, this.#opts.maxLimit);
    // Any offset past the last row is an empty page; GraphQL's Int stops at 2^31 - 1.
    const offset = intParam(call.query.offset, 0, 0, MAX_OFFSET);
    const permitted = route.envelope === 'page' ? new Set(route.permitExpand ?? []) : undefined;
    if (permitted) flex = permit(flex, permitted);
    const { document, declared, selection } = this.#documents.of(route);
    const all: Record<string, unknown> = { ...typed, limit, offset, filter: call.filter, ...route.variables?.(call) };
    const variables: Record<string, unknown> = Object.fromEntries(Object.entries(all).filter(([k]) => declared.has(k)));
    selection?.variables(flex, permitted, variables as Record<string, boolean>);
    return { flex, call, limit, offset, permitted, document, variables };
  }

  /** The body a route reads, as its input type reads it; a body that could not be read answers only here. */
  async #readBody(req: Request, route: Route, call: RouteCall, checks: Checks): Promise<void> {
    const bodyError = this.bodyErrors.get(req);
    if (route.input) {
      const read = bodyError ? { errors: undefined } : readInput(this.#opts.yoga.getEnveloped().schema, route.input, req.body);
      if (bodyError || read.errors) {
        await checks.permission();
        await this.#requireObjects(checks.s, route, call.params);
        throw bodyError ?? new RestError(400, read.errors);
      }
      call.input = read.input;
    } else if (bodyError && (bodyError as { status?: unknown }).status === 413) {
      // Too large is refused wherever it is sent; unreadable JSON only where a body is read.
      await checks.refuse(bodyError);
    }
  }

  /**
   * 7. The operation, through yoga. An upload's body is read only now, from a maintainer: nobody
   * else can make Lectern store a byte. It is removed before the answer is sent.
   */
  async #run(req: Request, route: Route, plan: Plan, checks: Checks): Promise<ExecutionResult> {
    let upload: UploadedFile | undefined;
    if (route.upload) {
      await checks.permission();
      if (!this.#opts.uploads) throw notFound();
      try {
        upload = await spoolRequestBody(req, this.#opts.uploads.dir, this.#opts.uploads.maxBytes);
      } catch (e) {
        const status = (e as { status?: unknown }).status;
        if (status === 400 || status === 413) throw detail(status, (e as Error).message);
        throw e;
      }
      plan.variables[route.upload] = upload;
    }
    try {
      return route.allPages ? await this.#runAllPages(route, plan, checks) : await checks.s.run(plan.document, plan.variables);
    } finally {
      await upload?.remove().catch(() => {});
    }
  }

  /**
   * A route that answers every row: its connection read at the largest page until a page comes
   * back short, its pages' nodes joined into the first page's result; at most ALL_PAGES_MAX_ROWS,
   * so a project with a hostile number of versions costs a bounded read.
   */
  async #runAllPages(route: Route, plan: Plan, checks: Checks): Promise<ExecutionResult> {
    const { path } = coordinateOf(route);
    let first: ExecutionResult | undefined;
    const nodes: unknown[] = [];
    for (let offset = 0; nodes.length < ALL_PAGES_MAX_ROWS; offset += plan.limit) {
      const result = await checks.s.run(plan.document, { ...plan.variables, limit: plan.limit, offset });
      const page = dig(result.data, path) as Node | null | undefined;
      if (result.errors?.length || !page) return result;
      first ??= result;
      const got = (page.nodes as unknown[] | undefined) ?? [];
      nodes.push(...got);
      if (got.length < plan.limit) break;
    }
    (dig(first!.data, path) as Node).nodes = nodes.slice(0, ALL_PAGES_MAX_ROWS);
    return first!;
  }

  /** 8. The answer: the operation's errors as DRF's, an empty page or a 404 for nothing, else the route's envelope. */
  #answer(req: Request, route: Route, plan: Plan, result: ExecutionResult, checks: Checks): { status: number; body: unknown } {
    const routeError = (e: RestError) => (route.error ? route.error(e, plan.call) : e);
    if (result.errors?.length) throw routeError(fromGraphQLErrors(result.errors, route.bareErrors ?? false));
    const { root: rootType, path: resultPath } = coordinateOf(route);
    let data = dig(result.data, resultPath) as Node | null | undefined;
    if (rootType === 'Mutation' && data) {
      if (typeof data.code === 'string') throw fromDomainError(data as never, route.bareErrors ?? false);
      data = data.data as Node;
    }
    if (data === null || data === undefined) {
      // A nested list under a project the caller cannot see is an empty page (docs/design/read-the-docs.md §2.2),
      // except on a maintainers' route, where the project's lookup is part of the permission check.
      if (checks.needsMaintainer && resultPath[0] === 'project' && !dig(result.data, ['project'])) throw routeError(notFound('Project'));
      // Under an organization the caller is not in, as the organization itself: nothing of it is told (docs/design/rest-api.md "Organizations").
      if (resultPath[0] === 'organization' && !dig(result.data, ['organization'])) throw routeError(notFound('Organization'));
      if (route.envelope === 'page') return { status: 200, body: { count: 0, next: null, previous: null, results: [] } };
      throw routeError(notFound(route.notFound));
    }
    const env = this.#env;
    if (route.respond) return route.respond(data, env, plan.flex, plan.call);
    if (route.envelope === 'none') return { status: route.status, body: undefined };
    if (route.envelope === 'page') {
      const count = data.totalCount as number;
      const results = (data.nodes as Node[]).map((n) => serialize(route.resource!, n, env, plan.flex, plan.permitted));
      return { status: route.status, body: { count, ...pageLinks(env, this.#opts.mount, req, count, plan.limit, plan.offset), results } };
    }
    // Read the Docs builds create answers without request context: expand has no effect there.
    return { status: route.status, body: serialize(route.resource!, data, env, rootType === 'Mutation' ? NO_FLEX : plan.flex) };
  }

  async #requireMaintainer(s: Session, project: string): Promise<void> {
    const r = await s.run(this.#documents.maintainer, { project });
    if (r.errors?.length) throw fromGraphQLErrors(r.errors, false);
    const p = (r.data as Node).project;
    if (!p) throw notFound('Project');
    if (!p.viewerIsMaintainer) throw forbidden();
  }

  /** Throws the 404 of the first object in the path that is not there (the project's included). */
  async #requireObjects(s: Session, route: Route, params: Record<string, string | number>): Promise<void> {
    const lookups = this.#documents.of(route).lookups;
    if (!lookups) return;
    const r = await s.run(lookups.document, Object.fromEntries(['project', ...lookups.names.map((n) => n.param)].map((n) => [n, params[n]])));
    if (r.errors?.length) throw fromGraphQLErrors(r.errors, false);
    const p = (r.data as Node).project;
    if (!p) throw notFound('Project');
    for (const n of lookups.names) if (!p[n.param]) throw notFound(n.model);
  }

  /** The last resort: a RestError as itself, express's body errors as DRF's, anything else a logged 500. */
  readonly errorHandler: express.ErrorRequestHandler = (err, _req, res, _next) => {
    const status = typeof err?.status === 'number' && err.status >= 400 && err.status < 500 ? err.status : 500;
    if (err instanceof RestError) this.send(res, err.status, err.body, err.headers);
    else if (status === 413) this.send(res, 413, { detail: `Request body larger than ${this.#opts.maxBodyBytes} bytes.` });
    else if (status === 400 && err?.type === 'entity.parse.failed') this.send(res, 400, { detail: `JSON parse error - ${err.message}` });
    else if (status < 500) this.send(res, status, { detail: String(err?.message ?? 'Bad request.') });
    else {
      (this.#opts.yoga as unknown as { logger: { error: (e: unknown) => void } }).logger?.error?.(err);
      this.send(res, 500, { detail: 'A server error occurred.' });
    }
  };
}

export function restRouter(opts: RouterOptions): express.Router {
  const adapter = new RestAdapter(opts);
  const router = express.Router();
  // The body is read up front (bounded), but a body that cannot be read only counts where the
  // route reads it, after authentication, permission, throttle, method and lookup: DRF parses
  // `request.data` lazily (docs/design/read-the-docs.md §2.3). `strict: false`: a JSON string or number is valid
  // JSON, and the serializer, not the parser, says it is not a dictionary.
  const parseJson = express.json({ limit: opts.maxBodyBytes, type: () => true, strict: false });
  router.use((req, res, next) => {
    if (adapter.isUpload(req)) return next();
    parseJson(req, res, (err?: unknown) => {
      if (err) adapter.bodyErrors.set(req, err);
      next();
    });
  });
  router.use((req, res, next) => {
    const counted: Counted = { throttleKey: null, maintainersRoute: false };
    adapter.handle(req, res, counted).catch(async (e: unknown) => {
      if (counted.throttleKey && isPermissionRefusal(e, counted.maintainersRoute)) await opts.throttle!.release(counted.throttleKey);
      next(e);
    });
  });
  router.use(adapter.errorHandler);
  return router;
}

export type { Method };
