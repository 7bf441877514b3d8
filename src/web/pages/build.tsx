// A build's page: its commands and their output, followed live (subscription buildUpdated over
// SSE) while it runs, on whichever process runs it; a maintainer cancels it from here.
import { useEffect, useState } from 'react';
import { useClient, useQuery, useSubscription } from 'urql';
import { Link } from 'wouter';
import { graphql } from '../graphql.ts';
import { Failure, Loading, NotFound, type Problem, ProblemText, problemOf, StateBadge, when } from '../ui.tsx';

const BuildQuery = graphql(`
  query BuildPage($slug: String!, $id: Int!) {
    viewer { id username isAdmin } setupNeeded
    project(slug: $slug) {
      id slug name viewerIsMaintainer
      build(id: $id) {
        id state success versionSlug commit createdAt startedAt finishedAt duration error message
        commands { id command description output exitCode startTime endTime runTime }
      }
    }
  }
`);

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
      ... on MutationCancelBuildSuccess { data { id state success error } }
      ... on Error { message }
      ... on ValidationError { fieldErrors { field messages } }
    }
  }
`);

interface Command {
  id: number;
  command: string;
  description: string;
  output: string;
  exitCode: number | null;
}

export function BuildPage({ slug, id }: { slug: string; id: number }) {
  const [{ data, fetching, error }] = useQuery({ query: BuildQuery, variables: { slug, id }, requestPolicy: 'cache-and-network' });
  const build = data?.project?.build;
  const running = build ? build.state !== 'finished' : false;
  const [commands, setCommands] = useState<Command[] | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const client = useClient();

  useEffect(() => {
    if (build && commands === null) setCommands(build.commands.map((c) => ({ ...c })));
  }, [build, commands]);

  // Each update is folded into the commands shown; the build's own fields update in the cache.
  useSubscription({ query: Follow, variables: { id }, pause: !running }, (_prev, update) => {
    const u = update.buildUpdated;
    const c = u.command;
    if (c) {
      setCommands((list) => {
        const all = [...(list ?? [])];
        let at = all.findIndex((x) => x.id === c.id);
        if (at < 0) {
          all.push({ id: c.id, command: c.command, description: c.description, output: '', exitCode: null });
          at = all.length - 1;
        }
        const was = all[at]!;
        const kept = u.outputOffset != null ? was.output.slice(0, u.outputOffset) : was.output;
        all[at] = { ...was, exitCode: c.exitCode ?? null, output: u.output != null ? kept + u.output : was.output };
        return all;
      });
    }
    return update;
  });

  if (fetching && !data) return <Loading what="the build" />;
  if (error && !data) return <Failure error={error} />;
  if (!data?.project || !build) return <NotFound what={`There is no build #${id} of "${slug}" that you can see.`} />;
  const shown = commands ?? build.commands;
  return (
    <section>
      <p>
        <Link href={`/projects/${slug}/builds`}>← {data.project.name}: builds</Link>
      </p>
      <div className="title-row">
        <h1>
          Build #{build.id} <StateBadge state={build.state} success={build.success} />
        </h1>
        {running && data.project.viewerIsMaintainer && (
          <button
            type="button"
            className="danger"
            onClick={async () => {
              const r = await client.mutation(Cancel, { project: slug, id }).toPromise();
              setProblem(problemOf(r.data?.cancelBuild, r.error));
            }}
          >
            Cancel build
          </button>
        )}
      </div>
      <ProblemText problem={problem} />
      <dl className="facts">
        <dt>Version</dt>
        <dd>{build.versionSlug ?? '—'}</dd>
        <dt>Commit</dt>
        <dd>
          <code>{build.commit ?? '—'}</code>
        </dd>
        <dt>Started</dt>
        <dd>{when(build.startedAt ?? build.createdAt)}</dd>
        <dt>Duration</dt>
        <dd>{build.duration != null ? `${build.duration} s` : running ? 'running' : '—'}</dd>
      </dl>
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
              <code>{c.command}</code>{' '}
              {c.exitCode === null ? (
                <span className="badge">running</span>
              ) : c.exitCode === 0 ? (
                <span className="badge badge-passed">exit 0</span>
              ) : (
                <span className="badge badge-failed">exit {c.exitCode}</span>
              )}
            </summary>
            <pre className="output">{c.output}</pre>
          </details>
        ))}
      </div>
    </section>
  );
}
