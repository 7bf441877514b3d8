// A project's traffic and search analytics (docs/design/analytics.md): page views per day as a
// chart, the pages most read, the 404s most hit, the searches most made and those that found
// nothing, over 7, 30 or 90 days; each as CSV to download.
import { useState } from 'react';
import { type FragmentOf, graphql, readFragment } from '../graphql.ts';
import { useEditor } from '../ui.tsx';

/** A day of the chart (and of the daily CSV). */
const DailyChartFields = graphql(`
  fragment DailyChart on DailyViews { day views notFound }
`);
const AnalyticsQuery = graphql(
  `
  query ProjectAnalytics($slug: String!, $days: Int!) {
    project(slug: $slug) {
      id viewerIsMaintainer analyticsDisabled
      analytics(days: $days) {
        days since views notFound
        daily { ...DailyChart }
        pages { path version views }
        missing { path version views }
        searches { query version searches results }
        searchesWithoutResults { query version searches results }
      }
    }
  }
`,
  [DailyChartFields],
);

/** Text as a CSV field: quoted when it holds a comma, a quote or a line break; a leading formula character neutralized. */
const field = (v: string | number) => {
  let s = String(v);
  // A spreadsheet runs a field starting with = + - @ as a formula: a hostile path or query must not.
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};
const csv = (header: string[], rows: (string | number)[][]) => [header, ...rows].map((r) => r.map(field).join(',')).join('\r\n');

function download(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  URL.revokeObjectURL(url);
}

/** Page views per day as bars, 404s below them; each bar names its day and counts for screen readers. */
function DailyChart(props: { daily: readonly FragmentOf<typeof DailyChartFields>[] }) {
  const daily = props.daily.map((d) => readFragment(DailyChartFields, d));
  const max = Math.max(1, ...daily.map((d) => d.views + d.notFound));
  const w = 600;
  const h = 160;
  const bar = w / daily.length;
  return (
    <svg viewBox={`0 0 ${w} ${h + 20}`} className="chart" role="img" aria-label={`Page views per day, ${daily[0]?.day} to ${daily.at(-1)?.day}`}>
      {daily.map((d, i) => {
        const views = (d.views / max) * h;
        const missing = (d.notFound / max) * h;
        return (
          <g key={d.day}>
            <title>{`${d.day}: ${d.views} views, ${d.notFound} not found`}</title>
            <rect x={i * bar + 1} y={h - views - missing} width={Math.max(bar - 2, 1)} height={views} className="bar-views" />
            <rect x={i * bar + 1} y={h - missing} width={Math.max(bar - 2, 1)} height={missing} className="bar-missing" />
          </g>
        );
      })}
      <text x={0} y={h + 15} className="chart-label">
        {daily[0]?.day}
      </text>
      <text x={w} y={h + 15} textAnchor="end" className="chart-label">
        {daily.at(-1)?.day}
      </text>
    </svg>
  );
}

function Table({ caption, head, rows }: { caption: string; head: string[]; rows: (string | number)[][] }) {
  if (rows.length === 0) return <p>{caption}: none.</p>;
  return (
    <table className="list cards-on-phone">
      <caption>{caption}</caption>
      <thead>
        <tr>
          {head.map((c) => (
            <th key={c} scope="col">
              {c}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.join('\u0000')}>
            {r.map((c, i) => (
              <td key={head[i]} data-label={head[i]}>
                {c}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function AnalyticsTab({ slug }: { slug: string }) {
  const [days, setDays] = useState(30);
  const { data, pending } = useEditor(AnalyticsQuery, { slug, days });
  if (!data) return pending('analytics');
  const p = data.project;
  if (!p) return null;
  if (!p.viewerIsMaintainer || !p.analytics) return <p>Only the project's maintainers see its analytics.</p>;
  const a = p.analytics;
  const pages = a.pages.map((r) => [r.version, r.path, r.views]);
  const missing = a.missing.map((r) => [r.version || '—', r.path, r.views]);
  const searches = a.searches.map((r) => [r.query, r.version || 'any', r.searches, r.results]);
  const empty = a.searchesWithoutResults.map((r) => [r.query, r.version || 'any', r.searches]);
  return (
    <>
      {p.analyticsDisabled && <p className="notice">Analytics are off for this project (its settings): nothing new is counted.</p>}
      <div className="field">
        <label htmlFor="analytics-days">Period</label>
        <select id="analytics-days" value={days} onChange={(e) => setDays(Number(e.target.value))}>
          <option value={7}>Last 7 days</option>
          <option value={30}>Last 30 days</option>
          <option value={90}>Last 90 days</option>
        </select>
      </div>
      <p>
        Since {a.since}: <strong>{a.views}</strong> page views, <strong>{a.notFound}</strong> not found. Counted without addresses or readers.
      </p>
      <DailyChart daily={a.daily} />
      <div className="actions">
        <button
          type="button"
          onClick={() =>
            download(
              `${slug}-traffic-${a.since}.csv`,
              csv(
                ['day', 'views', 'not found'],
                a.daily.map((ref) => readFragment(DailyChartFields, ref)).map((d) => [d.day, d.views, d.notFound]),
              ),
            )
          }
        >
          Download daily views (CSV)
        </button>
        <button type="button" onClick={() => download(`${slug}-pages-${a.since}.csv`, csv(['version', 'path', 'views'], pages))}>
          Download top pages (CSV)
        </button>
        <button type="button" onClick={() => download(`${slug}-searches-${a.since}.csv`, csv(['query', 'version', 'searches', 'results'], searches))}>
          Download searches (CSV)
        </button>
      </div>
      <Table caption="Pages most read" head={['Version', 'Page', 'Views']} rows={pages} />
      <Table caption="Not found" head={['Version', 'Path', 'Requests']} rows={missing} />
      <Table caption="Searches" head={['Query', 'Version', 'Searches', 'Results']} rows={searches} />
      <Table caption="Searches that found nothing" head={['Query', 'Version', 'Searches']} rows={empty} />
    </>
  );
}
