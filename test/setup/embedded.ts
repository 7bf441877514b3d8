// Vitest global setup for the `embedded` project: a PGlite data dir migrated once, which each
// test file copies (creating and migrating a new PGlite dir takes seconds; a copy does not).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/db/database.ts';

export default async function setup(project: TestProject) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lectern-pglite-template-'));
  const db = await openDatabase({ dataDir: dir });
  await db.close();
  project.provide('pgliteTemplate', dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
