// Incoming-webhook integrations. The secret is generated here, encrypted at rest, and shown once,
// in the answer to the mutation that creates it.
import { randomBytes } from 'node:crypto';
import type { IntegrationProvider } from '../generated/prisma/client.ts';
import type { Context } from '../graphql/context.ts';
import { NotFoundError } from '../graphql/errors.ts';
import { prisma, services } from '../services.ts';
import { requireMaintainedProject } from './access.ts';

export async function createIntegration(ctx: Context, projectSlug: string, provider: IntegrationProvider) {
  const project = await requireMaintainedProject(ctx, projectSlug);
  const secret = randomBytes(24).toString('hex');
  const integration = await prisma().integration.create({
    data: { projectId: project.id, provider, secretEncrypted: services().cipher.encrypt(secret) },
  });
  return { integration, secret };
}

export async function deleteIntegration(ctx: Context, projectSlug: string, id: number) {
  const project = await requireMaintainedProject(ctx, projectSlug);
  const found = await prisma().integration.findFirst({ where: { id, projectId: project.id } });
  if (!found) throw new NotFoundError('Integration');
  await prisma().integration.delete({ where: { id } });
  return found;
}
