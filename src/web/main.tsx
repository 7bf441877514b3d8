// Lectern's dashboard: a single-page app on Lectern's own GraphQL API (no other endpoint), served
// at / by Lectern. Routes are real URLs (bookmark, reload, back); every page but sign-in and setup
// needs a signed-in user, and a session that ends sends the reader to sign in and back.
import { StrictMode, useMemo } from 'react';
import { createRoot } from 'react-dom/client';
import { Provider, useMutation, useQuery } from 'urql';
import { Link, Redirect, Route, Switch, useLocation } from 'wouter';
import { makeClient, signInUrl } from './client.ts';
import { graphql } from './graphql.ts';
import { AccountPage, AdminPage } from './pages/account.tsx';
import { AdminAuditPage, AdminSsoPage } from './pages/admin.tsx';
import { ForgotPasswordPage, ResetPasswordPage, SetupPage, SignInPage } from './pages/auth.tsx';
import { BuildPage } from './pages/build.tsx';
import { AcceptInvitationPage, OrganizationPage, OrganizationsPage } from './pages/organizations.tsx';
import { ProjectPage } from './pages/project.tsx';
import { ImportPage, ProjectsPage } from './pages/projects.tsx';
import { OPEN_ROUTES, ROUTES } from './routes.ts';
import { Failure, Loading } from './ui.tsx';
import { ViewerContext, ViewerQuery } from './viewer.ts';
import './style.css';

const SignOut = graphql(`mutation SignOut { signOut }`);

/** Routes whose page's own operation reads the viewer (`viewer { id username isAdmin } setupNeeded`). */
const PAGE_QUERIES = /^\/(?:$|\?|projects\/|organizations|account|admin)/;

function Shell() {
  const [location, navigate] = useLocation();
  // Pages that read data ask for the viewer in their own operation (one request for the page):
  // the shell then reads it from the normalized cache; other routes ask for it themselves.
  const fromPage = PAGE_QUERIES.test(location);
  const [{ data, fetching, error }] = useQuery({ query: ViewerQuery, requestPolicy: fromPage ? 'cache-only' : 'cache-first' });
  const [, signOut] = useMutation(SignOut);
  if (!fromPage && fetching && !data) return <Loading what="Lectern" />;
  if (error && !data) return <Failure error={error} />;
  const viewer = data?.viewer ?? null;
  const open = OPEN_ROUTES.some((p) => location.startsWith(p));
  if (!viewer && !open && data) {
    if (data?.setupNeeded) return <SetupNeeded />;
    return <Redirect to={signInUrl()} replace />;
  }
  return (
    <ViewerContext.Provider value={viewer}>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <Link href="/" className="brand">
          Lectern
        </Link>
        {viewer && (
          <nav aria-label="Main">
            <Link href="/">Projects</Link>
            <Link href="/organizations">Organizations</Link>
            <Link href="/account">Account</Link>
            {viewer.isAdmin && <Link href="/admin">Administration</Link>}
            <button
              type="button"
              className="link"
              onClick={async () => {
                await signOut({});
                navigate('/sign-in', { replace: true });
                window.location.reload();
              }}
            >
              Sign out ({viewer.username})
            </button>
          </nav>
        )}
      </header>
      <main id="main">
        <Switch>
          <Route path={ROUTES.signIn} component={SignInPage} />
          <Route path={ROUTES.setup} component={SetupPage} />
          <Route path={ROUTES.forgotPassword} component={ForgotPasswordPage} />
          <Route path={ROUTES.resetPassword} component={ResetPasswordPage} />
          <Route path={ROUTES.projects} component={ProjectsPage} />
          <Route path={ROUTES.importProject} component={ImportPage} />
          <Route path={ROUTES.build}>{(p) => <BuildPage slug={p.slug} id={Number(p.id)} />}</Route>
          <Route path={ROUTES.project}>{(p) => <ProjectPage slug={p.slug} tab={p.tab ?? 'versions'} />}</Route>
          <Route path={ROUTES.organizations} component={OrganizationsPage} />
          <Route path={ROUTES.organization}>{(p) => <OrganizationPage slug={p.slug} tab={p.tab ?? 'projects'} />}</Route>
          <Route path={ROUTES.acceptInvitation} component={AcceptInvitationPage} />
          <Route path={ROUTES.account} component={AccountPage} />
          <Route path={ROUTES.admin} component={AdminPage} />
          <Route path={ROUTES.adminSso} component={AdminSsoPage} />
          <Route path={ROUTES.adminAudit} component={AdminAuditPage} />
          <Route>
            <h1>Not found</h1>
            <p>
              There is no page here. <Link href="/">Back to the projects.</Link>
            </p>
          </Route>
        </Switch>
      </main>
    </ViewerContext.Provider>
  );
}

function SetupNeeded() {
  return (
    <main id="main" className="narrow">
      <h1>Welcome to Lectern</h1>
      <p>
        This installation has no accounts yet. Open the setup address that <code>lectern serve</code> wrote to its log (a line with <code>setupUrl</code>) to
        create the first administrator.
      </p>
    </main>
  );
}

function App() {
  const client = useMemo(
    () =>
      makeClient(() => {
        if (!window.location.pathname.startsWith('/sign-in')) window.location.assign(signInUrl());
      }),
    [],
  );
  return (
    <Provider value={client}>
      <Shell />
    </Provider>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
