// Incoming-webhook integrations. The secret is generated here, encrypted at rest, and shown once,
// in the answer to the mutation that creates it.
import { randomBytes } from 'node:crypto';
import type { IntegrationProvider, Prisma } from '../generated/prisma/client.ts';
import { projectToChange } from './access.ts';
import type { Context } from './context.ts';
import { NotFoundError } from './errors.ts';

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
