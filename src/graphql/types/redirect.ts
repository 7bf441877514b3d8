// Redirects of a project's docs. Only maintainers read or write them.
import { queryFromInfo } from '@pothos/plugin-prisma';
import { createRedirect, deleteRedirect, updateRedirect } from '../../domain/redirects.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { builder } from '../builder.ts';
import { pageComplexity, pageOf, RedirectTypeEnum, rowQuery, window } from './common.ts';
import { writeErrors } from './errors.ts';
import { Project } from './project.ts';

export const Redirect = builder.prismaObject('Redirect', {
  fields: (t) => ({
    id: t.exposeInt('id'),
    type: t.expose('type', { type: RedirectTypeEnum }),
    fromUrl: t.exposeString('fromUrl'),
    toUrl: t.exposeString('toUrl'),
    httpStatus: t.exposeInt('httpStatus'),
    position: t.exposeInt('position'),
    enabled: t.exposeBoolean('enabled'),
    force: t.exposeBoolean('force', { description: 'Tried before serving a file, not only for missing pages.' }),
    description: t.exposeString('description'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    modifiedAt: t.expose('modifiedAt', { type: 'DateTime' }),
    project: t.relation('project'),
  }),
});

export const RedirectPage = pageOf<Prisma.RedirectGetPayload<object>>('RedirectPage', Redirect);

builder.prismaObjectFields(Project, (t) => ({
  redirects: t.field({
    type: RedirectPage,
    description: 'Redirects in the order they are tried. Maintainers only.',
    args: { limit: t.arg.int(), offset: t.arg.int() },
    complexity: pageComplexity,
    authScopes: (project) => ({ maintainerOf: project.id }),
    resolve: async (project, args, ctx, info) => {
      const where = { projectId: project.id };
      const { take, skip } = window(args, ctx);
      return {
        nodes: ctx.prisma.redirect.findMany({
          ...queryFromInfo({ context: ctx, info, path: ['nodes'] }),
          where,
          orderBy: [{ position: 'asc' }, { modifiedAt: 'desc' }],
          take,
          skip,
        }),
        totalCount: () => ctx.prisma.redirect.count({ where }),
      };
    },
  }),
  redirect: t.prismaField({
    type: Redirect,
    nullable: true,
    args: { id: t.arg.int({ required: true }) },
    authScopes: (project) => ({ maintainerOf: project.id }),
    resolve: async (query, project, args, ctx) => {
      return ctx.prisma.redirect.findFirst({ ...query, where: { id: args.id, projectId: project.id } });
    },
  }),
}));

const RedirectInput = builder.inputType('RedirectInput', {
  fields: (t) => ({
    type: t.field({ type: RedirectTypeEnum }),
    fromUrl: t.string(),
    toUrl: t.string(),
    httpStatus: t.int({ description: '301 or 302 (default).' }),
    position: t.int({ description: 'Where to insert it; 0 (first) by default.' }),
    enabled: t.boolean(),
    force: t.boolean(),
    description: t.string(),
  }),
});

builder.mutationFields((t) => ({
  createRedirect: t.prismaField({
    authScopes: (_root, args) => ({ maintainerOfProject: args.project }),
    type: Redirect,
    args: { project: t.arg.string({ required: true }), input: t.arg({ type: RedirectInput, required: true }) },
    errors: writeErrors,
    resolve: (query, _root, args, ctx) => createRedirect(ctx, args.project, args.input, rowQuery(query)),
  }),
  updateRedirect: t.prismaField({
    authScopes: (_root, args) => ({ maintainerOfProject: args.project }),
    type: Redirect,
    description: 'Replaces a redirect (PUT); with `partial: true`, changes only the fields given (PATCH).',
    args: {
      project: t.arg.string({ required: true }),
      id: t.arg.int({ required: true }),
      input: t.arg({ type: RedirectInput, required: true }),
      partial: t.arg.boolean({ defaultValue: false }),
    },
    errors: writeErrors,
    resolve: (query, _root, args, ctx) => updateRedirect(ctx, args.project, args.id, args.input, args.partial ?? false, rowQuery(query)),
  }),
  deleteRedirect: t.prismaField({
    authScopes: (_root, args) => ({ maintainerOfProject: args.project }),
    type: Redirect,
    description: 'Deletes a redirect and closes the gap in the positions. Answers with the redirect as it was.',
    args: { project: t.arg.string({ required: true }), id: t.arg.int({ required: true }) },
    errors: writeErrors,
    // The selection is loaded before the row is deleted: afterwards its relations cannot be.
    resolve: (query, _root, args, ctx) => deleteRedirect(ctx, args.project, args.id, rowQuery(query)),
  }),
}));
