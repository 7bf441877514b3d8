// The fixture world of Read the Docs' own v3 tests (docs/design/read-the-docs.md §7), made in Lectern's
// database with pinned ids and timestamps, so whole response bodies can be compared with golden
// files. Tokens `me` (testuser, maintains `project`) and `other` (maintains `others-project`).
import type { PrismaClient } from '../../src/db/database.ts';
import { hashToken } from '../../src/secrets.ts';

export const CREATED = new Date('2019-04-29T10:00:00Z');
export const MODIFIED = new Date('2019-04-29T12:00:00Z');

const TABLES = ['BuildCommand', 'Build', 'Version', 'Redirect', 'EnvironmentVariable', 'Integration', 'ProjectRelationship', 'Project', 'ApiToken', 'User'];

/** Empties every table the world fills and restarts their ids, so each test sees the same ids. */
export async function resetWorld(db: PrismaClient): Promise<void> {
  await db.$executeRawUnsafe(`TRUNCATE ${TABLES.map((n) => `"${n}"`).join(', ')} RESTART IDENTITY CASCADE`);
}

export async function makeWorld(db: PrismaClient, encrypt: (value: string) => string): Promise<void> {
  const testuser = await db.user.create({ data: { id: 1, username: 'testuser' } });
  const other = await db.user.create({ data: { id: 2, username: 'other' } });
  await db.apiToken.create({ data: { userId: testuser.id, keyHash: hashToken('me'), keyPrefix: 'me' } });
  await db.apiToken.create({ data: { userId: other.id, keyHash: hashToken('other'), keyPrefix: 'other' } });

  const project = await db.project.create({
    data: {
      id: 1,
      name: 'project',
      slug: 'project',
      repositoryUrl: 'https://github.com/rtfd/project',
      homepage: 'http://project.com',
      tags: ['project', 'tag', 'test'],
      users: { connect: { id: testuser.id } },
      createdAt: CREATED,
      modifiedAt: MODIFIED,
    },
  });
  const common = { projectId: project.id, hasPdf: true, hasEpub: true, hasHtmlzip: true, createdAt: CREATED, modifiedAt: MODIFIED };
  await db.version.create({ data: { id: 1, slug: 'latest', verboseName: 'latest', machine: true, active: true, type: 'branch', ...common } });
  const v1 = await db.version.create({
    data: { id: 2, slug: 'v1.0', verboseName: 'v1.0', identifier: 'a1b2c3', type: 'tag', active: true, built: true, ...common },
  });
  await db.redirect.create({
    data: { id: 1, projectId: project.id, type: 'page', fromUrl: '/docs', toUrl: '/documentation/', createdAt: CREATED, modifiedAt: MODIFIED },
  });
  await db.build.create({
    data: {
      id: 1,
      projectId: project.id,
      versionId: v1.id,
      versionSlug: 'v1.0',
      state: 'finished',
      success: true,
      commit: 'a1b2c3',
      duration: 60,
      config: { property: 'test value' },
      createdAt: CREATED,
      startedAt: CREATED,
      finishedAt: new Date(CREATED.getTime() + 60_000),
    },
  });
  await db.version.update({ where: { id: v1.id }, data: { lastBuildId: 1, modifiedAt: MODIFIED } });

  const others = await db.project.create({
    data: {
      id: 2,
      name: 'others-project',
      slug: 'others-project',
      repositoryUrl: 'https://github.com/rtfd/others-project',
      users: { connect: { id: other.id } },
      createdAt: CREATED,
      modifiedAt: MODIFIED,
    },
  });
  const othersLatest = await db.version.create({
    data: {
      id: 3,
      projectId: others.id,
      slug: 'latest',
      verboseName: 'latest',
      machine: true,
      active: true,
      type: 'branch',
      createdAt: CREATED,
      modifiedAt: MODIFIED,
    },
  });
  await db.build.create({
    data: {
      id: 2,
      projectId: others.id,
      versionId: othersLatest.id,
      versionSlug: 'latest',
      state: 'finished',
      success: true,
      commit: 'a1b2c3',
      duration: 60,
      createdAt: CREATED,
    },
  });

  const sub = await db.project.create({
    data: {
      id: 3,
      name: 'subproject',
      slug: 'subproject',
      repositoryUrl: 'https://github.com/rtfd/subproject',
      homepage: 'http://subproject.com',
      tags: ['project', 'tag', 'test'],
      users: { connect: { id: testuser.id } },
      createdAt: CREATED,
      modifiedAt: MODIFIED,
    },
  });
  await db.version.create({
    data: {
      id: 4,
      projectId: sub.id,
      slug: 'latest',
      verboseName: 'latest',
      machine: true,
      active: true,
      type: 'branch',
      createdAt: CREATED,
      modifiedAt: MODIFIED,
    },
  });
  await db.subproject.create({ data: { id: 1, parentId: project.id, childId: sub.id, alias: 'subproject', createdAt: CREATED } });

  await db.environmentVariable.create({
    data: { id: 1, projectId: project.id, name: 'ENVVAR', valueEncrypted: encrypt('a1b2c3'), valueSize: 6, createdAt: CREATED, modifiedAt: MODIFIED },
  });

  // Sequences continue after the pinned ids.
  for (const table of ['User', 'ApiToken', 'Project', 'Version', 'Build', 'Redirect', 'ProjectRelationship', 'EnvironmentVariable']) {
    await db.$executeRawUnsafe(`SELECT setval(pg_get_serial_sequence('"${table}"', 'id'), GREATEST((SELECT MAX(id) FROM "${table}"), 1))`);
  }
}
