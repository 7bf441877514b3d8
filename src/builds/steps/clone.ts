// Step 1 of a build: the version's commit, cloned shallow in the sandbox (a tag's commit, or a pull
// request's head, fetched after), its hash recorded, and the version sync started beside the rest.
import { firewallExplanation, localGit, localRepositoryPath, resolveLocalRepository } from '../../domain/git.ts';
import { readRepositoryFile } from '../config.ts';
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
  const commit = (await headOfClone(r.checkout)) ?? (await revParse(r));
  await r.prisma.build.update({ where: { id: r.build.id }, data: { commit } });
  r.rtdEnv.READTHEDOCS_GIT_COMMIT_HASH = commit;
  r.commit = commit;
  // The branches and tags are read beside the build (their own sandbox, network and scratch), not before it.
  if (r.deps.syncVersions)
    r.syncing = r.deps.syncVersions(project.id, url).catch((e) => r.deps.log.warn({ err: (e as Error).message }, 'version sync after clone failed'));
}

const COMMIT = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/**
 * The commit the fresh clone checked out, read from its .git as the configuration file is read
 * (no link followed out of the checkout): HEAD, and the branch file it names. Null when it is
 * anything else (a packed ref, say): then git is asked, in the sandbox. No command of the
 * project's has run yet; this saves one sandbox (about a tenth of a second) per build.
 */
async function headOfClone(checkout: string): Promise<string | null> {
  try {
    const head = (await readRepositoryFile(checkout, '.git/HEAD', 4096)).trim();
    if (COMMIT.test(head)) return head;
    const ref = /^ref: (refs\/heads\/[\w./-]+)$/.exec(head)?.[1];
    if (!ref || ref.split('/').includes('..')) return null;
    const commit = (await readRepositoryFile(checkout, `.git/${ref}`, 4096)).trim();
    return COMMIT.test(commit) ? commit : null;
  } catch {
    return null;
  }
}

/** `git rev-parse HEAD` in the sandbox, not shown in the log (Read the Docs hides it too). */
async function revParse(r: BuildRun): Promise<string> {
  const head = await r.runOwn('git rev-parse', ['git', 'rev-parse', 'HEAD']);
  if (r.signal.aborted) throw new Aborted();
  const commit = /^[0-9a-f]{40,64}$/m.exec(head.output)?.[0];
  if (head.exitCode !== 0 || !commit)
    throw new StepFailed(`Cloning failed: the checked-out commit could not be read (git rev-parse HEAD exited with code ${head.exitCode}).`);
  return commit;
}
