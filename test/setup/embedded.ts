// Vitest global setup for the `embedded` project: a PGlite data dir migrated once, which each
// test file copies (creating and migrating a new PGlite dir takes seconds; a copy does not), and an
// empty one (PGlite's initdb, as `openDatabase` runs it, and no migration) for the tests of the
// migration runner, which copy it where they need an empty database.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/db/database.ts';

export default async function setup(project: TestProject) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lectern-pglite-template-'));
  const empty = mkdtempSync(path.join(os.tmpdir(), 'lectern-pglite-empty-'));
  await Promise.all([openDatabase({ dataDir: dir }).then((db) => db.close()), openDatabase({ dataDir: empty, migrate: false }).then((db) => db.close())]);
  project.provide('pgliteTemplate', dir);
  project.provide('pgliteEmpty', empty);
  return () => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(empty, { recursive: true, force: true });
  };
}
