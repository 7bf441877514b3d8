// Row locks that serialize one project's writes with each other within a transaction.
import type { Prisma } from '../generated/prisma/client.ts';

/**
 * Takes the rows of the projects `ids` for the rest of the transaction (FOR NO KEY UPDATE: rows
 * pointing at them may still be written), in id order, so two writes never wait on each other
 * crosswise. Writes that read a project's other rows to decide (redirect positions, rule
 * priorities, the last maintainer) take it first.
 */
export async function lockProjects(tx: Prisma.TransactionClient, ids: number[]): Promise<void> {
  const sorted = [...new Set(ids)].sort((a, b) => a - b);
  for (const id of sorted) await tx.$queryRaw`SELECT id FROM "Project" WHERE id = ${id} FOR NO KEY UPDATE`;
}
