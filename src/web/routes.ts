// The dashboard's routes, listed once: the app renders a page for each (src/web/main.tsx), and the
// server answers the dashboard's page at each of them (src/dashboard.ts), so a bookmarked or
// reloaded URL opens where it was, and any other path is not the dashboard's. Patterns are
// wouter's: `:name` is one path segment, `:name?` an optional one.
export const ROUTES = {
  signIn: '/sign-in',
  setup: '/setup',
  forgotPassword: '/forgot-password',
  resetPassword: '/reset-password',
  projects: '/',
  importProject: '/import',
  build: '/projects/:slug/builds/:id',
  project: '/projects/:slug/:tab?',
  organizations: '/organizations',
  organization: '/organizations/:slug/:tab?',
  acceptInvitation: '/invitations/accept',
  account: '/account',
  admin: '/admin',
  adminSso: '/admin/sso',
  adminAudit: '/admin/audit',
} as const;

/** The routes a reader opens without signing in. */
export const OPEN_ROUTES: readonly string[] = [ROUTES.signIn, ROUTES.setup, ROUTES.forgotPassword, ROUTES.resetPassword];

/** A route's pattern as a regular expression of a whole path, with or without a trailing slash. */
export function routeRegExp(route: string): RegExp {
  const body = route
    .split('/')
    .filter(Boolean)
    .map((segment) => {
      if (segment.startsWith(':')) return segment.endsWith('?') ? '(?:/[^/]+)?' : '/[^/]+';
      return `/${segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`;
    })
    .join('');
  return new RegExp(`^${body}/?$`);
}

/** Every route's pattern in one regular expression: whether a path is one of the dashboard's. */
export const ANY_ROUTE = new RegExp(
  Object.values(ROUTES)
    .map((r) => routeRegExp(r).source)
    .join('|'),
);
