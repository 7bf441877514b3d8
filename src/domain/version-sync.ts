// Keeps a project's versions in step with its repository's branches and tags, and maintains the
// machine-managed `latest` and `stable` (docs/design/read-the-docs.md §4.2). The refs come from `git ls-remote`,
// read by a worker, from a queued sync job (sync-versions, webhooks) or beside a build after its
// clone; this file decides and writes, and queues the job.
import { explain, rcompare } from '@renovatebot/pep440';
import type { Prisma, Project, Version } from '../generated/prisma/client.ts';
import { queueVersionSync } from '../queue/version-syncs.ts';
import { projectToChange } from './access.ts';
import { applyAutomationRules } from './automation-rules.ts';
import { announceBuild, queueBuild } from './builds.ts';
import type { Context, Services } from './context.ts';
import { lsRemote, type RemoteRefs } from './git.ts';
import { versionSlug } from './slug.ts';

type Tx = Prisma.TransactionClient;
const MACHINE = new Set(['latest', 'stable']);

/** The version `stable` should point to: the highest final PEP 440 release, tags before branches. */
export function stableCandidate<V extends { verboseName: string; type: string }>(versions: V[]): V | null {
  const parse = (name: string) => {
    const normalized = name.replace(/^v/i, '').replace(/\.x$/i, '.999999');
    const info = explain(normalized);
    return info && !info.is_prerelease ? normalized : null;
  };
  const pick = (type: string) =>
    versions
      .filter((v) => v.type === type)
      .map((v) => ({ v, key: parse(v.verboseName) }))
      .filter((x): x is { v: V; key: string } => x.key !== null)
      .sort((a, b) => rcompare(a.key, b.key))[0]?.v ?? null;
  return pick('tag') ?? pick('branch');
}

export interface SyncResult {
  added: string[];
  removed: string[];
  /** Versions that should be built now (a newly promoted `stable`). */
  toBuild: Version[];
}

/** Brings the versions of `projectId` in line with `refs`, in one transaction. */
export async function applyRefs(tx: Tx, projectId: number, refs: RemoteRefs): Promise<SyncResult> {
  const project = await tx.project.findUniqueOrThrow({ where: { id: projectId } });
  const existing = await tx.version.findMany({ where: { projectId, type: { not: 'external' } } });
  const result: SyncResult = { added: [], removed: [], toBuild: [] };
  const { added, seen } = await matchRefs(tx, project, refs, existing, result);
  const gone = await retireUnseen(tx, existing, seen, result);

  // The project's automation rules, on what this sync added and on active versions now gone.
  const applied = await applyAutomationRules(tx, projectId, added, gone);
  result.toBuild.push(...applied.toBuild);
  result.removed.push(...applied.deleted);

  await followHead(tx, project, refs, existing);
  await promoteStable(tx, project, existing, result);
  return result;
}

/**
 * Each remote branch and tag, matched to its version (updated where it moved) or made one (inactive,
 * as private as its project: a private project's new branch is never public). `existing` gains the
 * versions made; `seen` holds every version a ref matched or made.
 */
async function matchRefs(tx: Tx, project: Pick<Project, 'id' | 'privacyLevel'>, refs: RemoteRefs, existing: Version[], result: SyncResult) {
  const remote = [
    ...refs.branches.map((b) => ({ name: b.name, identifier: b.name, type: 'branch' as const })),
    ...refs.tags.map((t) => ({ name: t.name, identifier: t.commit, type: 'tag' as const })),
  ];
  const added: Version[] = [];
  const taken = new Set(existing.map((v) => v.slug));
  const seen = new Set<number>();
  for (const ref of remote) {
    const lower = ref.name.toLowerCase();
    // A branch or tag literally named latest/stable takes over that slug from the machine.
    const match =
      existing.find((v) => !v.machine && v.verboseName === ref.name && v.type === ref.type) ??
      (MACHINE.has(lower) ? existing.find((v) => v.slug === lower) : undefined);
    if (match) {
      seen.add(match.id);
      if (match.identifier !== ref.identifier || match.machine || match.type !== ref.type) {
        await tx.version.update({
          where: { id: match.id },
          data: { identifier: ref.identifier, machine: false, type: ref.type, verboseName: ref.name },
        });
      }
      continue;
    }
    const slug = versionSlug(ref.name, taken);
    taken.add(slug);
    const created = await tx.version.create({
      data: {
        projectId: project.id,
        slug,
        verboseName: ref.name,
        identifier: ref.identifier,
        type: ref.type,
        active: false,
        privacyLevel: project.privacyLevel,
      },
    });
    existing.push(created);
    added.push(created);
    seen.add(created.id);
    result.added.push(slug);
  }
  return { added, seen };
}

/**
 * The versions no ref matched: a user's latest/stable goes back to the machine, an inactive one is
 * deleted; the active ones are returned (gone from the repository, for the automation rules).
 */
async function retireUnseen(tx: Tx, existing: Version[], seen: Set<number>, result: SyncResult): Promise<Version[]> {
  const gone: Version[] = [];
  for (const v of existing) {
    if (seen.has(v.id)) continue;
    if (!v.machine && MACHINE.has(v.slug)) {
      // The user's latest/stable branch is gone: Lectern manages the slug again.
      await tx.version.update({ where: { id: v.id }, data: { machine: true } });
      v.machine = true;
      continue;
    }
    if (!v.machine && !v.active) {
      await tx.version.delete({ where: { id: v.id } });
      result.removed.push(v.slug);
    } else if (!v.machine) gone.push(v);
  }
  return gone;
}

/** The repository's default branch kept, and Lectern's `latest` pointed at the project's default branch (or that one). */
async function followHead(tx: Tx, project: Pick<Project, 'id' | 'repositoryHead' | 'defaultBranch'>, refs: RemoteRefs, existing: Version[]) {
  // The repository's own default branch, kept for the settings page (`master` is only Read the Docs' answer when nothing is known).
  if (refs.head && project.repositoryHead !== refs.head) await tx.project.update({ where: { id: project.id }, data: { repositoryHead: refs.head } });
  const latest = existing.find((v) => v.slug === 'latest');
  const head = project.defaultBranch ?? refs.head;
  if (latest?.machine && head && latest.identifier !== head) {
    await tx.version.update({ where: { id: latest.id }, data: { identifier: head, type: 'branch' } });
  }
}

/** Lectern's `stable` made, or moved, to the highest version; a new or moved active one is to be built. */
async function promoteStable(tx: Tx, project: Pick<Project, 'id' | 'privacyLevel'>, existing: Version[], result: SyncResult) {
  const current = await tx.version.findMany({ where: { projectId: project.id, type: { not: 'external' }, machine: false } });
  const candidate = stableCandidate(current.filter((v) => !MACHINE.has(v.slug)));
  const stable = existing.find((v) => v.slug === 'stable' && result.removed.indexOf(v.slug) < 0);
  if (!candidate) return;
  if (!stable) {
    const created = await tx.version.create({
      data: {
        projectId: project.id,
        slug: 'stable',
        verboseName: 'stable',
        machine: true,
        active: true,
        type: candidate.type,
        identifier: candidate.identifier,
        privacyLevel: project.privacyLevel,
      },
    });
    result.added.push('stable');
    result.toBuild.push(created);
  } else if (stable.machine && (stable.identifier !== candidate.identifier || stable.type !== candidate.type)) {
    const moved = await tx.version.update({ where: { id: stable.id }, data: { identifier: candidate.identifier, type: candidate.type } });
    if (moved.active) result.toBuild.push(moved);
  }
}

/**
 * Reads the remote's refs and syncs; queues builds of a newly promoted `stable` and of versions an
 * automation rule activated. The files of versions removed go from `storage` once the sync commits.
 */
export async function syncProjectVersions(
  ctx: Pick<Services, 'prisma' | 'config' | 'events'> & Partial<Pick<Services, 'storage'>>,
  projectId: number,
  repositoryUrl: string,
): Promise<SyncResult> {
  const refs = await lsRemote(ctx.config, repositoryUrl);
  const { result, builds } = await ctx.prisma.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT id FROM "Project" WHERE id = ${projectId} FOR UPDATE`;
    const result = await applyRefs(tx, projectId, refs);
    const builds = [];
    for (const v of result.toBuild) builds.push(await queueBuild(tx, ctx.events, v));
    return { result, builds };
  });
  for (const b of builds) announceBuild(ctx.events, b);
  ctx.events.emit('servedChanged', { projectId });
  if (ctx.storage && result.removed.length) {
    const { slug } = await ctx.prisma.project.findUniqueOrThrow({ where: { id: projectId }, select: { slug: true } });
    for (const v of result.removed) await ctx.storage.deletePrefix(`projects/${slug}/${encodeURIComponent(v)}/`);
  }
  return result;
}

/**
 * Queues a sync of the project's versions, run by a worker (src/queue/version-syncs.ts);
 * false, and nothing queued, when the project has no `latest` to sync from, as Read the Docs'
 * `trigger_sync_versions` answers (docs/design/read-the-docs.md §2.4, §6.4). True means queued, not done.
 */
export async function queueProjectVersionSync(ctx: Pick<Services, 'prisma' | 'events'>, projectId: number): Promise<boolean> {
  const hasLatest = await ctx.prisma.version.count({ where: { projectId, slug: 'latest', project: { uploadOnly: false } } });
  if (!hasLatest) return false;
  await queueVersionSync(ctx.prisma, ctx.events, projectId);
  return true;
}

/** sync-versions: queues a sync and answers at once, as Read the Docs does. */
export async function requestVersionSync(ctx: Context, projectSlug: string): Promise<boolean> {
  const project = await projectToChange(ctx, projectSlug);
  return queueProjectVersionSync(ctx, project.id);
}
