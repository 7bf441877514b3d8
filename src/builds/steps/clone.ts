// Step 1 of a build: the version's commit, cloned shallow in the sandbox (a tag's commit, or a pull
// request's head, fetched after), its hash recorded, and the version sync started beside the rest.
import { firewallExplanation, localGit, localRepositoryPath, resolveLocalRepository } from '../../domain/git.ts';
import { Aborted, type BuildRun, StepFailed } from '../run.ts';

export async function clone(r: BuildRun): Promise<void> {
  const { project, version } = r;
  const url = project.repositoryUrl;
  const isTagCommit = version.type === 'tag' && version.machine; // machine `stable` on a tag: identifier is a commit
  const ref = version.type === 'tag' && !version.machine ? version.verboseName : version.type === 'branch' ? version.identifier : null;
  // A repository on this machine (LECTERN_BUILD_LOCAL_REPOSITORIES), checked again now: its
  // directory is mounted read-only for the clone's commands only, which then have no network.
  const local = localRepositoryPath(url) === null ? null : resolveLocalRepository(url, r.limits.localRepositories);
  if (typeof local === 'string') throw new StepFailed(`Cloning failed: ${local}`);
  const how = local ? localGit(local) : null;
  const remote = local
    ? { network: false, readOnly: [local.dir], env: how!.env }
    : { network: true, explain: () => firewallExplanation(url, r.limits.networkAllow) };
  const options = how?.options ?? [];
  const clone = ['git', 'clone', ...options, '--depth', '1', '--no-tags', ...(ref ? ['--branch', ref] : []), '--', how?.url ?? url, r.checkout];
  await r.run('Cloning', 'git clone', clone, { cwd: r.workdir, ...remote });
  if (isTagCommit && version.identifier) {
    await r.run('Cloning', 'git fetch', ['git', 'fetch', ...options, '--depth', '1', 'origin', version.identifier], remote);
    await r.run('Cloning', 'git checkout', ['git', 'checkout', '--force', version.identifier]);
  }
  // A pull request's preview: its head, from the ref the forge keeps for it (pull/<n>/head,
  // merge-requests/<n>/head), as Read the Docs fetches it.
  const external = version.type === 'external' ? (version.externalSource as { ref?: unknown } | null) : null;
  if (external && typeof external.ref === 'string' && /^(pull|merge-requests)\/\d+\/head$/.test(external.ref)) {
    await r.run('Cloning', 'git fetch', ['git', 'fetch', ...options, '--depth', '1', 'origin', external.ref], remote);
    await r.run('Cloning', 'git checkout', ['git', 'checkout', '--force', 'FETCH_HEAD']);
  }
  const head = await r.runOwn('git rev-parse', ['git', 'rev-parse', 'HEAD']); // not shown, as Read the Docs hides it
  if (r.signal.aborted) throw new Aborted();
  const commit = /^[0-9a-f]{40,64}$/m.exec(head.output)?.[0];
  if (head.exitCode !== 0 || !commit)
    throw new StepFailed(`Cloning failed: the checked-out commit could not be read (git rev-parse HEAD exited with code ${head.exitCode}).`);
  await r.prisma.build.update({ where: { id: r.build.id }, data: { commit } });
  r.rtdEnv.READTHEDOCS_GIT_COMMIT_HASH = commit;
  r.commit = commit;
  // The branches and tags are read beside the build (their own sandbox, network and scratch), not before it.
  if (r.deps.syncVersions)
    r.syncing = r.deps.syncVersions(project.id, url).catch((e) => r.deps.log.warn({ err: (e as Error).message }, 'version sync after clone failed'));
}
