// A project: its versions (the page's one operation: the project with its versions and their last
// builds), builds, settings, redirects, automation rules, analytics, environment variables, integrations, notifications, maintainers,
// subprojects and translations, each a tab with a URL of its own. The page says which organization
// owns the project and what the reader may do with it (docs/design/organizations.md): a reader who
// does not maintain it (a read-only team's member) is offered only the tabs they can read.
import { useState } from 'react';
import { useClient, useQuery } from 'urql';
import { Link, useLocation } from 'wouter';
import { type FragmentOf, graphql, type ResultOf, readFragment } from '../graphql.ts';
import {
  ActButton,
  ActionForm,
  buildOutcome,
  Check,
  check,
  Failure,
  Field,
  Loading,
  NotFound,
  type Problem,
  ProblemText,
  Progress,
  problemOf,
  Select,
  StateBadge,
  seconds,
  Time,
  useEditor,
  usePendingChanges,
} from '../ui.tsx';
import { sortVersions } from '../versions.ts';
import { AnalyticsTab } from './analytics.tsx';
import { AutomationRules } from './automation-rules.tsx';
import { ChoicesQuery, choiceOptions, PRIVACY } from './projects.tsx';
import { Webhooks } from './webhooks.tsx';

const TABS = [
  ['versions', 'Versions'],
  ['builds', 'Builds'],
  ['settings', 'Settings'],
  ['redirects', 'Redirects'],
  ['automation', 'Automation rules'],
  ['analytics', 'Analytics'],
  ['variables', 'Environment variables'],
  ['integrations', 'Integrations'],
  ['notifications', 'Notifications'],
  ['maintainers', 'Maintainers'],
  ['related', 'Subprojects and translations'],
] as const;

/** Tabs whose data the API gives maintainers only: not offered to other readers. */
const MAINTAINERS_ONLY: ReadonlySet<string> = new Set(['settings', 'redirects', 'automation', 'analytics', 'variables', 'integrations', 'notifications']);

// The page's one operation is made of its components' fragments (each component names the fields it
// shows, beside it): ProjectQuery, after the fragments it composes (further down: Settings').
const ProjectTitleFields = graphql(`
  fragment ProjectTitle on Project { id name documentationUrl privacyLevel repository { url type } language { code name } }
`);
const ProjectAccessFields = graphql(`
  fragment ProjectAccess on Project { id viewerAccess organization { id slug name } }
`);

export function ProjectPage({ slug, tab }: { slug: string; tab: string }) {
  const [{ data, fetching, error }] = useQuery({ query: ProjectQuery, variables: { slug } });
  if (fetching && !data) return <Loading what="the project" />;
  if (error && !data) return <Failure error={error} />;
  const project = data?.project;
  if (!project) return <NotFound what={`There is no project "${slug}" that you can see.`} />;
  const known = TABS.some(([t]) => t === tab);
  // A site admin who does not maintain the project still gets its settings tab: its build limits are theirs to change.
  const admin = data?.viewer?.isAdmin === true;
  const readsTab = (t: string) => project.viewerIsMaintainer || !MAINTAINERS_ONLY.has(t) || (admin && t === 'settings');
  const tabs = TABS.filter(([t]) => readsTab(t));
  return (
    <section>
      <ProjectTitle project={project} />
      <ProjectAccess project={project} />
      <nav className="tabs" aria-label="Project">
        {tabs.map(([t, label]) => (
          <Link key={t} href={`/projects/${slug}/${t}`} aria-current={t === tab ? 'page' : undefined}>
            {label}
          </Link>
        ))}
      </nav>
      {!known && <NotFound what={`The project has no "${tab}" page.`} />}
      {!readsTab(tab) ? <MaintainersOnly tab={tab} /> : <ProjectTab project={project} tab={tab} admin={admin} />}
    </section>
  );
}

/** The project's name, a link to its docs, and its repository, language and privacy. */
function ProjectTitle(props: { project: FragmentOf<typeof ProjectTitleFields> }) {
  const project = readFragment(ProjectTitleFields, props.project);
  return (
    <>
      <div className="title-row">
        <h1>{project.name}</h1>
        <a href={project.documentationUrl} className="button">
          View docs
        </a>
      </div>
      <p className="muted">
        {project.repository.url} · {project.language.name} · {project.privacyLevel}
      </p>
    </>
  );
}

/** What a reader who does not maintain the project reads on a tab for maintainers (a bookmark, a link): why there is nothing. */
function MaintainersOnly({ tab }: { tab: string }) {
  const label = TABS.find(([t]) => t === tab)?.[1].toLowerCase() ?? tab;
  return <p>Only the project's maintainers see and change its {label}.</p>;
}

/** The organization that owns the project, and the reader's access to it, in words. */
function ProjectAccess(props: { project: FragmentOf<typeof ProjectAccessFields> }) {
  const project = readFragment(ProjectAccessFields, props.project);
  const org = project.organization;
  if (!org && !project.viewerAccess) return null;
  return (
    <p>
      {org && (
        <>
          In the organization <Link href={`/organizations/${org.slug}`}>{org.name}</Link>.{' '}
        </>
      )}
      {project.viewerAccess === 'admin' && 'You maintain this project.'}
      {project.viewerAccess === 'readonly' && (
        <>
          <span className="badge">read-only</span> Read-only access through a team: you read its docs, versions and builds, and change nothing.
        </>
      )}
    </p>
  );
}

function ProjectTab({ project, tab, admin }: { project: ProjectData; tab: string; admin: boolean }) {
  const slug = project.slug;
  // The versions are read once (Lectern prices each selection of a list: one of 500 rows is dear),
  // as the versions tab's rows: the builds tab and the settings read their rows' fields too.
  const versions = readFragment(VersionsFields, project).versions.nodes;
  return (
    <>
      {tab === 'versions' && <Versions project={project} />}
      {tab === 'builds' && <Builds project={project} versions={versions} />}
      {tab === 'settings' && <Settings project={project} versions={versions} admin={admin} />}
      {tab === 'redirects' && <Redirects slug={slug} />}
      {tab === 'automation' && <AutomationRules slug={slug} />}
      {tab === 'analytics' && <AnalyticsTab slug={slug} />}
      {tab === 'variables' && <Variables slug={slug} />}
      {tab === 'integrations' && <Integrations slug={slug} />}
      {tab === 'notifications' && <Webhooks slug={slug} />}
      {tab === 'maintainers' && <Maintainers slug={slug} />}
      {tab === 'related' && <Related slug={slug} />}
    </>
  );
}

type ProjectData = NonNullable<ResultOf<typeof ProjectQuery>['project']>;

/** A version's row, as the versions tab shows it; the builds tab and the settings read it too (ProjectTab). */
const VersionRowFields = graphql(`
  fragment VersionRow on Version { id slug verboseName active hidden privacyLevel built type documentationUrl lastBuild { id state success createdAt message } }
`);
const VersionsFields = graphql(
  `
  fragment ProjectVersions on Project { id slug defaultVersion viewerIsMaintainer versions(limit: 500) { totalCount nodes { ...VersionRow } } }
`,
  [VersionRowFields],
);

// Each toggle asks back only what it changes: an answer arriving late (the first of two quick
// clicks on one row) must not write back another field's older value over a newer change.
const SetActive = graphql(`
  mutation SetVersionActive($project: String!, $slug: String!, $active: Boolean!) {
    updateVersion(project: $project, slug: $slug, input: { active: $active }) {
      __typename
      ... on MutationUpdateVersionSuccess { data { id active built lastBuild { id state success createdAt message } } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);
const SetHidden = graphql(`
  mutation SetVersionHidden($project: String!, $slug: String!, $hidden: Boolean!) {
    updateVersion(project: $project, slug: $slug, input: { hidden: $hidden }) {
      __typename
      ... on MutationUpdateVersionSuccess { data { id hidden } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);
const SetPrivacy = graphql(`
  mutation SetVersionPrivacy($project: String!, $slug: String!, $privacyLevel: PrivacyLevel!) {
    updateVersion(project: $project, slug: $slug, input: { privacyLevel: $privacyLevel }) {
      __typename
      ... on MutationUpdateVersionSuccess { data { id privacyLevel } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);

/** A build's row in the builds tab (and the new build a trigger answers with, first in that list: cache-updates.ts). */
const BuildRowFields = graphql(`
  fragment BuildRow on Build { id state success versionSlug commit createdAt duration error message }
`);
const TriggerBuild = graphql(
  `
  mutation TriggerBuild($project: String!, $version: String!) {
    # A person asking for a build gets one, even of a commit already built (variables may have changed).
    triggerBuild(project: $project, version: $version, force: true) {
      __typename
      ... on MutationTriggerBuildSuccess { data { build { id ...BuildRow } version { id lastBuild { id state success createdAt message } } } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`,
  [BuildRowFields],
);

/** What a version's type means, for its row. */
const VERSION_TYPES: Record<string, string> = { branch: 'Branch', tag: 'Tag', external: 'Pull request', unknown: 'Other' };

type Change = { field: 'active'; value: boolean } | { field: 'hidden'; value: boolean } | { field: 'privacyLevel'; value: 'public' | 'private' };

/** A version's toggles: each change is sent once, shown at once as pending, its control disabled until Lectern answers. */
function useVersionChanges(project: string, report: (p: Problem | null) => void) {
  const client = useClient();
  const toggles = usePendingChanges<Change['value']>(report);
  const change = (slug: string, c: Change) =>
    toggles.change(`${slug} ${c.field}`, c.value, async () => {
      const r =
        c.field === 'active'
          ? await client.mutation(SetActive, { project, slug, active: c.value }).toPromise()
          : c.field === 'hidden'
            ? await client.mutation(SetHidden, { project, slug, hidden: c.value }).toPromise()
            : await client.mutation(SetPrivacy, { project, slug, privacyLevel: c.value }).toPromise();
      return problemOf(r.data?.updateVersion, r.error);
    });
  const shown = <T extends Change['value']>(slug: string, field: Change['field'], stored: T): T => toggles.shown(`${slug} ${field}`, stored);
  const busy = (slug: string, field: Change['field']) => toggles.busy(`${slug} ${field}`);
  return { change, shown, busy };
}

function Versions(props: { project: FragmentOf<typeof VersionsFields> }) {
  const project = readFragment(VersionsFields, props.project);
  const [problem, setProblem] = useState<Problem | null>(null);
  const changes = useVersionChanges(project.slug, setProblem);
  const versions = sortVersions(project.versions.nodes.map(readVersion));
  const { slug, defaultVersion, viewerIsMaintainer: maintainer } = project;
  return (
    <>
      <ProblemText problem={problem} />
      {versions.length === 0 && <p>No versions yet: they appear when the repository's branches and tags are read, after the first build.</p>}
      {versions.length > 0 && (
        <table className="list cards-on-phone">
          <caption className="visually-hidden">Versions</caption>
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col">Type</th>
              <th scope="col">Built</th>
              <th scope="col">Active</th>
              <th scope="col">Hidden</th>
              <th scope="col">Privacy</th>
              <th scope="col">Last build</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {versions.map((v) => (
              <VersionRow key={v.id} v={v} row={{ slug, defaultVersion, maintainer }} changes={changes} report={setProblem} />
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

type VersionData = ResultOf<typeof VersionRowFields>;
/** The project's versions, as its query holds them (each a VersionRow). */
type VersionRefs = readonly FragmentOf<typeof VersionRowFields>[];
const readVersion = (v: FragmentOf<typeof VersionRowFields>) => readFragment(VersionRowFields, v);
type VersionChanges = ReturnType<typeof useVersionChanges>;
/** What a version's row needs of its project: its slug, its default version, whether the reader maintains it. */
type RowProject = { slug: string; defaultVersion: string; maintainer: boolean };

/** One version's row: its name and badges, type, whether it is built, its toggles, its last build and a button to build it. */
function VersionRow({ v, row: project, changes, report }: { v: VersionData; row: RowProject; changes: VersionChanges; report: (p: Problem | null) => void }) {
  const { busy } = changes;
  const maintainer = project.maintainer;
  const pending = busy(v.slug, 'active') || busy(v.slug, 'hidden') || busy(v.slug, 'privacyLevel');
  return (
    <tr aria-busy={pending || undefined}>
      <th scope="row" className="row-head">
        {v.built && v.active ? <a href={v.documentationUrl}>{v.verboseName}</a> : v.verboseName}
        {v.slug === project.defaultVersion && <span className="badge">default</span>}
        {v.hidden && <span className="badge">hidden</span>}
      </th>
      <td data-label="Type">{VERSION_TYPES[v.type] ?? v.type}</td>
      <td data-label="Built">{v.built ? 'Yes' : 'No'}</td>
      <VersionToggle v={v} field="active" maintainer={maintainer} changes={changes} text="Active (built and served)" />
      <VersionToggle v={v} field="hidden" maintainer={maintainer} changes={changes} text="Hidden (served, not in version menus)" />
      <VersionPrivacy v={v} maintainer={maintainer} changes={changes} />
      <td data-label="Last build">
        {v.lastBuild ? (
          <Link href={`/projects/${project.slug}/builds/${v.lastBuild.id}`}>
            <StateBadge {...v.lastBuild} /> #{v.lastBuild.id}
          </Link>
        ) : (
          '—'
        )}
        {v.lastBuild && (
          <>
            {' '}
            <Time iso={v.lastBuild.createdAt} />
          </>
        )}
      </td>
      <td>{maintainer && v.active && <BuildVersionButton project={project.slug} version={v.slug} report={report} />}</td>
    </tr>
  );
}

/** A version's checkbox for `field` (active or hidden), shown as asked while its change runs; `text` names it on a phone. */
function VersionToggle(props: { v: VersionData; field: 'active' | 'hidden'; maintainer: boolean; changes: VersionChanges; text: string }) {
  const { v, field, changes } = props;
  return (
    <td>
      <label className="toggle">
        <input
          type="checkbox"
          aria-label={`${v.slug} ${field}`}
          checked={changes.shown(v.slug, field, v[field])}
          disabled={!props.maintainer || changes.busy(v.slug, field)}
          onChange={(e) => changes.change(v.slug, { field, value: e.target.checked })}
        />
        <span className="on-phone" aria-hidden="true">
          {props.text}
        </span>
      </label>
      <Progress busy={changes.busy(v.slug, field)} what="Saving…" />
    </td>
  );
}

/** A version's privacy, public or private, shown as asked while its change runs. */
function VersionPrivacy({ v, maintainer, changes }: { v: VersionData; maintainer: boolean; changes: VersionChanges }) {
  return (
    <td>
      <label className="toggle">
        <span className="on-phone" aria-hidden="true">
          Privacy
        </span>
        <select
          aria-label={`${v.slug} privacy`}
          value={changes.shown(v.slug, 'privacyLevel', v.privacyLevel)}
          disabled={!maintainer || changes.busy(v.slug, 'privacyLevel')}
          onChange={(e) => changes.change(v.slug, { field: 'privacyLevel', value: e.target.value as 'public' | 'private' })}
        >
          <option value="public">Public</option>
          <option value="private">Private</option>
        </select>
      </label>
      <Progress busy={changes.busy(v.slug, 'privacyLevel')} what="Saving…" />
    </td>
  );
}

/** Builds one version now, then opens the new build's page. */
function BuildVersionButton({ project, version, report }: { project: string; version: string; report: (p: Problem | null) => void }) {
  const client = useClient();
  const [, navigate] = useLocation();
  return (
    <ActButton
      label={`Build ${version}`}
      act={async () => {
        const r = await client.mutation(TriggerBuild, { project, version }).toPromise();
        const a = r.data?.triggerBuild;
        const p = problemOf(a, r.error);
        if (!p && a?.__typename === 'MutationTriggerBuildSuccess') navigate(`/projects/${project}/builds/${a.data.build.id}`);
        return p;
      }}
      report={report}
    >
      Build {version}
    </ActButton>
  );
}
const BuildsTabFields = graphql(`
  fragment ProjectBuildsTab on Project { id slug defaultVersion viewerIsMaintainer }
`);
const BuildsQuery = graphql(
  `
  query ProjectBuilds($slug: String!) {
    project(slug: $slug) {
      id
      builds(limit: 50) { totalCount nodes { id ...BuildRow } }
    }
  }
`,
  [BuildRowFields],
);

function Builds(props: { project: FragmentOf<typeof BuildsTabFields>; versions: VersionRefs }) {
  const project = readFragment(BuildsTabFields, props.project);
  const { slug, defaultVersion, viewerIsMaintainer: maintainer } = project;
  const versions = sortVersions(props.versions.map(readVersion).filter((v) => v.active)).map((v) => v.slug);
  const [{ data, fetching, error }] = useQuery({ query: BuildsQuery, variables: { slug }, requestPolicy: 'cache-and-network' });
  const client = useClient();
  const [, navigate] = useLocation();
  const builds = data?.project?.builds;
  return (
    <>
      {maintainer && versions.length > 0 && (
        <ActionForm
          className="inline"
          label="Build"
          act={async (f) => {
            const r = await client.mutation(TriggerBuild, { project: slug, version: f.version ?? '' }).toPromise();
            const a = r.data?.triggerBuild;
            const p = problemOf(a, r.error);
            if (!p && a?.__typename === 'MutationTriggerBuildSuccess') navigate(`/projects/${slug}/builds/${a.data.build.id}`);
            return p;
          }}
        >
          <Select label="Version" name="version" options={versions} defaultValue={versions.includes(defaultVersion) ? defaultVersion : versions[0]} />
        </ActionForm>
      )}
      {error && <Failure error={error} />}
      {fetching && !data && <Loading what="builds" />}
      {builds && builds.totalCount === 0 && <p>No builds yet.</p>}
      {builds && builds.totalCount > 0 && (
        <table className="list cards-on-phone">
          <caption className="visually-hidden">Builds</caption>
          <thead>
            <tr>
              <th scope="col">Build</th>
              <th scope="col">Version</th>
              <th scope="col">State</th>
              <th scope="col">Started</th>
              <th scope="col">Duration</th>
            </tr>
          </thead>
          <tbody>
            {builds.nodes.map((b) => (
              <BuildRow key={b.id} slug={slug} b={b} />
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

/** A build's row: its number (a link to it), version, state, start and duration. */
function BuildRow(props: { slug: string; b: FragmentOf<typeof BuildRowFields> }) {
  const b = readFragment(BuildRowFields, props.b);
  return (
    <tr>
      <th scope="row" className="row-head">
        <Link href={`/projects/${props.slug}/builds/${b.id}`}>#{b.id}</Link>
      </th>
      <td data-label="Version">{b.versionSlug}</td>
      <td data-label="State">
        <StateBadge {...b} />
      </td>
      <td data-label="Started">
        <Time iso={b.createdAt} />
      </td>
      <td data-label="Duration">{buildOutcome(b) === 'skipped' ? 'nothing built' : seconds(b.duration)}</td>
    </tr>
  );
}

/** The settings form's fields of the project itself. */
const ProjectFieldsFields = graphql(`
  fragment ProjectFields on Project {
    id name description homepage defaultBranchOverride repositoryDefaultBranch defaultVersion privacyLevel externalBuildsPrivacyLevel tags readthedocsYamlPath versioningScheme
    repository { url type } language { code name } programmingLanguage { code name }
  }
`);
/** The settings form's checkboxes (and analytics code). */
const PageChecksFields = graphql(`
  fragment PageChecks on Project {
    id analyticsCode analyticsDisabled addonsEnabled versionSwitcher hotkeysEnabled docDiffEnabled docsSearch externalBuildsEnabled showVersionWarning emailNotifications singleVersion
  }
`);
const SettingsFormFields = graphql(
  `
  fragment SettingsForm on Project { id slug ...ProjectFields ...PageChecks }
`,
  [ProjectFieldsFields, PageChecksFields],
);
const BadgeSnippetsFields = graphql(`
  fragment BadgeSnippets on Project { id slug privacyLevel defaultVersion documentationUrl }
`);
const ProjectOrganizationFields = graphql(`
  fragment ProjectOrganization on Project { id slug organization { id slug name } }
`);
const SettingsFields = graphql(
  `
  fragment ProjectSettings on Project { id slug viewerIsMaintainer ...SettingsForm ...BadgeSnippets ...ProjectOrganization }
`,
  [SettingsFormFields, BadgeSnippetsFields, ProjectOrganizationFields],
);

/** The page's one operation: the viewer, and the project as its title and every tab from its own data show it. */
const ProjectQuery = graphql(
  `
  query ProjectPage($slug: String!) {
    viewer { id username isAdmin } setupNeeded
    project(slug: $slug) {
      id slug viewerIsMaintainer
      ...ProjectTitle ...ProjectAccess ...ProjectVersions ...ProjectBuildsTab ...ProjectSettings
    }
  }
`,
  [ProjectTitleFields, ProjectAccessFields, VersionsFields, BuildsTabFields, SettingsFields],
);

// Saving the settings answers with every field the page shows from them (its title, the form, the
// badge): the cache, and so every tab, shows the saved project without asking again.
const UpdateProject = graphql(
  `
  mutation UpdateProject($slug: String!, $input: UpdateProjectInput!) {
    updateProject(slug: $slug, input: $input) {
      __typename
      ... on MutationUpdateProjectSuccess { data { id slug ...ProjectTitle ...SettingsForm ...BadgeSnippets } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`,
  [ProjectTitleFields, SettingsFormFields, BadgeSnippetsFields],
);

// Answers with the project's id: cache-updates.ts has the projects' lists read again.
const DeleteProject = graphql(`
  mutation DeleteProject($project: String!, $confirm: String!) {
    deleteProject(project: $project, confirm: $confirm) {
      __typename
      ... on MutationDeleteProjectSuccess { data { id } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);

/** Read the Docs' versioning schemes, as a person reads them, with the addresses each gives. */
const VERSIONING_SCHEMES = [
  {
    value: 'multiple_versions_with_translations',
    label: 'Several versions, with translations',
    help: 'Docs are at /<language>/<version>/, such as /en/latest/: a version menu, and translations beside them.',
  },
  {
    value: 'multiple_versions_without_translations',
    label: 'Several versions, no translations',
    help: 'Docs are at /<version>/, such as /latest/: a version menu, one language.',
  },
  {
    value: 'single_version_without_translations',
    label: 'One version, no translations',
    help: 'The default version is served at the top of the project, /: no version in its addresses.',
  },
];

/** The settings form's fields as updateProject's input. */
function settingsInput(f: Record<string, string>) {
  return {
    name: f.name,
    description: f.description,
    homepage: f.homepage,
    repository: { url: f.repository ?? '', type: 'git' },
    defaultBranch: f.defaultBranch,
    defaultVersion: f.defaultVersion,
    language: f.language,
    programmingLanguage: f.programmingLanguage,
    privacyLevel: f.privacyLevel as 'public' | 'private',
    externalBuildsPrivacyLevel: f.externalBuildsPrivacyLevel as 'public' | 'private',
    tags: (f.tags ?? '')
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean),
    readthedocsYamlPath: f.readthedocsYamlPath || null,
    versioningScheme: f.versioningScheme,
    analyticsCode: f.analyticsCode || null,
    analyticsDisabled: check(f, 'analyticsDisabled'),
    versionSwitcher: check(f, 'versionSwitcher'),
    addonsEnabled: check(f, 'addonsEnabled'),
    hotkeysEnabled: check(f, 'hotkeysEnabled'),
    docDiffEnabled: check(f, 'docDiffEnabled'),
    emailNotifications: check(f, 'emailNotifications'),
    docsSearch: check(f, 'docsSearch'),
    externalBuildsEnabled: check(f, 'externalBuildsEnabled'),
    showVersionWarning: check(f, 'showVersionWarning'),
    singleVersion: check(f, 'singleVersion'),
  };
}

function Settings(props: { project: FragmentOf<typeof SettingsFields>; versions: VersionRefs; admin: boolean }) {
  const { admin, versions } = props;
  const project = readFragment(SettingsFields, props.project);
  const [{ data: choiceData }] = useQuery({ query: ChoicesQuery });
  if (!project.viewerIsMaintainer) return <NotMaintainerSettings slug={project.slug} admin={admin} />;
  return (
    <>
      <SettingsForm project={project} versions={versions} choices={choiceData} />
      <BadgeSnippets project={project} versions={versions} />
      <ProjectOrganization project={project} />
      <BuildLimits slug={project.slug} admin={admin} />
      <DeleteProjectZone slug={project.slug} />
    </>
  );
}

type Choices = ResultOf<typeof ChoicesQuery>;

/** The project's settings form: what it is, where its repository is, how it is served and what its pages offer. */
function SettingsForm(props: { project: FragmentOf<typeof SettingsFormFields>; versions: VersionRefs; choices: Choices | undefined }) {
  const { choices, versions } = props;
  const project = readFragment(SettingsFormFields, props.project);
  const client = useClient();
  const [, navigate] = useLocation();
  return (
    <ActionForm
      label="Save settings"
      done="Saved."
      act={async (f) => {
        const input = settingsInput(f);
        const r = await client.mutation(UpdateProject, { slug: project.slug, input }).toPromise();
        const a = r.data?.updateProject;
        const p = problemOf(a, r.error);
        if (!p && a?.__typename === 'MutationUpdateProjectSuccess' && a.data.slug !== project.slug) navigate(`/projects/${a.data.slug}/settings`);
        return p;
      }}
    >
      <ProjectFields project={project} versions={versions} choices={choices} />
      <PageChecks project={project} />
    </ActionForm>
  );
}

/** The settings form's fields of the project itself: its name, repository, versions, languages, privacy and tags. */
function ProjectFields(props: { project: FragmentOf<typeof ProjectFieldsFields>; versions: VersionRefs; choices: Choices | undefined }) {
  const { choices } = props;
  const project = readFragment(ProjectFieldsFields, props.project);
  const versions = sortVersions(props.versions.map(readVersion)).map((v) => v.slug);
  return (
    <>
      <Field label="Name" name="name" defaultValue={project.name} required />
      <Field label="Description" name="description" defaultValue={project.description} />
      <Field label="Homepage" name="homepage" type="url" defaultValue={project.homepage ?? ''} />
      <Field label="Repository URL" name="repository" field="repository.url" defaultValue={project.repository.url} required />
      <Field
        label="Default branch"
        name="defaultBranch"
        defaultValue={project.defaultBranchOverride ?? ''}
        placeholder={project.repositoryDefaultBranch ?? undefined}
        hint={
          project.repositoryDefaultBranch ? (
            <>
              The branch <code>latest</code> builds. Empty: the repository's own default branch, <code>{project.repositoryDefaultBranch}</code>.
            </>
          ) : (
            <>
              The branch <code>latest</code> builds. Empty: the repository's own default branch (read when its branches are next listed, at the first build).
            </>
          )
        }
      />
      <Select
        label="Default version"
        name="defaultVersion"
        options={versions.length ? versions : [project.defaultVersion]}
        defaultValue={project.defaultVersion}
        hint="The version a reader of the project's address is sent to."
      />
      <Select label="Language" name="language" options={choiceOptions(choices?.languages, project.language)} defaultValue={project.language.code} />
      <Select
        label="Programming language"
        name="programmingLanguage"
        options={choiceOptions(choices?.programmingLanguages, project.programmingLanguage)}
        defaultValue={project.programmingLanguage.code}
      />
      <Select label="Privacy" name="privacyLevel" options={PRIVACY} defaultValue={project.privacyLevel} />
      <Select label="Pull request previews' privacy" name="externalBuildsPrivacyLevel" options={PRIVACY} defaultValue={project.externalBuildsPrivacyLevel} />
      <Field label="Tags (comma separated)" name="tags" defaultValue={project.tags.join(', ')} />
      <Field
        label="Path of .readthedocs.yaml"
        name="readthedocsYamlPath"
        defaultValue={project.readthedocsYamlPath ?? ''}
        hint="Empty: .readthedocs.yaml at the top of the repository."
      />
      <Select
        label="Versions and translations"
        name="versioningScheme"
        field="versioningScheme"
        options={VERSIONING_SCHEMES}
        defaultValue={project.versioningScheme}
      />
    </>
  );
}

/** The settings form's analytics, and what the project's pages and builds offer (each a checkbox). */
function PageChecks(props: { project: FragmentOf<typeof PageChecksFields> }) {
  const project = readFragment(PageChecksFields, props.project);
  return (
    <>
      <Field label="Analytics code" name="analyticsCode" defaultValue={project.analyticsCode ?? ''} />
      <Check label="Analytics disabled" name="analyticsDisabled" checked={project.analyticsDisabled} />
      <Check
        label="Addons data in pages"
        name="addonsEnabled"
        checked={project.addonsEnabled}
        hint="Read the Docs' addons data and event, which a theme's own version selector (sphinx_rtd_theme 3) waits for. Off, pages get no version menu either."
      />
      <Check label="Version menu in pages" name="versionSwitcher" checked={project.versionSwitcher} hint="Hidden where the theme draws its own." />
      <Check label="Hotkeys (Read the Docs' addons script)" name="hotkeysEnabled" checked={project.hotkeysEnabled} />
      <Check label="Doc diff against latest (Read the Docs' addons script)" name="docDiffEnabled" checked={project.docDiffEnabled} />
      <Check label="Search box in pages (and search.html answered by the server)" name="docsSearch" checked={project.docsSearch} />
      <Check label="Build pull requests as previews (GitHub and GitLab integrations)" name="externalBuildsEnabled" checked={project.externalBuildsEnabled} />
      <Check label="Warn on old versions" name="showVersionWarning" checked={project.showVersionWarning} />
      <Check
        label="Email maintainers about builds"
        name="emailNotifications"
        checked={project.emailNotifications}
        hint="When a build of the default version fails, and when one passes again (if this installation sends email)."
      />
      <Check
        label="Single version"
        name="singleVersion"
        checked={project.singleVersion}
        hint="Serve only the default version, at the top of the project (as the one-version scheme does)."
      />
    </>
  );
}

/** Deleting the project, once its slug is typed: then the reader goes to the projects' list. */
function DeleteProjectZone({ slug }: { slug: string }) {
  const client = useClient();
  const [, navigate] = useLocation();
  return (
    <section className="danger-zone">
      <h2>Delete the project</h2>
      <p>Its versions, builds, redirects, variables and integrations go, and its built docs are deleted from storage. This cannot be undone.</p>
      <ActionForm
        label={`Delete ${slug}`}
        danger
        act={async (f) => {
          const r = await client.mutation(DeleteProject, { project: slug, confirm: f.confirm ?? '' }).toPromise();
          const p = problemOf(r.data?.deleteProject, r.error);
          if (!p) navigate('/', { replace: true });
          return p;
        }}
      >
        <Field label={`Type "${slug}" to confirm`} name="confirm" required />
      </ActionForm>
    </section>
  );
}

/** The settings tab of a reader who does not maintain the project: a site admin (the only one offered it) changes its build limits. */
function NotMaintainerSettings({ slug, admin }: { slug: string; admin: boolean }) {
  return (
    <>
      <p>Only the project's maintainers change its settings.</p>
      {admin && <BuildLimits slug={slug} admin={admin} />}
    </>
  );
}

const BuildLimitsFields = graphql(`
  fragment BuildLimits on Project {
    id
    buildLimits {
      timeSeconds memoryBytes processes custom ownTimeSeconds ownMemoryBytes ownProcesses
      defaults { timeSeconds memoryBytes processes }
      maxima { timeSeconds memoryBytes processes }
    }
  }
`);
const BuildLimitsQuery = graphql(
  `
  query ProjectBuildLimits($slug: String!) { project(slug: $slug) { id ...BuildLimits } }
`,
  [BuildLimitsFields],
);
const SetBuildLimits = graphql(
  `
  mutation SetProjectBuildLimits($project: String!, $input: ProjectBuildLimitsInput!) {
    setProjectBuildLimits(project: $project, input: $input) {
      __typename
      ... on MutationSetProjectBuildLimitsSuccess { data { id ...BuildLimits } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`,
  [BuildLimitsFields],
);

const MiB = 1024 ** 2;
/** Bytes as a person reads them: 4 GiB, 512 MiB. */
const memory = (bytes: number) => (bytes >= 1024 * MiB ? `${+(bytes / (1024 * MiB)).toFixed(2)} GiB` : `${+(bytes / MiB).toFixed(1)} MiB`);
/** A number field of the form: empty is null (the default), else the number times `unit`. */
const limitOf = (value: string | undefined, unit = 1) => (value?.trim() ? Math.round(Number(value) * unit) : null);

/**
 * The time, memory and processes the project's builds get (docs/design/builds.md "Per-project
 * limits"): its maintainers read them, a site admin changes them, up to the installation's maxima.
 */
function BuildLimits({ slug, admin }: { slug: string; admin: boolean }) {
  const [{ data, error }] = useQuery({ query: BuildLimitsQuery, variables: { slug } });
  const client = useClient();
  if (error && !data) return <Failure error={error} />;
  const limits = data?.project ? readFragment(BuildLimitsFields, data.project).buildLimits : null;
  if (!limits) return null;
  return (
    <section>
      <h2>Build limits</h2>
      <p>
        A build may run {seconds(limits.timeSeconds)}, with {memory(limits.memoryBytes)} of memory and {limits.processes} processes at once.{' '}
        {limits.custom ? 'A site admin set limits of its own for this project.' : "These are the installation's defaults."}
        {!admin && ' A site admin can raise them.'}
      </p>
      {admin && (
        <ActionForm
          label="Save build limits"
          done="Saved: the next build gets these limits."
          act={async (f) => {
            const input = { timeSeconds: limitOf(f.timeSeconds), memoryBytes: limitOf(f.memoryMiB, MiB), processes: limitOf(f.processes) };
            const r = await client.mutation(SetBuildLimits, { project: slug, input }).toPromise();
            return problemOf(r.data?.setProjectBuildLimits, r.error);
          }}
        >
          <Field
            label="Time (seconds)"
            name="timeSeconds"
            type="number"
            defaultValue={limits.ownTimeSeconds?.toString() ?? ''}
            placeholder={String(limits.defaults.timeSeconds)}
            hint={`Empty: the default, ${seconds(limits.defaults.timeSeconds)}. At most ${seconds(limits.maxima.timeSeconds)} (LECTERN_BUILD_PROJECT_MAX_TIME_SECONDS).`}
          />
          <Field
            label="Memory (MiB)"
            name="memoryMiB"
            field="memoryBytes"
            type="number"
            defaultValue={limits.ownMemoryBytes == null ? '' : String(+(limits.ownMemoryBytes / MiB).toFixed(3))}
            placeholder={String(limits.defaults.memoryBytes / MiB)}
            hint={`Empty: the default, ${memory(limits.defaults.memoryBytes)}. At most ${memory(limits.maxima.memoryBytes)} (LECTERN_BUILD_PROJECT_MAX_MEMORY_BYTES).`}
          />
          <Field
            label="Processes"
            name="processes"
            type="number"
            defaultValue={limits.ownProcesses?.toString() ?? ''}
            placeholder={String(limits.defaults.processes)}
            hint={`Empty: the default, ${limits.defaults.processes}. At most ${limits.maxima.processes} (LECTERN_BUILD_PROJECT_MAX_PROCESSES).`}
          />
        </ActionForm>
      )}
    </section>
  );
}

const MyOrganizations = graphql(`
  query MyOrganizations { organizations(limit: 100) { nodes { id slug name viewerRole } } }
`);
const SetProjectOrganization = graphql(
  `
  mutation SetProjectOrganization($project: String!, $organization: String) {
    setProjectOrganization(project: $project, organization: $organization) {
      __typename
      ... on MutationSetProjectOrganizationSuccess { data { id viewerIsMaintainer ...ProjectAccess ...ProjectOrganization } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`,
  [ProjectAccessFields, ProjectOrganizationFields],
);

/**
 * Moving the project into one of the organizations the reader owns, or out of its own: moving in
 * needs an owner of the organization, moving out an owner of the one it leaves
 * (docs/design/organizations.md), so only those choices are offered.
 */
function ProjectOrganization(props: { project: FragmentOf<typeof ProjectOrganizationFields> }) {
  const project = readFragment(ProjectOrganizationFields, props.project);
  const [{ data }] = useQuery({ query: MyOrganizations, requestPolicy: 'cache-and-network' });
  const client = useClient();
  const current = project.organization;
  const owned = data?.organizations.nodes.filter((o) => o.viewerRole === 'owner');
  const ownsCurrent = !current || owned?.some((o) => o.id === current.id);
  return (
    <section>
      <h2>Organization</h2>
      <p>
        {current ? (
          <>
            It belongs to <Link href={`/organizations/${current.slug}`}>{current.name}</Link>: its owners maintain it, and its teams may read or maintain it.
          </>
        ) : (
          'It belongs to no organization: its maintainers alone read its private docs and change it.'
        )}
      </p>
      {!owned ? (
        <Loading what="your organizations" />
      ) : !ownsCurrent ? (
        <p>Only an owner of {current?.name} moves it out of the organization.</p>
      ) : owned.length === 0 ? (
        <p>
          You own no organization: <Link href="/organizations">create one</Link> to move the project into it.
        </p>
      ) : (
        <ActionForm
          className="inline"
          label="Move"
          done="Moved."
          act={async (f) => {
            const r = await client.mutation(SetProjectOrganization, { project: project.slug, organization: f.organization || null }).toPromise();
            return problemOf(r.data?.setProjectOrganization, r.error);
          }}
        >
          <Select
            label="Organization"
            name="organization"
            options={[{ value: '', label: 'None' }, ...owned.map((o) => ({ value: o.slug, label: o.name }))]}
            defaultValue={current?.slug ?? ''}
          />
        </ActionForm>
      )}
    </section>
  );
}

const BadgeQuery = graphql(`
  query ProjectBadge($slug: String!) {
    project(slug: $slug) { id badgeToken }
  }
`);

/** The build status badge of the default version, and the text that puts it in a README (Read the Docs' three snippets). */
function BadgeSnippets(props: { project: FragmentOf<typeof BadgeSnippetsFields>; versions: VersionRefs }) {
  const project = readFragment(BadgeSnippetsFields, props.project);
  const [{ data }] = useQuery({ query: BadgeQuery, variables: { slug: project.slug } });
  const version = props.versions.map(readVersion).find((v) => v.slug === project.defaultVersion);
  // A private version's badge needs the project's token: only then is it in the URL.
  const needsToken = project.privacyLevel !== 'public' || version?.privacyLevel !== 'public';
  const token = data?.project?.badgeToken;
  if (needsToken && !token) return null;
  const badge = `${window.location.origin}/projects/${project.slug}/badge/?version=${encodeURIComponent(project.defaultVersion)}${needsToken ? `&token=${token}` : ''}`;
  const site = project.documentationUrl;
  const snippets = [
    ['Markdown', `[![Documentation Status](${badge})](${site})`],
    ['reStructuredText', `.. image:: ${badge}\n    :target: ${site}\n    :alt: Documentation Status`],
    ['HTML', `<a href="${site}"><img src="${badge}" alt="Documentation Status"></a>`],
  ] as const;
  return (
    <section>
      <h2>Badge</h2>
      <p>
        <img src={badge} alt={`Build status of ${project.defaultVersion}`} /> The build status of the default version, <code>{project.defaultVersion}</code>,
        for a README.{needsToken ? " Its URL holds the project's badge token: anyone with it sees the status, nothing else." : ''}
      </p>
      {snippets.map(([label, text]) => (
        <div className="field" key={label}>
          <label>
            {label}
            <textarea readOnly rows={label === 'reStructuredText' ? 3 : 2} value={text} onFocus={(e) => e.currentTarget.select()} />
          </label>
        </div>
      ))}
    </section>
  );
}

/** A redirect as its card shows it (and its edit form, and what a change to it answers). */
const RedirectCardFields = graphql(`
  fragment RedirectCard on Redirect { id type fromUrl toUrl httpStatus force enabled position description }
`);
const RedirectsQuery = graphql(
  `
  query ProjectRedirects($slug: String!) {
    project(slug: $slug) {
      id viewerIsMaintainer
      redirects(limit: 500) { totalCount nodes { id position ...RedirectCard } }
    }
  }
`,
  [RedirectCardFields],
);
// Adding, moving and deleting a redirect renumber the others: cache-updates.ts does as Lectern does.
const CreateRedirect = graphql(
  `
  mutation CreateRedirect($project: String!, $input: RedirectInput!) {
    createRedirect(project: $project, input: $input) {
      __typename
      ... on MutationCreateRedirectSuccess { data { id ...RedirectCard } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`,
  [RedirectCardFields],
);
const UpdateRedirect = graphql(
  `
  mutation UpdateRedirect($project: String!, $id: Int!, $input: RedirectInput!) {
    updateRedirect(project: $project, id: $id, input: $input, partial: true) {
      __typename
      ... on MutationUpdateRedirectSuccess { data { id ...RedirectCard } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`,
  [RedirectCardFields],
);
const DeleteRedirect = graphql(`
  mutation DeleteRedirect($project: String!, $id: Int!) {
    deleteRedirect(project: $project, id: $id) {
      __typename
      ... on MutationDeleteRedirectSuccess { data { id } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);

const REDIRECT_TYPES = ['page', 'exact', 'clean_url_to_html', 'html_to_clean_url', 'sphinx_html', 'sphinx_htmldir', 'prefix'] as const;
type RedirectType = (typeof REDIRECT_TYPES)[number];

/** Read the Docs' redirect types, as a person reads them, and what each does. */
const REDIRECT_OPTIONS: { value: RedirectType; label: string; help: string }[] = [
  { value: 'page', label: 'Page', help: 'From one page to another, in every version and language: /install.html to /setup.html.' },
  { value: 'exact', label: 'Exact URL', help: 'From one full path to another: /en/1.0/install.html to /en/1.0/setup.html.' },
  { value: 'clean_url_to_html', label: 'Clean URL to HTML', help: 'Every /page/ to /page.html.' },
  { value: 'html_to_clean_url', label: 'HTML to clean URL', help: 'Every /page.html to /page/.' },
  { value: 'sphinx_html', label: 'Sphinx dirhtml to html', help: 'Every /page/ to /page.html (a project moved from dirhtml to html).' },
  { value: 'sphinx_htmldir', label: 'Sphinx html to dirhtml', help: 'Every /page.html to /page/ (a project moved from html to dirhtml).' },
  { value: 'prefix', label: 'Prefix (old)', help: 'Every path under a prefix to the same page in the default version.' },
];
const REDIRECT_LABEL = Object.fromEntries(REDIRECT_OPTIONS.map((o) => [o.value, o.label]));

function redirectInput(f: Record<string, string>) {
  return {
    type: f.type as RedirectType,
    fromUrl: f.fromUrl ?? '',
    toUrl: f.toUrl ?? '',
    httpStatus: Number(f.httpStatus || 302),
    force: check(f, 'force'),
    enabled: check(f, 'enabled'),
    description: f.description ?? '',
  };
}

function RedirectFields(props: {
  r?: { type: string; fromUrl: string; toUrl: string; httpStatus: number; force: boolean; enabled: boolean; description: string };
}) {
  const r = props.r;
  return (
    <div className="grid">
      <Select label="Type" name="type" options={REDIRECT_OPTIONS} defaultValue={r?.type ?? 'page'} />
      <Field label="From" name="fromUrl" defaultValue={r?.fromUrl} hint="Empty for the clean URL and HTML types." />
      <Field label="To" name="toUrl" defaultValue={r?.toUrl} />
      <Select
        label="Status"
        name="httpStatus"
        options={[
          { value: '302', label: '302 Found (temporary)', help: 'Browsers ask again each time: for redirects that may change.' },
          { value: '301', label: '301 Moved Permanently', help: 'Browsers and search engines remember it: for pages gone for good.' },
        ]}
        defaultValue={String(r?.httpStatus ?? 302)}
      />
      <Field label="Description" name="description" defaultValue={r?.description} />
      <Check label="Enabled" name="enabled" checked={r?.enabled ?? true} />
      <Check label="Force (even when the page exists)" name="force" checked={r?.force ?? false} />
    </div>
  );
}

function Redirects({ slug }: { slug: string }) {
  const { data, problem, setProblem, pending } = useEditor(RedirectsQuery, { slug });
  const moves = useRedirectMove(slug, setProblem);
  if (!data) return pending('redirects');
  const p = data?.project;
  if (!p) return null;
  const nodes = [...p.redirects.nodes].sort((a, b) => a.position - b.position);
  return (
    <>
      <p>Redirects are tried in this order; the first that matches wins.</p>
      <ProblemText problem={problem} />
      {nodes.length === 0 && <p>No redirects.</p>}
      <ol className="cards">
        {nodes.map((r, i) => (
          <li key={r.id}>
            <RedirectHead r={r} />
            {p.viewerIsMaintainer && (
              <RedirectActions slug={slug} r={r} above={nodes[i - 1]?.position} below={nodes[i + 1]?.position} moves={moves} report={setProblem} />
            )}
          </li>
        ))}
      </ol>
      {p.viewerIsMaintainer && <AddRedirect slug={slug} open={nodes.length === 0} onTry={() => setProblem(null)} />}
    </>
  );
}

/** A redirect's card head: its type, from and to, status, and whether it is disabled or forced. */
function RedirectHead(props: { r: FragmentOf<typeof RedirectCardFields> }) {
  const r = readFragment(RedirectCardFields, props.r);
  return (
    <div className="card-head">
      <span className="badge">{REDIRECT_LABEL[r.type] ?? r.type}</span> {r.fromUrl || '(any page)'} → {r.toUrl || '(same page)'} ({r.httpStatus})
      {!r.enabled && <span className="badge">disabled</span>}
      {r.force && <span className="badge">forced</span>}
    </div>
  );
}

/**
 * Moving a redirect to another's position, one move at a time; `moving` is the redirect being
 * moved. The order another move is computed from must be the one Lectern holds: the answer, and
 * the others renumbered as Lectern renumbers them (cache-updates.ts), are in the cache before the
 * next move can start.
 */
function useRedirectMove(slug: string, report: (p: Problem | null) => void) {
  const client = useClient();
  const [moving, setMoving] = useState<number | null>(null);
  const move = async (id: number, position: number) => {
    if (moving !== null) return;
    setMoving(id);
    report(null);
    try {
      const r = await client.mutation(UpdateRedirect, { project: slug, id, input: { position } }).toPromise();
      report(problemOf(r.data?.updateRedirect, r.error));
    } finally {
      setMoving(null);
    }
  };
  return { moving, move };
}

/** A redirect's buttons for a maintainer: move it up or down (to the position `above` or `below` it holds), delete it, or edit it. */
function RedirectActions(props: {
  slug: string;
  r: FragmentOf<typeof RedirectCardFields>;
  above: number | undefined;
  below: number | undefined;
  moves: ReturnType<typeof useRedirectMove>;
  report: (p: Problem | null) => void;
}) {
  const { slug, above, below } = props;
  const { moving, move } = props.moves;
  const r = readFragment(RedirectCardFields, props.r);
  const client = useClient();
  return (
    <div className="actions">
      <button
        type="button"
        disabled={above === undefined || moving !== null}
        onClick={() => above !== undefined && move(r.id, above)}
        aria-label={`Move redirect ${r.fromUrl} up`}
      >
        Up
      </button>
      <button
        type="button"
        disabled={below === undefined || moving !== null}
        onClick={() => below !== undefined && move(r.id, below)}
        aria-label={`Move redirect ${r.fromUrl} down`}
      >
        Down
      </button>
      <Progress busy={moving === r.id} what="Moving…" />
      <ActButton
        danger
        act={async () => {
          const d = await client.mutation(DeleteRedirect, { project: slug, id: r.id }).toPromise();
          return problemOf(d.data?.deleteRedirect, d.error);
        }}
        report={props.report}
      >
        Delete
      </ActButton>
      <details>
        <summary>Edit</summary>
        <ActionForm
          label="Save"
          done="Saved."
          act={async (f) => {
            const u = await client.mutation(UpdateRedirect, { project: slug, id: r.id, input: redirectInput(f) }).toPromise();
            return problemOf(u.data?.updateRedirect, u.error);
          }}
        >
          <RedirectFields r={r} />
        </ActionForm>
      </details>
    </div>
  );
}

/** The form that adds a redirect, open when there is none yet. */
function AddRedirect({ slug, open, onTry }: { slug: string; open: boolean; onTry: () => void }) {
  const client = useClient();
  return (
    <details open={open}>
      <summary>Add a redirect</summary>
      <ActionForm
        label="Add redirect"
        onTry={onTry}
        reset
        act={async (f) => {
          const r = await client.mutation(CreateRedirect, { project: slug, input: redirectInput(f) }).toPromise();
          return problemOf(r.data?.createRedirect, r.error);
        }}
      >
        <RedirectFields />
      </ActionForm>
    </details>
  );
}

/** A variable as its list shows it (never its value). */
const VariableItemFields = graphql(`
  fragment VariableItem on EnvironmentVariable { id name public createdAt }
`);
const VariablesQuery = graphql(
  `
  query ProjectVariables($slug: String!) {
    project(slug: $slug) { id environmentVariables(limit: 500) { totalCount nodes { id ...VariableItem } } }
  }
`,
  [VariableItemFields],
);
// A new variable goes last in the list (by id), a deleted one leaves it: cache-updates.ts.
const CreateVariable = graphql(
  `
  mutation CreateVariable($project: String!, $input: EnvironmentVariableInput!) {
    createEnvironmentVariable(project: $project, input: $input) {
      __typename
      ... on MutationCreateEnvironmentVariableSuccess { data { id ...VariableItem } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`,
  [VariableItemFields],
);
const DeleteVariable = graphql(`
  mutation DeleteVariable($project: String!, $id: Int!) {
    deleteEnvironmentVariable(project: $project, id: $id) {
      __typename
      ... on MutationDeleteEnvironmentVariableSuccess { data { id } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);

function Variables({ slug }: { slug: string }) {
  const { data, client, problem, setProblem, pending } = useEditor(VariablesQuery, { slug });
  if (!data) return pending('environment variables');
  const vars = data?.project?.environmentVariables.nodes ?? [];
  return (
    <>
      <p>Values are given to builds only, and are never shown again.</p>
      <ProblemText problem={problem} />
      {vars.length === 0 && <p>No variables.</p>}
      <ul className="cards">
        {vars.map((v) => (
          <VariableItem key={v.id} slug={slug} v={v} report={setProblem} />
        ))}
      </ul>
      <h2>Add a variable</h2>
      <ActionForm
        label="Add variable"
        onTry={() => setProblem(null)}
        reset
        act={async (f) => {
          const r = await client.mutation(CreateVariable, { project: slug, input: { name: f.name, value: f.value, public: check(f, 'public') } }).toPromise();
          return problemOf(r.data?.createEnvironmentVariable, r.error);
        }}
      >
        <Field label="Name" name="name" required />
        <Field label="Value" name="value" type="password" required autoComplete="off" />
        <Check label="Public (also in pull request builds)" name="public" checked={false} />
      </ActionForm>
    </>
  );
}

/** A variable's line: its name, whether builds of pull requests get it, when it was added, and a button that deletes it. */
function VariableItem(props: { slug: string; v: FragmentOf<typeof VariableItemFields>; report: (p: Problem | null) => void }) {
  const v = readFragment(VariableItemFields, props.v);
  const client = useClient();
  return (
    <li>
      <code>{v.name}</code> {v.public && <span className="badge">public</span>}{' '}
      <span className="muted">
        added <Time iso={v.createdAt} />
      </span>{' '}
      <ActButton
        danger
        act={async () => {
          const r = await client.mutation(DeleteVariable, { project: props.slug, id: v.id }).toPromise();
          return problemOf(r.data?.deleteEnvironmentVariable, r.error);
        }}
        report={props.report}
      >
        Delete {v.name}
      </ActButton>
    </li>
  );
}

/** What an integration's token form shows: whether it has a token, and its API base URL. */
const IntegrationTokenFields = graphql(`
  fragment IntegrationToken on Integration { id hasToken apiUrl }
`);
/** An integration's line in the list. */
const IntegrationItemFields = graphql(
  `
  fragment IntegrationItem on Integration { id provider webhookUrl createdAt ...IntegrationToken }
`,
  [IntegrationTokenFields],
);
const IntegrationsQuery = graphql(
  `
  query ProjectIntegrations($slug: String!) {
    project(slug: $slug) { id integrations { id ...IntegrationItem } }
  }
`,
  [IntegrationItemFields],
);
// A new integration goes last in the list (by id), a deleted one leaves it: cache-updates.ts.
const CreateIntegration = graphql(
  `
  mutation CreateIntegration($project: String!, $provider: IntegrationProvider!) {
    createIntegration(project: $project, provider: $provider) {
      __typename
      ... on MutationCreateIntegrationSuccess { data { secret integration { id webhookUrl ...IntegrationItem } } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`,
  [IntegrationItemFields],
);
const SetIntegrationToken = graphql(
  `
  mutation SetIntegrationToken($project: String!, $id: Int!, $token: String, $apiUrl: String) {
    setIntegrationToken(project: $project, id: $id, token: $token, apiUrl: $apiUrl) {
      __typename
      ... on MutationSetIntegrationTokenSuccess { data { id ...IntegrationToken } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`,
  [IntegrationTokenFields],
);
const DeleteIntegration = graphql(`
  mutation DeleteIntegration($project: String!, $id: Int!) {
    deleteIntegration(project: $project, id: $id) {
      __typename
      ... on MutationDeleteIntegrationSuccess { data { id } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);

const PROVIDERS: Record<string, string> = { github: 'GitHub', gitlab: 'GitLab', bitbucket: 'Bitbucket', generic: 'Generic webhook' };

function Integrations({ slug }: { slug: string }) {
  const { data, client, problem, setProblem, pending } = useEditor(IntegrationsQuery, { slug });
  const [created, setCreated] = useState<{ webhookUrl: string; secret: string } | null>(null);
  if (!data) return pending('integrations');
  const list = data?.project?.integrations ?? [];
  return (
    <>
      <ProblemText problem={problem} />
      {created && (
        <div className="notice" role="status">
          <p>Give your forge this webhook URL and secret. The secret is shown only now.</p>
          <p>
            URL: <code>{created.webhookUrl}</code>
          </p>
          <p>
            Secret: <code data-testid="secret">{created.secret}</code>
          </p>
        </div>
      )}
      {list.length === 0 && <p>No integrations.</p>}
      <ul className="cards">
        {list.map((i) => (
          <IntegrationItem key={i.id} slug={slug} i={i} report={setProblem} />
        ))}
      </ul>
      <ActionForm
        className="inline"
        label="Add integration"
        onTry={() => setProblem(null)}
        act={async (f) => {
          const r = await client
            .mutation(CreateIntegration, { project: slug, provider: f.provider as 'github' | 'gitlab' | 'bitbucket' | 'generic' })
            .toPromise();
          const a = r.data?.createIntegration;
          const p = problemOf(a, r.error);
          if (!p && a?.__typename === 'MutationCreateIntegrationSuccess') {
            setCreated({ webhookUrl: a.data.integration.webhookUrl, secret: a.data.secret });
          }
          return p;
        }}
      >
        <Select
          label="Provider"
          name="provider"
          options={[
            { value: 'github', label: 'GitHub', help: 'Builds on pushes, and pull requests as previews (with a token, commit statuses too).' },
            { value: 'gitlab', label: 'GitLab', help: 'Builds on pushes, and merge requests as previews (with a token, commit statuses too).' },
            { value: 'bitbucket', label: 'Bitbucket', help: 'Builds on pushes.' },
            { value: 'generic', label: 'Generic API incoming webhook', help: 'Any service POSTs to the URL, with the secret, to build branches.' },
          ]}
        />
      </ActionForm>
    </>
  );
}

/** An integration's line: its provider and webhook URL, its token (GitHub, GitLab), and a button that deletes it. */
function IntegrationItem(props: { slug: string; i: FragmentOf<typeof IntegrationItemFields>; report: (p: Problem | null) => void }) {
  const i = readFragment(IntegrationItemFields, props.i);
  const client = useClient();
  return (
    <li>
      <strong>{PROVIDERS[i.provider] ?? i.provider}</strong> <code className="wrap">{i.webhookUrl}</code>{' '}
      {(i.provider === 'github' || i.provider === 'gitlab') && <IntegrationToken slug={props.slug} i={i} />}{' '}
      <ActButton
        danger
        act={async () => {
          const r = await client.mutation(DeleteIntegration, { project: props.slug, id: i.id }).toPromise();
          return problemOf(r.data?.deleteIntegration, r.error);
        }}
        report={props.report}
      >
        Delete
      </ActButton>
    </li>
  );
}

/** A GitHub or GitLab integration's token (and API base URL), with which builds set commit statuses on pull requests. */
function IntegrationToken(props: { slug: string; i: FragmentOf<typeof IntegrationTokenFields> }) {
  const { slug } = props;
  const i = readFragment(IntegrationTokenFields, props.i);
  const client = useClient();
  return (
    <details>
      <summary>{i.hasToken ? 'Commit statuses: token set' : 'Commit statuses on pull requests: set a token'}</summary>
      <ActionForm
        label="Save token"
        done="Saved."
        reset
        act={async (f) => {
          const r = await client
            .mutation(SetIntegrationToken, { project: slug, id: i.id, token: f[`token-${i.id}`] || null, apiUrl: f[`apiUrl-${i.id}`] || null })
            .toPromise();
          return problemOf(r.data?.setIntegrationToken, r.error);
        }}
      >
        <Field label="Token (empty removes it)" name={`token-${i.id}`} type="password" autoComplete="off" />
        <Field label="API base URL (empty: the provider's public API)" name={`apiUrl-${i.id}`} type="url" defaultValue={i.apiUrl ?? ''} />
      </ActionForm>
    </details>
  );
}

/** The maintainers' list; adding or removing one answers with it. */
const MaintainersFields = graphql(`
  fragment Maintainers on Project { id viewerIsMaintainer users { id username } }
`);
const MaintainersQuery = graphql(
  `
  query ProjectMaintainers($slug: String!) { project(slug: $slug) { id ...Maintainers } }
`,
  [MaintainersFields],
);
const AddMaintainer = graphql(
  `
  mutation AddMaintainer($project: String!, $username: String!) {
    addMaintainer(project: $project, username: $username) {
      __typename
      ... on MutationAddMaintainerSuccess { data { id ...Maintainers } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`,
  [MaintainersFields],
);
const RemoveMaintainer = graphql(
  `
  mutation RemoveMaintainer($project: String!, $username: String!) {
    removeMaintainer(project: $project, username: $username) {
      __typename
      ... on MutationRemoveMaintainerSuccess { data { id ...Maintainers } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`,
  [MaintainersFields],
);

function Maintainers({ slug }: { slug: string }) {
  const [{ data, fetching, error }] = useQuery({ query: MaintainersQuery, variables: { slug } });
  const client = useClient();
  const [problem, setProblem] = useState<Problem | null>(null);
  if (fetching && !data) return <Loading what="maintainers" />;
  if (error && !data) return <Failure error={error} />;
  const p = data?.project ? readFragment(MaintainersFields, data.project) : null;
  if (!p) return null;
  return (
    <>
      <ProblemText problem={problem} />
      <ul className="cards">
        {p.users.map((u) => (
          <li key={u.id}>
            {u.username}{' '}
            {p.viewerIsMaintainer && (
              <ActButton
                danger
                act={async () => {
                  const r = await client.mutation(RemoveMaintainer, { project: slug, username: u.username }).toPromise();
                  return problemOf(r.data?.removeMaintainer, r.error);
                }}
                report={setProblem}
              >
                Remove {u.username}
              </ActButton>
            )}
          </li>
        ))}
      </ul>
      {p.viewerIsMaintainer && (
        <ActionForm
          className="inline"
          label="Add maintainer"
          onTry={() => setProblem(null)}
          reset
          act={async (f) => {
            const r = await client.mutation(AddMaintainer, { project: slug, username: f.username ?? '' }).toPromise();
            return problemOf(r.data?.addMaintainer, r.error);
          }}
        >
          <Field label="Username" name="username" required />
        </ActionForm>
      )}
    </>
  );
}

/** A subproject's line: the project and the alias it is served under. */
const SubprojectItemFields = graphql(`
  fragment SubprojectItem on Subproject { id alias child { id slug name } }
`);
const SubprojectsFields = graphql(
  `
  fragment Subprojects on Project { id viewerIsMaintainer subprojects(limit: 500) { totalCount nodes { id ...SubprojectItem } } }
`,
  [SubprojectItemFields],
);
/** The translations' section; adding or removing one answers with it (the project, with its translations). */
const TranslationsFields = graphql(`
  fragment Translations on Project {
    id viewerIsMaintainer
    translations(limit: 500) { nodes { id slug name language { code name } } }
    translationOf { id slug name }
  }
`);
const RelatedQuery = graphql(
  `
  query ProjectRelated($slug: String!) { project(slug: $slug) { id ...Subprojects ...Translations } }
`,
  [SubprojectsFields, TranslationsFields],
);
// A new subproject goes last in the list (by id), a deleted one leaves it: cache-updates.ts.
const CreateSubproject = graphql(
  `
  mutation CreateSubproject($project: String!, $input: CreateSubprojectInput!) {
    createSubproject(project: $project, input: $input) {
      __typename
      ... on MutationCreateSubprojectSuccess { data { id ...SubprojectItem } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`,
  [SubprojectItemFields],
);
const DeleteSubproject = graphql(`
  mutation DeleteSubproject($project: String!, $alias: String!) {
    deleteSubproject(project: $project, alias: $alias) {
      __typename
      ... on MutationDeleteSubprojectSuccess { data { id } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);
const AddTranslation = graphql(
  `
  mutation AddTranslation($project: String!, $translation: String!) {
    addTranslation(project: $project, translation: $translation) {
      __typename
      ... on MutationAddTranslationSuccess { data { id ...Translations } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`,
  [TranslationsFields],
);
const RemoveTranslation = graphql(
  `
  mutation RemoveTranslation($project: String!, $translation: String!) {
    removeTranslation(project: $project, translation: $translation) {
      __typename
      ... on MutationRemoveTranslationSuccess { data { id ...Translations } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`,
  [TranslationsFields],
);

function Related({ slug }: { slug: string }) {
  const { data, problem, setProblem, pending } = useEditor(RelatedQuery, { slug });
  if (!data) return pending('subprojects and translations');
  const p = data?.project;
  if (!p) return null;
  const after = (problem: Problem | null) => {
    setProblem(problem);
    return problem;
  };
  return (
    <>
      <ProblemText problem={problem} />
      <Subprojects slug={slug} p={p} after={after} onTry={() => setProblem(null)} />
      <Translations slug={slug} p={p} after={after} onTry={() => setProblem(null)} />
    </>
  );
}

/** What the Subprojects and Translations sections are given: the project, and what to do after a change (show its problem). */
type RelatedProps<F> = {
  slug: string;
  p: F;
  after: (problem: Problem | null) => Problem | null;
  onTry: () => void;
};

/** The project's subprojects, each under its alias; a maintainer adds and removes them. */
function Subprojects({ slug, after, onTry, ...props }: RelatedProps<FragmentOf<typeof SubprojectsFields>>) {
  const p = readFragment(SubprojectsFields, props.p);
  const client = useClient();
  return (
    <>
      <h2>Subprojects</h2>
      {p.subprojects.nodes.length === 0 && <p>No subprojects.</p>}
      <ul className="cards">
        {p.subprojects.nodes.map((s) => (
          <SubprojectItem key={s.id} slug={slug} s={s} maintainer={p.viewerIsMaintainer} report={after} />
        ))}
      </ul>
      {p.viewerIsMaintainer && (
        <ActionForm
          className="inline"
          label="Add subproject"
          onTry={onTry}
          reset
          act={async (f) => {
            const r = await client.mutation(CreateSubproject, { project: slug, input: { child: f.child, alias: f.alias || undefined } }).toPromise();
            return after(problemOf(r.data?.createSubproject, r.error));
          }}
        >
          <Field label="Project (slug)" name="child" required />
          <Field label="Alias" name="alias" />
        </ActionForm>
      )}
    </>
  );
}

/** A subproject's line: the project (a link) and its alias, and a maintainer's button that removes it. */
function SubprojectItem(props: { slug: string; s: FragmentOf<typeof SubprojectItemFields>; maintainer: boolean; report: (p: Problem | null) => void }) {
  const s = readFragment(SubprojectItemFields, props.s);
  const client = useClient();
  return (
    <li>
      <Link href={`/projects/${s.child.slug}`}>{s.child.name}</Link> as <code>{s.alias}</code>{' '}
      {props.maintainer && (
        <ActButton
          danger
          act={async () => {
            const r = await client.mutation(DeleteSubproject, { project: props.slug, alias: s.alias }).toPromise();
            return problemOf(r.data?.deleteSubproject, r.error);
          }}
          report={props.report}
        >
          Remove {s.alias}
        </ActButton>
      )}
    </li>
  );
}

/** The project's translations, and the project it is a translation of; a maintainer adds and removes them. */
function Translations({ slug, after, onTry, ...props }: RelatedProps<FragmentOf<typeof TranslationsFields>>) {
  const p = readFragment(TranslationsFields, props.p);
  const client = useClient();
  return (
    <>
      <h2>Translations</h2>
      {p.translationOf && (
        <p>
          This project is a translation of <Link href={`/projects/${p.translationOf.slug}`}>{p.translationOf.name}</Link>.
        </p>
      )}
      {p.translations.nodes.length === 0 && <p>No translations.</p>}
      <ul className="cards">
        {p.translations.nodes.map((t) => (
          <li key={t.id}>
            <Link href={`/projects/${t.slug}`}>{t.name}</Link> ({t.language.name}){' '}
            {p.viewerIsMaintainer && (
              <ActButton
                danger
                act={async () => {
                  const r = await client.mutation(RemoveTranslation, { project: slug, translation: t.slug }).toPromise();
                  return problemOf(r.data?.removeTranslation, r.error);
                }}
                report={after}
              >
                Remove {t.slug}
              </ActButton>
            )}
          </li>
        ))}
      </ul>
      {p.viewerIsMaintainer && (
        <ActionForm
          className="inline"
          label="Add translation"
          onTry={onTry}
          reset
          act={async (f) => {
            const r = await client.mutation(AddTranslation, { project: slug, translation: f.translation ?? '' }).toPromise();
            return after(problemOf(r.data?.addTranslation, r.error));
          }}
        >
          <Field label="Project (slug)" name="translation" required />
        </ActionForm>
      )}
    </>
  );
}
