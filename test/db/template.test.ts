// A new embedded data dir is a copy of the migrated template (src/db/template.ts,
// docs/design/startup.md "A template data dir" and "A smaller template"): it opens with every
// migration applied, holds Lectern's database only (initdb's template0 and template1 are dropped
// from the template: nothing on the embedded database creates a database), keeps what is written
// across a restart, and the template it came from has one database directory. Both vitest projects
// run it on an explicit embedded data dir, as the embedded database is the one with a template.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { readMigrations } from '../../src/db/migrate.ts';
import { templatePath } from '../../src/db/template.ts';
import { tempDirs } from '../helpers/cli-databases.ts';

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

describe('a new embedded data dir', () => {
  it("opens migrated, holding Lectern's database only, and keeps what is written across a restart", { timeout: 120_000 }, async () => {
    const migrations = await readMigrations();
    const dataDir = dirs.make('lectern-template-');
    const db = await openDatabase({ dataDir });
    try {
      expect(db.applied).toEqual(migrations.map((m) => m.name));
      expect(await db.pending()).toEqual([]);
      expect(await db.prisma.$queryRawUnsafe('SELECT datname FROM pg_database ORDER BY datname')).toEqual([{ datname: 'postgres' }]);
      await db.prisma.$executeRawUnsafe('CREATE TABLE kept (note text)');
      await db.prisma.$executeRawUnsafe(`INSERT INTO kept VALUES ('written before the restart')`);
    } finally {
      await db.close();
    }
    const again = await openDatabase({ dataDir });
    try {
      expect(again.applied).toEqual([]);
      expect(await again.prisma.$queryRawUnsafe('SELECT note FROM kept')).toEqual([{ note: 'written before the restart' }]);
    } finally {
      await again.close();
    }
    // The template the copy came from: one database directory (base/<oid>), Lectern's.
    expect(readdirSync(path.join(templatePath(migrations), 'base'))).toHaveLength(1);
  });
});
