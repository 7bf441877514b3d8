// The site administrators' pages besides the users (account.tsx): single sign-on's identity
// providers (docs/design/sso.md) and the site's audit log (docs/design/audit.md).
import type { ReactNode } from 'react';
import type { Client } from 'urql';
import { Link } from 'wouter';
import { type FragmentOf, graphql, type ResultOf, readFragment } from '../graphql.ts';
import { ActButton, ActionForm, Check, CopyButton, check, Field, type Problem, ProblemText, problemOf, useEditor } from '../ui.tsx';
import { useViewer } from '../viewer.ts';
import { AuditLog } from './audit.tsx';

const TABS = [
  ['/admin', 'Users'],
  ['/admin/sso', 'Single sign-on'],
  ['/admin/audit', 'Audit log'],
] as const;

/** The administration's heading and tabs, above each of its pages; nothing of it for anyone else. */
export function AdminLayout({ here, children }: { here: (typeof TABS)[number][0]; children: ReactNode }) {
  const viewer = useViewer();
  if (viewer && !viewer.isAdmin) return <p>Only site administrators see this page.</p>;
  return (
    <section>
      <h1>Site administration</h1>
      <nav className="tabs" aria-label="Administration">
        {TABS.map(([href, label]) => (
          <Link key={href} href={href} aria-current={href === here ? 'page' : undefined}>
            {label}
          </Link>
        ))}
      </nav>
      {children}
    </section>
  );
}

export function AdminAuditPage() {
  return (
    <AdminLayout here="/admin/audit">
      <h2>Audit log</h2>
      <p>Everything recorded on this site, newest first: sign-ins and failed ones, tokens, organizations, teams and projects' settings.</p>
      <AuditLog />
    </AdminLayout>
  );
}

/** A provider's card and edit form; every change to a provider answers with it. */
const ProviderCardFields = graphql(`
  fragment ProviderCard on IdentityProvider { id slug name issuer clientId scopes groupsClaim allowSignUp enabled fromSettings callbackUrl }
`);
const Providers = graphql(
  `
  query IdentityProviders {
    viewer { id username isAdmin } setupNeeded
    identityProviders { id ...ProviderCard }
  }
`,
  [ProviderCardFields],
);
// A new provider takes its place (by slug), a deleted one leaves the list: src/web/account-updates.ts.
const CreateProvider = graphql(
  `
  mutation CreateIdentityProvider($input: IdentityProviderInput!) {
    createIdentityProvider(input: $input) {
      __typename
      ... on MutationCreateIdentityProviderSuccess { data { id ...ProviderCard } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`,
  [ProviderCardFields],
);
const UpdateProvider = graphql(
  `
  mutation UpdateIdentityProvider($slug: String!, $input: IdentityProviderInput!) {
    updateIdentityProvider(slug: $slug, input: $input) {
      __typename
      ... on MutationUpdateIdentityProviderSuccess { data { id ...ProviderCard } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`,
  [ProviderCardFields],
);
const DeleteProvider = graphql(`
  mutation DeleteIdentityProvider($slug: String!) {
    deleteIdentityProvider(slug: $slug) {
      __typename
      ... on MutationDeleteIdentityProviderSuccess { data { id slug } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);

type Provider = ResultOf<typeof ProviderCardFields>;

export function AdminSsoPage() {
  const { data, client, problem, setProblem, pending } = useEditor(Providers, {}, 'cache-and-network');
  const viewer = useViewer();
  if (viewer && !viewer.isAdmin) return <AdminLayout here="/admin/sso">{null}</AdminLayout>;
  if (!data) return pending('the identity providers');
  const providers = data.identityProviders;
  return (
    <AdminLayout here="/admin/sso">
      <h2>Single sign-on</h2>
      <p>
        People sign in with an OpenID Connect provider (Keycloak, Okta, Entra ID, Google Workspace, GitLab): the sign-in page shows a button for each one
        enabled. Register its callback URL at the provider as a redirect URI.
      </p>
      <ProblemText problem={problem} />
      {providers.length === 0 && <p>No identity providers.</p>}
      {providers.map((p) => (
        <ProviderCard key={p.id} provider={p} client={client} report={setProblem} />
      ))}
      <details open={providers.length === 0}>
        <summary>Add an identity provider</summary>
        <ProviderForm client={client} />
      </details>
    </AdminLayout>
  );
}

function ProviderCard(props: { provider: FragmentOf<typeof ProviderCardFields>; client: Client; report: (p: Problem | null) => void }) {
  const { client } = props;
  const p = readFragment(ProviderCardFields, props.provider);
  return (
    <section className="team provider">
      <h3 className="wrap">
        {p.name} <span className="badge">{p.enabled ? 'enabled' : 'disabled'}</span>
        {p.fromSettings && <span className="badge">from settings</span>}
      </h3>
      <dl className="facts">
        <dt>Slug</dt>
        <dd>
          <code>{p.slug}</code>
        </dd>
        <dt>Issuer</dt>
        <dd>{p.issuer}</dd>
        <dt>Client ID</dt>
        <dd>{p.clientId}</dd>
        <dt>Scopes</dt>
        <dd>{p.scopes}</dd>
        <dt>Groups claim</dt>
        <dd>{p.groupsClaim || '— (teams are not followed)'}</dd>
        <dt>New accounts</dt>
        <dd>{p.allowSignUp ? 'made at a first sign-in' : 'not made: only people with an account here'}</dd>
        <dt>Callback URL</dt>
        <dd>
          <code data-testid={`callback-${p.slug}`}>{p.callbackUrl}</code> <CopyButton text={p.callbackUrl}>Copy</CopyButton>
        </dd>
      </dl>
      {p.fromSettings ? (
        <p className="muted">Set by the LECTERN_OIDC_* settings: it is changed there, not here.</p>
      ) : (
        <div className="actions">
          <ActButton
            label={`${p.enabled ? 'Disable' : 'Enable'} ${p.name}`}
            act={async () => {
              const r = await client.mutation(UpdateProvider, { slug: p.slug, input: { enabled: !p.enabled } }).toPromise();
              return problemOf(r.data?.updateIdentityProvider, r.error);
            }}
            report={props.report}
          >
            {p.enabled ? 'Disable' : 'Enable'}
          </ActButton>
          <ActButton
            danger
            label={`Delete ${p.name}`}
            act={async () => {
              const r = await client.mutation(DeleteProvider, { slug: p.slug }).toPromise();
              return problemOf(r.data?.deleteIdentityProvider, r.error);
            }}
            report={props.report}
          >
            Delete
          </ActButton>
          <details>
            <summary>
              Edit<span className="visually-hidden"> {p.name}</span>
            </summary>
            <ProviderForm client={client} provider={p} />
          </details>
        </div>
      )}
    </section>
  );
}

/** The provider's input from its form; an empty secret is left out, which keeps the one stored. */
function providerInput(f: Record<string, string>, creating: boolean) {
  return {
    ...(creating ? { slug: f.slug ?? '' } : {}),
    name: f.name ?? '',
    issuer: f.issuer ?? '',
    clientId: f.clientId ?? '',
    ...(f.clientSecret ? { clientSecret: f.clientSecret } : {}),
    scopes: f.scopes || 'openid email profile',
    groupsClaim: f.groupsClaim ?? '',
    allowSignUp: check(f, 'allowSignUp'),
    enabled: check(f, 'enabled'),
  };
}

/** Adds a provider (without `provider`) or changes one. */
function ProviderForm({ client, provider }: { client: Client; provider?: Provider }) {
  return (
    <ActionForm
      label={provider ? 'Save provider' : 'Add provider'}
      done={provider ? 'Saved.' : undefined}
      reset={!provider}
      act={async (f) => {
        const input = providerInput(f, !provider);
        let p: Problem | null;
        if (provider) {
          const r = await client.mutation(UpdateProvider, { slug: provider.slug, input }).toPromise();
          p = problemOf(r.data?.updateIdentityProvider, r.error);
        } else {
          const r = await client.mutation(CreateProvider, { input }).toPromise();
          p = problemOf(r.data?.createIdentityProvider, r.error);
        }
        return p;
      }}
    >
      {!provider && <Field label="Slug" name="slug" required hint="In its addresses (/auth/oidc/<slug>/…); it cannot be changed later." />}
      <Field label="Name" name="name" defaultValue={provider?.name} required hint='The sign-in button says "Sign in with <name>".' />
      <Field label="Issuer URL" name="issuer" type="url" defaultValue={provider?.issuer} required hint="https; its discovery document is under it." />
      <Field label="Client ID" name="clientId" defaultValue={provider?.clientId} required />
      <Field
        label="Client secret"
        name="clientSecret"
        type="password"
        autoComplete="off"
        required={!provider}
        hint={provider ? 'Empty: the one stored is kept. It is stored encrypted and never shown.' : 'Stored encrypted and never shown.'}
      />
      <Field label="Scopes" name="scopes" defaultValue={provider?.scopes ?? 'openid email profile'} hint="Must include openid." />
      <Field
        label="Groups claim (optional)"
        name="groupsClaim"
        defaultValue={provider?.groupsClaim}
        hint="The ID token's claim listing a person's groups (often groups): teams with an SSO group follow it."
      />
      <Check label="Make an account for a person's first sign-in" name="allowSignUp" checked={provider?.allowSignUp ?? true} />
      <Check label="Enabled (shown on the sign-in page)" name="enabled" checked={provider?.enabled ?? true} />
    </ActionForm>
  );
}
