// Every /api/v2 route of docs/design/rest-api.md "v2 routes" (deprecated, read-only, public data only) as an entry keyed
// by the GraphQL coordinate it runs, through the same router as v3 (src/rest/router.ts) with v2's
// options: anonymous, no flex fields, unsorted keys, `{"detail": "Not found."}` for missing ids.

import type express from 'express';
import type { Yoga } from '../../graphql/yoga.ts';
import { RestError } from '../errors.ts';
import { NO_FLEX } from '../flex.ts';
import { type Node, selection, serialize } from '../resource.ts';
import type { Route } from '../route.ts';
import { oneString, restRouter } from '../router.ts';
import { SEARCH_SELECTION, searchPage, searchPageBody } from '../search.ts';
import { Build, Project, Version } from './resources.ts';

const EMBED_ARGS = ['project', 'version', 'doc', 'path', 'section', 'url'] as const;

/** Python's str() of a value, as the Django template writes it (None, True, False). */
const py = (v: unknown) => (v === null || v === undefined ? 'None' : v === true ? 'True' : v === false ? 'False' : String(v));

/**
 * A build's log as text: readthedocs.org's `restapi/log.txt` template over the v2 representation,
 * a header, then each command with its times, exit code and output. A running build shows the
 * commands recorded so far and `Success: Unknown`.
 */
export function buildLog(b: Node): string {
  const done = b.state === 'finished' || b.state === 'cancelled';
  const header = [
    'Read the Docs build information',
    `Build id: ${py(b.id)}`,
    `Project: ${py(b.project_slug)}`,
    `Version: ${py(b.version_slug)}`,
    `Commit: ${py(b.commit)}`,
    `Date: ${py(b.date)}`,
    `State: ${py(b.state)}`,
    `Success: ${done ? py(b.success) : 'Unknown'}`,
  ].join('\n');
  const commands = (b.commands as Node[]).map(
    (c) =>
      `\n[rtd-command-info] start-time: ${py(c.start_time)}, end-time: ${py(c.end_time)}, duration: ${py(c.run_time)}, exit-code: ${py(c.exit_code)}\n${c.command}\n${c.output}\n`,
  );
  return `${header}\n\n${commands.join('')}\n`;
}

export const v2Routes: Route[] = [
  {
    name: 'project-list',
    method: 'GET',
    path: '/project/',
    summary: 'Public projects, by slug',
    status: 200,
    envelope: 'page',
    resource: Project,
    filters: { slug: { field: 'slugExact', type: 'string' } },
    field: 'Query.projects',
  },
  {
    name: 'project-detail',
    method: 'GET',
    path: '/project/{id}/',
    summary: 'A public project by id',
    status: 200,
    envelope: 'object',
    resource: Project,
    field: 'Query.projectById',
  },
  {
    name: 'project-active-versions',
    method: 'GET',
    path: '/project/{id}/active_versions/',
    summary: "A project's active public versions, built or not, as `{versions: [...]}`",
    status: 200,
    envelope: 'object',
    field: 'Query.projectById.versions',
    // Every active version at once, as Read the Docs answers: read page by page (allPages).
    args: { versions: { filter: { active: true }, limit: '$limit', offset: '$offset' } },
    allPages: true,
    select: `nodes { ${selection(Version, NO_FLEX)} }`,
    respond: (data, env) => ({
      status: 200,
      body: { versions: (data.nodes as Node[]).map((v) => serialize(Version, v, env, NO_FLEX)) },
    }),
  },
  {
    name: 'version-list',
    method: 'GET',
    path: '/version/',
    summary: 'Public versions of every public project',
    status: 200,
    envelope: 'page',
    resource: Version,
    filters: { project__slug: { field: 'projectSlug', type: 'string' }, active: { field: 'active', type: 'boolean' } },
    field: 'Query.versions',
  },
  {
    name: 'version-detail',
    method: 'GET',
    path: '/version/{id}/',
    summary: 'A public version by id',
    status: 200,
    envelope: 'object',
    resource: Version,
    field: 'Query.version',
  },
  {
    name: 'build-list',
    method: 'GET',
    path: '/build/',
    summary: 'Builds of public versions, newest first',
    status: 200,
    envelope: 'page',
    resource: Build,
    filters: { project__slug: { field: 'projectSlug', type: 'string' }, commit: { field: 'commit', type: 'string' } },
    field: 'Query.builds',
  },
  {
    name: 'build-detail',
    method: 'GET',
    path: '/build/{id}/',
    summary: 'A build of a public version by id, with its commands',
    status: 200,
    envelope: 'object',
    resource: Build,
    field: 'Query.build',
    // `/api/v2/build/<id>.txt`: the log as Read the Docs' PlainTextBuildRenderer writes it (CLI tools fetch it).
    renderers: { txt: buildLog },
  },
  {
    name: 'search',
    method: 'GET',
    path: '/search/',
    summary: 'Full-text search of a version of public docs and its subprojects, by page (readthedocs-sphinx-search); q, project and version are required',
    status: 200,
    envelope: 'object',
    field: 'Query.searchPages',
    args: { searchPages: { query: '$query', scopes: '$scopes', maintained: '$maintained', limit: '$limit', offset: '$offset' } },
    variables: (c) => {
      const missing = (['q', 'project', 'version'] as const).filter((k) => !oneString(c.query[k]));
      if (missing.length) throw new RestError(400, Object.fromEntries(missing.map((k) => [k, ['This query param is required']])));
      const { limit, offset } = searchPage(c);
      return {
        query: oneString(c.query.q),
        scopes: [{ project: oneString(c.query.project), version: oneString(c.query.version), includeSubprojects: true }],
        limit,
        offset,
      };
    },
    select: SEARCH_SELECTION,
    respond: (data, env, _flex, call) => {
      // Read the Docs answers 404 for a project or version it does not have (here: that the caller cannot read either).
      const [first] = data.searched as Node[];
      if (first?.project.slug !== oneString(call.query.project) || first?.version.slug !== oneString(call.query.version))
        throw new RestError(404, { detail: 'Not found.' });
      return {
        status: 200,
        body: searchPageBody(data, env, call, 'v2'),
      };
    },
  },
  {
    name: 'embed',
    method: 'GET',
    path: '/embed/',
    summary: 'A section of a page of public docs as HTML (the historical embed algorithm of Read the Docs)',
    status: 200,
    envelope: 'object',
    field: 'Query.embed',
    args: { embed: Object.fromEntries(EMBED_ARGS.map((a) => [a, `$${a}`])) },
    select: 'content headers { title anchor } url meta { project version doc section }',
    variables: (c) => Object.fromEntries(EMBED_ARGS.map((a) => [a, oneString(c.query[a]) ?? null])),
    respond: (data) => ({
      status: 200,
      body: {
        content: data.content,
        // Single-entry objects, title to anchor, as the historical API wrote its toc.
        headers: (data.headers as Node[]).map((h) => ({ [h.title]: h.anchor })),
        url: data.url,
        meta: data.meta,
      },
    }),
    // Read the Docs' own bodies: its 400, and its 404 for a page (or section source) it cannot read.
    error: (e, c) => {
      if (e.status === 400) return new RestError(400, { error: 'Invalid Arguments. Please provide "url" or "section" and "path" GET arguments.' });
      if (e.status === 404 && (e.body as { detail?: string }).detail === 'Not found.') {
        const q = (k: string) => oneString(c.query[k]) || null;
        const path = q('path') ?? '';
        const doc = q('doc');
        return new RestError(404, { error: `Can't find content for section: doc=${doc ?? 'None'} path=${path} section=${q('section') ?? 'None'}` });
      }
      return e;
    },
  },
];

/** The /api/v2 router: v2's routes through the shared REST router, with v2's conventions. */
export function v2Router(opts: { yoga: Yoga; publicUrl: string; maxBodyBytes: number; maxLimit: number }): express.Router {
  const mount = '/api/v2';
  return restRouter({
    yoga: opts.yoga,
    routes: v2Routes,
    api: `${opts.publicUrl}${mount}`,
    publicUrl: opts.publicUrl,
    mount,
    throttle: null,
    maxBodyBytes: opts.maxBodyBytes,
    maxLimit: opts.maxLimit,
    formatSuffixes: true,
    authentication: 'anonymous',
    flex: false,
    // Read the Docs' v2 renderer does not sort keys: the representation's own order.
    json: (body) => JSON.stringify(body),
    root: (api) => ({ project: `${api}/project/`, version: `${api}/version/`, build: `${api}/build/`, embed: `${api}/embed/` }),
  });
}
