// An organization's members and its invitations (docs/design/organizations.md): each member's role
// and teams, which owners change (and remove members), and from which anyone leaves; invitation
// links, made by owners for a role and optionally a team, shown once, listed while pending.
import { useState } from 'react';
import { useClient } from 'urql';
import { Link } from 'wouter';
import { type FragmentOf, graphql, type ResultOf, readFragment } from '../graphql.ts';
import {
  ActButton,
  ActionForm,
  CopyButton,
  Field,
  type Problem,
  ProblemText,
  Progress,
  problemOf,
  Select,
  Time,
  useEditor,
  usePendingChanges,
} from '../ui.tsx';
import { useViewer } from '../viewer.ts';

/** What the members' tab needs of its organization (the page's operation spreads it). */
export const MembersTabFields = graphql(`
  fragment OrganizationMembersTab on Organization { id slug name viewerRole }
`);
type Organization = ResultOf<typeof MembersTabFields>;
/** A member's row: their role, teams and when they joined. */
const MemberRowFields = graphql(`
  fragment MemberRow on OrganizationMember { role createdAt user { id username } teams { id slug name } }
`);
const MembersQuery = graphql(
  `
  query OrganizationMembers($slug: String!) {
    organization(slug: $slug) { id members { user { id username } ...MemberRow } }
  }
`,
  [MemberRowFields],
);
// A member has no key of its own: src/web/cache-updates.ts writes the new role into the row, the
// organization's owners and, for the reader's own, their role; a removed member leaves the rows.
const SetRole = graphql(`
  mutation SetOrganizationMemberRole($organization: String!, $username: String!, $role: OrganizationRole!) {
    setOrganizationMemberRole(organization: $organization, username: $username, role: $role) {
      __typename
      ... on MutationSetOrganizationMemberRoleSuccess { data { role user { id username } } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);
const RemoveMember = graphql(`
  mutation RemoveOrganizationMember($organization: String!, $username: String!) {
    removeOrganizationMember(organization: $organization, username: $username) {
      __typename
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);

export const ROLES = [
  { value: 'member', label: 'Member', help: 'Has what their teams give.' },
  { value: 'owner', label: 'Owner', help: 'Manages the organization, and maintains all its projects.' },
];
type Role = 'member' | 'owner';

/** The members: owners change roles and remove people; anyone leaves (the last owner stays, as the API says). */
export function Members(props: { org: FragmentOf<typeof MembersTabFields> }) {
  const org = readFragment(MembersTabFields, props.org);
  const viewer = useViewer();
  const { data, client, problem, setProblem, pending } = useEditor(MembersQuery, { slug: org.slug }, 'cache-and-network');
  const roles = usePendingChanges<Role>(setProblem);
  if (!data) return pending('members');
  const members = data.organization?.members ?? [];
  const owner = org.viewerRole === 'owner';
  const setRole = (username: string, role: Role) =>
    roles.change(username, role, async () => {
      // The header names the owners, and stepping down changes what the page offers its reader:
      // both follow the answer in the cache.
      const r = await client.mutation(SetRole, { organization: org.slug, username, role }).toPromise();
      return problemOf(r.data?.setOrganizationMemberRole, r.error);
    });
  return (
    <>
      <ProblemText problem={problem} />
      <table className="list cards-on-phone">
        <caption className="visually-hidden">Members</caption>
        <thead>
          <tr>
            <th scope="col">Member</th>
            <th scope="col">Role</th>
            <th scope="col">Teams</th>
            <th scope="col">Joined</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {members.map((m) => (
            <MemberRow key={m.user.id} m={m} org={org} self={m.user.username === viewer?.username} roles={roles} setRole={setRole} report={setProblem} />
          ))}
        </tbody>
      </table>
      {owner && (
        <p>
          To add someone, <Link href={`/organizations/${org.slug}/invitations`}>make an invitation link</Link>.
        </p>
      )}
    </>
  );
}

/** A member's row: their name, role (an owner's control), teams, when they joined, and leaving or removing them. */
function MemberRow(props: {
  m: FragmentOf<typeof MemberRowFields>;
  org: Organization;
  self: boolean;
  roles: ReturnType<typeof usePendingChanges<Role>>;
  setRole: (username: string, role: Role) => void;
  report: (p: Problem | null) => void;
}) {
  const { org, self, roles } = props;
  const m = readFragment(MemberRowFields, props.m);
  const name = m.user.username;
  const owner = org.viewerRole === 'owner';
  return (
    <tr aria-busy={roles.busy(name) || undefined}>
      <th scope="row" className="row-head">
        {name}
        {self && <span className="badge">you</span>}
      </th>
      <td data-label={owner ? undefined : 'Role'}>
        {owner ? <RoleControl name={name} role={m.role} roles={roles} onChange={(r) => props.setRole(name, r)} /> : roleLabel(m.role)}
      </td>
      <td data-label="Teams">{m.teams.length ? m.teams.map((t) => t.name).join(', ') : '—'}</td>
      <td data-label="Joined">
        <Time iso={m.createdAt} />
      </td>
      <td>{(self || owner) && <MemberAction org={org} name={name} self={self} report={props.report} />}</td>
    </tr>
  );
}

/** Leaving (the reader's own row) or, for owners, removing someone; the last owner stays, as the API says. */
function MemberAction(props: { org: Organization; name: string; self: boolean; report: (p: Problem | null) => void }) {
  const client = useClient();
  const remove = async () => {
    const r = await client.mutation(RemoveMember, { organization: props.org.slug, username: props.name }).toPromise();
    return problemOf(r.data?.removeOrganizationMember, r.error);
  };
  // Leaving takes away what the organization gave (projects, docs): the app starts afresh.
  const left = () => window.location.assign('/organizations');
  return (
    <ActButton danger act={remove} report={props.report} done={props.self ? left : undefined}>
      {props.self ? `Leave ${props.org.name}` : `Remove ${props.name}`}
    </ActButton>
  );
}

const roleLabel = (role: string) => ROLES.find((r) => r.value === role)?.label ?? role;

/** An owner's control of a member's role: the role asked for shows at once, disabled until Lectern answers. */
function RoleControl(props: { name: string; role: Role; roles: ReturnType<typeof usePendingChanges<Role>>; onChange: (role: Role) => void }) {
  const { name, roles } = props;
  return (
    <>
      <label className="toggle">
        <span className="on-phone" aria-hidden="true">
          Role
        </span>
        <select
          aria-label={`${name}'s role`}
          value={roles.shown(name, props.role)}
          disabled={roles.busy(name)}
          onChange={(e) => props.onChange(e.target.value as Role)}
        >
          {ROLES.map((r) => (
            <option key={r.value} value={r.value}>
              {r.label}
            </option>
          ))}
        </select>
      </label>
      <Progress busy={roles.busy(name)} what="Saving…" />
    </>
  );
}

/** A pending invitation's row. */
const InvitationRowFields = graphql(`
  fragment InvitationRow on OrganizationInvitation { id email role createdAt expiresAt team { id slug name } createdBy { id username } }
`);
const InvitationsQuery = graphql(
  `
  query OrganizationInvitations($slug: String!) {
    organization(slug: $slug) {
      id
      teams { id slug name }
      invitations { id ...InvitationRow }
    }
  }
`,
  [InvitationRowFields],
);
// A new invitation goes first (newest first), a revoked one leaves the list: src/web/cache-updates.ts.
const Invite = graphql(
  `
  mutation InviteToOrganization($organization: String!, $input: OrganizationInvitationInput!) {
    inviteToOrganization(organization: $organization, input: $input) {
      __typename
      ... on MutationInviteToOrganizationSuccess { data { link emailed invitation { id email ...InvitationRow } } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`,
  [InvitationRowFields],
);
const Revoke = graphql(`
  mutation RevokeInvitation($organization: String!, $id: Int!) {
    revokeInvitation(organization: $organization, id: $id) {
      __typename
      ... on MutationRevokeInvitationSuccess { data }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);

type Made = { link: string; emailed: boolean; email: string };

/** Owners' invitation links: made here, shown once (only their hashes are kept), pending ones listed and revoked. */
export function Invitations({ slug }: { slug: string }) {
  const { data, client, problem, setProblem, pending } = useEditor(InvitationsQuery, { slug }, 'cache-and-network');
  const [made, setMade] = useState<Made | null>(null);
  if (!data) return pending('invitations');
  const org = data.organization;
  if (!org) return null;
  return (
    <>
      <p>
        An invitation is a link: whoever opens it, signed in, joins the organization with its role (and team), once, within a week. The link, not the email
        address, is what admits.
      </p>
      <h2>Invite someone</h2>
      <ActionForm
        label="Make an invitation link"
        onTry={() => setMade(null)}
        reset
        act={async (f) => {
          const input = { email: f.email || undefined, role: f.role as Role, team: f.team || undefined };
          const r = await client.mutation(Invite, { organization: slug, input }).toPromise();
          const a = r.data?.inviteToOrganization;
          const p = problemOf(a, r.error);
          if (!p && a?.__typename === 'MutationInviteToOrganizationSuccess') {
            setMade({ link: a.data.link, emailed: a.data.emailed, email: a.data.invitation.email });
          }
          return p;
        }}
      >
        <Field label="Email (optional)" name="email" type="email" hint="Lectern emails the link there, when this installation sends email." />
        <Select label="Role" name="role" options={ROLES} defaultValue="member" />
        <Select
          label="Team (optional)"
          name="team"
          options={[{ value: '', label: 'No team' }, ...org.teams.map((t) => ({ value: t.slug, label: t.name }))]}
          defaultValue=""
          hint="A team the person joins with the organization."
        />
      </ActionForm>
      {made && <MadeLink made={made} />}
      <h2>Pending invitations</h2>
      <ProblemText problem={problem} />
      {org.invitations.length === 0 ? <p>None.</p> : <PendingInvitations slug={slug} invitations={org.invitations} report={setProblem} />}
    </>
  );
}

/** The link just made: shown this once, with a copy button, and whether it went by email. */
function MadeLink({ made }: { made: Made }) {
  return (
    <div className="notice" role="status">
      <p>The invitation link, shown only now: send it to the person you invite.</p>
      <p>
        <code className="wrap" data-testid="invitation-link">
          {made.link}
        </code>
      </p>
      <CopyButton text={made.link}>Copy the link</CopyButton>
      <p>
        {made.emailed
          ? `It was emailed to ${made.email}.`
          : made.email
            ? `It was not emailed (this installation sends no email): send it to ${made.email} yourself.`
            : 'It was not emailed (no address was given): send it yourself.'}
      </p>
    </div>
  );
}

function PendingInvitations(props: { slug: string; invitations: readonly FragmentOf<typeof InvitationRowFields>[]; report: (p: Problem | null) => void }) {
  const client = useClient();
  return (
    <table className="list cards-on-phone">
      <caption className="visually-hidden">Pending invitations</caption>
      <thead>
        <tr>
          <th scope="col">For</th>
          <th scope="col">Role</th>
          <th scope="col">Team</th>
          <th scope="col">Made</th>
          <th scope="col">Expires</th>
          <th scope="col">
            <span className="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {props.invitations
          .map((ref) => readFragment(InvitationRowFields, ref))
          .map((i) => (
            <tr key={i.id}>
              <th scope="row" className="row-head">
                {i.email || 'A link copied by hand'}
              </th>
              <td data-label="Role">{roleLabel(i.role)}</td>
              <td data-label="Team">{i.team?.name ?? '—'}</td>
              <td data-label="Made">
                <Time iso={i.createdAt} />
                {i.createdBy && <> by {i.createdBy.username}</>}
              </td>
              <td data-label="Expires">
                <Time iso={i.expiresAt} />
              </td>
              <td>
                <ActButton
                  danger
                  label={`Revoke the invitation ${i.email ? `for ${i.email}` : `#${i.id}`}`}
                  act={async () => {
                    const r = await client.mutation(Revoke, { organization: props.slug, id: i.id }).toPromise();
                    return problemOf(r.data?.revokeInvitation, r.error);
                  }}
                  report={props.report}
                >
                  Revoke
                </ActButton>
              </td>
            </tr>
          ))}
      </tbody>
    </table>
  );
}
