// Per-project build limits (docs/design/builds.md "Per-project limits"): a site admin raises a
// project's time, memory and processes up to the installation's ceilings, and puts them back with
// null; maintainers read them and change nothing; a value above a ceiling is refused naming the
// ceiling's setting; each change is in the audit log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.ts';
import { importProject } from '../helpers/builds.ts';

const GiB = 1024 ** 3;
let t: TestApp;
let admin: string;
let maintainer: string;
let stranger: string;
let slug: string;

beforeAll(async () => {
  // One ceiling set, the others 4 times their defaults.
  t = await testApp({ LECTERN_BUILD_PROJECT_MAX_TIME_SECONDS: '7200' });
  admin = await t.user('admin');
  maintainer = await t.user('maintainer');
  stranger = await t.user('stranger');
  await t.db.prisma.user.update({ where: { username: 'admin' }, data: { isAdmin: true } });
  slug = (await importProject(t, maintainer, 'Big Docs', 'https://git.example.com/big-docs.git')).slug;
});
afterAll(() => t?.close());

const LIMITS = 'timeSeconds memoryBytes processes custom ownTimeSeconds ownMemoryBytes ownProcesses';
const set = (input: Record<string, unknown>, token = admin, project = slug) =>
  t.gql(
    `mutation($project: String!, $input: ProjectBuildLimitsInput!) { setProjectBuildLimits(project: $project, input: $input) {
      __typename ... on MutationSetProjectBuildLimitsSuccess { data { slug buildLimits { ${LIMITS} } } }
      ... on ValidationError { fieldErrors { field messages } } ... on Error { message } } }`,
    { project, input },
    token,
  );
const read = (token: string) =>
  t.gql(
    `{ project(slug: "${slug}") { buildLimits { ${LIMITS} defaults { timeSeconds memoryBytes processes } maxima { timeSeconds memoryBytes processes } } } }`,
    {},
    token,
  );
const stored = () =>
  t.db.prisma.project.findUniqueOrThrow({ where: { slug }, select: { buildTimeLimit: true, buildMemoryLimit: true, buildProcessesLimit: true } });
const NONE = { buildTimeLimit: null, buildMemoryLimit: null, buildProcessesLimit: null };

describe('per-project build limits', () => {
  it("are the installation's defaults until a site admin sets them, and the project's maintainers read them", async () => {
    const res = await read(maintainer);
    expect(res.errors).toBeUndefined();
    expect(res.data.project.buildLimits).toEqual({
      timeSeconds: 900,
      memoryBytes: 4 * GiB,
      processes: 512,
      custom: false,
      ownTimeSeconds: null,
      ownMemoryBytes: null,
      ownProcesses: null,
      defaults: { timeSeconds: 900, memoryBytes: 4 * GiB, processes: 512 },
      maxima: { timeSeconds: 7200, memoryBytes: 16 * GiB, processes: 2048 },
    });
    // Someone who does not maintain the project reads its docs, not its build limits.
    expect((await read(stranger)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('are raised by a site admin, up to the ceilings, and the change is in the audit log', async () => {
    const res = await set({ timeSeconds: 3600, memoryBytes: 8 * GiB, processes: 2048 });
    expect(res.data.setProjectBuildLimits).toEqual({
      __typename: 'MutationSetProjectBuildLimitsSuccess',
      data: {
        slug,
        buildLimits: {
          timeSeconds: 3600,
          memoryBytes: 8 * GiB,
          processes: 2048,
          custom: true,
          ownTimeSeconds: 3600,
          ownMemoryBytes: 8 * GiB,
          ownProcesses: 2048,
        },
      },
    });
    expect(await stored()).toEqual({ buildTimeLimit: 3600, buildMemoryLimit: BigInt(8 * GiB), buildProcessesLimit: 2048 });
    // The maintainers see what their builds now get.
    expect((await read(maintainer)).data.project.buildLimits).toMatchObject({ timeSeconds: 3600, memoryBytes: 8 * GiB, processes: 2048, custom: true });

    const log = await t.gql(`{ auditLog(filter: { action: "build-limits-changed" }) { nodes { action username project data } } }`, {}, admin);
    expect(log.data.auditLog.nodes[0]).toEqual({
      action: 'build-limits-changed',
      username: 'admin',
      project: slug,
      data: {
        fields: ['timeSeconds', 'memoryBytes', 'processes'],
        values: { timeSeconds: 3600, memoryBytes: 8 * GiB, processes: 2048 },
        previous: { timeSeconds: null, memoryBytes: null, processes: null },
      },
    });
  });

  it('are refused to maintainers, other users, anonymous callers and tokens limited to projects, and nothing changes', async () => {
    const before = await stored();
    expect((await set({ processes: 1024 }, maintainer)).data.setProjectBuildLimits.__typename).toBe('ForbiddenError');
    expect((await set({ processes: 1024 }, stranger)).data.setProjectBuildLimits.__typename).toBe('ForbiddenError');
    expect((await set({ processes: 1024 }, '')).data.setProjectBuildLimits.__typename).toBe('UnauthenticatedError');
    // A site admin's token limited to projects has none of their admin powers (docs/design/tokens.md).
    await t.gql(`mutation { addMaintainer(project: "${slug}", username: "admin") { __typename } }`, {}, maintainer);
    const made = await t.gql(
      `mutation($projects: [String!]) { createToken(name: "ci", projects: $projects) { ... on MutationCreateTokenSuccess { data { key } } } }`,
      { projects: [slug] },
      admin,
    );
    const scoped = made.data.createToken.data.key as string;
    expect((await set({ processes: 1024 }, scoped)).data.setProjectBuildLimits.__typename).toBe('ForbiddenError');
    expect(await stored()).toEqual(before);
  });

  it('above a ceiling, at zero or below are refused, each field naming why (the ceiling and its setting), and nothing changes', async () => {
    const before = await stored();
    const res = await set({ timeSeconds: 7201, memoryBytes: 17 * GiB, processes: 0 });
    expect(res.data.setProjectBuildLimits.__typename).toBe('ValidationError');
    const fields = Object.fromEntries(
      (res.data.setProjectBuildLimits.fieldErrors as { field: string; messages: string[] }[]).map((f) => [f.field, f.messages.join(' ')]),
    );
    expect(fields.timeSeconds).toContain('less than or equal to 7200');
    expect(fields.timeSeconds).toContain('LECTERN_BUILD_PROJECT_MAX_TIME_SECONDS');
    expect(fields.memoryBytes).toContain(String(16 * GiB));
    expect(fields.memoryBytes).toContain('16 GiB');
    expect(fields.memoryBytes).toContain('LECTERN_BUILD_PROJECT_MAX_MEMORY_BYTES');
    expect(fields.processes).toBe('Ensure this value is greater than or equal to 16.');
    const negative = await set({ timeSeconds: -5, memoryBytes: 1.5, processes: 3000 });
    expect(negative.data.setProjectBuildLimits.fieldErrors).toEqual([
      { field: 'timeSeconds', messages: ['Ensure this value is greater than or equal to 10.'] },
      { field: 'memoryBytes', messages: ['A whole number is required.'] },
      { field: 'processes', messages: [expect.stringContaining('LECTERN_BUILD_PROJECT_MAX_PROCESSES')] },
    ]);
    // A project that does not exist.
    expect((await set({ processes: 1024 }, admin, 'no-such-project')).data.setProjectBuildLimits.__typename).toBe('NotFoundError');
    expect(await stored()).toEqual(before);
  });

  it('leave a field left out as it is, and null puts it back on the default', async () => {
    const one = await set({ processes: null });
    expect(one.data.setProjectBuildLimits.data.buildLimits).toMatchObject({ processes: 512, ownProcesses: null, timeSeconds: 3600, custom: true });
    expect(await stored()).toEqual({ buildTimeLimit: 3600, buildMemoryLimit: BigInt(8 * GiB), buildProcessesLimit: null });
    const all = await set({ timeSeconds: null, memoryBytes: null });
    expect(all.data.setProjectBuildLimits.data.buildLimits).toEqual({
      timeSeconds: 900,
      memoryBytes: 4 * GiB,
      processes: 512,
      custom: false,
      ownTimeSeconds: null,
      ownMemoryBytes: null,
      ownProcesses: null,
    });
    expect(await stored()).toEqual(NONE);
  });
});
