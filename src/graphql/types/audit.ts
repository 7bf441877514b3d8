// The audit log (docs/design/audit.md): the site's, for site admins, and each organization's, for
// its owners; newest first, filtered by action, person, project and time.
import { queryFromInfo } from '@pothos/plugin-prisma';
import { AUDIT_ACTIONS, type AuditFilter, auditWhere } from '../../domain/audit.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { builder } from '../builder.ts';
import type { Context } from '../context.ts';
import { ValidationError } from '../errors.ts';
import { type PageArgs, pageComplexity, pageOf, window } from './common.ts';
import { Organization } from './organization.ts';

export const AuditEntry = builder.prismaObject('AuditEntry', {
  description: 'One thing that happened: who did it, how they were known and from where. Never holds a secret.',
  fields: (t) => ({
    id: t.exposeInt('id'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    action: t.exposeString('action', { description: `One of: ${AUDIT_ACTIONS.join(', ')}.` }),
    username: t.exposeString('username', { description: 'Who acted, or the name a failed sign-in tried; empty when nobody was signed in.' }),
    organization: t.exposeString('organizationSlug', { description: 'The organization concerned (its slug as it was); empty for none.' }),
    project: t.exposeString('projectSlug', { description: 'The project concerned (its slug as it was); empty for none.' }),
    method: t.exposeString('method', { description: 'How the actor was known: password, session, token or sso.' }),
    ip: t.exposeString('ip'),
    userAgent: t.exposeString('userAgent'),
    data: t.expose('data', { type: 'JSON', description: 'What changed: names of fields, the member or team, a token by its first characters.' }),
  }),
});

const AuditEntryPage = pageOf<Prisma.AuditEntryGetPayload<object>>('AuditEntryPage', AuditEntry);

const AuditFilterInput = builder.inputType('AuditFilter', {
  fields: (t) => ({
    action: t.string(),
    username: t.string(),
    project: t.string({ description: 'A project slug.' }),
    since: t.field({ type: 'DateTime' }),
    until: t.field({ type: 'DateTime' }),
  }),
});

function checkFilter(f: AuditFilter): AuditFilter {
  if (f.action && !(AUDIT_ACTIONS as readonly string[]).includes(f.action))
    throw ValidationError.field('filter.action', `"${f.action}" is not a valid choice.`);
  return f;
}

/** A page of the log's entries within `scope`, newest first. */
function auditPage(ctx: Context, info: Parameters<typeof queryFromInfo>[0]['info'], where: Prisma.AuditEntryWhereInput, args: PageArgs) {
  const { take, skip } = window(args, ctx);
  return {
    nodes: ctx.prisma.auditEntry.findMany({
      ...(queryFromInfo({ context: ctx, info, path: ['nodes'] }) as object),
      where,
      orderBy: { id: 'desc' },
      take,
      skip,
    }),
    totalCount: () => ctx.prisma.auditEntry.count({ where }),
  };
}

builder.queryFields((t) => ({
  auditLog: t.field({
    authScopes: { siteAdmin: true },
    type: AuditEntryPage,
    description: "The site's audit log (site admins), newest first.",
    args: { filter: t.arg({ type: AuditFilterInput }), limit: t.arg.int(), offset: t.arg.int() },
    complexity: pageComplexity,
    resolve: (_root, args, ctx, info) => auditPage(ctx, info, auditWhere('site', checkFilter(args.filter ?? {})), args),
  }),
}));

builder.prismaObjectFields(Organization, (t) => ({
  auditLog: t.field({
    type: AuditEntryPage,
    authScopes: (org) => ({ ownerOfOrganization: org.slug }),
    description: "The organization's audit log (owners), newest first: its own entries, and the sign-ins and tokens of its members.",
    args: { filter: t.arg({ type: AuditFilterInput }), limit: t.arg.int(), offset: t.arg.int() },
    complexity: pageComplexity,
    resolve: async (org, args, ctx, info) => {
      const filter = checkFilter(args.filter ?? {});
      const members = await ctx.prisma.organizationMember.findMany({ where: { organizationId: org.id }, select: { userId: true } });
      return auditPage(ctx, info, auditWhere({ organizationId: org.id, memberIds: members.map((m) => m.userId) }, filter), args);
    },
  }),
}));
