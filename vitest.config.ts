// Three projects: `unit` (no database), and every database test twice, on the embedded
// PGlite (`embedded`) and on a real PostgreSQL server (`postgres`). Tests of what only PostgreSQL
// does (several processes sharing one database) live in test/postgres/ and run on it alone.
// Test files outside test/unit/ that never open a database (noDbTests) run once, in `unit`:
// twice would test the same thing twice. So do, on the embedded database alone (the one `npm start`
// gives a newcomer), the browser journeys and themes and the build sandbox's own tests
// (oneDatabaseTests): what Chromium makes of a page, and what a sandbox lets a build reach, does not
// depend on which database holds the rows, and every query those tests drive is tested on both
// databases by the API's own tests. The attack suite (test/security/) runs on both, as issue 21 asks.
import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const dbTests = ['test/**/*.test.ts'];
const noDbTests = [
  'test/cli/usage.test.ts', // the command line's usage and configuration errors, before any database
  'test/graphql/schema.test.ts', // schema.graphql against the code
  'test/storage/storage.test.ts', // the storage backends (file and S3), no database
  'test/serve/caches.test.ts', // the docs server's and embed's cache rules, no server
];
const unitTests = ['test/unit/**/*.test.ts', ...noDbTests];
const oneDatabaseTests = [
  'test/web/**/*.test.ts', // the dashboard and the first hour in Chromium
  'test/serve/themes.test.ts', // real themes in Chromium
  'test/serve/browser.test.ts',
  'test/serve/docs-host-embed.test.ts',
  'test/graphql/graphiql.test.ts',
  'test/search/search-box.test.ts',
  'test/builds/sandbox.test.ts', // the sandbox itself
  // What a build's environment is made of: its image and apt layer, its caches, its limits, a
  // repository on this machine. The queue, the recorder and publishing that these builds go
  // through are tested on both databases by pipeline, workers, steps, skip and end-to-end.
  'test/builds/images.test.ts',
  'test/builds/caches.test.ts',
  'test/builds/project-limits.test.ts',
  'test/builds/uv.test.ts',
  'test/builds/local-repositories.test.ts',
  'test/cli/control.test.ts', // the embedded database's control socket (PostgreSQL has none)
  'test/db/threaded-pglite.test.ts', // PGlite on a worker thread (PostgreSQL has no PGlite)
];
const postgresOnlyTests = ['test/postgres/**/*.test.ts'];

export default defineConfig({
  // One copy of graphql-js, the one Node loads for Pothos and yoga: left alone, Vite gives src/ the
  // ESM build, and graphql-js refuses schemas and errors made by the other copy.
  resolve: { alias: [{ find: /^graphql$/, replacement: createRequire(import.meta.url).resolve('graphql') }] },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    teardownTimeout: 20_000,
    pool: 'forks',
    // Two test files at a time (vitest's default is one fewer than the cores: one on these 2-core
    // machines). Files wait on builds, git, PostgreSQL and child processes more than they compute,
    // and each has its own database, data dir and build user ids, so two side by side share
    // nothing: the suite runs in 6m39s instead of 12m05s (issue 10).
    maxWorkers: 2,
    // A database test file runs in a process that ran others before it, not in a new one: each file
    // loaded Lectern's modules again (Prisma's client, the schema, the AWS SDK, the server), 2.6 s of
    // every file and 653 s of the whole suite's 2,816 s. Nothing of Lectern keeps state at module
    // level that a test changes: every file makes its own app, database, data dir and workers, and
    // closes them. Measured in docs/design/test-suite.md. The unit files keep a process each: one of
    // them mocks node:fs/promises.
    isolate: false,
    projects: [
      { extends: true, test: { name: 'unit', include: unitTests, isolate: true } },
      {
        extends: true,
        test: {
          name: 'embedded',
          include: dbTests,
          exclude: [...unitTests, ...postgresOnlyTests],
          globalSetup: ['test/setup/embedded.ts', 'test/setup/outputs.ts'],
          env: { LECTERN_TEST_DB: 'embedded' },
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: dbTests,
          exclude: [...unitTests, ...oneDatabaseTests],
          globalSetup: ['test/setup/postgres.ts', 'test/setup/outputs.ts'],
          env: { LECTERN_TEST_DB: 'postgres' },
        },
      },
    ],
  },
});
