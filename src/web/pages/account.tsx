// The reader's account (API tokens, password) and, for site admins, the users.
import { useState } from 'react';
import { useClient, useQuery } from 'urql';
import { graphql } from '../graphql.ts';
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

const Tokens = graphql(`
  query Tokens { viewer { id username isAdmin email emailNotifications tokens { id name prefix createdAt lastUsedAt } } setupNeeded }
`);
const CreateToken = graphql(`
  mutation CreateToken($name: String!) {
    createToken(name: $name) {
      __typename
      ... on MutationCreateTokenSuccess { data { key token { id name prefix createdAt lastUsedAt } } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);
const RevokeToken = graphql(`
  mutation RevokeToken($id: Int!) {
    revokeToken(id: $id) {
      __typename
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);
const UpdateAccount = graphql(`
  mutation UpdateAccount($input: UpdateAccountInput!) {
    updateAccount(input: $input) {
      __typename
      ... on MutationUpdateAccountSuccess { data { id email emailNotifications } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);
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
  const { data, client, problem, setProblem, reload, pending } = useEditor(Tokens, {});
  const [key, setKey] = useState<string | null>(null);
  if (!data) return pending('your account');
  const tokens = data?.viewer?.tokens ?? [];
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
      {tokens.length > 0 && (
        <table className="list cards-on-phone">
          <caption className="visually-hidden">API tokens</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Starts with</th>
              <th scope="col">Made</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {tokens.map((t) => (
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
                <td>
                  <ActButton
                    danger
                    act={async () => {
                      const r = await client.mutation(RevokeToken, { id: t.id }).toPromise();
                      return problemOf(r.data?.revokeToken, r.error);
                    }}
                    report={setProblem}
                    done={reload}
                  >
                    Revoke {t.name || t.prefix}
                  </ActButton>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <ActionForm
        className="inline"
        label="Create token"
        onTry={() => setProblem(null)}
        reset
        act={async (f) => {
          const r = await client.mutation(CreateToken, { name: f.name ?? '' }).toPromise();
          const a = r.data?.createToken;
          const p = problemOf(a, r.error);
          if (!p && a?.__typename === 'MutationCreateTokenSuccess') {
            setKey(a.data.key);
            reload();
          }
          return p;
        }}
      >
        <Field label="Token name" name="name" required />
      </ActionForm>
      <h2>Email</h2>
      <ActionForm
        label="Save email settings"
        done="Saved."
        act={async (f) => {
          const r = await client.mutation(UpdateAccount, { input: { email: f.email ?? '', emailNotifications: check(f, 'emailNotifications') } }).toPromise();
          return problemOf(r.data?.updateAccount, r.error);
        }}
      >
        <Field label="Email address" name="email" type="email" defaultValue={data?.viewer?.email ?? ''} autoComplete="email" />
        <Check
          label="Email me about my projects' builds"
          name="emailNotifications"
          checked={data?.viewer?.emailNotifications ?? true}
          hint="When a build of a default version fails, and when one passes again (if this installation sends email)."
        />
      </ActionForm>
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

const Users = graphql(`
  query Users($search: String) { viewer { id username isAdmin } setupNeeded users(search: $search, limit: 200) { totalCount nodes { id username email isAdmin disabled createdAt } } }
`);
const CreateUser = graphql(`
  mutation CreateUser($input: CreateUserInput!) {
    createUser(input: $input) {
      __typename
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);
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
  const [{ data, fetching, error }, refetch] = useQuery({ query: Users, variables: { search: search || null } });
  const client = useClient();
  const [problem, setProblem] = useState<Problem | null>(null);
  const toggles = usePendingChanges<boolean>(setProblem);
  if (viewer && !viewer.isAdmin) return <p>Only site administrators see the users.</p>;
  const change = (username: string, field: 'isAdmin' | 'disabled', value: boolean) =>
    toggles.change(`${username} ${field}`, value, async () => {
      const r = await client.mutation(ChangeUser, { username, input: { [field]: value } }).toPromise();
      return problemOf(r.data?.changeUser, r.error);
    });
  return (
    <section>
      <h1>Users</h1>
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
      {data && (
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
            {data.users.nodes.map((u) => (
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
      )}
      <h2>Add a user</h2>
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
          const p = problemOf(r.data?.createUser, r.error);
          if (!p) refetch({ requestPolicy: 'network-only' });
          return p;
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
    </section>
  );
}
