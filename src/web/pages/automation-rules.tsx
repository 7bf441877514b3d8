// A project's automation rules (docs/design/automation-rules.md): the rules in the order they
// apply, each with what it recently did; add one, move it up or down, turn it off, or delete it.
import { useState } from 'react';
import { useClient } from 'urql';
import { type FragmentOf, graphql, readFragment } from '../graphql.ts';
import { ActButton, ActionForm, Check, check, Field, type Problem, ProblemText, Progress, problemOf, Select, Time, useEditor } from '../ui.tsx';

/** A rule's card: what it matches and does, and what it recently did. */
const RuleCardFields = graphql(`
  fragment RuleCard on AutomationRule {
    id priority description predefinedMatchArg matchArg versionType action enabled matches { id versionName versionType action createdAt }
  }
`);
const RulesQuery = graphql(
  `
  query ProjectAutomationRules($slug: String!) {
    project(slug: $slug) {
      id viewerIsMaintainer
      automationRules(limit: 100) { totalCount nodes { id ...RuleCard } }
    }
  }
`,
  [RuleCardFields],
);
// Adding, moving and deleting a rule renumber the others' priorities: src/web/cache-updates.ts does
// as Lectern does, from the rule each answers with.
const CreateRule = graphql(
  `
  mutation CreateAutomationRule($project: String!, $input: AutomationRuleInput!) {
    createAutomationRule(project: $project, input: $input) {
      __typename
      ... on MutationCreateAutomationRuleSuccess { data { id ...RuleCard } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`,
  [RuleCardFields],
);
const UpdateRule = graphql(`
  mutation UpdateAutomationRule($project: String!, $id: Int!, $input: AutomationRuleInput!) {
    updateAutomationRule(project: $project, id: $id, input: $input) {
      __typename
      ... on MutationUpdateAutomationRuleSuccess { data { id enabled } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);
const MoveRule = graphql(`
  mutation MoveAutomationRule($project: String!, $id: Int!, $steps: Int!) {
    moveAutomationRule(project: $project, id: $id, steps: $steps) {
      __typename
      ... on MutationMoveAutomationRuleSuccess { data { id priority } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);
const DeleteRule = graphql(`
  mutation DeleteAutomationRule($project: String!, $id: Int!) {
    deleteAutomationRule(project: $project, id: $id) {
      __typename
      ... on MutationDeleteAutomationRuleSuccess { data { id } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);

const MATCHES = [
  { value: 'all-versions', label: 'Any version', help: 'Every new tag (or branch) of the type chosen below.' },
  { value: 'semver-versions', label: 'SemVer versions', help: 'Names like 1.2.3, v2.0.0 or 3.0.0-rc.1.' },
  { value: 'custom-match', label: 'Custom match', help: 'Names in which the regular expression below is found (RE2 syntax: no lookaround).' },
];
const ACTIONS = [
  { value: 'activate-version', label: 'Activate version', help: 'Activate it and build it.' },
  { value: 'hide-version', label: 'Hide version', help: 'Build it, but leave it out of version menus and search.' },
  { value: 'make-version-public', label: 'Make version public', help: 'Anyone may read it.' },
  { value: 'make-version-private', label: 'Make version private', help: 'Only maintainers may read it.' },
  { value: 'set-default-version', label: 'Set version as default', help: 'Activate it, and make it what the docs root opens on.' },
  { value: 'delete-version', label: 'Delete version', help: 'When its branch or tag is deleted, delete the version even if active (never the default one).' },
];
const label = (list: { value: string; label: string }[], v: string) => list.find((o) => o.value === v)?.label ?? v;
const PAST: Record<string, string> = {
  'activate-version': 'activated',
  'hide-version': 'hidden',
  'make-version-public': 'made public',
  'make-version-private': 'made private',
  'set-default-version': 'set as default',
  'delete-version': 'deleted',
};

export function AutomationRules({ slug }: { slug: string }) {
  const { data, client, problem, setProblem, pending } = useEditor(RulesQuery, { slug });
  const [moving, setMoving] = useState<number | null>(null);
  if (!data) return pending('automation rules');
  const p = data.project;
  if (!p) return null;
  if (!p.viewerIsMaintainer) return <p>Only the project's maintainers see and change its automation rules.</p>;
  const rules = p.automationRules.nodes;
  // One change at a time: the order a move is computed from must be the one Lectern holds (the
  // answer, and the others renumbered as Lectern does, are in the cache before the next starts).
  const change = async (id: number, run: () => Promise<Problem | null>) => {
    if (moving !== null) return;
    setMoving(id);
    setProblem(null);
    try {
      setProblem(await run());
    } finally {
      setMoving(null);
    }
  };
  const move = (id: number, steps: number) =>
    change(id, async () => {
      const r = await client.mutation(MoveRule, { project: slug, id, steps }).toPromise();
      return problemOf(r.data?.moveAutomationRule, r.error);
    });
  const toggle = (id: number, enabled: boolean) =>
    change(id, async () => {
      const r = await client.mutation(UpdateRule, { project: slug, id, input: { enabled } }).toPromise();
      return problemOf(r.data?.updateAutomationRule, r.error);
    });
  return (
    <>
      <p>
        When a sync finds new tags or branches (on import, from a webhook, or by "sync versions"), every enabled rule whose match fits applies, in this order. A
        delete rule applies when an active version's tag or branch is deleted.
      </p>
      <ProblemText problem={problem} />
      {rules.length === 0 && <p>No automation rules.</p>}
      <ol className="cards">
        {rules.map((r, i) => (
          <RuleCard key={r.id} slug={slug} r={r} i={i} count={rules.length} moving={moving} move={move} toggle={toggle} report={setProblem} />
        ))}
      </ol>
      <AddRule slug={slug} open={rules.length === 0} onTry={() => setProblem(null)} />
    </>
  );
}

/** One rule, the `i`th of `count`: what it matches and does, what it recently did, and its buttons. */
function RuleCard(props: {
  slug: string;
  r: FragmentOf<typeof RuleCardFields>;
  i: number;
  count: number;
  moving: number | null;
  move: (id: number, steps: number) => void;
  toggle: (id: number, enabled: boolean) => void;
  report: (p: Problem | null) => void;
}) {
  const { i, moving, move } = props;
  const r = readFragment(RuleCardFields, props.r);
  const client = useClient();
  return (
    <li>
      <div className="card-head">
        <span className="badge">{r.versionType === 'tag' ? 'Tags' : 'Branches'}</span> {label(MATCHES, r.predefinedMatchArg)}
        {r.predefinedMatchArg === 'custom-match' && <code> {r.matchArg}</code>} → {label(ACTIONS, r.action)}
        {!r.enabled && <span className="badge">disabled</span>}
      </div>
      {r.description && <p>{r.description}</p>}
      {r.matches.length > 0 && (
        <p className="muted">
          Recently:{' '}
          {r.matches.map((m, j) => (
            <span key={m.id}>
              {j > 0 && ' · '}
              {m.versionName} {PAST[m.action] ?? m.action} <Time iso={m.createdAt} />
            </span>
          ))}
        </p>
      )}
      <div className="actions">
        <button type="button" disabled={i === 0 || moving !== null} aria-label={`Move rule ${i + 1} up`} onClick={() => move(r.id, -1)}>
          Up
        </button>
        <button type="button" disabled={i === props.count - 1 || moving !== null} aria-label={`Move rule ${i + 1} down`} onClick={() => move(r.id, 1)}>
          Down
        </button>
        <button
          type="button"
          disabled={moving !== null}
          aria-label={`${r.enabled ? 'Disable' : 'Enable'} rule ${i + 1}`}
          onClick={() => props.toggle(r.id, !r.enabled)}
        >
          {r.enabled ? 'Disable' : 'Enable'}
        </button>
        <Progress busy={moving === r.id} what="Saving…" />
        <ActButton
          danger
          label={`Delete rule ${i + 1}`}
          act={async () => {
            const d = await client.mutation(DeleteRule, { project: props.slug, id: r.id }).toPromise();
            return problemOf(d.data?.deleteAutomationRule, d.error);
          }}
          report={props.report}
        >
          Delete
        </ActButton>
      </div>
    </li>
  );
}

/** The form that adds a rule, open when there is none yet. */
function AddRule({ slug, open, onTry }: { slug: string; open: boolean; onTry: () => void }) {
  const client = useClient();
  return (
    <details open={open}>
      <summary>Add a rule</summary>
      <ActionForm
        label="Add rule"
        onTry={onTry}
        reset
        act={async (f) => {
          const input = {
            description: f.description ?? '',
            predefinedMatchArg: f.predefinedMatchArg,
            matchArg: f.predefinedMatchArg === 'custom-match' ? (f.matchArg ?? '') : null,
            versionType: f.versionType as 'tag' | 'branch',
            action: f.action,
            enabled: check(f, 'enabled'),
          };
          const r = await client.mutation(CreateRule, { project: slug, input }).toPromise();
          return problemOf(r.data?.createAutomationRule, r.error);
        }}
      >
        <div className="grid">
          <Select
            label="Versions"
            name="versionType"
            options={[
              { value: 'tag', label: 'Tags' },
              { value: 'branch', label: 'Branches' },
            ]}
            defaultValue="tag"
          />
          <Select label="Match" name="predefinedMatchArg" options={MATCHES} defaultValue="semver-versions" />
          <Field label="Regular expression (custom match)" name="matchArg" hint="For example ^release-. Searched in the tag or branch name." />
          <Select label="Action" name="action" options={ACTIONS} defaultValue="activate-version" />
          <Field label="Description" name="description" />
          <Check label="Enabled" name="enabled" checked />
        </div>
      </ActionForm>
    </details>
  );
}
