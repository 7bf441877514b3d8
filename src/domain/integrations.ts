// Incoming-webhook integrations. The secret is generated here, encrypted at rest, and shown once,
// in the answer to the mutation that creates it.
import { randomBytes } from 'node:crypto';
import type { IntegrationProvider, Prisma } from '../generated/prisma/client.ts';
import { checkWebhookUrl } from '../notifications/send.ts';
import { projectToChange } from './access.ts';
import type { Context } from './context.ts';
import { NotFoundError } from './errors.ts';
import { Collector, checkString } from './validate.ts';

export async function createIntegration(ctx: Context, projectSlug: string, provider: IntegrationProvider) {
  const project = await projectToChange(ctx, projectSlug);
  const secret = randomBytes(24).toString('hex');
  const integration = await ctx.prisma.integration.create({
    data: { projectId: project.id, provider, secretEncrypted: ctx.cipher.encrypt(secret) },
  });
  return { integration, secret };
}

export interface IntegrationQuery {
  include?: Prisma.IntegrationInclude;
  select?: Prisma.IntegrationSelect;
}

/** `query` (the GraphQL selection) is read before the row goes, so the answer can show its relations. */
export async function deleteIntegration(ctx: Context, projectSlug: string, id: number, query: IntegrationQuery = {}) {
  const project = await projectToChange(ctx, projectSlug);
  const where = { id, projectId: project.id };
  return ctx.prisma.$transaction(async (tx) => {
    const shown = await tx.integration.findFirst({ ...query, where });
    // Gone already, or removed by a concurrent delete between the read and here.
    if (!shown || (await tx.integration.deleteMany({ where })).count === 0) throw new NotFoundError('Integration');
    return shown;
  });
}

/**
 * Sets (or, with null, removes) the token Lectern reports commit statuses with on a pull request's
 * preview, and the forge API's base URL when it is not the provider's public one (GitHub
 * Enterprise, a GitLab of your own). The token is stored encrypted and never read back.
 */
export async function setIntegrationToken<Q extends IntegrationQuery>(
  ctx: Context,
  projectSlug: string,
  id: number,
  input: { token: string | null; apiUrl?: string | null },
  query: Q,
) {
  const project = await projectToChange(ctx, projectSlug);
  const integration = await ctx.prisma.integration.findFirst({ where: { id, projectId: project.id }, select: { id: true, provider: true } });
  if (!integration) throw new NotFoundError('Integration');
  const c = new Collector();
  if (input.token !== null && (input.token.trim() === '' || input.token.length > 1024)) c.add('token', 'A token has 1 to 1024 characters; null removes it.');
  if (input.token !== null && integration.provider !== 'github' && integration.provider !== 'gitlab') {
    c.add('token', 'Commit statuses are reported to GitHub and GitLab only.');
  }
  if (input.apiUrl) c.add('apiUrl', checkString(input.apiUrl, { max: 255 }) ?? checkWebhookUrl(input.apiUrl, ctx.config.webhooks.allow) ?? undefined);
  c.throwIfAny();
  return ctx.prisma.integration.update({
    ...query,
    where: { id },
    data: {
      tokenEncrypted: input.token === null ? null : ctx.cipher.encrypt(input.token.trim()),
      ...(input.apiUrl !== undefined ? { apiUrl: input.apiUrl ? input.apiUrl.replace(/\/+$/, '') : null } : {}),
    },
  });
}
