// A build's page: its commands and their output, followed live (subscription buildUpdated over
// SSE) while it runs, on whichever process runs it; a maintainer cancels it from here. Output is
// shown with its terminal colours (../ansi.ts), each command with how long it ran and how it ended,
// and the whole log is a link away as text (REST v2's build log, `/api/v2/build/<id>.txt`).
import { useEffect, useState } from 'react';
import { useClient, useQuery, useSubscription } from 'urql';
import { Link } from 'wouter';
import { ansiRuns } from '../ansi.ts';
import { type FragmentOf, graphql, type ResultOf, readFragment } from '../graphql.ts';
import { shownCommand } from '../shell.ts';
import { ActButton, buildOutcome, Failure, Loading, NotFound, type Problem, ProblemText, problemOf, StateBadge, seconds, Time } from '../ui.tsx';

/** The build's facts (its version, commit, start and duration). */
const BuildFactsFields = graphql(`
  fragment BuildFacts on Build { id state success message versionSlug commit createdAt startedAt duration }
`);
/** A command as the log shows it (its output folded in from the subscription while it runs). */
const BuildCommandFields = graphql(`
  fragment BuildCommand on BuildCommand { id command description output exitCode startTime endTime runTime }
`);
const BuildQuery = graphql(
  `
  query BuildPage($slug: String!, $id: Int!) {
    viewer { id username isAdmin } setupNeeded
    project(slug: $slug) {
      id slug name viewerIsMaintainer
      build(id: $id) {
        id state success startedAt finishedAt error message ...BuildFacts
        commands { id ...BuildCommand }
      }
    }
  }
`,
  [BuildFactsFields, BuildCommandFields],
);

const Follow = graphql(`
  subscription FollowBuild($id: Int!) {
    buildUpdated(id: $id) {
      kind output outputOffset
      build { id state success error message duration finishedAt commit }
      command { id command description exitCode startTime endTime runTime }
    }
  }
`);

const Cancel = graphql(`
  mutation CancelBuild($project: String!, $id: Int!) {
    cancelBuild(project: $project, id: $id) {
      __typename
      ... on MutationCancelBuildSuccess { data { id state success error message duration finishedAt } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);

type Command = ResultOf<typeof BuildCommandFields>;

/** Output with its colours: each run of text a span with its classes (text, never HTML). */
function Output({ text }: { text: string }) {
  const runs = ansiRuns(text);
  return (
    <pre className="output">
      {runs.map((r, i) =>
        r.classes.length ? (
          // biome-ignore lint/suspicious/noArrayIndexKey: runs have no identity beyond their place
          <span key={i} className={r.classes.join(' ')}>
            {r.text}
          </span>
        ) : (
          r.text
        ),
      )}
    </pre>
  );
}

/** How a command ended: its exit status, still running, or cut short when the build ended without it finishing. */
function CommandStatus({ c, buildRunning }: { c: Command; buildRunning: boolean }) {
  if (c.exitCode === null)
    return buildRunning ? <span className="badge badge-running">running</span> : <span className="badge badge-failed">did not finish</span>;
  return c.exitCode === 0 ? <span className="badge badge-passed">exit 0</span> : <span className="badge badge-failed">exit {c.exitCode}</span>;
}

/** Seconds since `iso`, again each second while `live`. */
function useElapsed(iso: string | null, live: boolean): number | null {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!live) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [live]);
  return iso ? Math.max(0, Math.round((now - new Date(iso).getTime()) / 1000)) : null;
}

function CommandDuration({ c, buildRunning }: { c: Command; buildRunning: boolean }) {
  const live = c.exitCode === null && buildRunning;
  const elapsed = useElapsed(c.startTime, live);
  if (c.runTime != null) return <span className="muted">{seconds(c.runTime)}</span>;
  if (live) return <span className="muted">{seconds(elapsed)} so far</span>;
  return null;
}

type Build = NonNullable<NonNullable<ResultOf<typeof BuildQuery>['project']>['build']>;

/**
 * The build's commands as shown: read with the build, each update of the subscription folded in
 * while it runs, and read once more as stored when it ends (null until the build is read).
 */
function useCommands(build: Build | null | undefined, running: boolean, slug: string, id: number) {
  const [commands, setCommands] = useState<Command[] | null>(null);
  const client = useClient();

  useEffect(() => {
    if (build && commands === null) setCommands(build.commands.map((c) => ({ ...readFragment(BuildCommandFields, c) })));
  }, [build, commands]);

  // When the build ends, its commands are read once more as stored: the last updates of a command
  // may come after the build's own (then the subscription has stopped), and no command is left
  // looking as if it still ran.
  const [wasRunning, setWasRunning] = useState(running);
  useEffect(() => {
    if (wasRunning && !running) {
      client
        .query(BuildQuery, { slug, id }, { requestPolicy: 'network-only' })
        .toPromise()
        .then((r) => {
          const stored = r.data?.project?.build?.commands;
          if (stored) setCommands(stored.map((c) => ({ ...readFragment(BuildCommandFields, c) })));
        });
    }
    setWasRunning(running);
  }, [running, wasRunning, client, slug, id]);

  // Each update is folded into the commands shown; the build's own fields update in the cache.
  useSubscription({ query: Follow, variables: { id }, pause: !running }, (_prev, update) => {
    const u = update.buildUpdated;
    const c = u.command;
    if (c) {
      setCommands((list) => {
        const all = [...(list ?? [])];
        let at = all.findIndex((x) => x.id === c.id);
        if (at < 0) {
          all.push({ ...c, output: '', exitCode: null, endTime: null, runTime: null });
          at = all.length - 1;
        }
        const was = all[at]!;
        const kept = u.outputOffset != null ? was.output.slice(0, u.outputOffset) : was.output;
        all[at] = {
          ...was,
          exitCode: c.exitCode ?? null,
          startTime: c.startTime,
          endTime: c.endTime ?? null,
          runTime: c.runTime ?? null,
          output: u.output != null ? kept + u.output : was.output,
        };
        return all;
      });
    }
    return update;
  });
  return commands;
}

export function BuildPage({ slug, id }: { slug: string; id: number }) {
  const [{ data, fetching, error }] = useQuery({ query: BuildQuery, variables: { slug, id }, requestPolicy: 'cache-and-network' });
  const build = data?.project?.build;
  const running = build ? build.state !== 'finished' : false;
  const commands = useCommands(build, running, slug, id);
  const [problem, setProblem] = useState<Problem | null>(null);
  const client = useClient();
  const elapsed = useElapsed(build?.startedAt ?? null, running);

  if (fetching && !data) return <Loading what="the build" />;
  if (error && !data) return <Failure error={error} />;
  if (!data?.project || !build) return <NotFound what={`There is no build #${id} of "${slug}" that you can see.`} />;
  const shown = commands ?? build.commands.map((c) => readFragment(BuildCommandFields, c));
  return (
    <section className="build">
      <p>
        <Link href={`/projects/${slug}/builds`}>← {data.project.name}: builds</Link>
      </p>
      <div className="title-row">
        <h1>
          Build #{build.id} <StateBadge {...build} />
        </h1>
        {running && data.project.viewerIsMaintainer && (
          <ActButton
            danger
            act={async () => {
              const r = await client.mutation(Cancel, { project: slug, id }).toPromise();
              return problemOf(r.data?.cancelBuild, r.error);
            }}
            report={setProblem}
          >
            Cancel build
          </ActButton>
        )}
      </div>
      <ProblemText problem={problem} />
      <BuildFacts build={build} running={running} elapsed={elapsed} />
      {build.error && (
        <p className="error" role="alert">
          {build.error}
        </p>
      )}
      {build.message && (
        <p className="notice" role="status">
          {build.message}
        </p>
      )}
      <h2>Commands</h2>
      <div aria-live="polite" aria-busy={running} className="log">
        {shown.length === 0 && <p>{running ? 'Waiting for the first command…' : 'No commands ran.'}</p>}
        {shown.map((c) => (
          <details key={c.id} open={running || c.exitCode !== 0 || shown[shown.length - 1]?.id === c.id}>
            <summary>
              <code>{shownCommand(c.command)}</code> <CommandStatus c={c} buildRunning={running} /> <CommandDuration c={c} buildRunning={running} />
            </summary>
            <Output text={c.output} />
          </details>
        ))}
      </div>
    </section>
  );
}

/** The build's version, commit, start, duration (so far, while it runs) and a link to its log as text. */
function BuildFacts({ running, elapsed, ...props }: { build: FragmentOf<typeof BuildFactsFields>; running: boolean; elapsed: number | null }) {
  const build = readFragment(BuildFactsFields, props.build);
  const outcome = buildOutcome(build);
  return (
    <dl className="facts">
      <dt>Version</dt>
      <dd>{build.versionSlug ?? '—'}</dd>
      <dt>Commit</dt>
      <dd>
        <code className="commit">{build.commit ?? '—'}</code>
      </dd>
      <dt>Started</dt>
      <dd>
        <Time iso={build.startedAt ?? build.createdAt} />
      </dd>
      <dt>Duration</dt>
      <dd>{outcome === 'skipped' ? 'nothing was built' : running ? `${seconds(elapsed)} so far` : seconds(build.duration)}</dd>
      <dt>Raw log</dt>
      <dd>
        <a href={`/api/v2/build/${build.id}.txt`}>Build #{build.id} as text</a>
      </dd>
    </dl>
  );
}
