// The reader's account (API tokens with their limits, docs/design/tokens.md; password) and, for
// site admins, the users.
import { useState } from 'react';
import { type Client, useClient, useQuery } from 'urql';
import { Link, Redirect } from 'wouter';
import { signInUrl } from '../client.ts';
import { type FragmentOf, graphql, type ResultOf, readFragment } from '../graphql.ts';
import {
  ActButton,
  ActionForm,
  Check,
  check,
  Failure,
  Field,
  Loading,
  type Problem,
  ProblemText,
  Progress,
  problemOf,
  Time,
  useEditor,
  usePendingChanges,
} from '../ui.tsx';
import { useViewer } from '../viewer.ts';
import { AdminLayout } from './admin.tsx';

/** A token's row: its name, prefix, times and what it reaches. */
const TokenRowFields = graphql(`
  fragment TokenRow on ApiToken { id name prefix createdAt lastUsedAt expiresAt readOnly projects }
`);
/** The reader's email settings, as the form shows them (and saving answers). */
const EmailSettingsFields = graphql(`
  fragment EmailSettings on User { id email emailNotifications }
`);
const Tokens = graphql(
  `
  query Tokens {
    viewer { id username isAdmin tokens { id ...TokenRow } ...EmailSettings }
    setupNeeded
    projects(filter: { mine: true }, limit: 200) { totalCount nodes { id slug name } }
  }
`,
  [TokenRowFields, EmailSettingsFields],
);
// A new token goes first (newest first), a revoked one leaves the list: src/web/account-updates.ts.
const CreateToken = graphql(
  `
  mutation CreateToken($name: String!, $expiresAt: DateTime, $readOnly: Boolean, $projects: [String!]) {
    createToken(name: $name, expiresAt: $expiresAt, readOnly: $readOnly, projects: $projects) {
      __typename
      ... on MutationCreateTokenSuccess { data { key token { id ...TokenRow } } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`,
  [TokenRowFields],
);
const RevokeToken = graphql(`
  mutation RevokeToken($id: Int!) {
    revokeToken(id: $id) {
      __typename
      ... on MutationRevokeTokenSuccess { data { id } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);
const UpdateAccount = graphql(
  `
  mutation UpdateAccount($input: UpdateAccountInput!) {
    updateAccount(input: $input) {
      __typename
      ... on MutationUpdateAccountSuccess { data { id ...EmailSettings } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`,
  [EmailSettingsFields],
);
const ChangePassword = graphql(`
  mutation ChangePassword($input: ChangePasswordInput!) {
    changePassword(input: $input) {
      __typename
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);

export function AccountPage() {
  const { data, client, problem, setProblem, pending } = useEditor(Tokens, {});
  const [key, setKey] = useState<string | null>(null);
  if (!data) return pending('your account');
  // Signed out, the query answers no viewer (and no error): off to sign in, and back here.
  if (!data.viewer) return <Redirect to={signInUrl()} replace />;
  const tokens = data.viewer.tokens;
  return (
    <section>
      <h1>Your account</h1>
      <h2>API tokens</h2>
      <p>
        Scripts send a token as <code>Authorization: Token &lt;key&gt;</code>. A key is shown once, when it is made.
      </p>
      {key && (
        <div className="notice" role="status">
          <p>Your new token (copy it now; it is not shown again):</p>
          <code data-testid="new-token">{key}</code>
        </div>
      )}
      <ProblemText problem={problem} />
      {tokens.length === 0 && <p>No tokens.</p>}
      {tokens.length > 0 && <TokenList tokens={tokens} client={client} report={setProblem} />}
      <TokenForm projects={data.projects} client={client} onTry={() => setProblem(null)} made={setKey} />
      <h2>Email</h2>
      <EmailForm user={data.viewer} client={client} />
      <h2>Password</h2>
      <ActionForm
        label="Change password"
        done="Your password is changed."
        reset
        act={async (f) => {
          if (f.newPassword !== f.repeat) return { message: 'The two new passwords differ.', fields: {} };
          const r = await client.mutation(ChangePassword, { input: { currentPassword: f.currentPassword, newPassword: f.newPassword ?? '' } }).toPromise();
          return problemOf(r.data?.changePassword, r.error);
        }}
      >
        <Field label="Current password" name="currentPassword" type="password" autoComplete="current-password" />
        <Field label="New password" name="newPassword" type="password" required autoComplete="new-password" />
        <Field label="New password, again" name="repeat" type="password" required autoComplete="new-password" />
      </ActionForm>
    </section>
  );
}

/** The reader's email address, and whether they get email about their projects' builds. */
function EmailForm(props: { user: FragmentOf<typeof EmailSettingsFields>; client: Client }) {
  const user = readFragment(EmailSettingsFields, props.user);
  return (
    <ActionForm
      label="Save email settings"
      done="Saved."
      act={async (f) => {
        const input = { email: f.email ?? '', emailNotifications: check(f, 'emailNotifications') };
        const r = await props.client.mutation(UpdateAccount, { input }).toPromise();
        return problemOf(r.data?.updateAccount, r.error);
      }}
    >
      <Field label="Email address" name="email" type="email" defaultValue={user.email ?? ''} autoComplete="email" />
      <Check
        label="Email me about my projects' builds"
        name="emailNotifications"
        checked={user.emailNotifications}
        hint="When a build of a default version fails, and when one passes again (if this installation sends email)."
      />
    </ActionForm>
  );
}

type Token = ResultOf<typeof TokenRowFields>;

/** What a token reaches (docs/design/tokens.md): null is every project its user reaches; an empty list, none (they were deleted). */
function TokenReach({ token }: { token: Token }) {
  return (
    <>
      {token.readOnly && <span className="badge">read-only</span>}{' '}
      {token.projects === null || token.projects === undefined
        ? 'All your projects'
        : token.projects.length === 0
          ? 'No project (those it was limited to were deleted)'
          : token.projects.map((p, i) => (
              <span key={p}>
                {i > 0 && ', '}
                <Link href={`/projects/${p}`}>{p}</Link>
              </span>
            ))}
    </>
  );
}

function TokenList(props: { tokens: readonly FragmentOf<typeof TokenRowFields>[]; client: Client; report: (p: Problem | null) => void }) {
  return (
    <table className="list cards-on-phone">
      <caption className="visually-hidden">API tokens</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Starts with</th>
          <th scope="col">Made</th>
          <th scope="col">Last used</th>
          <th scope="col">Expires</th>
          <th scope="col">Reaches</th>
          <th scope="col">
            <span className="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {props.tokens
          .map((ref) => readFragment(TokenRowFields, ref))
          .map((t) => (
            <tr key={t.id}>
              <th scope="row" className="row-head">
                {t.name || '(unnamed)'}
              </th>
              <td data-label="Starts with">
                <code>{t.prefix}…</code>
              </td>
              <td data-label="Made">
                <Time iso={t.createdAt} />
              </td>
              <td data-label="Last used">
                <Time iso={t.lastUsedAt} empty="never" />
              </td>
              <td data-label="Expires">
                <Time iso={t.expiresAt} empty="never" />
                {t.expiresAt && new Date(t.expiresAt).getTime() < Date.now() && <span className="badge">expired</span>}
              </td>
              <td data-label="Reaches">
                <TokenReach token={t} />
              </td>
              <td>
                <ActButton
                  danger
                  act={async () => {
                    const r = await props.client.mutation(RevokeToken, { id: t.id }).toPromise();
                    return problemOf(r.data?.revokeToken, r.error);
                  }}
                  report={props.report}
                >
                  Revoke {t.name || t.prefix}
                </ActButton>
              </td>
            </tr>
          ))}
      </tbody>
    </table>
  );
}

/** The end of the local day `date` (YYYY-MM-DD) names, as the API's DateTime: a token works through its last day. */
const endOfDay = (date: string) => new Date(`${date}T23:59:59.999`).toISOString();

/** Makes a token: its name, and optionally an expiry, read-only, and the projects it is limited to (docs/design/tokens.md). */
function TokenForm(props: { projects: ResultOf<typeof Tokens>['projects']; client: Client; onTry: () => void; made: (key: string) => void }) {
  const mine = props.projects.nodes;
  return (
    <ActionForm
      label="Create token"
      onTry={props.onTry}
      reset
      act={async (f) => {
        const chosen = mine.filter((p) => check(f, `project:${p.slug}`)).map((p) => p.slug);
        const variables = {
          name: f.name ?? '',
          expiresAt: f.expiresAt ? endOfDay(f.expiresAt) : null,
          readOnly: check(f, 'readOnly'),
          projects: chosen.length ? chosen : null,
        };
        const r = await props.client.mutation(CreateToken, variables).toPromise();
        const a = r.data?.createToken;
        const p = problemOf(a, r.error);
        if (!p && a?.__typename === 'MutationCreateTokenSuccess') props.made(a.data.key);
        return p;
      }}
    >
      <h3>New token</h3>
      <Field label="Token name" name="name" required />
      <Field label="Expires (optional)" name="expiresAt" type="date" hint="It works until the end of that day. Empty: it never expires." />
      <Check label="Read-only" name="readOnly" checked={false} hint="Every write made with it is refused." />
      {mine.length > 0 && (
        <fieldset className="choices">
          <legend>Projects (optional)</legend>
          <p className="muted">It reaches only the projects ticked. None ticked: every project you can reach, and your account.</p>
          {mine.map((p) => (
            <Check key={p.id} label={p.name} name={`project:${p.slug}`} checked={false} />
          ))}
          {props.projects.totalCount > mine.length && (
            <p className="muted">
              The first {mine.length} of {props.projects.totalCount} projects.
            </p>
          )}
        </fieldset>
      )}
    </ActionForm>
  );
}

/** A user's row in the site admin's table. */
const UserRowFields = graphql(`
  fragment UserRow on User { id username email isAdmin disabled createdAt }
`);
const Users = graphql(
  `
  query Users($search: String) { viewer { id username isAdmin } setupNeeded users(search: $search, limit: 200) { totalCount nodes { id ...UserRow } } }
`,
  [UserRowFields],
);
// A new user takes their place (by username) in the lists whose search they match: src/web/account-updates.ts.
const CreateUser = graphql(
  `
  mutation CreateUser($input: CreateUserInput!) {
    createUser(input: $input) {
      __typename
      ... on MutationCreateUserSuccess { data { id ...UserRow } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`,
  [UserRowFields],
);
const ChangeUser = graphql(`
  mutation ChangeUser($username: String!, $input: ChangeUserInput!) {
    changeUser(username: $username, input: $input) {
      __typename
      ... on MutationChangeUserSuccess { data { id isAdmin disabled } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);

export function AdminPage() {
  const viewer = useViewer();
  const [search, setSearch] = useState('');
  const [{ data, fetching, error }] = useQuery({ query: Users, variables: { search: search || null } });
  const client = useClient();
  const [problem, setProblem] = useState<Problem | null>(null);
  const toggles = usePendingChanges<boolean>(setProblem);
  if (viewer && !viewer.isAdmin) return <AdminLayout here="/admin">{null}</AdminLayout>;
  const change = (username: string, field: 'isAdmin' | 'disabled', value: boolean) =>
    toggles.change(`${username} ${field}`, value, async () => {
      const r = await client.mutation(ChangeUser, { username, input: { [field]: value } }).toPromise();
      return problemOf(r.data?.changeUser, r.error);
    });
  return (
    <AdminLayout here="/admin">
      <h2>Users</h2>
      <search>
        <form
          className="filters"
          onSubmit={(e) => {
            e.preventDefault();
            setSearch(String(new FormData(e.currentTarget).get('search') ?? ''));
          }}
        >
          <label>
            Username <input type="search" name="search" />
          </label>
          <button type="submit">Search</button>
        </form>
      </search>
      <ProblemText problem={problem} />
      {error && <Failure error={error} />}
      {fetching && !data && <Loading what="users" />}
      {data && <UsersTable users={data.users.nodes} toggles={toggles} change={change} />}
      <h2>Add a user</h2>
      <AddUser />
    </AdminLayout>
  );
}

/** The users, each with whether they are an administrator and whether they are disabled: toggles that change it. */
function UsersTable(props: {
  users: readonly FragmentOf<typeof UserRowFields>[];
  toggles: ReturnType<typeof usePendingChanges<boolean>>;
  change: (username: string, field: 'isAdmin' | 'disabled', value: boolean) => void;
}) {
  const { toggles, change } = props;
  return (
    <table className="list cards-on-phone">
      <caption className="visually-hidden">Users</caption>
      <thead>
        <tr>
          <th scope="col">User</th>
          <th scope="col">Email</th>
          <th scope="col">Administrator</th>
          <th scope="col">Disabled</th>
        </tr>
      </thead>
      <tbody>
        {props.users
          .map((ref) => readFragment(UserRowFields, ref))
          .map((u) => (
            <tr key={u.id}>
              <td className="row-head">{u.username}</td>
              <td data-label="Email">{u.email ?? '—'}</td>
              <td>
                <label className="toggle">
                  <input
                    type="checkbox"
                    aria-label={`${u.username} is an administrator`}
                    checked={toggles.shown(`${u.username} isAdmin`, u.isAdmin)}
                    disabled={toggles.busy(`${u.username} isAdmin`)}
                    onChange={(e) => change(u.username, 'isAdmin', e.target.checked)}
                  />
                  <span className="on-phone" aria-hidden="true">
                    Administrator
                  </span>
                </label>
                <Progress busy={toggles.busy(`${u.username} isAdmin`)} what="Saving…" />
              </td>
              <td>
                <label className="toggle">
                  <input
                    type="checkbox"
                    aria-label={`${u.username} is disabled`}
                    checked={toggles.shown(`${u.username} disabled`, u.disabled)}
                    disabled={toggles.busy(`${u.username} disabled`)}
                    onChange={(e) => change(u.username, 'disabled', e.target.checked)}
                  />
                  <span className="on-phone" aria-hidden="true">
                    Disabled
                  </span>
                </label>
                <Progress busy={toggles.busy(`${u.username} disabled`)} what="Saving…" />
              </td>
            </tr>
          ))}
      </tbody>
    </table>
  );
}

/** The form that creates a user (the list shows them from the answer). */
function AddUser() {
  const client = useClient();
  return (
    <ActionForm
      label="Create user"
      reset
      done="Created."
      act={async (f) => {
        const r = await client
          .mutation(CreateUser, {
            input: { username: f.username ?? '', email: f.email || undefined, password: f.password || undefined, isAdmin: f.isAdmin === 'on' },
          })
          .toPromise();
        return problemOf(r.data?.createUser, r.error);
      }}
    >
      <Field label="Username" name="username" required />
      <Field label="Email" name="email" type="email" />
      <Field label="Password" name="password" type="password" autoComplete="new-password" />
      <div className="field check">
        <input id="f-isAdmin" type="checkbox" name="isAdmin" />
        <label htmlFor="f-isAdmin">Site administrator</label>
      </div>
    </ActionForm>
  );
}
