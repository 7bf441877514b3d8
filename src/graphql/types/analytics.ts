// A project's traffic and search analytics (docs/design/analytics.md). Maintainers only.
import { type ProjectAnalytics, projectAnalytics } from '../../domain/analytics.ts';
import { builder } from '../builder.ts';
import { Project } from './project.ts';

const DailyViews = builder.objectRef<ProjectAnalytics['daily'][number]>('DailyViews').implement({
  fields: (t) => ({
    day: t.exposeString('day', { description: 'The day (UTC), YYYY-MM-DD.' }),
    views: t.exposeInt('views', { description: 'Pages read.' }),
    notFound: t.exposeInt('notFound', { description: 'Requests answered 404.' }),
  }),
});

const PageViews = builder.objectRef<ProjectAnalytics['pages'][number]>('PageViews').implement({
  fields: (t) => ({
    path: t.exposeString('path', { description: "The page below its version (`/install.html`), or a 404's whole path." }),
    version: t.exposeString('version', { description: "The version's slug; '' for a 404 outside any version." }),
    views: t.exposeInt('views'),
  }),
});

const SearchCount = builder.objectRef<ProjectAnalytics['searches'][number]>('SearchCount').implement({
  fields: (t) => ({
    query: t.exposeString('query', { description: 'As searched, in lower case, spaces collapsed.' }),
    version: t.exposeString('version', { description: "The version searched; '' when the search named none." }),
    searches: t.exposeInt('searches'),
    results: t.exposeInt('results', { description: 'The fewest results one of these searches found.' }),
  }),
});

const ProjectAnalyticsRef = builder.objectRef<ProjectAnalytics>('ProjectAnalytics').implement({
  description: 'Page views and searches of the last `days` days (UTC), kept without addresses or readers.',
  fields: (t) => ({
    days: t.exposeInt('days'),
    since: t.exposeString('since', { description: 'The first day counted, YYYY-MM-DD.' }),
    views: t.exposeInt('views', { description: 'Pages read over the days.' }),
    notFound: t.exposeInt('notFound', { description: 'Requests answered 404 over the days.' }),
    daily: t.field({ type: [DailyViews], resolve: (a) => a.daily, description: 'Every day, oldest first.' }),
    pages: t.field({ type: [PageViews], resolve: (a) => a.pages, description: 'The 50 pages most read.' }),
    missing: t.field({ type: [PageViews], resolve: (a) => a.missing, description: 'The 50 paths most answered 404.' }),
    searches: t.field({ type: [SearchCount], resolve: (a) => a.searches, description: 'The 50 searches most made.' }),
    searchesWithoutResults: t.field({
      type: [SearchCount],
      resolve: (a) => a.searchesWithoutResults,
      description: 'The 50 searches most made that found nothing.',
    }),
  }),
});

builder.prismaObjectFields(Project, (t) => ({
  analytics: t.field({
    type: ProjectAnalyticsRef,
    description:
      "Traffic and search analytics of the last `days` days (30 by default; at most LECTERN_ANALYTICS_RETENTION_DAYS). Maintainers only. Empty while the project's analytics are off (analyticsDisabled).",
    args: { days: t.arg.int({ defaultValue: 30 }) },
    complexity: 20,
    authScopes: (project) => ({ maintainerOf: project.id }),
    resolve: (project, args, ctx) => projectAnalytics(ctx, project.id, args.days ?? 30),
  }),
}));
