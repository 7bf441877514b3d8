// Small pieces every page uses: progress, errors, forms and a mutation's typed outcome.
import { createContext, type ReactNode, useContext, useEffect, useId, useState } from 'react';
import { type AnyVariables, type CombinedError, type DocumentInput, type RequestPolicy, type UseQueryArgs, useClient, useQuery } from 'urql';

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

/** Said when Lectern gave no reason (it always should): what happened and what to do. */
const NO_REASON = 'Lectern did not say why this was refused. Reload the page and try again.';

export function problemOf(answer: Answer | null | undefined, error?: CombinedError): Problem | null {
  if (error) {
    if (error.networkError) return { message: 'Lectern did not answer. Check your connection, then try again.', fields: {} };
    return { message: error.graphQLErrors.map((e) => e.message).join(' ') || NO_REASON, fields: {} };
  }
  if (!answer) return { message: NO_REASON, fields: {} };
  if (answer.__typename.endsWith('Success')) return null;
  const fields: Record<string, string> = {};
  for (const f of answer.fieldErrors ?? []) {
    if (f.field === 'nonFieldErrors') continue;
    fields[f.field] = f.messages.join(' ');
  }
  const general = (answer.fieldErrors ?? []).filter((f) => f.field === 'nonFieldErrors').flatMap((f) => f.messages);
  const message = general.length ? general.join(' ') : answer.message || NO_REASON;
  return { message: Object.keys(fields).length && !general.length ? fixMessage(fields) : message, fields };
}

/** The API's names of input fields, as the forms label them. */
const FIELD_LABELS: Record<string, string> = {
  name: 'Name',
  'repository.url': 'Repository URL',
  repository: 'Repository URL',
  url: 'URL',
  defaultBranch: 'Default branch',
  defaultVersion: 'Default version',
  language: 'Language',
  programmingLanguage: 'Programming language',
  homepage: 'Homepage',
  tags: 'Tags',
  description: 'Description',
  readthedocsYamlPath: 'Path of .readthedocs.yaml',
  analyticsCode: 'Analytics code',
  username: 'Username',
  password: 'Password',
  newPassword: 'New password',
  currentPassword: 'Current password',
  email: 'Email',
  code: 'Setup code',
  fromUrl: 'From',
  toUrl: 'To',
  httpStatus: 'Status',
  type: 'Type',
  value: 'Value',
  payload: 'Payload template',
  secret: 'Secret',
  events: 'Events',
  token: 'Token',
  apiUrl: 'API base URL',
  child: 'Project',
  alias: 'Alias',
  translation: 'Project',
  confirm: 'Confirmation',
  privacyLevel: 'Privacy',
  versioningScheme: 'Versions and translations',
  ssoOnly: 'Members sign in with single sign-on only',
  ssoGroup: 'SSO group',
  issuer: 'Issuer URL',
  clientId: 'Client ID',
  clientSecret: 'Client secret',
  scopes: 'Scopes',
  groupsClaim: 'Groups claim',
  slug: 'Slug',
  expiresAt: 'Expires',
  projects: 'Projects',
  timeSeconds: 'Time (seconds)',
  memoryBytes: 'Memory',
};

/** A field's label for a message: the form's own word for it, never the API's path. */
export function fieldLabel(field: string): string {
  const known = FIELD_LABELS[field] ?? FIELD_LABELS[field.split('.').pop() ?? ''];
  if (known) return known;
  const words = (field.split('.').pop() ?? field).replace(/([a-z])([A-Z])/g, '$1 $2').replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1).toLowerCase();
}

const fixMessage = (fields: Record<string, string>) => {
  const names = Object.keys(fields).map(fieldLabel);
  return names.length === 1
    ? `${names[0]} needs a change: see why below, then try again.`
    : `These fields need a change (see why below), then try again: ${names.join(', ')}.`;
};

export function ProblemText({ problem }: { problem: Problem | null }) {
  if (!problem) return null;
  return (
    <div className="error" role="alert">
      <p>{problem.message}</p>
      {Object.keys(problem.fields).length > 0 && (
        <ul>
          {Object.entries(problem.fields).map(([f, m]) => (
            <li key={f}>
              <strong>{fieldLabel(f)}</strong>: {m}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** The field problems of the form being shown, by the API's field name (ActionForm provides them). */
const FieldProblems = createContext<Record<string, string>>({});

/** The message for a form field named `field` (or `name`), also under `<prefix>.<field>`, if any. */
function useFieldProblem(names: string[]): string | undefined {
  const problems = useContext(FieldProblems);
  for (const n of names) if (problems[n]) return problems[n];
  return Object.entries(problems).find(([k]) => names.some((n) => k.endsWith(`.${n}`)))?.[1];
}

/** A labelled input; `name` is the form field's name, `field` the API's name for it when that differs. */
export function Field(props: {
  label: string;
  name: string;
  field?: string;
  type?: string;
  defaultValue?: string;
  required?: boolean;
  autoComplete?: string;
  placeholder?: string;
  hint?: ReactNode;
  error?: string;
}) {
  const id = useId();
  const error = useFieldProblem([props.field ?? props.name]) ?? props.error;
  const described = [props.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
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
        placeholder={props.placeholder}
        aria-invalid={error ? true : undefined}
        aria-describedby={described || undefined}
      />
      {props.hint && <small id={`${id}-hint`}>{props.hint}</small>}
      {error && (
        <small className="error" id={`${id}-error`}>
          {error}
        </small>
      )}
    </div>
  );
}

/** A labelled text area (a description, a template): as Field, several lines. */
export function TextArea(props: { label: string; name: string; field?: string; defaultValue?: string; rows?: number; hint?: ReactNode }) {
  const id = useId();
  const error = useFieldProblem([props.field ?? props.name]);
  const described = [props.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      <textarea
        id={id}
        name={props.name}
        rows={props.rows ?? 3}
        defaultValue={props.defaultValue}
        aria-invalid={error ? true : undefined}
        aria-describedby={described || undefined}
      />
      {props.hint && <small id={`${id}-hint`}>{props.hint}</small>}
      {error && (
        <small className="error" id={`${id}-error`}>
          {error}
        </small>
      )}
    </div>
  );
}

/** Copies `text` to the clipboard, saying whether it went (a browser may refuse: then the text is there to select by hand). */
export function CopyButton({ text, children }: { text: string; children: ReactNode }) {
  const [outcome, setOutcome] = useState('');
  return (
    <span className="act">
      <button
        type="button"
        onClick={async () => {
          try {
            await navigator.clipboard.writeText(text);
            setOutcome('Copied.');
          } catch {
            setOutcome('The browser refused to copy: select the text and copy it.');
          }
        }}
      >
        {children}
      </button>
      <span aria-live="polite">{outcome}</span>
    </span>
  );
}

export function Check({ label, name, checked, hint }: { label: string; name: string; checked: boolean; hint?: ReactNode }) {
  const id = useId();
  return (
    <div className="field check">
      <input id={id} type="checkbox" name={name} defaultChecked={checked} aria-describedby={hint ? `${id}-hint` : undefined} />
      <label htmlFor={id}>{label}</label>
      {hint && <small id={`${id}-hint`}>{hint}</small>}
    </div>
  );
}

/** Whether a checkbox of a submitted form was ticked. */
export const check = (f: Record<string, string>, name: string) => f[name] === 'on';

/** A choice's value and what a person reads for it (and, optionally, what it means). */
export type Option = string | { value: string; label: string; help?: string };
const optionOf = (o: Option) => (typeof o === 'string' ? { value: o, label: o, help: undefined } : o);

export function Select(props: { label: string; name: string; field?: string; options: readonly Option[]; defaultValue?: string; hint?: ReactNode }) {
  const id = useId();
  const options = props.options.map(optionOf);
  const [value, setValue] = useState(props.defaultValue ?? options[0]?.value ?? '');
  const help = options.find((o) => o.value === value)?.help;
  const error = useFieldProblem([props.field ?? props.name]);
  const described = [help || props.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      <select
        id={id}
        name={props.name}
        value={value}
        onChange={(e) => setValue(e.target.value)}
        aria-invalid={error ? true : undefined}
        aria-describedby={described || undefined}
      >
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      {(help || props.hint) && <small id={`${id}-hint`}>{help ?? props.hint}</small>}
      {error && (
        <small className="error" id={`${id}-error`}>
          {error}
        </small>
      )}
    </div>
  );
}

/** Shown beside a control whose request runs: nothing for the first 300 ms, then a spinner and words. */
export function Progress({ busy, what = 'Working…' }: { busy: boolean; what?: string }) {
  const [late, setLate] = useState(false);
  useEffect(() => {
    if (!busy) {
      setLate(false);
      return;
    }
    const timer = setTimeout(() => setLate(true), 300);
    return () => clearTimeout(timer);
  }, [busy]);
  if (!busy || !late) return null;
  return (
    <span className="progress" role="status">
      <span className="spinner" aria-hidden="true" />
      {what}
    </span>
  );
}

/**
 * Toggles that each send one change per click: the value asked for shows at once, its control is
 * disabled until Lectern answers (a second click is not sent), and one toggle's answer never undoes
 * another's. `key` names one control (a row and a field).
 */
export function usePendingChanges<V>(report: (p: Problem | null) => void) {
  const [pending, setPending] = useState<Record<string, V>>({});
  const change = async (key: string, value: V, send: () => Promise<Problem | null>) => {
    if (key in pending) return;
    setPending((p) => ({ ...p, [key]: value }));
    report(null);
    try {
      report(await send());
    } finally {
      setPending(({ [key]: _, ...rest }) => rest as Record<string, V>);
    }
  };
  /** The value to show: the one asked for while its request runs, else the stored one. */
  const shown = <T extends V>(key: string, stored: T): T => (key in pending ? (pending[key] as T) : stored);
  const busy = (key: string) => key in pending;
  return { change, shown, busy };
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
  /** Called as a try starts: the tab's older message (another button's) goes too. */
  onTry?: () => void;
}) {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [done, setDone] = useState(false);
  return (
    <form
      className={props.className}
      aria-busy={busy || undefined}
      onSubmit={async (e) => {
        e.preventDefault();
        if (busy) return;
        const form = e.currentTarget;
        const fields = Object.fromEntries([...new FormData(form).entries()].map(([k, v]) => [k, String(v)]));
        setBusy(true);
        setDone(false);
        setProblem(null);
        props.onTry?.();
        try {
          const p = await props.act(fields);
          setProblem(p);
          setDone(p === null);
          if (p === null && props.reset) form.reset();
        } finally {
          setBusy(false);
        }
      }}
    >
      <FieldProblems.Provider value={problem?.fields ?? {}}>{props.children}</FieldProblems.Provider>
      <div className="submit">
        <button type="submit" disabled={busy} className={props.danger ? 'danger' : undefined}>
          {props.label}
        </button>
        <Progress busy={busy} />
      </div>
      <ProblemText problem={problem} />
      {done && props.done && (
        <p className="ok" role="status">
          {props.done}
        </p>
      )}
    </form>
  );
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['week', 7 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
];
const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto', style: 'short' });

/** "3 min. ago", "in 2 hr.", "now": `iso` from `now`. */
export function ago(iso: string, now = Date.now()): string {
  const seconds = Math.round((new Date(iso).getTime() - now) / 1000);
  // Lectern's clock and the browser's may differ by a little: a moment just ahead is "just now".
  if (seconds > -10 && seconds < 60) return 'just now';
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size || unit === 'second') return relative.format(Math.trunc(seconds / size), unit);
  }
  return relative.format(seconds, 'second');
}

/** The current time, again every `everyMs` (relative times stay true while a page is open). */
function useNow(everyMs = 30_000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
}

/** A moment as a person reads it ("3 min. ago"), the exact time on hover and for machines. */
export function Time({ iso, empty = '—' }: { iso: string | null | undefined; empty?: string }) {
  useNow(); // renders again every 30 s; each render reads the clock afresh
  if (!iso) return <>{empty}</>;
  const exact = new Date(iso).toLocaleString(undefined, { dateStyle: 'full', timeStyle: 'long' });
  return (
    <time dateTime={iso} title={exact}>
      {ago(iso)}
    </time>
  );
}

/** A duration in seconds, as "42 s" or "3 min 5 s". */
export function seconds(s: number | null | undefined): string {
  if (s == null) return '—';
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  return s % 60 ? `${m} min ${s % 60} s` : `${m} min`;
}

/** A build's state in a word: its step while it runs, then passed, failed or skipped (nothing to build). */
export function buildOutcome(b: { state: string; success: boolean | null | undefined; message?: string | null }): string {
  if (b.state !== 'finished') return b.state;
  if (b.message?.startsWith('Skipped')) return 'skipped';
  return b.success ? 'passed' : 'failed';
}

export function StateBadge(props: { state: string; success: boolean | null | undefined; message?: string | null }) {
  const label = buildOutcome(props);
  return <span className={`badge badge-${label}`}>{label}</span>;
}

/**
 * A page or tab that reads `query` and changes what it shows: its data, the client for its
 * mutations, the last mutation's problem, and `pending(what)`: what to show while there is no data
 * yet. A change is not read again from Lectern: its answer, and the cache's updates of the lists it
 * is in, change what the page shows (docs/design/dashboard-data.md).
 * `requestPolicy` 'cache-and-network' shows what is cached at once and asks again (rows another tab changed).
 */
export function useEditor<Data, Variables extends AnyVariables>(query: DocumentInput<Data, Variables>, variables: Variables, requestPolicy?: RequestPolicy) {
  const [{ data, fetching, error }] = useQuery<Data, Variables>({ query, variables, requestPolicy } as UseQueryArgs<Variables, Data>);
  const client = useClient();
  const [problem, setProblem] = useState<Problem | null>(null);
  return {
    data,
    client,
    problem,
    setProblem,
    pending: (what: string) => (error ? <Failure error={error} /> : fetching ? <Loading what={what} /> : null),
  };
}

/** A button that makes one change: busy while it runs, its problem reported (null when it went through), then `done`. */
export function ActButton(props: {
  act: () => Promise<Problem | null>;
  report: (p: Problem | null) => void;
  done?: () => void;
  danger?: boolean;
  label?: string;
  children: ReactNode;
}) {
  const [busy, setBusy] = useState(false);
  return (
    <span className="act">
      <button
        type="button"
        className={props.danger ? 'danger' : undefined}
        disabled={busy}
        aria-label={props.label}
        onClick={async () => {
          if (busy) return;
          setBusy(true);
          props.report(null);
          try {
            const p = await props.act();
            props.report(p);
            if (!p) props.done?.();
          } finally {
            setBusy(false);
          }
        }}
      >
        {props.children}
      </button>
      <Progress busy={busy} />
    </span>
  );
}

/** Which rows of `total` page `page` (of `size` rows) shows, with buttons to the previous and next pages; `go` opens page `p`. */
export function Pager({ page, size, total, go }: { page: number; size: number; total: number; go: (p: number) => void }) {
  return (
    <nav className="pager" aria-label="Pages">
      {page > 0 && (
        <button type="button" onClick={() => go(page - 1)}>
          Previous
        </button>
      )}
      <span>
        {page * size + 1}–{Math.min(total, (page + 1) * size)} of {total}
      </span>
      {(page + 1) * size < total && (
        <button type="button" onClick={() => go(page + 1)}>
          Next
        </button>
      )}
    </nav>
  );
}
