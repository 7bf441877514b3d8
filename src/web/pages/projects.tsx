// The projects the reader can see (search by name, filter by tag), and importing a repository.
import { useClient, useQuery } from 'urql';
import { Link, useLocation, useSearch } from 'wouter';
import { type FragmentOf, graphql, readFragment } from '../graphql.ts';
import { ActionForm, Failure, Field, Loading, Pager, problemOf, Select, StateBadge, Time } from '../ui.tsx';

const PAGE = 25;

/** A project's row in the list: its name, language, tags and last build. */
const ProjectRowFields = graphql(`
  fragment ProjectRow on Project {
    id slug name description tags privacyLevel viewerIsMaintainer
    language { code name }
    builds(limit: 1) { nodes { id state success createdAt message } }
  }
`);
const Projects = graphql(
  `
  query Projects($filter: ProjectFilter, $limit: Int, $offset: Int) {
    viewer { id username isAdmin } setupNeeded
    projects(filter: $filter, limit: $limit, offset: $offset) { totalCount nodes { id ...ProjectRow } }
  }
`,
  [ProjectRowFields],
);

export function ProjectsPage() {
  const search = new URLSearchParams(useSearch());
  const [, navigate] = useLocation();
  const name = search.get('q') ?? '';
  const tag = search.get('tag') ?? '';
  const page = Math.max(0, Number(search.get('page') ?? 0) || 0);
  const filter = { ...(name ? { name } : {}), ...(tag ? { tag } : {}) };
  const [{ data, fetching, error }] = useQuery({ query: Projects, variables: { filter, limit: PAGE, offset: page * PAGE } });
  const go = (q: string, t: string, p = 0) => {
    const s = new URLSearchParams();
    if (q) s.set('q', q);
    if (t) s.set('tag', t);
    if (p) s.set('page', String(p));
    navigate(s.size ? `/?${s}` : '/');
  };
  const total = data?.projects.totalCount ?? 0;
  return (
    <section>
      <div className="title-row">
        <h1>Projects</h1>
        <Link href="/import" className="button">
          Import a project
        </Link>
      </div>
      <search>
        <form
          className="filters"
          onSubmit={(e) => {
            e.preventDefault();
            const f = new FormData(e.currentTarget);
            go(String(f.get('q') ?? ''), String(f.get('tag') ?? ''));
          }}
        >
          <label>
            Name <input name="q" defaultValue={name} key={`q${name}`} type="search" />
          </label>
          <label>
            Tag <input name="tag" defaultValue={tag} key={`t${tag}`} />
          </label>
          <button type="submit">Search</button>
        </form>
      </search>
      {error && <Failure error={error} />}
      {fetching && !data && <Loading what="projects" />}
      {data && total === 0 && <p>No projects{name || tag ? ' match' : ' yet'}.</p>}
      {data && total > 0 && (
        <>
          <ProjectsTable projects={data.projects.nodes} />
          <Pager page={page} size={PAGE} total={total} go={(p) => go(name, tag, p)} />
        </>
      )}
    </section>
  );
}

/** The projects of one page: each with its language, tags and last build. */
function ProjectsTable({ projects }: { projects: readonly FragmentOf<typeof ProjectRowFields>[] }) {
  return (
    <table className="list cards-on-phone">
      <caption className="visually-hidden">Projects</caption>
      <thead>
        <tr>
          <th scope="col">Project</th>
          <th scope="col">Language</th>
          <th scope="col">Tags</th>
          <th scope="col">Last build</th>
        </tr>
      </thead>
      <tbody>
        {projects.map((ref) => (
          <ProjectRow key={readFragment(ProjectRowFields, ref).id} p={ref} />
        ))}
      </tbody>
    </table>
  );
}

/** A project's row: its name (a link), privacy and description, language, tags (links to them) and last build. */
function ProjectRow(props: { p: FragmentOf<typeof ProjectRowFields> }) {
  const p = readFragment(ProjectRowFields, props.p);
  const last = p.builds.nodes[0];
  return (
    <tr>
      <td>
        <Link href={`/projects/${p.slug}`}>{p.name}</Link>
        {p.privacyLevel === 'private' && <span className="badge">private</span>}
        <div className="muted">{p.description}</div>
      </td>
      <td data-label="Language">{p.language.name}</td>
      <td data-label="Tags">
        {p.tags.map((t) => (
          <Link key={t} href={`/?tag=${encodeURIComponent(t)}`} className="tag">
            {t}
          </Link>
        ))}
      </td>
      <td data-label="Last build">
        {last ? (
          <>
            <StateBadge {...last} /> <Time iso={last.createdAt} />
          </>
        ) : (
          '—'
        )}
      </td>
    </tr>
  );
}

// The projects' lists (searched, filtered, paged) cannot place a new project: src/web/cache-updates.ts
// has them read again when next shown.
const ImportProject = graphql(`
  mutation ImportProject($input: ImportProjectInput!) {
    importProject(input: $input) {
      __typename
      ... on MutationImportProjectSuccess { data { id slug } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);

/** The languages and programming languages a project may name: one list for import and settings. */
export const ChoicesQuery = graphql(`
  query Choices { languages { code name } programmingLanguages { code name } }
`);

export const PRIVACY = [
  { value: 'public', label: 'Public', help: 'Anyone can read the docs, signed in or not.' },
  {
    value: 'private',
    label: 'Private',
    help: 'Only people signed in with access read the docs: its maintainers and, in an organization, its owners and the teams given the project.',
  },
];

/** A list of `{code, name}` choices as a select's options, `current` kept first if it is no longer offered. */
export function choiceOptions(list: readonly { code: string; name: string }[] | undefined, current?: { code: string; name: string }) {
  const all = list ?? [];
  const options = all.map((c) => ({ value: c.code, label: `${c.name} (${c.code})` }));
  return !current || all.some((c) => c.code === current.code) ? options : [{ value: current.code, label: `${current.name} (${current.code})` }, ...options];
}

export function ImportPage() {
  const client = useClient();
  const [{ data: choices }] = useQuery({ query: ChoicesQuery });
  const [, navigate] = useLocation();
  return (
    <section className="narrow">
      <h1>Import a project</h1>
      <ActionForm
        label="Import"
        act={async (f) => {
          const input = {
            name: f.name ?? '',
            repository: { url: f.url ?? '', type: 'git' },
            defaultBranch: f.defaultBranch || undefined,
            language: f.language || undefined,
            privacyLevel: (f.privacyLevel || 'public') as 'public' | 'private',
          };
          const r = await client.mutation(ImportProject, { input }).toPromise();
          const answer = r.data?.importProject;
          const p = problemOf(answer, r.error);
          if (!p && answer?.__typename === 'MutationImportProjectSuccess') navigate(`/projects/${answer.data.slug}/builds`);
          return p;
        }}
      >
        <Field label="Name" name="name" required />
        <Field
          label="Repository URL"
          name="url"
          field="repository.url"
          required
          hint="An https://, ssh:// or git:// address of a git repository Lectern can clone, or its path on this machine where LECTERN_BUILD_LOCAL_REPOSITORIES allows it."
        />
        <Field label="Default branch" name="defaultBranch" hint="Empty: the repository's own default branch." />
        {choices ? (
          <Select label="Language" name="language" options={choiceOptions(choices.languages)} defaultValue="en" hint="The language the docs are written in." />
        ) : (
          <Loading what="the languages" />
        )}
        <Select label="Privacy" name="privacyLevel" options={PRIVACY} defaultValue="public" />
      </ActionForm>
    </section>
  );
}
