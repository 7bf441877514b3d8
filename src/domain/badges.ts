// A project's build status badge, as Read the Docs answers it (docs/design/badges.md): passing or
// failing by the newest finished build of a version, unknown for anything the caller may not see.
// A private version needs the project's badge token, which only its maintainers are shown.
import { visibleVersions } from './access.ts';
import { CANCELLED_PREFIX } from './builds.ts';
import type { Services } from './context.ts';

export type BadgeStatus = 'passing' | 'failing' | 'unknown';

const PURPOSE = 'badge';

/** The project's badge token: a MAC of its id under the installation's secret key (it changes only with the key). */
export function badgeToken(services: Pick<Services, 'cipher'>, projectId: number): string {
  return services.cipher.mac(PURPOSE, String(projectId));
}

/**
 * The status of `versionSlug` of `projectSlug`. Without a token, only a version anyone may read
 * (public project and version, active) has one; with a token, any version of the project whose
 * token it is, and no version at all when it is not that project's (a wrong token is `unknown`,
 * never a fallback to the public answer, as Read the Docs answers). The status is the newest
 * finished build's, cancelled ones left out; `unknown` when there is none.
 */
export async function badgeStatus(
  services: Pick<Services, 'prisma' | 'cipher'>,
  projectSlug: string,
  versionSlug: string,
  token: string | undefined,
): Promise<BadgeStatus> {
  const { prisma } = services;
  const version = token
    ? await prisma.version.findFirst({ where: { slug: versionSlug, project: { slug: projectSlug } }, select: { id: true, projectId: true } })
    : await prisma.version.findFirst({
        where: { AND: [visibleVersions(null), { slug: versionSlug, active: true, project: { slug: projectSlug } }] },
        select: { id: true, projectId: true },
      });
  if (!version) return 'unknown';
  if (token && !services.cipher.verifyMac(PURPOSE, String(version.projectId), token)) return 'unknown';
  const build = await prisma.build.findFirst({
    // (A successful build has no error: NOT alone would leave it out, as SQL's NOT of NULL is NULL.)
    where: { versionId: version.id, state: 'finished', OR: [{ error: null }, { NOT: { error: { startsWith: CANCELLED_PREFIX } } }] },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    select: { success: true },
  });
  if (!build) return 'unknown';
  return build.success ? 'passing' : 'failing';
}
