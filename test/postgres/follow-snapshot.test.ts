// A live build log (followBuild) reads the build and its commands as of one moment. Read one after
// the other, a state change and a command started right after it, both written by another process
// between the two reads, were sent command first: the client saw `pip install` run under
// `cloning`, and then the build enter `installing` (a flaky failure of build-subscription.test.ts
// on CI). Here the other process writes exactly between the reads, every time.
// PostgreSQL only: the embedded database has one connection, so nothing writes between the reads.
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type BuildProgress, followBuild, LiveBuilds } from '../../src/db/progress.ts';
import type { Prisma } from '../../src/generated/prisma/client.ts';
import { type TestApp, testApp } from '../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

it('never sends a command before the state change that came before it', async () => {
  const project = await t.db.prisma.project.create({ data: { name: 'Snap', slug: 'snap', repositoryUrl: 'https://example.invalid/snap.git' } });
  const build = await t.db.prisma.build.create({ data: { projectId: project.id, state: 'cloning' } });
  const other = new pg.Client({ connectionString: t.databaseUrl });
  await other.connect();
  const controller = new AbortController();
  const updates: BuildProgress[] = [];
  let reads = 0;
  try {
    const load = async (db: Prisma.TransactionClient) => {
      const row = await db.build.findUnique({ where: { id: build.id } });
      if (++reads === 2) {
        // Another worker moves the build on and runs a command, after the build was read.
        await other.query(`UPDATE "Build" SET state = 'installing' WHERE id = $1`, [build.id]);
        await other.query(`INSERT INTO "BuildCommand" ("buildId", command, output, "exitCode", "endTime") VALUES ($1, 'pip install', 'ok', 0, now())`, [
          build.id,
        ]);
      }
      return row;
    };
    for await (const u of followBuild(t.db.prisma, build.id, { load, signal: controller.signal, pollMs: 50, live: new LiveBuilds(t.services.events) })) {
      updates.push(u);
      if (u.kind === 'COMMAND_FINISHED') controller.abort();
    }
  } finally {
    controller.abort();
    await other.end();
  }
  expect(reads).toBeGreaterThanOrEqual(3);
  expect(updates.map((u) => (u.kind === 'STATE' ? `STATE ${u.build.state}` : `${u.kind} ${u.command?.command}`))).toEqual([
    'STATE cloning',
    'STATE installing',
    'COMMAND_FINISHED pip install',
  ]);
});
