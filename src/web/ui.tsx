// Small pieces every page uses: progress, errors, forms and a mutation's typed outcome.
import { type ReactNode, useState } from 'react';
import { type AnyVariables, type CombinedError, type DocumentInput, type UseQueryArgs, useClient, useQuery } from 'urql';

export function Loading({ what }: { what: string }) {
  return (
    <p className="loading" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

/** A request's failure as a reader can act on it. */
export function Failure({ error }: { error: CombinedError | string }) {
  const text =
    typeof error === 'string'
      ? error
      : error.networkError
        ? 'Lectern did not answer. Check your connection and reload the page.'
        : error.graphQLErrors.map((e) => e.message).join(' ');
  return (
    <p className="error" role="alert">
      {text}
    </p>
  );
}

export function NotFound({ what }: { what: string }) {
  return (
    <section>
      <h1>Not found</h1>
      <p>{what}</p>
    </section>
  );
}

/** A mutation's answer: the success's data, or the typed error's message (and field messages). */
export interface Problem {
  message: string;
  fields: Record<string, string>;
}

type Answer = { __typename: string; message?: string; fieldErrors?: readonly { field: string; messages: readonly string[] }[] };

export function problemOf(answer: Answer | null | undefined, error?: CombinedError): Problem | null {
  if (error) return { message: error.networkError ? 'Lectern did not answer; try again.' : error.graphQLErrors.map((e) => e.message).join(' '), fields: {} };
  if (!answer) return { message: 'No answer.', fields: {} };
  if (answer.__typename.endsWith('Success')) return null;
  const fields: Record<string, string> = {};
  for (const f of answer.fieldErrors ?? []) fields[f.field] = f.messages.join(' ');
  return { message: answer.message ?? 'Refused.', fields };
}

export function ProblemText({ problem }: { problem: Problem | null }) {
  if (!problem) return null;
  return (
    <div className="error" role="alert">
      <p>{problem.message}</p>
      {Object.keys(problem.fields).length > 0 && (
        <ul>
          {Object.entries(problem.fields).map(([f, m]) => (
            <li key={f}>
              <strong>{f}</strong>: {m}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** A labelled input; `name` is the form field's name. */
export function Field(props: {
  label: string;
  name: string;
  type?: string;
  defaultValue?: string;
  required?: boolean;
  autoComplete?: string;
  hint?: ReactNode;
  error?: string;
}) {
  const id = `f-${props.name}`;
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      <input
        id={id}
        name={props.name}
        type={props.type ?? 'text'}
        defaultValue={props.defaultValue}
        required={props.required}
        autoComplete={props.autoComplete}
        aria-invalid={props.error ? true : undefined}
        aria-describedby={props.error ? `${id}-error` : undefined}
      />
      {props.hint && <small>{props.hint}</small>}
      {props.error && (
        <small className="error" id={`${id}-error`}>
          {props.error}
        </small>
      )}
    </div>
  );
}

export function Check({ label, name, checked }: { label: string; name: string; checked: boolean }) {
  return (
    <div className="field check">
      <input id={`f-${name}`} type="checkbox" name={name} defaultChecked={checked} />
      <label htmlFor={`f-${name}`}>{label}</label>
    </div>
  );
}

/** Whether a checkbox of a submitted form was ticked. */
export const check = (f: Record<string, string>, name: string) => f[name] === 'on';

export function Select(props: { label: string; name: string; options: readonly string[]; defaultValue?: string }) {
  const id = `f-${props.name}`;
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      <select id={id} name={props.name} defaultValue={props.defaultValue}>
        {props.options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </div>
  );
}

/** A form whose submit runs `act` with its fields, showing the outcome; busy while it runs. */
export function ActionForm(props: {
  label: string;
  act: (fields: Record<string, string>) => Promise<Problem | null>;
  children?: ReactNode;
  done?: string;
  className?: string;
  danger?: boolean;
  reset?: boolean;
}) {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [done, setDone] = useState(false);
  return (
    <form
      className={props.className}
      onSubmit={async (e) => {
        e.preventDefault();
        const form = e.currentTarget;
        const fields = Object.fromEntries([...new FormData(form).entries()].map(([k, v]) => [k, String(v)]));
        setBusy(true);
        setDone(false);
        const p = await props.act(fields);
        setBusy(false);
        setProblem(p);
        setDone(p === null);
        if (p === null && props.reset) form.reset();
      }}
    >
      {props.children}
      <button type="submit" disabled={busy} className={props.danger ? 'danger' : undefined}>
        {busy ? 'Working…' : props.label}
      </button>
      <ProblemText problem={problem} />
      {done && props.done && (
        <p className="ok" role="status">
          {props.done}
        </p>
      )}
    </form>
  );
}

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');

export function StateBadge({ state, success }: { state: string; success: boolean | null | undefined }) {
  const label = state !== 'finished' ? state : success ? 'passed' : 'failed';
  return <span className={`badge badge-${label}`}>{label}</span>;
}

/**
 * A page or tab that reads `query` and changes what it shows: its data, the client for its
 * mutations, the last mutation's problem, `reload()` (from the network, after a change the cache
 * cannot place, such as a new row), and `pending(what)`: what to show while there is no data yet.
 */
export function useEditor<Data, Variables extends AnyVariables>(query: DocumentInput<Data, Variables>, variables: Variables) {
  const [{ data, fetching, error }, refetch] = useQuery<Data, Variables>({ query, variables } as UseQueryArgs<Variables, Data>);
  const client = useClient();
  const [problem, setProblem] = useState<Problem | null>(null);
  return {
    data,
    client,
    problem,
    setProblem,
    reload: () => refetch({ requestPolicy: 'network-only' }),
    pending: (what: string) => (error ? <Failure error={error} /> : fetching ? <Loading what={what} /> : null),
  };
}

/** A button that makes one change: busy while it runs, its problem reported (null when it went through), then `done`. */
export function ActButton(props: {
  act: () => Promise<Problem | null>;
  report: (p: Problem | null) => void;
  done?: () => void;
  danger?: boolean;
  children: ReactNode;
}) {
  const [busy, setBusy] = useState(false);
  return (
    <button
      type="button"
      className={props.danger ? 'danger' : undefined}
      disabled={busy}
      onClick={async () => {
        setBusy(true);
        const p = await props.act();
        setBusy(false);
        props.report(p);
        if (!p) props.done?.();
      }}
    >
      {props.children}
    </button>
  );
}
