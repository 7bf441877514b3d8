// The committed SQL migrations (prisma/migrations, applied by src/db/migrate.ts) must produce exactly
// prisma/schema.prisma. Prisma's WASM schema engine diffs the two on an in-memory PGlite shadow
// database; no server is needed. Takes a few seconds.
import { readFile } from 'node:fs/promises';
import { describe, expect, it, vi } from 'vitest';

// A switch that lets one test hand the engine a schema.prisma with one extra model, to prove the
// comparison can fail at all (a check that always passes would prove nothing).
const probe = vi.hoisted(() => ({ extraModel: false }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  const readFileMocked = (async (file: unknown, ...rest: unknown[]) => {
    const content = await (real.readFile as (...a: unknown[]) => Promise<string | Buffer>)(file, ...rest);
    if (probe.extraModel && String(file).endsWith('schema.prisma') && typeof content === 'string') {
      return `${content}\nmodel ZzMigrationProbe {\n  id Int @id\n}\n`;
    }
    return content;
  }) as typeof real.readFile;
  return { ...real, default: { ...real, readFile: readFileMocked }, readFile: readFileMocked };
});

const { pendingSchemaChange, schemaPath } = await import('../../src/db/schema-engine.ts');

describe('prisma/migrations and prisma/schema.prisma', () => {
  it('agree: the migrations produce exactly schema.prisma', { timeout: 120_000 }, async () => {
    const sql = await pendingSchemaChange();
    expect(
      sql,
      'prisma/schema.prisma differs from what prisma/migrations produce. Write a migration for the change with ' +
        '`npm run migration:new -- <name>` (lowercase words joined by _), review the SQL it writes, and commit it. ' +
        `The missing SQL:\n${sql}`,
    ).toBe('');
  });

  it('would notice a difference (the check is not vacuous)', { timeout: 120_000 }, async () => {
    probe.extraModel = true;
    try {
      expect(await readFile(schemaPath, 'utf8')).toContain('ZzMigrationProbe');
      const sql = await pendingSchemaChange();
      expect(sql).toMatch(/CREATE TABLE "ZzMigrationProbe"/);
    } finally {
      probe.extraModel = false;
    }
  });
});
