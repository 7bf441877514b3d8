// The dashboard's routes, listed once (src/web/routes.ts): the app renders them and the server
// answers the dashboard's page at exactly those paths (src/dashboard.ts), nowhere else.
import express from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { dashboardRouter } from '../../src/dashboard.ts';
import { ANY_ROUTE, ROUTES, routeRegExp } from '../../src/web/routes.ts';

const PAGES = [
  '/',
  '/sign-in',
  '/setup/',
  '/forgot-password',
  '/reset-password',
  '/import',
  '/projects/docs',
  '/projects/docs/',
  '/projects/docs/builds',
  '/projects/docs/builds/12',
  '/organizations',
  '/organizations/acme',
  '/organizations/acme/teams',
  '/invitations/accept',
  '/account',
  '/admin',
  '/admin/sso',
  '/admin/audit',
];
const NOT_PAGES = [
  '/projects',
  '/projects/docs/builds/12/log',
  '/projects/docs/a/b',
  '/sign-in/more',
  '/admin/other',
  '/api/v3/',
  '/graphql',
  '/docs/x/',
  '//',
  '/setupx',
];

describe("the dashboard's routes", () => {
  it('read a pattern as wouter does: a segment for `:name`, an optional one for `:name?`, a trailing slash allowed', () => {
    expect(routeRegExp('/')).toEqual(/^\/?$/);
    expect(routeRegExp(ROUTES.project).test('/projects/docs')).toBe(true);
    expect(routeRegExp(ROUTES.project).test('/projects/docs/versions/')).toBe(true);
    expect(routeRegExp(ROUTES.project).test('/projects/')).toBe(false);
    expect(routeRegExp('/a.b').test('/axb')).toBe(false);
  });

  it('are the paths the server answers with the dashboard, and only those', async () => {
    for (const p of PAGES) expect(ANY_ROUTE.test(p), p).toBe(true);
    for (const p of NOT_PAGES) expect(ANY_ROUTE.test(p), p).toBe(false);
    const app = express().use(dashboardRouter('/nonexistent-dashboard-dir'));
    for (const p of PAGES) expect((await request(app).get(p)).status, p).toBe(503); // the page, not built here
    for (const p of NOT_PAGES) expect((await request(app).get(p)).status, p).toBe(404);
  });
});
