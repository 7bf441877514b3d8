// Per-project build limits (docs/design/builds.md "Per-project limits"): what a project's builds
// get (its maintainers and site admins read it), and the site admins' write that raises them.
import type { BuildLimits } from '../../config.ts';
import { type ProjectBuildLimits, projectBuildLimits, setProjectBuildLimits } from '../../domain/build-limits.ts';
import { builder } from '../builder.ts';
import { rowQuery } from './common.ts';
import { writeErrors } from './errors.ts';
import { Project } from './project.ts';

interface Values {
  timeSeconds: number;
  memoryBytes: number;
  processes: number;
}

const BuildLimitValues = builder.objectRef<Values>('BuildLimitValues').implement({
  description: "A build's time, memory and processes.",
  fields: (t) => ({
    timeSeconds: t.exposeInt('timeSeconds', { description: 'Seconds a build may run.' }),
    memoryBytes: t.exposeFloat('memoryBytes', { description: "Memory of a build's sandbox, in bytes." }),
    processes: t.exposeInt('processes', { description: "Processes a build's sandbox may run at once." }),
  }),
});

type Answer = ProjectBuildLimits & { own: { timeSeconds: number | null; memoryBytes: number | null; processes: number | null }; limits: BuildLimits };

const ProjectBuildLimitsRef = builder.objectRef<Answer>('ProjectBuildLimits').implement({
  description:
    "What the project's builds get: its own values where a site admin set them (never above the installation's maxima), else the installation's defaults.",
  fields: (t) => ({
    timeSeconds: t.exposeInt('timeSeconds', { description: 'Seconds a build may run.' }),
    memoryBytes: t.exposeFloat('memoryBytes', { description: "Memory of a build's sandbox, in bytes." }),
    processes: t.exposeInt('processes', { description: "Processes a build's sandbox may run at once." }),
    custom: t.exposeBoolean('custom', { description: 'Whether the project has a limit of its own (set by a site admin), not only the defaults.' }),
    ownTimeSeconds: t.int({ nullable: true, description: "The project's own time limit; null: the default.", resolve: (a) => a.own.timeSeconds }),
    ownMemoryBytes: t.float({ nullable: true, description: "The project's own memory limit; null: the default.", resolve: (a) => a.own.memoryBytes }),
    ownProcesses: t.int({ nullable: true, description: "The project's own processes limit; null: the default.", resolve: (a) => a.own.processes }),
    defaults: t.field({
      type: BuildLimitValues,
      description: "What every other project's builds get (LECTERN_BUILD_TIME_LIMIT_SECONDS, LECTERN_BUILD_MAX_MEMORY_BYTES, LECTERN_BUILD_MAX_PROCESSES).",
      resolve: (a) => ({ timeSeconds: a.limits.timeLimitSeconds, memoryBytes: a.limits.maxMemoryBytes, processes: a.limits.maxProcesses }),
    }),
    maxima: t.field({
      type: BuildLimitValues,
      description: "The most a site admin may raise a project's limits to (LECTERN_BUILD_PROJECT_MAX_*).",
      resolve: (a) => a.limits.projectMax,
    }),
  }),
});

builder.prismaObjectFields(Project, (t) => ({
  buildLimits: t.field({
    type: ProjectBuildLimitsRef,
    description: "The time, memory and processes the project's builds get. Its maintainers and site admins; a site admin changes them (setProjectBuildLimits).",
    authScopes: (p) => ({ maintainerOf: p.id, siteAdmin: true }),
    select: { id: true, buildTimeLimit: true, buildMemoryLimit: true, buildProcessesLimit: true },
    resolve: (p, _a, ctx) => ({
      ...projectBuildLimits(p, ctx.config.build),
      own: {
        timeSeconds: p.buildTimeLimit,
        memoryBytes: p.buildMemoryLimit === null ? null : Number(p.buildMemoryLimit),
        processes: p.buildProcessesLimit,
      },
      limits: ctx.config.build,
    }),
  }),
}));

const ProjectBuildLimitsInput = builder.inputType('ProjectBuildLimitsInput', {
  description: "A field left out stays as it is; null gives the project the installation's default again.",
  fields: (t) => ({
    timeSeconds: t.int({ description: 'Seconds a build may run: 10 at least, LECTERN_BUILD_PROJECT_MAX_TIME_SECONDS at most.' }),
    memoryBytes: t.float({
      description: "Memory of a build's sandbox, in bytes (a whole number): 64 MiB at least, LECTERN_BUILD_PROJECT_MAX_MEMORY_BYTES at most.",
    }),
    processes: t.int({ description: "Processes a build's sandbox may run at once: 16 at least, LECTERN_BUILD_PROJECT_MAX_PROCESSES at most." }),
  }),
});

builder.mutationFields((t) => ({
  setProjectBuildLimits: t.prismaField({
    authScopes: { siteAdmin: true },
    type: Project,
    description:
      "Gives a project more (or less) build time, memory or processes than the installation's defaults, up to its maxima (site admins only; recorded in the audit log). Answers with the project.",
    args: { project: t.arg.string({ required: true }), input: t.arg({ type: ProjectBuildLimitsInput, required: true }) },
    errors: writeErrors,
    resolve: (query, _root, args, ctx) => setProjectBuildLimits(ctx, args.project, args.input, rowQuery(query)),
  }),
}));
