// Organizations (docs/design/organizations.md): the reader's organizations and a form to make one;
// an organization's page, whose tabs are its projects, members, teams, invitations, settings and audit log
// (owners change them, members read them: no form is shown to someone whose request would be
// refused); and the page an invitation link opens.
import { useState } from 'react';
import { type Client, useClient, useQuery } from 'urql';
import { Link, useLocation, useSearch } from 'wouter';
import { type FragmentOf, graphql, type ResultOf, readFragment } from '../graphql.ts';
import { ActionForm, Check, check, Failure, Field, Loading, NotFound, Pager, problemOf, TextArea, Time } from '../ui.tsx';
import { useViewer } from '../viewer.ts';
import { AuditLog } from './audit.tsx';
import { Invitations, Members, MembersTabFields } from './organization-members.tsx';
import { Teams } from './organization-teams.tsx';

/** An organization's row in the reader's list. */
const OrganizationRowFields = graphql(`
  fragment OrganizationRow on Organization { id slug name description viewerRole projects(limit: 1) { totalCount } }
`);
const OrganizationsQuery = graphql(
  `
  query Organizations {
    viewer { id username isAdmin } setupNeeded
    organizations(limit: 100) { totalCount nodes { id ...OrganizationRow } }
  }
`,
  [OrganizationRowFields],
);
// The new organization takes its place in the list (by slug): src/web/cache-updates.ts.
const CreateOrganization = graphql(
  `
  mutation CreateOrganization($input: OrganizationInput!) {
    createOrganization(input: $input) {
      __typename
      ... on MutationCreateOrganizationSuccess { data { id slug name ...OrganizationRow } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`,
  [OrganizationRowFields],
);

/** The caller's role in an organization, in words; null is a site admin reading one they are not in. */
export const roleText = (role: string | null | undefined) => (role === 'owner' ? 'Owner' : role === 'member' ? 'Member' : 'Not a member (site administrator)');

export function OrganizationsPage() {
  // Always asked again: an organization made, joined or left elsewhere shows on the next visit.
  const [{ data, fetching, error }] = useQuery({ query: OrganizationsQuery, requestPolicy: 'cache-and-network' });
  const client = useClient();
  const [, navigate] = useLocation();
  const orgs = data?.organizations;
  return (
    <section>
      <h1>Organizations</h1>
      <p>An organization owns projects. Its owners maintain them all; its teams give their members read-only or maintainer access to some or all of them.</p>
      {error && !data && <Failure error={error} />}
      {fetching && !data && <Loading what="your organizations" />}
      {orgs && orgs.totalCount === 0 && <p>You are in no organization yet. Create one below, or open an invitation link an organization's owner sent you.</p>}
      {orgs && orgs.totalCount > 0 && <OrganizationList orgs={orgs} />}
      <h2>Create an organization</h2>
      <ActionForm
        label="Create organization"
        act={async (f) => {
          const input = { name: f.name ?? '', slug: f.slug || undefined, description: f.description || undefined };
          const r = await client.mutation(CreateOrganization, { input }).toPromise();
          const a = r.data?.createOrganization;
          const p = problemOf(a, r.error);
          if (!p && a?.__typename === 'MutationCreateOrganizationSuccess') navigate(`/organizations/${a.data.slug}`);
          return p;
        }}
      >
        <Field label="Name" name="name" required />
        <Field label="Slug (optional)" name="slug" hint="Its name in addresses. Made from the name when empty; it cannot be changed later." />
        <TextArea label="Description (optional)" name="description" rows={2} />
      </ActionForm>
    </section>
  );
}

type Organizations = ResultOf<typeof OrganizationsQuery>['organizations'];

function OrganizationList({ orgs }: { orgs: Organizations }) {
  return (
    <>
      <table className="list cards-on-phone">
        <caption className="visually-hidden">Your organizations</caption>
        <thead>
          <tr>
            <th scope="col">Organization</th>
            <th scope="col">Your role</th>
            <th scope="col">Projects</th>
          </tr>
        </thead>
        <tbody>
          {orgs.nodes.map((o) => (
            <OrganizationRow key={o.id} o={o} />
          ))}
        </tbody>
      </table>
      {orgs.totalCount > orgs.nodes.length && (
        <p className="muted">
          The first {orgs.nodes.length} of {orgs.totalCount}, by slug.
        </p>
      )}
    </>
  );
}

/** An organization's row: its name (a link) and description, the reader's role, and how many projects it owns. */
function OrganizationRow(props: { o: FragmentOf<typeof OrganizationRowFields> }) {
  const o = readFragment(OrganizationRowFields, props.o);
  return (
    <tr>
      <th scope="row" className="row-head">
        <Link href={`/organizations/${o.slug}`}>{o.name}</Link>
        {o.description && <div className="muted description">{o.description}</div>}
      </th>
      <td data-label="Your role">{roleText(o.viewerRole)}</td>
      <td data-label="Projects">{o.projects.totalCount}</td>
    </tr>
  );
}

const TABS = [
  ['projects', 'Projects'],
  ['members', 'Members'],
  ['teams', 'Teams'],
  ['invitations', 'Invitations'],
  ['settings', 'Settings'],
  ['audit', 'Audit log'],
] as const;

/** The tabs only owners see: the API answers invitations and the audit log to owners only. */
const OWNERS_ONLY: readonly string[] = ['invitations', 'audit'];

/** What the settings tab shows and changes (and what saving it answers with). */
const OrganizationSettingsFields = graphql(`
  fragment OrganizationSettings on Organization { id slug name description url email ssoOnly createdAt viewerRole }
`);
const OrganizationQuery = graphql(
  `
  query OrganizationPage($slug: String!) {
    viewer { id username isAdmin } setupNeeded
    organization(slug: $slug) {
      id name description viewerRole owners { id username }
      ...OrganizationMembersTab ...OrganizationSettings
    }
  }
`,
  [MembersTabFields, OrganizationSettingsFields],
);

type Organization = ResultOf<typeof OrganizationSettingsFields>;

export function OrganizationPage({ slug, tab }: { slug: string; tab: string }) {
  // A change of the reader's own role (an owner stepping down) reaches the header and the tabs
  // through the cache (src/web/cache-updates.ts): the page's forms follow what they may now do.
  const [{ data, fetching, error }] = useQuery({ query: OrganizationQuery, variables: { slug } });
  if (fetching && !data) return <Loading what="the organization" />;
  if (error && !data) return <Failure error={error} />;
  const org = data?.organization;
  if (!org) return <NotFound what={`There is no organization "${slug}" that you are in.`} />;
  const owner = org.viewerRole === 'owner';
  const tabs = TABS.filter(([t]) => owner || !OWNERS_ONLY.includes(t));
  const known = TABS.some(([t]) => t === tab);
  return (
    <section>
      <h1>{org.name}</h1>
      <p className="muted">
        Your role: {roleText(org.viewerRole)} · Owners: {org.owners.map((o) => o.username).join(', ')}
      </p>
      {org.description && <p className="description">{org.description}</p>}
      <nav className="tabs" aria-label="Organization">
        {tabs.map(([t, label]) => (
          <Link key={t} href={`/organizations/${slug}/${t}`} aria-current={t === tab ? 'page' : undefined}>
            {label}
          </Link>
        ))}
      </nav>
      {!known && <NotFound what={`The organization has no "${tab}" page.`} />}
      {tab === 'projects' && <OrganizationProjects slug={slug} owner={owner} />}
      {tab === 'members' && <Members org={org} />}
      {tab === 'teams' && <Teams slug={slug} owner={owner} />}
      {tab === 'invitations' && (owner ? <Invitations slug={slug} /> : <p>Only the organization's owners invite people.</p>)}
      {tab === 'settings' && <OrganizationSettings org={org} />}
      {tab === 'audit' && (owner ? <OrganizationAudit slug={slug} /> : <p>Only the organization's owners read its audit log.</p>)}
    </section>
  );
}

/** The organization's log (docs/design/audit.md): its own entries, and its members' sign-ins and tokens. */
function OrganizationAudit({ slug }: { slug: string }) {
  return (
    <>
      <p>What happened in the organization, newest first: its members, teams, invitations and projects, and its members' sign-ins and tokens.</p>
      <AuditLog organization={slug} />
    </>
  );
}

const PAGE = 25;

/** A project's row in the organization's list. */
const OrganizationProjectFields = graphql(`
  fragment OrganizationProject on Project { id slug name description privacyLevel viewerAccess }
`);
const ProjectsQuery = graphql(
  `
  query OrganizationProjects($slug: String!, $limit: Int, $offset: Int) {
    organization(slug: $slug) {
      id
      projects(limit: $limit, offset: $offset) { totalCount nodes { id ...OrganizationProject } }
    }
  }
`,
  [OrganizationProjectFields],
);

const ACCESS_TEXT: Record<string, string> = { admin: 'Maintainer', readonly: 'Read-only' };

function OrganizationProjects({ slug, owner }: { slug: string; owner: boolean }) {
  const [page, setPage] = useState(0);
  const [{ data, fetching, error }] = useQuery({
    query: ProjectsQuery,
    variables: { slug, limit: PAGE, offset: page * PAGE },
    requestPolicy: 'cache-and-network',
  });
  const projects = data?.organization?.projects;
  const total = projects?.totalCount ?? 0;
  return (
    <>
      {owner && (
        <p>
          A project's maintainer moves it into the organization from the project's settings, when they own the organization. Its owners maintain every project
          in it.
        </p>
      )}
      {error && !data && <Failure error={error} />}
      {fetching && !data && <Loading what="the projects" />}
      {projects && total === 0 && <p>No projects that you can see.</p>}
      {projects && total > 0 && (
        <table className="list cards-on-phone">
          <caption className="visually-hidden">The organization's projects</caption>
          <thead>
            <tr>
              <th scope="col">Project</th>
              <th scope="col">Your access</th>
            </tr>
          </thead>
          <tbody>
            {projects.nodes.map((p) => (
              <OrganizationProjectRow key={p.id} p={p} />
            ))}
          </tbody>
        </table>
      )}
      {total > PAGE && <Pager page={page} size={PAGE} total={total} go={setPage} />}
    </>
  );
}

/** A project's row: its name (a link), whether it is private, its description and the reader's access. */
function OrganizationProjectRow(props: { p: FragmentOf<typeof OrganizationProjectFields> }) {
  const p = readFragment(OrganizationProjectFields, props.p);
  return (
    <tr>
      <th scope="row" className="row-head">
        <Link href={`/projects/${p.slug}`}>{p.name}</Link>
        {p.privacyLevel === 'private' && <span className="badge">private</span>}
        {p.description && <div className="muted description">{p.description}</div>}
      </th>
      <td data-label="Your access">{p.viewerAccess ? ACCESS_TEXT[p.viewerAccess] : 'Public docs only'}</td>
    </tr>
  );
}

// Saving answers with the settings (the header's name and description among them).
const UpdateOrganization = graphql(
  `
  mutation UpdateOrganization($organization: String!, $input: OrganizationInput!) {
    updateOrganization(organization: $organization, input: $input) {
      __typename
      ... on MutationUpdateOrganizationSuccess { data { id ...OrganizationSettings } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`,
  [OrganizationSettingsFields],
);

function OrganizationSettings(props: { org: FragmentOf<typeof OrganizationSettingsFields> }) {
  const org = readFragment(OrganizationSettingsFields, props.org);
  const client = useClient();
  // SSO rules are a site admin's, who must own the organization too (docs/design/sso.md).
  const admin = useViewer()?.isAdmin === true;
  if (org.viewerRole !== 'owner') return <OrganizationFacts org={org} />;
  return (
    <>
      <ActionForm
        label="Save settings"
        done="Saved."
        act={async (f) => {
          // SSO-only is sent only when changed: kept on, it is asked again and needs an enabled provider.
          const ssoOnly = admin && check(f, 'ssoOnly') !== org.ssoOnly ? { ssoOnly: check(f, 'ssoOnly') } : {};
          const input = { name: f.name ?? '', description: f.description ?? '', url: f.url ?? '', email: f.email ?? '', ...ssoOnly };
          const r = await client.mutation(UpdateOrganization, { organization: org.slug, input }).toPromise();
          return problemOf(r.data?.updateOrganization, r.error);
        }}
      >
        <Field label="Name" name="name" defaultValue={org.name} required />
        <TextArea label="Description" name="description" defaultValue={org.description} />
        <Field label="URL" name="url" type="url" defaultValue={org.url} hint="The organization's own site." />
        <Field label="Email" name="email" type="email" defaultValue={org.email} hint="Where people reach the organization." />
        {admin ? (
          <Check
            label="Members sign in with single sign-on only"
            name="ssoOnly"
            checked={org.ssoOnly}
            hint="Their passwords are refused (site administrators' are not); API tokens keep working. It needs an enabled identity provider."
          />
        ) : (
          <p className="muted">
            {org.ssoOnly ? 'Members sign in with single sign-on only.' : 'Members sign in with a password or single sign-on.'} Only a site administrator changes
            this.
          </p>
        )}
      </ActionForm>
      <p className="muted">
        Its slug, <code>{org.slug}</code>, stays as it was made.
      </p>
      <DeleteOrganization slug={org.slug} />
    </>
  );
}

/** What a member who is not an owner reads of the settings. */
function OrganizationFacts({ org }: { org: Organization }) {
  return (
    <>
      <dl className="facts">
        <dt>Name</dt>
        <dd>{org.name}</dd>
        <dt>Slug</dt>
        <dd>
          <code>{org.slug}</code>
        </dd>
        <dt>URL</dt>
        <dd>{org.url ? <a href={org.url}>{org.url}</a> : '—'}</dd>
        <dt>Email</dt>
        <dd>{org.email || '—'}</dd>
        <dt>Sign-in</dt>
        <dd>{org.ssoOnly ? 'Single sign-on only' : 'Password or single sign-on'}</dd>
        <dt>Created</dt>
        <dd>
          <Time iso={org.createdAt} />
        </dd>
      </dl>
      <p>Only the organization's owners change its settings.</p>
    </>
  );
}

const ProjectCount = graphql(`
  query OrganizationProjectCount($slug: String!) { organization(slug: $slug) { id projects(limit: 1) { totalCount } } }
`);
const DeleteOrganizationMutation = graphql(`
  mutation DeleteOrganization($organization: String!) {
    deleteOrganization(organization: $organization) {
      __typename
      ... on MutationDeleteOrganizationSuccess { data { id slug } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);

/** Deleting is offered only when the organization owns no project: deleting it never deletes docs (docs/design/organizations.md). */
function DeleteOrganization({ slug }: { slug: string }) {
  const [{ data }] = useQuery({ query: ProjectCount, variables: { slug }, requestPolicy: 'cache-and-network' });
  const client = useClient();
  const count = data?.organization?.projects.totalCount;
  if (count === undefined) return null;
  return (
    <section className="danger-zone">
      <h2>Delete the organization</h2>
      {count > 0 ? (
        <p>
          {count === 1
            ? "It owns a project: move the project out (from the project's settings) or delete it first."
            : `It owns ${count} projects: move them out (from each project's settings) or delete them first.`}
        </p>
      ) : (
        <>
          <p>Its members, teams and invitations go. This cannot be undone.</p>
          <ActionForm
            label={`Delete ${slug}`}
            danger
            act={async (f) => {
              if (f.confirm !== slug) return { message: `Type "${slug}" to confirm.`, fields: { confirm: `Type "${slug}" exactly.` } };
              const r = await client.mutation(DeleteOrganizationMutation, { organization: slug }).toPromise();
              const p = problemOf(r.data?.deleteOrganization, r.error);
              // Every answer cached for its members went with it: the list is read afresh.
              if (!p) window.location.assign('/organizations');
              return p;
            }}
          >
            <Field label={`Type "${slug}" to confirm`} name="confirm" required />
          </ActionForm>
        </>
      )}
    </section>
  );
}

const AcceptInvitation = graphql(`
  mutation AcceptInvitation($token: String!) {
    acceptInvitation(token: $token) {
      __typename
      ... on MutationAcceptInvitationSuccess { data { id slug name } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);

const InvitationQuery = graphql(`
  query InvitationPreview($token: String!) { invitation(token: $token) { organizationName organizationSlug role team expiresAt } }
`);

/**
 * The page an invitation link opens (`/invitations/accept?token=…`). A signed-out reader is sent to
 * sign in and back by the shell (main.tsx); signed in, the page says what the link offers, and one
 * button joins. The link admits whoever opens it, once (docs/design/organizations.md), so joining is
 * a click, never a page load; a link used, expired or wrong offers nothing to click.
 */
export function AcceptInvitationPage() {
  const token = new URLSearchParams(useSearch()).get('token') ?? '';
  const viewer = useViewer();
  const client = useClient();
  const [{ data, fetching, error }] = useQuery({ query: InvitationQuery, variables: { token }, pause: !token, requestPolicy: 'network-only' });
  if (!token) return <NotFound what="This invitation link has no token: open the whole link you were sent, or ask the organization's owner for a new one." />;
  if (error && !data) return <Failure error={error} />;
  if (fetching || !data) return <Loading what="the invitation" />;
  const offer = data.invitation;
  return (
    <section className="narrow">
      <h1>Join an organization</h1>
      {!offer ? (
        <p className="error" role="alert">
          This invitation is used, expired or wrong. Ask the organization's owner for a new link.
        </p>
      ) : (
        <>
          <p>
            This invitation link makes you{viewer ? <> ({viewer.username})</> : null} {offer.role === 'owner' ? 'an owner' : 'a member'} of{' '}
            <strong>{offer.organizationName}</strong>
            {offer.team ? (
              <>
                , in its team <strong>{offer.team}</strong>
              </>
            ) : null}
            . It works once, until{' '}
            <time dateTime={offer.expiresAt}>{new Date(offer.expiresAt).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })}</time>.
          </p>
          <JoinButton token={token} client={client} />
        </>
      )}
      <p>
        <Link href="/organizations">Your organizations</Link>
      </p>
    </section>
  );
}

function JoinButton({ token, client }: { token: string; client: Client }) {
  return (
    <ActionForm
      label="Join the organization"
      act={async () => {
        const r = await client.mutation(AcceptInvitation, { token }).toPromise();
        const a = r.data?.acceptInvitation;
        const p = problemOf(a, r.error);
        // A used, expired or wrong link: the reason is the message (there is no field to fix).
        if (p?.fields.token) return { message: p.fields.token, fields: {} };
        // Joining changes what every page may show (projects, docs): the app starts afresh there.
        if (!p && a?.__typename === 'MutationAcceptInvitationSuccess') window.location.assign(`/organizations/${a.data.slug}`);
        return p;
      }}
    />
  );
}
