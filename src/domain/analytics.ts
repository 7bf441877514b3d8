// Reading a project's traffic and search analytics (docs/design/analytics.md): views per day, the
// pages most read and the 404s most hit, the searches most made and those that found nothing,
// over the last `days` days (UTC), as the project's maintainers read them.
import type { Context } from './context.ts';
import { ValidationError } from './errors.ts';

/** Rows each list answers, most first. */
const TOP = 50;

export interface ProjectAnalytics {
  days: number;
  /** The first day counted (UTC, YYYY-MM-DD). */
  since: string;
  views: number;
  notFound: number;
  daily: { day: string; views: number; notFound: number }[];
  pages: { path: string; version: string; views: number }[];
  missing: { path: string; version: string; views: number }[];
  searches: { query: string; version: string; searches: number; results: number }[];
  searchesWithoutResults: { query: string; version: string; searches: number; results: number }[];
}

const dayString = (d: Date) => d.toISOString().slice(0, 10);

/** The project's analytics over the last `days` days (1 to the installation's retention), every day present in `daily`. */
export async function projectAnalytics(ctx: Context, projectId: number, days: number): Promise<ProjectAnalytics> {
  const kept = ctx.config.analyticsRetentionDays;
  if (!Number.isInteger(days) || days < 1 || days > Math.max(kept, 1)) {
    throw ValidationError.field('days', `Ensure this value is between 1 and ${Math.max(kept, 1)} (the days analytics are kept).`);
  }
  const today = new Date(`${dayString(new Date())}T00:00:00Z`);
  const since = new Date(today.getTime() - (days - 1) * 86_400_000);
  const where = { projectId, day: { gte: since } };
  const prisma = ctx.prisma;
  const [perDay, pages, missing, searches, empty] = await Promise.all([
    prisma.pageViewDaily.groupBy({ by: ['day', 'status'], where, _sum: { views: true } }),
    prisma.pageViewDaily.groupBy({
      by: ['path', 'versionSlug'],
      where: { ...where, status: 200 },
      _sum: { views: true },
      orderBy: [{ _sum: { views: 'desc' } }, { path: 'asc' }],
      take: TOP,
    }),
    prisma.pageViewDaily.groupBy({
      by: ['path', 'versionSlug'],
      where: { ...where, status: 404 },
      _sum: { views: true },
      orderBy: [{ _sum: { views: 'desc' } }, { path: 'asc' }],
      take: TOP,
    }),
    prisma.searchQueryDaily.groupBy({
      by: ['query', 'versionSlug'],
      where,
      _sum: { searches: true },
      _min: { results: true },
      orderBy: [{ _sum: { searches: 'desc' } }, { query: 'asc' }],
      take: TOP,
    }),
    prisma.searchQueryDaily.groupBy({
      by: ['query', 'versionSlug'],
      where: { ...where, results: 0 },
      _sum: { searches: true },
      orderBy: [{ _sum: { searches: 'desc' } }, { query: 'asc' }],
      take: TOP,
    }),
  ]);
  const daily = Array.from({ length: days }, (_, i) => ({ day: dayString(new Date(since.getTime() + i * 86_400_000)), views: 0, notFound: 0 }));
  const byDay = new Map(daily.map((d) => [d.day, d]));
  for (const r of perDay) {
    const d = byDay.get(dayString(r.day));
    if (!d) continue;
    if (r.status === 404) d.notFound += r._sum.views ?? 0;
    else d.views += r._sum.views ?? 0;
  }
  return {
    days,
    since: dayString(since),
    views: daily.reduce((n, d) => n + d.views, 0),
    notFound: daily.reduce((n, d) => n + d.notFound, 0),
    daily,
    pages: pages.map((p) => ({ path: p.path, version: p.versionSlug, views: p._sum.views ?? 0 })),
    missing: missing.map((p) => ({ path: p.path, version: p.versionSlug, views: p._sum.views ?? 0 })),
    searches: searches.map((s) => ({ query: s.query, version: s.versionSlug, searches: s._sum.searches ?? 0, results: s._min.results ?? 0 })),
    searchesWithoutResults: empty.map((s) => ({ query: s.query, version: s.versionSlug, searches: s._sum.searches ?? 0, results: 0 })),
  };
}
