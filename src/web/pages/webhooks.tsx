// A project's outgoing webhooks (build notifications): each with its events and the outcomes of its
// recent deliveries; add one (the secret is shown once), or delete it.
import { useState } from 'react';
import { useClient } from 'urql';
import { Link } from 'wouter';
import { type FragmentOf, graphql, readFragment } from '../graphql.ts';
import { ActButton, ActionForm, Check, check, Field, type Problem, ProblemText, problemOf, Time, useEditor } from '../ui.tsx';

/** A delivery's row in its webhook's table. */
const DeliveryRowFields = graphql(`
  fragment DeliveryRow on NotificationDelivery { id event buildId state attempts statusCode error durationMs lastAttemptAt nextAttemptAt }
`);
/** A webhook's card: its URL, events and recent deliveries. */
const WebhookCardFields = graphql(
  `
  fragment WebhookCard on Webhook { id url events payload createdAt deliveries(limit: 10) { id ...DeliveryRow } }
`,
  [DeliveryRowFields],
);
const WebhooksQuery = graphql(
  `
  query ProjectWebhooks($slug: String!) {
    project(slug: $slug) { id webhooks { id ...WebhookCard } }
  }
`,
  [WebhookCardFields],
);
// A new webhook goes last (by id), a deleted one leaves the list: src/web/cache-updates.ts.
const CreateWebhook = graphql(
  `
  mutation CreateWebhook($project: String!, $input: WebhookInput!) {
    createWebhook(project: $project, input: $input) {
      __typename
      ... on MutationCreateWebhookSuccess { data { secret webhook { id ...WebhookCard } } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`,
  [WebhookCardFields],
);
const DeleteWebhook = graphql(`
  mutation DeleteWebhook($project: String!, $id: Int!) {
    deleteWebhook(project: $project, id: $id) {
      __typename
      ... on MutationDeleteWebhookSuccess { data { id } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);

const EVENTS = [
  ['BUILD_TRIGGERED', 'Build triggered'],
  ['BUILD_PASSED', 'Build passed'],
  ['BUILD_FAILED', 'Build failed'],
] as const;

export function Webhooks({ slug }: { slug: string }) {
  const { data, problem, setProblem, pending } = useEditor(WebhooksQuery, { slug });
  const [secret, setSecret] = useState<string | null>(null);
  if (!data) return pending('webhooks');
  const hooks = data?.project?.webhooks ?? [];
  return (
    <>
      <p>
        Lectern POSTs build events to these URLs, signed in <code>X-Hub-Signature</code> (the HMAC-SHA256 of the body with the webhook's secret, in hex).
      </p>
      <ProblemText problem={problem} />
      {secret && (
        <div className="notice" role="status">
          <p>The webhook's secret, shown only now:</p>
          <p>
            <code data-testid="secret">{secret}</code>
          </p>
        </div>
      )}
      {hooks.length === 0 && <p>No webhooks.</p>}
      {hooks.map((h) => (
        <WebhookCard key={h.id} slug={slug} h={h} report={setProblem} />
      ))}
      <h2>Add a webhook</h2>
      <AddWebhook slug={slug} onTry={() => setProblem(null)} created={setSecret} />
    </>
  );
}

/** One webhook: its URL, its events, a button that deletes it, and its recent deliveries. */
function WebhookCard({ slug, report, ...props }: { slug: string; h: FragmentOf<typeof WebhookCardFields>; report: (p: Problem | null) => void }) {
  const h = readFragment(WebhookCardFields, props.h);
  const client = useClient();
  return (
    <section className="card">
      <h2 className="wrap">
        <code>{h.url}</code>
      </h2>
      <p>
        {h.events.map((e) => EVENTS.find(([v]) => v === e)?.[1] ?? e).join(', ')}
        {h.payload ? ', custom payload' : ', default JSON payload'}{' '}
        <span className="muted">
          added <Time iso={h.createdAt} />
        </span>{' '}
        <ActButton
          danger
          act={async () => {
            const r = await client.mutation(DeleteWebhook, { project: slug, id: h.id }).toPromise();
            return problemOf(r.data?.deleteWebhook, r.error);
          }}
          report={report}
          label={`Delete the webhook to ${h.url}`}
        >
          Delete
        </ActButton>
      </p>
      {h.deliveries.length === 0 ? <p className="muted">Nothing sent yet.</p> : <Deliveries slug={slug} deliveries={h.deliveries} />}
    </section>
  );
}

/** A webhook's recent deliveries: each one's event, build, state, answer, attempts and last attempt. */
function Deliveries({ slug, deliveries }: { slug: string; deliveries: readonly FragmentOf<typeof DeliveryRowFields>[] }) {
  return (
    <table className="list cards-on-phone">
      <caption>Recent deliveries</caption>
      <thead>
        <tr>
          <th scope="col">Event</th>
          <th scope="col">Build</th>
          <th scope="col">State</th>
          <th scope="col">Answer</th>
          <th scope="col">Attempts</th>
          <th scope="col">Last attempt</th>
        </tr>
      </thead>
      <tbody>
        {deliveries
          .map((ref) => readFragment(DeliveryRowFields, ref))
          .map((d) => (
            <tr key={d.id}>
              <th scope="row" className="row-head">
                {EVENTS.find(([v]) => v === d.event)?.[1] ?? d.event}
              </th>
              <td data-label="Build">
                <Link href={`/projects/${slug}/builds/${d.buildId}`}>#{d.buildId}</Link>
              </td>
              <td data-label="State">
                <span className={`badge badge-${d.state === 'delivered' ? 'passed' : d.state === 'failed' ? 'failed' : d.state}`}>{d.state}</span>
                {d.nextAttemptAt && (
                  <small>
                    {' '}
                    next try <Time iso={d.nextAttemptAt} />
                  </small>
                )}
              </td>
              <td data-label="Answer">
                {d.statusCode ?? '—'}
                {d.error && <small className="error"> {d.error}</small>}
              </td>
              <td data-label="Attempts">{d.attempts}</td>
              <td data-label="Last attempt">
                <Time iso={d.lastAttemptAt} />
                {d.durationMs !== null && <small> ({d.durationMs} ms)</small>}
              </td>
            </tr>
          ))}
      </tbody>
    </table>
  );
}

/** The form that adds a webhook; `created` is given the new webhook's secret. */
function AddWebhook({ slug, onTry, created }: { slug: string; onTry: () => void; created: (secret: string | null) => void }) {
  const client = useClient();
  return (
    <ActionForm
      label="Add webhook"
      onTry={onTry}
      reset
      act={async (f) => {
        const events = EVENTS.filter(([v]) => check(f, v)).map(([v]) => v);
        const input = { url: f.url, events, payload: f.payload || null, secret: f.secret || null };
        const r = await client.mutation(CreateWebhook, { project: slug, input }).toPromise();
        const a = r.data?.createWebhook;
        const p = problemOf(a, r.error);
        if (!p && a?.__typename === 'MutationCreateWebhookSuccess') {
          created(a.data.secret);
        }
        return p;
      }}
    >
      <Field label="URL" name="url" type="url" required />
      {EVENTS.map(([v, label]) => (
        <Check key={v} label={label} name={v} checked={v !== 'BUILD_TRIGGERED'} />
      ))}
      <div className="field">
        <label htmlFor="f-payload">Payload template (optional)</label>
        <textarea id="f-payload" name="payload" rows={4} placeholder='{"text": "{{ project.name }} {{ version.slug }}: {{ event }} {{ build.url }}"}' />
        <small>
          Read the Docs' variables: <code>{'{{ event }}'}</code>, <code>{'{{ build.id }}'}</code>, <code>{'{{ build.url }}'}</code>,{' '}
          <code>{'{{ build.docs_url }}'}</code>, <code>{'{{ build.commit }}'}</code>, <code>{'{{ project.slug }}'}</code>, <code>{'{{ project.name }}'}</code>,{' '}
          <code>{'{{ project.url }}'}</code>, <code>{'{{ version.slug }}'}</code>, <code>{'{{ version.name }}'}</code>. Empty: a JSON body describing the build.
        </small>
      </div>
      <Field label="Secret (optional: generated when empty)" name="secret" type="password" autoComplete="off" />
    </ActionForm>
  );
}
