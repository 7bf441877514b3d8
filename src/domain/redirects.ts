// Redirect rules: the seed's five types with its required-field table, and Read the Docs' current
// names for the clean-URL pair; Read the Docs' wildcard checks, normalization and ordering by
// position (docs/design/read-the-docs.md §3.4, §4.7, docs/design/rest-api.md). A redirect keeps the type name it was created with.
import type { Prisma, Redirect, RedirectType } from '../generated/prisma/client.ts';
import { projectToChange } from './access.ts';
import type { Context } from './context.ts';
import { NotFoundError, ValidationError } from './errors.ts';
import { lockProjects } from './locks.ts';
import { Collector, invalidChoice, maxLength, required } from './validate.ts';

/** What a type does, whichever of its names it was created with (readthedocs.org PR #10881 renamed the clean-URL pair). */
export const REDIRECT_KIND: Readonly<Record<RedirectType, 'prefix' | 'page' | 'exact' | 'clean_url_to_html' | 'html_to_clean_url'>> = {
  prefix: 'prefix',
  page: 'page',
  exact: 'exact',
  sphinx_html: 'clean_url_to_html',
  clean_url_to_html: 'clean_url_to_html',
  sphinx_htmldir: 'html_to_clean_url',
  html_to_clean_url: 'html_to_clean_url',
};
export const REDIRECT_TYPES: ReadonlySet<string> = new Set(Object.keys(REDIRECT_KIND));
/** The names of one kind: `sphinx_html` and `clean_url_to_html` are one type. */
const namesOf = (type: RedirectType) => (Object.keys(REDIRECT_KIND) as RedirectType[]).filter((t) => REDIRECT_KIND[t] === REDIRECT_KIND[type]);
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
  clean_url_to_html: { from: false, to: false },
  html_to_clean_url: { from: false, to: false },
};
const isCleanUrlType = (t: RedirectType) => REDIRECT_KIND[t] === 'clean_url_to_html' || REDIRECT_KIND[t] === 'html_to_clean_url';

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
  for (const [field, value] of [
    ['fromUrl', input.fromUrl],
    ['toUrl', input.toUrl],
  ] as const) {
    if (value != null && value.length > URL_MAX) c.add(field, maxLength(URL_MAX));
  }
  if (input.description != null && input.description.length > 255) c.add('description', maxLength(255));
  if (input.httpStatus != null && input.httpStatus !== 301 && input.httpStatus !== 302) c.add('httpStatus', invalidChoice(input.httpStatus));
  c.throwIfAny();
  return type ?? undefined;
}

type Tx = Prisma.TransactionClient;

const rule = (m: string) => ValidationError.field('nonFieldErrors', m);

/** The rules that depend on the type and the URLs alone. */
function checkRules(type: RedirectType, fromUrl: string, toUrl: string) {
  const c = new Collector();
  if (needs[type].from && !fromUrl) c.add('fromUrl', required);
  if (needs[type].to && !toUrl) c.add('toUrl', required);
  c.throwIfAny();
  if (type === 'page' || type === 'exact') {
    if (fromUrl.endsWith('$rest')) throw rule('The $rest wildcard has been removed in favor of *.');
    if (fromUrl.includes('*') && fromUrl.indexOf('*') !== fromUrl.length - 1) throw rule('The * wildcard must be at the end of the path.');
    if (toUrl.includes(':splat') && !fromUrl.endsWith('*')) {
      throw rule('The * wildcard must be at the end of from_url to use the :splat placeholder in to_url.');
    }
  }
}

/** At most one redirect of each clean-URL type (under either of its names) per project; run under `lockProjects`. */
async function checkOnePerType(tx: Tx, projectId: number, type: RedirectType, selfId?: number) {
  if (!isCleanUrlType(type)) return;
  const other = await tx.redirect.findFirst({
    where: { projectId, type: { in: namesOf(type) }, ...(selfId ? { id: { not: selfId } } : {}) },
    select: { id: true },
  });
  if (other) throw rule(`Only one redirect of type \`${type}\` is allowed per project.`);
}

export async function createRedirect(ctx: Context, projectSlug: string, input: RedirectInput, query: RedirectQuery = {}): Promise<Redirect> {
  const project = await projectToChange(ctx, projectSlug);
  const type = checkFields(input, false)!;
  const { fromUrl, toUrl } = normalizeRedirect(type, input.fromUrl ?? '', input.toUrl ?? '');
  checkRules(type, fromUrl, toUrl);
  return ctx.prisma
    .$transaction(async (tx) => {
      await lockProjects(tx, [project.id]);
      await checkOnePerType(tx, project.id, type);
      const count = await tx.redirect.count({ where: { projectId: project.id } });
      if (count >= REDIRECT_LIMIT) {
        throw rule(`This project has reached the limit of ${REDIRECT_LIMIT} redirects. Consider replacing some of your redirects with a wildcard redirect.`);
      }
      const position = Math.min(Math.max(input.position ?? 0, 0), count);
      await tx.redirect.updateMany({ where: { projectId: project.id, position: { gte: position } }, data: { position: { increment: 1 } } });
      return tx.redirect.create({
        ...query,
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
    })
    .finally(() => ctx.events.emit('servedChanged', { projectId: project.id }));
}

async function findRedirect(client: Tx, projectId: number, id: number) {
  const redirect = await client.redirect.findFirst({ where: { id, projectId } });
  if (!redirect) throw new NotFoundError('Redirect');
  return redirect;
}

/** `partial` is PATCH; otherwise (PUT) `type` is required and omitted URLs are cleared. */
export async function updateRedirect(
  ctx: Context,
  projectSlug: string,
  id: number,
  input: RedirectInput,
  partial = false,
  query: RedirectQuery = {},
): Promise<Redirect> {
  const project = await projectToChange(ctx, projectSlug);
  await findRedirect(ctx.prisma, project.id, id);
  const given = checkFields(input, partial);
  return ctx.prisma
    .$transaction(async (tx) => {
      await lockProjects(tx, [project.id]);
      const current = await findRedirect(tx, project.id, id);
      const type = given ?? current.type;
      const { fromUrl, toUrl } = normalizeRedirect(type, input.fromUrl ?? (partial ? current.fromUrl : ''), input.toUrl ?? (partial ? current.toUrl : ''));
      checkRules(type, fromUrl, toUrl);
      await checkOnePerType(tx, project.id, type, id);
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
      return tx.redirect.update({ ...query, where: { id }, data }) as Promise<Redirect>;
    })
    .finally(() => ctx.events.emit('servedChanged', { projectId: project.id }));
}

export interface RedirectQuery {
  include?: Prisma.RedirectInclude;
  select?: Prisma.RedirectSelect;
}

/** `query` (the GraphQL selection) is read before the row goes, so the answer can show its relations. */
export async function deleteRedirect(ctx: Context, projectSlug: string, id: number, query: RedirectQuery = {}) {
  const project = await projectToChange(ctx, projectSlug);
  await findRedirect(ctx.prisma, project.id, id);
  return ctx.prisma
    .$transaction(async (tx) => {
      await lockProjects(tx, [project.id]);
      const current = await findRedirect(tx, project.id, id);
      const shown = await tx.redirect.findUniqueOrThrow({ ...query, where: { id } });
      await tx.redirect.delete({ where: { id } });
      await tx.redirect.updateMany({ where: { projectId: project.id, position: { gt: current.position } }, data: { position: { decrement: 1 } } });
      return shown;
    })
    .finally(() => ctx.events.emit('servedChanged', { projectId: project.id }));
}
