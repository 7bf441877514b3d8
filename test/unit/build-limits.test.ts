// The installation's build limits and the ceilings a project may be raised to (src/config.ts), and
// what one project's builds get from them (src/domain/build-limits.ts): its own value where set,
// never above the ceiling, else the default.
import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_BUILD_LIMITS, loadConfig } from '../../src/config.ts';
import { buildLimitsFor, projectBuildLimits, projectLimitsNote } from '../../src/domain/build-limits.ts';

const GiB = 1024 ** 3;

function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

const none = { buildTimeLimit: null, buildMemoryLimit: null, buildProcessesLimit: null };

describe('the build limit settings', () => {
  it('default to 900 s, 4 GiB and 512 processes, and a project may be raised to 4 times each', () => {
    const b = loadConfig({}).build;
    expect(b.timeLimitSeconds).toBe(900);
    expect(b.maxMemoryBytes).toBe(4 * GiB);
    expect(b.maxProcesses).toBe(512);
    expect(b.projectMax).toEqual({ timeSeconds: 3600, memoryBytes: 16 * GiB, processes: 2048 });
    expect(DEFAULT_BUILD_LIMITS.projectMax).toEqual(b.projectMax);
  });

  it('follow the defaults when the ceilings are not set, and read them when they are', () => {
    const following = loadConfig({
      LECTERN_BUILD_TIME_LIMIT_SECONDS: '600',
      LECTERN_BUILD_MAX_MEMORY_BYTES: String(2 * GiB),
      LECTERN_BUILD_MAX_PROCESSES: '100',
    });
    expect(following.build.timeLimitSeconds).toBe(600);
    expect(following.build.projectMax).toEqual({ timeSeconds: 2400, memoryBytes: 8 * GiB, processes: 400 });
    const set = loadConfig({
      LECTERN_BUILD_PROJECT_MAX_TIME_SECONDS: '7200',
      LECTERN_BUILD_PROJECT_MAX_MEMORY_BYTES: String(32 * GiB),
      LECTERN_BUILD_PROJECT_MAX_PROCESSES: '512',
    });
    // A ceiling equal to its default is allowed: no project may be raised.
    expect(set.build.projectMax).toEqual({ timeSeconds: 7200, memoryBytes: 32 * GiB, processes: 512 });
  });

  it('refuse a ceiling below its default at start-up, naming both settings and no value', () => {
    const time = configError({ LECTERN_BUILD_TIME_LIMIT_SECONDS: '1200', LECTERN_BUILD_PROJECT_MAX_TIME_SECONDS: '1000' });
    expect(time).toContain('LECTERN_BUILD_PROJECT_MAX_TIME_SECONDS: must not be below LECTERN_BUILD_TIME_LIMIT_SECONDS');
    expect(time).not.toContain('1000');
    expect(time).not.toContain('1200');
    const all = configError({
      LECTERN_BUILD_PROJECT_MAX_TIME_SECONDS: '899',
      LECTERN_BUILD_PROJECT_MAX_MEMORY_BYTES: String(GiB),
      LECTERN_BUILD_PROJECT_MAX_PROCESSES: '100',
    });
    expect(all).toContain('LECTERN_BUILD_PROJECT_MAX_MEMORY_BYTES: must not be below LECTERN_BUILD_MAX_MEMORY_BYTES');
    expect(all).toContain('LECTERN_BUILD_PROJECT_MAX_PROCESSES: must not be below LECTERN_BUILD_MAX_PROCESSES');
    expect(all).toContain('LECTERN_BUILD_PROJECT_MAX_TIME_SECONDS');
    // Out of their own bounds, as every number setting.
    expect(configError({ LECTERN_BUILD_TIME_LIMIT_SECONDS: '0' })).toContain('LECTERN_BUILD_TIME_LIMIT_SECONDS');
    expect(configError({ LECTERN_BUILD_PROJECT_MAX_PROCESSES: 'many' })).toContain('LECTERN_BUILD_PROJECT_MAX_PROCESSES');
  });
});

describe("a project's build limits", () => {
  const limits = loadConfig({ LECTERN_BUILD_PROJECT_MAX_PROCESSES: '1000' }).build;

  it("are the installation's defaults when the project has none", () => {
    expect(projectBuildLimits(none, limits)).toEqual({ timeSeconds: 900, memoryBytes: 4 * GiB, processes: 512, custom: false });
    expect(buildLimitsFor(none, limits)).toEqual(limits);
    expect(projectLimitsNote(none, limits)).toBeNull();
  });

  it("are the project's own where set, lower ones too, and never above a ceiling lowered since", () => {
    const own = { buildTimeLimit: 8, buildMemoryLimit: BigInt(8 * GiB), buildProcessesLimit: 5000 };
    expect(projectBuildLimits(own, limits)).toEqual({ timeSeconds: 8, memoryBytes: 8 * GiB, processes: 1000, custom: true });
    const one = buildLimitsFor({ ...none, buildProcessesLimit: 700 }, limits);
    // Only the three change, and a build stopped by the project's own limit is told whose it is:
    // the rest of the installation's limits are every build's.
    expect(one).toEqual({
      ...limits,
      maxProcesses: 700,
      limitSources: { ...limits.limitSources, processes: "this project's own limit, set by a site admin" },
    });
    expect(limits.limitSources).toEqual({
      time: 'LECTERN_BUILD_TIME_LIMIT_SECONDS',
      memory: 'LECTERN_BUILD_MAX_MEMORY_BYTES',
      processes: 'LECTERN_BUILD_MAX_PROCESSES',
    });
    expect(buildLimitsFor(own, limits).limitSources).toEqual({
      time: "this project's own limit, set by a site admin",
      memory: "this project's own limit, set by a site admin",
      processes: "this project's own limit, set by a site admin, capped by LECTERN_BUILD_PROJECT_MAX_PROCESSES",
    });
    const note = projectLimitsNote(own, limits)!;
    expect(note).toContain("This project's builds have limits of their own, set by a site admin");
    expect(note).toContain("time: 8 s (the installation's LECTERN_BUILD_TIME_LIMIT_SECONDS is 900 s)");
    expect(note).toContain('memory: 8589934592 bytes (8 GiB)');
    expect(note).toContain(
      "processes: 1000 processes (the installation's LECTERN_BUILD_MAX_PROCESSES is 512 processes; the project's 5000 processes is more than LECTERN_BUILD_PROJECT_MAX_PROCESSES allows)",
    );
  });
});
