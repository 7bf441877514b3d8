// Environment variables given to a project's builds. The value can be written, never read.
import { queryFromInfo } from '@pothos/plugin-prisma';
import { createEnvironmentVariable, deleteEnvironmentVariable } from '../../domain/environment-variables.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { builder } from '../builder.ts';
import { pageComplexity, pageOf, rowQuery, window } from './common.ts';
import { writeErrors } from './errors.ts';
import { Project } from './project.ts';

export const EnvironmentVariable = builder.prismaObject('EnvironmentVariable', {
  description: 'A variable set in the environment of every build. Its value is never returned.',
  fields: (t) => ({
    id: t.exposeInt('id'),
    name: t.exposeString('name'),
    public: t.exposeBoolean('public', { description: 'Also given to builds of pull requests.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    modifiedAt: t.expose('modifiedAt', { type: 'DateTime' }),
    project: t.relation('project'),
  }),
});

export const EnvironmentVariablePage = pageOf<Prisma.EnvironmentVariableGetPayload<object>>('EnvironmentVariablePage', EnvironmentVariable);

builder.prismaObjectFields(Project, (t) => ({
  environmentVariables: t.field({
    type: EnvironmentVariablePage,
    description: 'Maintainers only.',
    args: { limit: t.arg.int(), offset: t.arg.int() },
    complexity: pageComplexity,
    authScopes: (project) => ({ maintainerOf: project.id }),
    resolve: async (project, args, ctx, info) => {
      const where = { projectId: project.id };
      const { take, skip } = window(args, ctx);
      return {
        nodes: ctx.prisma.environmentVariable.findMany({
          ...queryFromInfo({ context: ctx, info, path: ['nodes'] }),
          where,
          orderBy: { id: 'asc' },
          take,
          skip,
        }),
        totalCount: () => ctx.prisma.environmentVariable.count({ where }),
      };
    },
  }),
  environmentVariable: t.prismaField({
    type: EnvironmentVariable,
    nullable: true,
    args: { id: t.arg.int({ required: true }) },
    authScopes: (project) => ({ maintainerOf: project.id }),
    resolve: async (query, project, args, ctx) => {
      return ctx.prisma.environmentVariable.findFirst({ ...query, where: { id: args.id, projectId: project.id } });
    },
  }),
}));

const EnvironmentVariableInput = builder.inputType('EnvironmentVariableInput', {
  fields: (t) => ({
    name: t.string(),
    value: t.string({ description: 'Write-only: stored encrypted, never returned.' }),
    public: t.boolean(),
  }),
});

builder.mutationFields((t) => ({
  createEnvironmentVariable: t.prismaField({
    authScopes: (_root, args) => ({ maintainerOfProject: args.project }),
    type: EnvironmentVariable,
    args: { project: t.arg.string({ required: true }), input: t.arg({ type: EnvironmentVariableInput, required: true }) },
    errors: writeErrors,
    resolve: (query, _root, args, ctx) => createEnvironmentVariable(ctx, args.project, args.input, rowQuery(query)),
  }),
  deleteEnvironmentVariable: t.prismaField({
    authScopes: (_root, args) => ({ maintainerOfProject: args.project }),
    type: EnvironmentVariable,
    description: 'Answers with the variable as it was (never its value).',
    args: { project: t.arg.string({ required: true }), id: t.arg.int({ required: true }) },
    errors: writeErrors,
    // The selection is loaded before the row is deleted: afterwards its relations cannot be.
    resolve: (query, _root, args, ctx) => deleteEnvironmentVariable(ctx, args.project, args.id, rowQuery(query)),
  }),
}));
