// Read the Docs' search APIs on GraphQL's `searchPages`: v3's query syntax (`project:<slug>[/<version>]`,
// `subprojects:<slug>[/<version>]`, `user:@me`; readthedocs/search/api/v3/queryparser.py), its
// page-number pagination (page, page_size: 15 by default, 30 at most, 1,000 results deep;
// search/api/pagination.py) and its page results with their sections (search/api/v2 and v3 serializers).
import type { SearchScope } from '../domain/search.ts';
import { RestError } from './errors.ts';
import type { Node, RestEnv } from './resource.ts';
import type { RouteCall } from './route.ts';
import { oneString } from './router.ts';

const PAGE_SIZE = 15;
const MAX_PAGE_SIZE = 30;
const MAX_RESULT_WINDOW = 1000;

/** The text of a v3 query and the scopes its arguments name (anything else with a colon is text; `\:` is a colon). */
export function parseSearchQuery(q: string): { text: string; scopes: SearchScope[]; maintained: boolean } {
  const text: string[] = [];
  const scopes: SearchScope[] = [];
  let maintained = false;
  for (const token of q.split(/\s+/).filter(Boolean)) {
    const colon = token.indexOf(':');
    const name = colon < 0 ? '' : token.slice(0, colon);
    const value = token.slice(colon + 1);
    if (name === 'project' || name === 'subprojects') {
      const slash = value.indexOf('/');
      const project = slash < 0 ? value : value.slice(0, slash);
      const version = slash < 0 ? null : value.slice(slash + 1);
      scopes.push({ project, version, includeSubprojects: name === 'subprojects' });
    } else if (name === 'user') {
      maintained = value === '@me';
    } else text.push(token);
  }
  return { text: text.join(' ').replaceAll('\\:', ':'), scopes, maintained };
}

/** DRF PageNumberPagination's page and page size, as Read the Docs' SearchPagination reads and bounds them. */
export function searchPage(call: RouteCall): { page: number; size: number; limit: number; offset: number } {
  const rawSize = oneString(call.query.page_size);
  const asked = rawSize !== undefined && /^\d+$/.test(rawSize.trim()) ? Number(rawSize) : Number.NaN;
  const size = asked > 0 ? Math.min(asked, MAX_PAGE_SIZE) : PAGE_SIZE;
  const rawPage = oneString(call.query.page) ?? '1';
  const page = /^\d+$/.test(rawPage.trim()) ? Number(rawPage) : -1;
  if (page <= 0) throw new RestError(400, ['Invalid page']);
  if (page * size > MAX_RESULT_WINDOW) throw new RestError(400, ['Page number is too high.']);
  return { page, size, limit: size, offset: (page - 1) * size };
}

/** A page of search results as both APIs answer it: `{count, next, previous, results}` (`/search/` below `env.api`). */
export function searchPageBody(data: Node, env: RestEnv, call: RouteCall, api: 'v2' | 'v3') {
  return { ...searchLinks(env, '/search/', call, data.totalCount), results: (data.nodes as Node[]).map((n) => searchResult(n, api)) };
}

/** `{count, next, previous}` of a search page: next and previous are this URL with another page (none for page 1). */
function searchLinks(env: RestEnv, path: string, call: RouteCall, count: number): { count: number; next: string | null; previous: string | null } {
  const { page, size } = searchPage(call);
  const pages = Math.ceil(Math.max(1, count) / size);
  const current = Math.min(page, pages);
  const at = (n: number | null) => {
    if (n === null) return null;
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(call.query)) if (k !== 'page') for (const one of ([] as unknown[]).concat(v)) params.append(k, String(one));
    if (n > 1) params.set('page', String(n));
    const qs = params.toString();
    return `${env.api}${path}${qs ? `?${qs}` : ''}`;
  };
  return { count, next: at(current < pages ? current + 1 : null), previous: at(current > 1 ? current - 1 : null) };
}

/** What `searchPages` is asked for a page of results. */
export const SEARCH_SELECTION =
  'totalCount searched { project { slug } version { slug } } nodes { project { slug } version { slug documentationType } alias title titleHighlight url blocks { anchor role title content titleHighlight contentHighlight } }';

/** A page result as Read the Docs serializes it (v2's PageSearchSerializer; v3 makes project and version objects). */
export function searchResult(n: Node, api: 'v2' | 'v3'): Record<string, unknown> {
  const url = new URL(n.url as string);
  // Read the Docs links the index of a directory-URL build (htmldir, MkDocs, generic) by its directory.
  const path = ['sphinx_htmldir', 'mkdocs', 'generic'].includes(n.version.documentationType) ? url.pathname.replace(/(^|\/)index\.html$/, '$1') : url.pathname;
  const page = {
    type: 'page',
    title: n.title,
    path,
    domain: url.origin,
    highlights: { title: n.titleHighlight ? [n.titleHighlight] : [] },
    blocks: (n.blocks as Node[]).map((b) =>
      b.role
        ? // A domain object, as Read the Docs' DomainSearchSerializer wrote it.
          {
            type: 'domain',
            role: b.role,
            name: b.title,
            id: b.anchor,
            content: b.content,
            highlights: { name: b.titleHighlight ? [b.titleHighlight] : [], content: b.contentHighlight ? [b.contentHighlight] : [] },
          }
        : {
            type: 'section',
            id: b.anchor,
            title: b.title,
            content: b.content,
            highlights: { title: b.titleHighlight ? [b.titleHighlight] : [], content: b.contentHighlight ? [b.contentHighlight] : [] },
          },
    ),
  };
  return api === 'v3'
    ? { ...page, project: { slug: n.project.slug, alias: n.alias ?? null }, version: { slug: n.version.slug } }
    : { ...page, project: n.project.slug, project_alias: n.alias ?? null, version: n.version.slug };
}
