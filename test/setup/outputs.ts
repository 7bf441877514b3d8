// Vitest global setup for the database projects: one directory that the test files of a project
// share the fixture outputs of test/helpers/publish.ts in (Sphinx and MkDocs builds, zips, PDFs),
// so each is built once per project instead of once per test file. Removed at the end of the run.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

export default function setup(project: TestProject) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lectern-test-outputs-'));
  project.provide('testOutputs', dir);
  return () => rmSync(dir, { recursive: true, force: true });
}

declare module 'vitest' {
  export interface ProvidedContext {
    testOutputs: string;
  }
}
