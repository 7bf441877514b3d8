// Signing in, a forgotten password reset by email (where the installation sends email), and the
// first run's setup page (the one-time code from `lectern serve`'s log).
import { useState } from 'react';
import { useClient, useQuery } from 'urql';
import { Link, useSearch } from 'wouter';
import { graphql } from '../graphql.ts';
import { nextTarget } from '../next.ts';
import { ActionForm, Field, Loading, problemOf } from '../ui.tsx';
import { ViewerQuery } from '../viewer.ts';

const SignIn = graphql(`
  mutation SignIn($username: String!, $password: String!) {
    signIn(username: $username, password: $password) {
      __typename
      ... on Error { message }
      ... on ThrottledError { retryAfter }
    }
  }
`);

const SignInOptions = graphql(`
  query SignInOptions { signInOptions { slug name loginUrl } }
`);

const ResetAvailable = graphql(`
  query PasswordResetAvailable { passwordResetAvailable }
`);

const RequestReset = graphql(`
  mutation RequestPasswordReset($nameOrEmail: String!) {
    requestPasswordReset(nameOrEmail: $nameOrEmail) {
      __typename
      ... on MutationRequestPasswordResetSuccess { data }
      ... on Error { message }
      ... on ThrottledError { retryAfter }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);

const ResetPassword = graphql(`
  mutation ResetPassword($token: String!, $newPassword: String!) {
    resetPassword(token: $token, newPassword: $newPassword) {
      __typename
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);

const SetUp = graphql(`
  mutation SetUp($input: SetUpInput!) {
    setUpFirstAdmin(input: $input) {
      __typename
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);

/** Only pages of Lectern's own origin are followed after signing in (never another site): ../next.ts. */
const nextOf = (search: string) => nextTarget(new URLSearchParams(search).get('next'), window.location.origin);

/** Reloads the app at `to` with the new session (every cached answer was the signed-out one's). */
const enter = (to: string) => window.location.assign(to);

export function SignInPage() {
  const search = useSearch();
  const client = useClient();
  return (
    <section className="narrow">
      <h1>Sign in</h1>
      <ActionForm
        label="Sign in"
        act={async (f) => {
          const r = await client.mutation(SignIn, { username: f.username ?? '', password: f.password ?? '' }).toPromise();
          const p = problemOf(r.data?.signIn, r.error);
          if (!p) enter(nextOf(search));
          return p;
        }}
      >
        <Field label="Username" name="username" required autoComplete="username" />
        <Field label="Password" name="password" type="password" required autoComplete="current-password" />
      </ActionForm>
      <ForgotLink />
      <SingleSignOn next={nextOf(search)} />
    </section>
  );
}

/**
 * A "Sign in with <name>" link for each identity provider (docs/design/sso.md): a plain link, since
 * the provider's page is reached by a full redirect, carrying the same `next` as the password form.
 */
function SingleSignOn({ next }: { next: string }) {
  const [{ data }] = useQuery({ query: SignInOptions });
  const options = data?.signInOptions ?? [];
  if (options.length === 0) return null;
  return (
    <nav className="sso" aria-label="Single sign-on">
      <p className="muted">Or, with your organization's account:</p>
      <ul>
        {options.map((o) => (
          <li key={o.slug}>
            <a className="button" href={`${o.loginUrl}?next=${encodeURIComponent(next)}`}>
              Sign in with {o.name}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/** "Forgot your password?", where the installation can send the link. */
function ForgotLink() {
  const [{ data }] = useQuery({ query: ResetAvailable });
  if (!data?.passwordResetAvailable) return null;
  return (
    <p>
      <Link href="/forgot-password">Forgot your password?</Link>
    </p>
  );
}

export function ForgotPasswordPage() {
  const client = useClient();
  const [sent, setSent] = useState<string | null>(null);
  return (
    <section className="narrow">
      <h1>Forgot your password?</h1>
      {sent ? (
        <p role="status">{sent}</p>
      ) : (
        <ActionForm
          label="Email me a link"
          act={async (f) => {
            const r = await client.mutation(RequestReset, { nameOrEmail: f.nameOrEmail ?? '' }).toPromise();
            const a = r.data?.requestPasswordReset;
            const p = problemOf(a, r.error);
            if (!p && a?.__typename === 'MutationRequestPasswordResetSuccess') setSent(a.data);
            return p;
          }}
        >
          <Field label="Username or email address" name="nameOrEmail" field="nameOrEmail" required autoComplete="username" />
        </ActionForm>
      )}
      <p>
        <Link href="/sign-in">Back to sign in</Link>
      </p>
    </section>
  );
}

export function ResetPasswordPage() {
  const search = useSearch();
  const client = useClient();
  const token = new URLSearchParams(search).get('token') ?? '';
  const [done, setDone] = useState(false);
  if (done)
    return (
      <section className="narrow">
        <h1>Your password is set</h1>
        <p role="status">
          Every session of your account has ended. <Link href="/sign-in">Sign in</Link> with the new password.
        </p>
      </section>
    );
  return (
    <section className="narrow">
      <h1>Set a new password</h1>
      <ActionForm
        label="Set the password"
        act={async (f) => {
          if (f.newPassword !== f.repeat) return { message: 'The two new passwords differ.', fields: {} };
          const r = await client.mutation(ResetPassword, { token, newPassword: f.newPassword ?? '' }).toPromise();
          const p = problemOf(r.data?.resetPassword, r.error);
          if (!p) setDone(true);
          return p;
        }}
      >
        <Field label="New password" name="newPassword" type="password" required autoComplete="new-password" />
        <Field label="New password, again" name="repeat" type="password" required autoComplete="new-password" />
      </ActionForm>
      <p>
        <Link href="/forgot-password">Ask for a new link</Link>
      </p>
    </section>
  );
}

export function SetupPage() {
  const search = useSearch();
  const client = useClient();
  const code = new URLSearchParams(search).get('code') ?? '';
  // The setup address works once: after the first account exists it says so, and where to go.
  const [{ data }] = useQuery({ query: ViewerQuery });
  if (!data) return <Loading what="the setup page" />;
  if (!data.setupNeeded)
    return (
      <section className="narrow">
        <h1>Lectern is set up</h1>
        <p>This setup address has been used: the first administrator exists, and the address no longer creates accounts.</p>
        <p>
          {data.viewer ? (
            <>
              You are signed in as {data.viewer.username}. <Link href="/">Go to the projects.</Link>
            </>
          ) : (
            <>
              <Link href="/sign-in">Sign in</Link> with your account, or ask a site administrator for one.
            </>
          )}
        </p>
      </section>
    );
  return (
    <section className="narrow">
      <h1>Set up Lectern</h1>
      <p>Create the first account. It is a site administrator, and can add everyone else.</p>
      <ActionForm
        label="Create the administrator"
        act={async (f) => {
          if (f.password !== f.repeat) return { message: 'The two passwords differ.', fields: {} };
          const input = { code: f.code ?? '', username: f.username ?? '', password: f.password ?? '', email: f.email || undefined };
          const r = await client.mutation(SetUp, { input }).toPromise();
          const p = problemOf(r.data?.setUpFirstAdmin, r.error);
          if (!p) {
            await client.query(ViewerQuery, {}, { requestPolicy: 'network-only' }).toPromise();
            enter('/');
          }
          return p;
        }}
      >
        <Field label="Setup code" name="code" defaultValue={code} required hint="From the setup address in the server's log." />
        <Field label="Username" name="username" required autoComplete="username" />
        <Field label="Email (optional)" name="email" type="email" autoComplete="email" />
        <Field label="Password" name="password" type="password" required autoComplete="new-password" />
        <Field label="Password, again" name="repeat" type="password" required autoComplete="new-password" />
      </ActionForm>
    </section>
  );
}
