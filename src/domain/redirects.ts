// Redirect rules: the seed's five types with its required-field table, Read the Docs' wildcard
// checks, normalization and ordering by position (rtd-behavior §5.7, decisions §1).
import type { Prisma, RedirectType } from '../generated/prisma/client.ts';
import type { Context } from '../graphql/context.ts';
import { NotFoundError, ValidationError } from '../graphql/errors.ts';
import { prisma } from '../services.ts';
import { requireMaintainedProject } from './access.ts';
import { Collector, invalidChoice, maxLength, required } from './validate.ts';

export const REDIRECT_TYPES: ReadonlySet<string> = new Set(['prefix', 'page', 'exact', 'sphinx_html', 'sphinx_htmldir']);
export const REDIRECT_LIMIT = 100;
const URL_MAX = 2048;

export interface RedirectInput {
  type?: RedirectType | null;
  fromUrl?: string | null;
  toUrl?: string | null;
  httpStatus?: number | null;
  position?: number | null;
  enabled?: boolean | null;
  force?: boolean | null;
  description?: string | null;
}

const needs: Record<RedirectType, { from: boolean; to: boolean }> = {
  prefix: { from: true, to: false },
  page: { from: true, to: true },
  exact: { from: true, to: true },
  sphinx_html: { from: false, to: false },
  sphinx_htmldir: { from: false, to: false },
};
const isCleanUrlType = (t: RedirectType) => t === 'sphinx_html' || t === 'sphinx_htmldir';

/** As Redirect.save normalizes: one leading `/`, no trailing `/`; absolute targets kept. */
export function normalizeRedirect(type: RedirectType, fromUrl: string, toUrl: string) {
  if (isCleanUrlType(type)) return { fromUrl: '', toUrl: '' };
  const from = fromUrl ? `/${fromUrl.replace(/^\/+/, '').replace(/\/+$/, '')}` : '';
  const to = !toUrl || /^https?:\/\//i.test(toUrl) ? toUrl : `/${toUrl.replace(/^\/+/, '')}`;
  return { fromUrl: from, toUrl: to };
}

function checkFields(input: RedirectInput, partial: boolean): RedirectType | undefined {
  const c = new Collector();
  const type = input.type;
  if (type === undefined || type === null) {
    if (!partial) c.add('type', required);
  } else if (!REDIRECT_TYPES.has(type)) c.add('type', invalidChoice(type));
  for (const [field, value] of [['fromUrl', input.fromUrl], ['toUrl', input.toUrl]] as const) {
    if (value != null && value.length > URL_MAX) c.add(field, maxLength(URL_MAX));
  }
  if (input.description != null && input.description.length > 255) c.add('description', maxLength(255));
  if (input.httpStatus != null && input.httpStatus !== 301 && input.httpStatus !== 302) c.add('httpStatus', invalidChoice(input.httpStatus));
  c.throwIfAny();
  return type ?? undefined;
}

/** The rules that depend on the type and on the project's other redirects. */
async function checkRules(projectId: number, type: RedirectType, fromUrl: string, toUrl: string, selfId?: number) {
  const c = new Collector();
  if (needs[type].from && !fromUrl) c.add('fromUrl', required);
  if (needs[type].to && !toUrl) c.add('toUrl', required);
  c.throwIfAny();
  const rule = (m: string) => ValidationError.field('nonFieldErrors', m);
  if (type === 'page' || type === 'exact') {
    if (fromUrl.endsWith('$rest')) throw rule('The $rest wildcard has been removed in favor of *.');
    if (fromUrl.includes('*') && fromUrl.indexOf('*') !== fromUrl.length - 1) throw rule('The * wildcard must be at the end of the path.');
    if (toUrl.includes(':splat') && !fromUrl.endsWith('*')) {
      throw rule('The * wildcard must be at the end of from_url to use the :splat placeholder in to_url.');
    }
  }
  if (isCleanUrlType(type)) {
    const other = await prisma().redirect.findFirst({ where: { projectId, type, ...(selfId ? { id: { not: selfId } } : {}) }, select: { id: true } });
    if (other) throw rule(`Only one redirect of type \`${type}\` is allowed per project.`);
  }
}

export async function createRedirect(ctx: Context, projectSlug: string, input: RedirectInput) {
  const project = await requireMaintainedProject(ctx, projectSlug);
  const type = checkFields(input, false)!;
  const { fromUrl, toUrl } = normalizeRedirect(type, input.fromUrl ?? '', input.toUrl ?? '');
  await checkRules(project.id, type, fromUrl, toUrl);
  return prisma().$transaction(async (tx) => {
    const count = await tx.redirect.count({ where: { projectId: project.id } });
    if (count >= REDIRECT_LIMIT) {
      throw ValidationError.field(
        'nonFieldErrors',
        `This project has reached the limit of ${REDIRECT_LIMIT} redirects. Consider replacing some of your redirects with a wildcard redirect.`,
      );
    }
    const position = Math.min(Math.max(input.position ?? 0, 0), count);
    await tx.redirect.updateMany({ where: { projectId: project.id, position: { gte: position } }, data: { position: { increment: 1 } } });
    return tx.redirect.create({
      data: {
        projectId: project.id,
        type,
        fromUrl,
        toUrl,
        position,
        httpStatus: input.httpStatus ?? 302,
        enabled: input.enabled ?? true,
        force: input.force ?? false,
        description: input.description ?? '',
      },
    });
  });
}

async function findRedirect(projectId: number, id: number) {
  const redirect = await prisma().redirect.findFirst({ where: { id, projectId } });
  if (!redirect) throw new NotFoundError('Redirect');
  return redirect;
}

/** `partial` is PATCH; otherwise (PUT) `type` is required and omitted URLs are cleared. */
export async function updateRedirect(ctx: Context, projectSlug: string, id: number, input: RedirectInput, partial = false) {
  const project = await requireMaintainedProject(ctx, projectSlug);
  const current = await findRedirect(project.id, id);
  const type = checkFields(input, partial) ?? current.type;
  const { fromUrl, toUrl } = normalizeRedirect(
    type,
    input.fromUrl ?? (partial ? current.fromUrl : ''),
    input.toUrl ?? (partial ? current.toUrl : ''),
  );
  await checkRules(project.id, type, fromUrl, toUrl, id);
  return prisma().$transaction(async (tx) => {
    const data: Prisma.RedirectUpdateInput = { type, fromUrl, toUrl };
    if (input.httpStatus != null) data.httpStatus = input.httpStatus;
    if (input.enabled != null) data.enabled = input.enabled;
    if (input.force != null) data.force = input.force;
    if (input.description != null) data.description = input.description;
    if (input.position != null && input.position !== current.position) {
      const count = await tx.redirect.count({ where: { projectId: project.id } });
      const to = Math.min(Math.max(input.position, 0), count - 1);
      const from = current.position;
      if (to < from) {
        await tx.redirect.updateMany({ where: { projectId: project.id, position: { gte: to, lt: from } }, data: { position: { increment: 1 } } });
      } else if (to > from) {
        await tx.redirect.updateMany({ where: { projectId: project.id, position: { gt: from, lte: to } }, data: { position: { decrement: 1 } } });
      }
      data.position = to;
    }
    return tx.redirect.update({ where: { id }, data });
  });
}

export async function deleteRedirect(ctx: Context, projectSlug: string, id: number) {
  const project = await requireMaintainedProject(ctx, projectSlug);
  const current = await findRedirect(project.id, id);
  await prisma().$transaction([
    prisma().redirect.delete({ where: { id } }),
    prisma().redirect.updateMany({ where: { projectId: project.id, position: { gt: current.position } }, data: { position: { decrement: 1 } } }),
  ]);
  return current;
}
