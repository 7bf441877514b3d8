// Per-project build limits (docs/design/builds.md "Per-project limits"): a site admin may give one
// project more time, memory or processes than the installation's defaults, up to the ceilings the
// LECTERN_BUILD_PROJECT_MAX_* settings name. Null in a column means the default. What a build gets
// is worked out here once (BuildRun's limits), and the API answers the same numbers.
import { type BuildLimits, DEFAULT_BUILD_LIMITS } from '../config.ts';
import type { Prisma, Project } from '../generated/prisma/client.ts';
import { audit } from './audit.ts';
import type { Context } from './context.ts';
import { ForbiddenError, NotFoundError } from './errors.ts';
import type { ProjectQuery } from './projects.ts';
import { Collector } from './validate.ts';

/** The columns of a project that hold its own limits (null: the installation's default). */
export type LimitColumns = Pick<Project, 'buildTimeLimit' | 'buildMemoryLimit' | 'buildProcessesLimit'>;

/** What a project's builds get, and whether any of it is the project's own. */
export interface ProjectBuildLimits {
  timeSeconds: number;
  memoryBytes: number;
  processes: number;
  /** Whether the project has a value of its own for any of the three (set by a site admin). */
  custom: boolean;
}

export interface BuildLimitsInput {
  timeSeconds?: number | null;
  memoryBytes?: number | null;
  processes?: number | null;
}

type Field = keyof BuildLimitsInput;

/** Each limit: its input field, its column, the least a project may be set to, its default and ceiling and the settings of each. */
const LIMITS: readonly {
  field: Field;
  column: keyof LimitColumns;
  min: number;
  default: (l: BuildLimits) => number;
  ceiling: (l: BuildLimits) => number;
  defaultSetting: string;
  ceilingSetting: string;
  unit: (n: number) => string;
  what: 'time' | 'memory' | 'processes';
}[] = [
  {
    field: 'timeSeconds',
    column: 'buildTimeLimit',
    min: 10,
    default: (l) => l.timeLimitSeconds,
    ceiling: (l) => l.projectMax.timeSeconds,
    defaultSetting: 'LECTERN_BUILD_TIME_LIMIT_SECONDS',
    ceilingSetting: 'LECTERN_BUILD_PROJECT_MAX_TIME_SECONDS',
    unit: (n) => `${n} s`,
    what: 'time',
  },
  {
    field: 'memoryBytes',
    column: 'buildMemoryLimit',
    min: 64 * 1024 ** 2,
    default: (l) => l.maxMemoryBytes,
    ceiling: (l) => l.projectMax.memoryBytes,
    defaultSetting: 'LECTERN_BUILD_MAX_MEMORY_BYTES',
    ceilingSetting: 'LECTERN_BUILD_PROJECT_MAX_MEMORY_BYTES',
    unit: (n) => `${n} bytes${n >= 1024 ** 2 ? ` (${mebibytes(n)})` : ''}`,
    what: 'memory',
  },
  {
    field: 'processes',
    column: 'buildProcessesLimit',
    min: 16,
    default: (l) => l.maxProcesses,
    ceiling: (l) => l.projectMax.processes,
    defaultSetting: 'LECTERN_BUILD_MAX_PROCESSES',
    ceilingSetting: 'LECTERN_BUILD_PROJECT_MAX_PROCESSES',
    unit: (n) => `${n} processes`,
    what: 'processes',
  },
];

/** 4 GiB, 1.5 GiB, 512 MiB. */
function mebibytes(n: number): string {
  const gib = n / 1024 ** 3;
  return gib >= 1 ? `${+gib.toFixed(2)} GiB` : `${+(n / 1024 ** 2).toFixed(1)} MiB`;
}

const stored = (p: LimitColumns, column: keyof LimitColumns) => (p[column] === null ? null : Number(p[column]));

/**
 * What a project's builds get: its own value where it has one, never above the ceiling (a ceiling
 * lowered after a value was set wins), else the installation's default.
 */
export function projectBuildLimits(project: LimitColumns, limits: BuildLimits): ProjectBuildLimits {
  const get = (i: number) => {
    const l = LIMITS[i]!;
    const own = stored(project, l.column);
    return own === null ? l.default(limits) : Math.min(own, l.ceiling(limits));
  };
  return {
    timeSeconds: get(0),
    memoryBytes: get(1),
    processes: get(2),
    custom: LIMITS.some((l) => project[l.column] !== null),
  };
}

/** The limits of one build of `project`: the installation's, with the project's own time, memory and processes where it has them. */
export function buildLimitsFor(project: LimitColumns, limits: BuildLimits): BuildLimits {
  const p = projectBuildLimits(project, limits);
  const effective = [p.timeSeconds, p.memoryBytes, p.processes];
  // A build stopped by one of its project's own limits is told so: raising the installation's setting would not change it.
  const limitSources = { ...limits.limitSources };
  LIMITS.forEach((l, i) => {
    const own = stored(project, l.column);
    if (own === null) return;
    limitSources[l.what] =
      own > effective[i]! ? `this project's own limit, set by a site admin, capped by ${l.ceilingSetting}` : "this project's own limit, set by a site admin";
  });
  return { ...limits, timeLimitSeconds: p.timeSeconds, maxMemoryBytes: p.memoryBytes, maxProcesses: p.processes, limitSources };
}

/**
 * What a build's log says when its project has limits of its own (`installation` the worker's
 * settings); null when every limit is the installation's default.
 */
export function projectLimitsNote(project: LimitColumns, installation: BuildLimits = DEFAULT_BUILD_LIMITS): string | null {
  const p = projectBuildLimits(project, installation);
  const effective = [p.timeSeconds, p.memoryBytes, p.processes];
  const lines = LIMITS.flatMap((l, i) => {
    const own = stored(project, l.column);
    if (own === null) return [];
    const capped = own > effective[i]! ? `; the project's ${l.unit(own)} is more than ${l.ceilingSetting} allows` : '';
    return [`${l.what}: ${l.unit(effective[i]!)} (the installation's ${l.defaultSetting} is ${l.unit(l.default(installation))}${capped})\n`];
  });
  return lines.length ? `This project's builds have limits of their own, set by a site admin:\n${lines.join('')}` : null;
}

/** Why a value is refused: below the least a build can run with, or above the installation's ceiling (named with its setting). */
function problem(l: (typeof LIMITS)[number], value: number, limits: BuildLimits): string | undefined {
  if (!Number.isSafeInteger(value)) return 'A whole number is required.';
  if (value < l.min) return `Ensure this value is greater than or equal to ${l.min}.`;
  const ceiling = l.ceiling(limits);
  if (value > ceiling) {
    return `Ensure this value is less than or equal to ${ceiling}: this installation raises a project's build ${l.what} to ${l.unit(ceiling)} at most (${l.ceilingSetting}).`;
  }
  return undefined;
}

/**
 * Sets a project's own build limits (site admins only). A field left out stays as it is; null
 * gives the project the installation's default again. A value above the ceiling, or below what a
 * build can run with, is refused and nothing changes. Recorded in the audit log with the values.
 */
export async function setProjectBuildLimits(ctx: Context, slug: string, input: BuildLimitsInput, query: ProjectQuery = {}): Promise<Project> {
  // GraphQL's `siteAdmin` scope has checked it; said again here, where the rule lives.
  if (!ctx.viewer?.isAdmin) throw new ForbiddenError("Only a site admin changes a project's build limits.");
  const limits = ctx.config.build;
  const c = new Collector();
  for (const l of LIMITS) {
    const value = input[l.field];
    if (value !== undefined && value !== null) c.add(l.field, problem(l, value, limits));
  }
  c.throwIfAny();
  const project = await ctx.projectBySlug(slug);
  if (!project) throw new NotFoundError('Project');

  const data: Prisma.ProjectUpdateInput = {};
  const values: Record<string, number | null> = {};
  const previous: Record<string, number | null> = {};
  for (const l of LIMITS) {
    const value = input[l.field];
    if (value === undefined) continue;
    if (l.column === 'buildMemoryLimit') data.buildMemoryLimit = value === null ? null : BigInt(value);
    else data[l.column] = value;
    values[l.field] = value;
    previous[l.field] = stored(project, l.column);
  }
  return ctx.prisma.$transaction(async (tx) => {
    const updated = await tx.project.update({ ...query, where: { id: project.id }, data });
    await audit(ctx, { action: 'build-limits-changed', project, data: { fields: Object.keys(values), values, previous } }, tx);
    return updated as Project;
  });
}
