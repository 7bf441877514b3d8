// Subproject relationships (a child project served under its parent) and translations (the same
// project in another language).
import { queryFromInfo } from '@pothos/plugin-prisma';
import { visibleProjects, visibleSubprojects } from '../../domain/access.ts';
import { createSubproject, deleteSubproject } from '../../domain/subprojects.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { builder } from '../builder.ts';
import { pageComplexity, pageOf, rowQuery, window } from './common.ts';
import { writeErrors } from './errors.ts';
import { Project, ProjectPage } from './project.ts';

export const Subproject = builder.prismaObject('Subproject', {
  name: 'Subproject',
  fields: (t) => ({
    id: t.exposeInt('id'),
    alias: t.exposeString('alias', { description: 'The path segment under the parent: `/projects/<alias>/…`.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    parent: t.relation('parent'),
    child: t.relation('child'),
  }),
});

export const SubprojectPage = pageOf<Prisma.SubprojectGetPayload<object>>('SubprojectPage', Subproject);

builder.prismaObjectFields(Project, (t) => ({
  subprojects: t.field({
    type: SubprojectPage,
    description: 'Subprojects whose child the caller can see, in the order they were added.',
    args: { limit: t.arg.int(), offset: t.arg.int() },
    complexity: pageComplexity,
    resolve: (project, args, ctx, info) => {
      const where: Prisma.SubprojectWhereInput = { AND: [{ parentId: project.id }, visibleSubprojects(ctx.viewer)] };
      const { take, skip } = window(args, ctx);
      return {
        nodes: ctx.prisma.subproject.findMany({
          ...queryFromInfo({ context: ctx, info, path: ['nodes'] }),
          where,
          orderBy: { id: 'asc' },
          take,
          skip,
        }),
        totalCount: () => ctx.prisma.subproject.count({ where }),
      };
    },
  }),
  subproject: t.prismaField({
    type: Subproject,
    nullable: true,
    args: { alias: t.arg.string({ required: true }) },
    resolve: (query, project, args, ctx) =>
      ctx.prisma.subproject.findFirst({ ...query, where: { AND: [{ parentId: project.id, alias: args.alias }, visibleSubprojects(ctx.viewer)] } }),
  }),
  translations: t.field({
    type: ProjectPage,
    description: 'Projects that translate this one, by slug.',
    args: { limit: t.arg.int(), offset: t.arg.int() },
    complexity: pageComplexity,
    resolve: (project, args, ctx, info) => {
      const where: Prisma.ProjectWhereInput = { AND: [{ mainLanguageProjectId: project.id }, visibleProjects(ctx.viewer)] };
      const { take, skip } = window(args, ctx);
      return {
        nodes: ctx.prisma.project.findMany({ ...queryFromInfo({ context: ctx, info, path: ['nodes'] }), where, orderBy: { slug: 'asc' }, take, skip }),
        totalCount: () => ctx.prisma.project.count({ where }),
      };
    },
  }),
}));

const CreateSubprojectInput = builder.inputType('CreateSubprojectInput', {
  fields: (t) => ({
    child: t.string({ description: 'Slug of the child project.' }),
    alias: t.string({ description: "Defaults to the child's slug." }),
  }),
});

builder.mutationFields((t) => ({
  createSubproject: t.prismaField({
    authScopes: (_root, args) => ({ maintainerOfProject: args.project }),
    type: Subproject,
    args: { project: t.arg.string({ required: true }), input: t.arg({ type: CreateSubprojectInput, required: true }) },
    errors: writeErrors,
    resolve: (query, _root, args, ctx) => createSubproject(ctx, args.project, args.input, rowQuery(query)),
  }),
  deleteSubproject: t.prismaField({
    authScopes: (_root, args) => ({ maintainerOfProject: args.project }),
    type: Subproject,
    description: 'Removes the relationship; both projects stay. Answers with the relationship as it was.',
    args: { project: t.arg.string({ required: true }), alias: t.arg.string({ required: true }) },
    errors: writeErrors,
    // The selection is loaded before the row is deleted: afterwards its relations cannot be.
    resolve: (query, _root, args, ctx) => deleteSubproject(ctx, args.project, args.alias, query),
  }),
}));
