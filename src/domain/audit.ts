// The audit log (docs/design/audit.md): what happened, who did it, how they were known and from
// where. Written beside each action it records (in its transaction where it has one); read by site
// admins (everything) and by an organization's owners (its own entries, and the sign-ins and tokens
// of its members). Never holds a secret: a token is named by its prefix, a variable by its name.
import type { PrismaClient } from '../db/database.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import type { Client, Context } from './context.ts';

/** Every action the log records. */
export const AUDIT_ACTIONS = [
  'sign-in',
  'sign-in-failed',
  'sign-out',
  'token-created',
  'token-revoked',
  'token-refused',
  'organization-created',
  'organization-changed',
  'organization-deleted',
  'member-added',
  'member-removed',
  'member-role-changed',
  'invitation-created',
  'invitation-revoked',
  'team-created',
  'team-changed',
  'team-deleted',
  'team-member-added',
  'team-member-removed',
  'project-moved',
  'project-settings-changed',
  'build-limits-changed',
  'maintainer-added',
  'maintainer-removed',
  'variable-added',
  'variable-removed',
  'private-download',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Actions about a person rather than an organization's things: an organization's log shows its members' too. */
export const PERSONAL_ACTIONS: readonly AuditAction[] = ['sign-in', 'sign-in-failed', 'sign-out', 'token-created', 'token-revoked', 'token-refused'];

export interface AuditEntryInput {
  action: AuditAction;
  /** Who acted, when not the request's viewer (a failed sign-in names the account tried). */
  user?: { id: number | null; username: string } | null;
  organization?: { id: number; slug: string } | null;
  /** The project; its organization is taken from it when `organization` is not given. */
  project?: { id: number; slug: string; organizationId?: number | null } | null;
  method?: string;
  data?: Prisma.InputJsonObject;
}

type Db = PrismaClient | Prisma.TransactionClient;

/**
 * Drops entries older than the retention, and revoked tokens as old (kept only to record their
 * later use): the build worker's housekeeping does it, out of every request's way.
 */
export async function pruneAudit(db: Db, retentionDays: number): Promise<number> {
  const before = new Date(Date.now() - retentionDays * 86_400_000);
  const gone = await db.auditEntry.deleteMany({ where: { createdAt: { lt: before } } });
  await db.apiToken.deleteMany({ where: { revokedAt: { lt: before } } });
  return gone.count;
}

/** Writes one entry (the low level: for code that has no request context, such as token checks). */
export async function recordAudit(db: Db, entry: AuditEntryInput, client: Client | null): Promise<void> {
  // A project read without its organization (a served row) is looked up: its organization's owners read the entry.
  const ofProject =
    entry.project && entry.project.organizationId === undefined
      ? ((await db.project.findUnique({ where: { id: entry.project.id }, select: { organizationId: true } }))?.organizationId ?? null)
      : (entry.project?.organizationId ?? null);
  const organizationId = entry.organization?.id ?? ofProject;
  const organizationSlug = entry.organization?.slug ?? (organizationId ? await slugOf(db, organizationId) : '');
  await db.auditEntry.create({
    data: {
      action: entry.action,
      userId: entry.user?.id ?? null,
      username: entry.user?.username.slice(0, 150) ?? '',
      organizationId,
      organizationSlug,
      projectId: entry.project?.id ?? null,
      projectSlug: entry.project?.slug ?? '',
      method: entry.method ?? '',
      ip: client?.ip.slice(0, 64) ?? '',
      userAgent: client?.userAgent.slice(0, 255) ?? '',
      data: entry.data ?? {},
    },
  });
}

const slugOf = async (db: Db, id: number) => (await db.organization.findUnique({ where: { id }, select: { slug: true } }))?.slug ?? '';

/** How the request's viewer was known. */
const methodOf = (ctx: Context) => (ctx.viewer ? (ctx.session?.id ? 'session' : 'token') : '');

/** Writes one entry for the request: its viewer (unless another user is named) and where it came from. */
export async function audit(ctx: Context, entry: AuditEntryInput, db: Db = ctx.prisma): Promise<void> {
  const user = entry.user !== undefined ? entry.user : ctx.viewer && { id: ctx.viewer.id, username: ctx.viewer.username };
  await recordAudit(db, { ...entry, user, method: entry.method ?? methodOf(ctx) }, ctx.client);
}

export interface AuditFilter {
  action?: string | null;
  username?: string | null;
  project?: string | null;
  since?: Date | null;
  until?: Date | null;
}

/**
 * The entries a log shows, newest first: the site's (every one) or an organization's (its own, and
 * the personal actions of its present members).
 */
export function auditWhere(scope: { organizationId: number; memberIds: number[] } | 'site', f: AuditFilter): Prisma.AuditEntryWhereInput {
  const inScope: Prisma.AuditEntryWhereInput =
    scope === 'site'
      ? {}
      : {
          OR: [{ organizationId: scope.organizationId }, { organizationId: null, action: { in: [...PERSONAL_ACTIONS] }, userId: { in: scope.memberIds } }],
        };
  return {
    AND: [
      inScope,
      f.action ? { action: f.action } : {},
      f.username ? { username: f.username } : {},
      f.project ? { projectSlug: f.project } : {},
      f.since ? { createdAt: { gte: f.since } } : {},
      f.until ? { createdAt: { lt: f.until } } : {},
    ],
  };
}
