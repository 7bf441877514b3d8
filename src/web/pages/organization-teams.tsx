// An organization's teams (docs/design/organizations.md): each gives its members one access level,
// read-only or admin, to chosen projects of the organization or to all of them, present and future.
// Owners make, change and delete teams and choose their members; members read them. A team with an
// SSO group follows the identity provider's groups claim at each sign-in; a site admin sets it
// (docs/design/sso.md).
import { useId } from 'react';
import type { Client } from 'urql';
import { Link } from 'wouter';
import { type FragmentOf, graphql, type ResultOf, readFragment } from '../graphql.ts';
import { ActButton, ActionForm, Check, check, Field, type Problem, ProblemText, problemOf, Select, useEditor } from '../ui.tsx';
import { useViewer } from '../viewer.ts';

/** A team as its card and its edit form show it; every change to a team answers with it. */
const TeamCardFields = graphql(`
  fragment TeamCard on Team { id slug name access allProjects ssoGroup projects { id slug name } members { id username } }
`);
/** What a team's form offers: the organization's members and projects. */
const TeamChoicesFields = graphql(`
  fragment TeamChoices on Organization { id members { user { id username } } projects(limit: 500) { totalCount nodes { id slug name } } }
`);
const TeamsQuery = graphql(
  `
  query OrganizationTeams($slug: String!) {
    organization(slug: $slug) { id teams { id ...TeamCard } ...TeamChoices }
  }
`,
  [TeamCardFields, TeamChoicesFields],
);
// A new team takes its place in the list (by slug), a deleted one leaves it: src/web/cache-updates.ts.
const CreateTeam = graphql(
  `
  mutation CreateTeam($organization: String!, $input: TeamInput!) {
    createTeam(organization: $organization, input: $input) {
      __typename
      ... on MutationCreateTeamSuccess { data { id slug ...TeamCard } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`,
  [TeamCardFields],
);
const UpdateTeam = graphql(
  `
  mutation UpdateTeam($organization: String!, $team: String!, $input: TeamInput!) {
    updateTeam(organization: $organization, team: $team, input: $input) {
      __typename
      ... on MutationUpdateTeamSuccess { data { id ...TeamCard } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`,
  [TeamCardFields],
);
const DeleteTeam = graphql(`
  mutation DeleteTeam($organization: String!, $team: String!) {
    deleteTeam(organization: $organization, team: $team) {
      __typename
      ... on MutationDeleteTeamSuccess { data { id slug } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);
// Adding or removing a member answers with the team's members.
const AddTeamMember = graphql(`
  mutation AddTeamMember($organization: String!, $team: String!, $username: String!) {
    addTeamMember(organization: $organization, team: $team, username: $username) {
      __typename
      ... on MutationAddTeamMemberSuccess { data { id members { id username } } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);
const RemoveTeamMember = graphql(`
  mutation RemoveTeamMember($organization: String!, $team: String!, $username: String!) {
    removeTeamMember(organization: $organization, team: $team, username: $username) {
      __typename
      ... on MutationRemoveTeamMemberSuccess { data { id members { id username } } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);

const ACCESS = [
  { value: 'readonly', label: 'Read-only', help: "Reads the projects' private docs, versions and builds." },
  { value: 'admin', label: 'Admin', help: 'Maintains the projects, as their maintainers do.' },
];
type Access = 'readonly' | 'admin';

type Data = ResultOf<typeof TeamChoicesFields>;
type Team = ResultOf<typeof TeamCardFields>;

export function Teams({ slug, owner }: { slug: string; owner: boolean }) {
  const { data, client, problem, setProblem, pending } = useEditor(TeamsQuery, { slug }, 'cache-and-network');
  if (!data) return pending('teams');
  if (!data.organization) return null;
  const teams = data.organization.teams;
  const org = readFragment(TeamChoicesFields, data.organization);
  return (
    <>
      <p>A team gives its members one access to some or all of the organization's projects: read-only, or admin (maintaining them).</p>
      <ProblemText problem={problem} />
      {teams.length === 0 && <p>No teams.</p>}
      {teams.map((team) => (
        <TeamCard key={team.id} slug={slug} team={team} org={owner ? org : null} client={client} report={setProblem} />
      ))}
      {owner && (
        <details open={teams.length === 0}>
          <summary>Create a team</summary>
          <TeamForm slug={slug} org={org} client={client} />
        </details>
      )}
    </>
  );
}

/** A team as everyone reads it; with `org` (for owners), its edit form and delete button. */
function TeamCard(props: { slug: string; team: FragmentOf<typeof TeamCardFields>; org: Data | null; client: Client; report: (p: Problem | null) => void }) {
  const { slug, org, client } = props;
  const team = readFragment(TeamCardFields, props.team);
  return (
    <section className="team">
      <h2 className="wrap">
        {team.name} <span className="badge">{ACCESS.find((a) => a.value === team.access)?.label ?? team.access}</span>
      </h2>
      <p>
        Projects:{' '}
        {team.allProjects
          ? 'every project of the organization, present and future'
          : team.projects.length === 0
            ? 'none yet'
            : team.projects.map((p, i) => (
                <span key={p.id}>
                  {i > 0 && ', '}
                  <Link href={`/projects/${p.slug}`}>{p.name}</Link>
                </span>
              ))}
      </p>
      <p>Members: {team.members.length ? team.members.map((m) => m.username).join(', ') : 'none yet'}</p>
      {team.ssoGroup && (
        <p>
          SSO group: <code>{team.ssoGroup}</code> (members follow it at each sign-in)
        </p>
      )}
      {org && (
        <div className="actions">
          <ActButton
            danger
            label={`Delete the team ${team.name}`}
            act={async () => {
              const r = await client.mutation(DeleteTeam, { organization: slug, team: team.slug }).toPromise();
              return problemOf(r.data?.deleteTeam, r.error);
            }}
            report={props.report}
          >
            Delete
          </ActButton>
          <details>
            <summary>
              Edit<span className="visually-hidden"> the team {team.name}</span>
            </summary>
            <TeamForm slug={slug} org={org} team={team} client={client} />
          </details>
        </div>
      )}
    </section>
  );
}

/**
 * The team's input from its form: its name, access, and all projects or the ones ticked (the API
 * replaces a team's projects: those granted but beyond the list shown are kept).
 */
function teamInput(f: Record<string, string>, org: Data, team?: Team) {
  // A site admin's alone (docs/design/sso.md): sent only by one, and only when it changed.
  const ssoGroup = f.ssoGroup === undefined || f.ssoGroup.trim() === (team?.ssoGroup ?? '') ? {} : { ssoGroup: f.ssoGroup.trim() };
  const all = f.scope === 'all';
  const listed = org.projects.nodes;
  const unlisted = (team?.projects ?? []).filter((p) => !listed.some((n) => n.id === p.id)).map((p) => p.slug);
  return {
    name: f.name ?? '',
    access: f.access as Access,
    allProjects: all,
    ...ssoGroup,
    projects: all ? [] : [...listed.filter((p) => check(f, `project:${p.slug}`)).map((p) => p.slug), ...unlisted],
  };
}

/**
 * Makes the team's members the ones ticked, one change at a time (the API adds and removes a member
 * at a time); the first refusal stops it and is reported.
 */
async function syncMembers(client: Client, slug: string, team: string, org: Data, f: Record<string, string>, before: readonly string[]) {
  const chosen = org.members.map((m) => m.user.username).filter((u) => check(f, `member:${u}`));
  for (const username of chosen.filter((u) => !before.includes(u))) {
    const r = await client.mutation(AddTeamMember, { organization: slug, team, username }).toPromise();
    const p = problemOf(r.data?.addTeamMember, r.error);
    if (p) return p;
  }
  for (const username of before.filter((u) => !chosen.includes(u))) {
    const r = await client.mutation(RemoveTeamMember, { organization: slug, team, username }).toPromise();
    const p = problemOf(r.data?.removeTeamMember, r.error);
    if (p) return p;
  }
  return null;
}

/** Makes a team (without `team`) or changes one: name, access, projects and members. */
function TeamForm(props: { slug: string; org: Data; team?: Team; client: Client }) {
  const { slug, org, team, client } = props;
  const admin = useViewer()?.isAdmin === true;
  return (
    <ActionForm
      label={team ? 'Save team' : 'Create team'}
      done={team ? 'Saved.' : undefined}
      reset={!team}
      act={async (f) => {
        const input = teamInput(f, org, team);
        let teamSlug = team?.slug;
        if (team) {
          const r = await client.mutation(UpdateTeam, { organization: slug, team: team.slug, input }).toPromise();
          const p = problemOf(r.data?.updateTeam, r.error);
          if (p) return p;
        } else {
          const r = await client.mutation(CreateTeam, { organization: slug, input }).toPromise();
          const a = r.data?.createTeam;
          const p = problemOf(a, r.error);
          if (p || a?.__typename !== 'MutationCreateTeamSuccess') return p;
          teamSlug = a.data.slug;
        }
        return syncMembers(client, slug, teamSlug!, org, f, team?.members.map((m) => m.username) ?? []);
      }}
    >
      <Field label="Name" name="name" defaultValue={team?.name} required />
      <Select label="Access" name="access" options={ACCESS} defaultValue={team?.access ?? 'readonly'} />
      {admin ? (
        <Field
          label="SSO group (optional)"
          name="ssoGroup"
          defaultValue={team?.ssoGroup}
          hint="People whose sign-in lists this group join the team; others are taken out."
        />
      ) : (
        team?.ssoGroup && <p className="muted">Its SSO group is set by a site administrator.</p>
      )}
      <ProjectChoice org={org} team={team} />
      <fieldset className="choices">
        <legend>Members</legend>
        {org.members.map((m) => (
          <Check key={m.user.id} label={m.user.username} name={`member:${m.user.username}`} checked={team?.members.some((u) => u.id === m.user.id) ?? false} />
        ))}
      </fieldset>
    </ActionForm>
  );
}

/** All of the organization's projects, present and future, or the ones ticked. */
function ProjectChoice({ org, team }: { org: Data; team?: Team }) {
  const id = useId();
  const projects = org.projects.nodes;
  return (
    <fieldset className="choices">
      <legend>Projects</legend>
      <div className="field check">
        <input id={`${id}-all`} type="radio" name="scope" value="all" defaultChecked={team?.allProjects ?? false} />
        <label htmlFor={`${id}-all`}>Every project of the organization, present and future</label>
      </div>
      <div className="field check">
        <input id={`${id}-chosen`} type="radio" name="scope" value="chosen" defaultChecked={!(team?.allProjects ?? false)} />
        <label htmlFor={`${id}-chosen`}>Only the projects ticked below</label>
      </div>
      <div className="indent">
        {projects.length === 0 && <p className="muted">The organization owns no project yet.</p>}
        {projects.map((p) => (
          <Check key={p.id} label={p.name} name={`project:${p.slug}`} checked={team?.projects.some((q) => q.id === p.id) ?? false} />
        ))}
        {org.projects.totalCount > projects.length && (
          <p className="muted">
            The first {projects.length} of {org.projects.totalCount} projects, by slug.
          </p>
        )}
      </div>
    </fieldset>
  );
}
