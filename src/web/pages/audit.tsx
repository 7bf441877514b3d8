// The audit log (docs/design/audit.md): the whole site's for site admins, an organization's for its
// owners (its own entries and its members' sign-ins and tokens). Both are newest first, filtered by
// action, person, project and days, fifty entries a page.
import { useId, useState } from 'react';
import { useQuery } from 'urql';
import { type FragmentOf, graphql, readFragment } from '../graphql.ts';
import { Failure, Loading } from '../ui.tsx';

/**
 * The actions an entry can have: the API's list (`AuditEntry.action`'s description in
 * schema.graphql); the API refuses an unknown one by name, so a stale list fails loudly.
 */
const ACTIONS = [
  'sign-in',
  'sign-in-failed',
  'sign-out',
  'token-created',
  'token-revoked',
  'token-refused',
  'organization-created',
  'organization-changed',
  'organization-deleted',
  'member-added',
  'member-removed',
  'member-role-changed',
  'invitation-created',
  'invitation-revoked',
  'team-created',
  'team-changed',
  'team-deleted',
  'team-member-added',
  'team-member-removed',
  'project-moved',
  'project-settings-changed',
  'build-limits-changed',
  'maintainer-added',
  'maintainer-removed',
  'variable-added',
  'variable-removed',
  'private-download',
] as const;

const PAGE = 50;

/** An entry's row, in the site's log and an organization's alike. */
const AuditEntryRowFields = graphql(`
  fragment AuditEntryRow on AuditEntry { id createdAt action username organization project method ip userAgent data }
`);
const OrganizationAudit = graphql(
  `
  query OrganizationAudit($slug: String!, $filter: AuditFilter, $limit: Int, $offset: Int) {
    organization(slug: $slug) {
      id
      auditLog(filter: $filter, limit: $limit, offset: $offset) { totalCount nodes { id ...AuditEntryRow } }
    }
  }
`,
  [AuditEntryRowFields],
);
const SiteAudit = graphql(
  `
  query SiteAudit($filter: AuditFilter, $limit: Int, $offset: Int) {
    viewer { id username isAdmin } setupNeeded
    auditLog(filter: $filter, limit: $limit, offset: $offset) { totalCount nodes { id ...AuditEntryRow } }
  }
`,
  [AuditEntryRowFields],
);

type Entries = { totalCount: number; nodes: readonly FragmentOf<typeof AuditEntryRowFields>[] };
type Filter = { action?: string; username?: string; project?: string; since?: string; until?: string };

/** A day (YYYY-MM-DD) as the reader's local midnight, or the last moment of that day. */
const dayStart = (d: string) => new Date(`${d}T00:00:00`).toISOString();
const dayEnd = (d: string) => new Date(`${d}T23:59:59.999`).toISOString();

/** The form's fields as the API's filter: empty fields are left out. */
function filterOf(f: Record<string, string>): Filter {
  const filter: Filter = {};
  if (f.action) filter.action = f.action;
  if (f.username?.trim()) filter.username = f.username.trim();
  if (f.project?.trim()) filter.project = f.project.trim();
  if (f.since) filter.since = dayStart(f.since);
  if (f.until) filter.until = dayEnd(f.until);
  return filter;
}

/** The log of the organization `organization`, or without it the whole site's. */
export function AuditLog({ organization }: { organization?: string }) {
  const [filter, setFilter] = useState<Filter>({});
  const [page, setPage] = useState(0);
  const paging = { filter, limit: PAGE, offset: page * PAGE };
  // Always asked again: entries are written all the time, by everyone.
  const [ofOrg] = useQuery({
    query: OrganizationAudit,
    variables: { slug: organization ?? '', ...paging },
    pause: !organization,
    requestPolicy: 'cache-and-network',
  });
  const [ofSite] = useQuery({ query: SiteAudit, variables: paging, pause: Boolean(organization), requestPolicy: 'cache-and-network' });
  const { data, fetching, error } = organization ? ofOrg : ofSite;
  const entries = organization ? ofOrg.data?.organization?.auditLog : ofSite.data?.auditLog;
  return (
    <>
      <AuditFilters
        apply={(f) => {
          setFilter(f);
          setPage(0);
        }}
      />
      {error && <Failure error={error} />}
      {fetching && !data && <Loading what="the audit log" />}
      {entries && entries.totalCount === 0 && <p>No entries{Object.keys(filter).length ? ' match the filter' : ''}.</p>}
      {entries && entries.totalCount > 0 && <AuditTable entries={entries} site={!organization} />}
      {entries && <Pager page={page} total={entries.totalCount} go={setPage} />}
    </>
  );
}

function AuditFilters({ apply }: { apply: (f: Filter) => void }) {
  const id = useId();
  return (
    <search>
      <form
        className="filters"
        aria-label="Filter the audit log"
        onSubmit={(e) => {
          e.preventDefault();
          const fields = Object.fromEntries([...new FormData(e.currentTarget).entries()].map(([k, v]) => [k, String(v)]));
          apply(filterOf(fields));
        }}
      >
        <div className="filter">
          <label htmlFor={`${id}-action`}>Action</label>
          <select id={`${id}-action`} name="action" defaultValue="">
            <option value="">Any</option>
            {ACTIONS.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </div>
        <div className="filter">
          <label htmlFor={`${id}-username`}>Username</label>
          <input id={`${id}-username`} name="username" type="search" />
        </div>
        <div className="filter">
          <label htmlFor={`${id}-project`}>Project (slug)</label>
          <input id={`${id}-project`} name="project" type="search" />
        </div>
        <div className="filter">
          <label htmlFor={`${id}-since`}>Since</label>
          <input id={`${id}-since`} name="since" type="date" />
        </div>
        <div className="filter">
          <label htmlFor={`${id}-until`}>Until</label>
          <input id={`${id}-until`} name="until" type="date" />
        </div>
        <button type="submit">Filter</button>
      </form>
    </search>
  );
}

/** `data` compactly: `key: value`, lists joined by commas; never a secret (docs/design/audit.md). */
export function dataText(data: unknown): string {
  if (data === null || data === undefined) return '';
  if (typeof data !== 'object') return String(data);
  const value = (v: unknown): string => {
    if (v === null || v === undefined || v === '' || (Array.isArray(v) && v.length === 0)) return '—';
    if (Array.isArray(v)) return v.map(value).join(', ');
    return typeof v === 'object' ? JSON.stringify(v) : String(v);
  };
  if (Array.isArray(data)) return value(data);
  return Object.entries(data)
    .map(([k, v]) => `${k}: ${value(v)}`)
    .join('; ');
}

const exact = (iso: string) => new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

function AuditTable({ entries, site }: { entries: Entries; site: boolean }) {
  return (
    <table className="list cards-on-phone audit">
      <caption className="visually-hidden">Audit log entries, newest first</caption>
      <thead>
        <tr>
          <th scope="col">When</th>
          <th scope="col">Action</th>
          <th scope="col">Who</th>
          {site && <th scope="col">Organization</th>}
          <th scope="col">Project</th>
          <th scope="col">From</th>
          <th scope="col">Details</th>
        </tr>
      </thead>
      <tbody>
        {entries.nodes
          .map((ref) => readFragment(AuditEntryRowFields, ref))
          .map((e) => (
            <tr key={e.id}>
              <td className="row-head">
                <time dateTime={e.createdAt}>{exact(e.createdAt)}</time>
              </td>
              <td data-label="Action">
                <code>{e.action}</code>
              </td>
              <td data-label="Who">
                {e.username || '—'}
                {e.method && <div className="muted">by {e.method}</div>}
              </td>
              {site && <td data-label="Organization">{e.organization || '—'}</td>}
              <td data-label="Project">{e.project || '—'}</td>
              <td data-label="From">
                {e.ip || '—'}
                {e.userAgent && <div className="muted agent">{e.userAgent}</div>}
              </td>
              <td data-label="Details">{dataText(e.data)}</td>
            </tr>
          ))}
      </tbody>
    </table>
  );
}

function Pager({ page, total, go }: { page: number; total: number; go: (page: number) => void }) {
  if (total <= PAGE) return null;
  return (
    <nav className="pager" aria-label="Pages of the audit log">
      <button type="button" disabled={page === 0} onClick={() => go(page - 1)}>
        Previous
      </button>
      <span>
        {page * PAGE + 1}–{Math.min(total, (page + 1) * PAGE)} of {total}
      </span>
      <button type="button" disabled={(page + 1) * PAGE >= total} onClick={() => go(page + 1)}>
        Next
      </button>
    </nav>
  );
}
