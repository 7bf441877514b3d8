// Incoming webhooks (GitHub, GitLab, Bitbucket, generic). The secret is returned once, by the
// mutation that creates it; maintainers only.
import { createIntegration, deleteIntegration, setIntegrationToken } from '../../domain/integrations.ts';
import { builder } from '../builder.ts';
import { IntegrationProviderEnum, rowQuery } from './common.ts';
import { writeErrors } from './errors.ts';
import { Project } from './project.ts';

export const Integration = builder.prismaObject('Integration', {
  fields: (t) => ({
    id: t.exposeInt('id'),
    provider: t.expose('provider', { type: IntegrationProviderEnum }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    hasToken: t.boolean({
      description: "Whether a token for the forge's API is set (commit statuses on pull requests' previews); the token itself is never shown.",
      select: { tokenEncrypted: true },
      resolve: (i) => i.tokenEncrypted !== null,
    }),
    apiUrl: t.exposeString('apiUrl', { nullable: true, description: "The forge API's base URL; null: api.github.com or gitlab.com/api/v4." }),
    project: t.relation('project'),
    webhookUrl: t.string({
      select: { project: { select: { slug: true } } },
      resolve: (i, _a, ctx) => `${ctx.config.publicUrl}/api/v2/webhook/${i.project.slug}/${i.id}/`,
    }),
  }),
});

builder.prismaObjectField(Project, 'integrations', (t) =>
  t.prismaField({
    type: [Integration],
    description: 'Maintainers only.',
    authScopes: (project) => ({ maintainerOf: project.id }),
    resolve: async (query, project, _args, ctx) => {
      return ctx.prisma.integration.findMany({ ...query, where: { projectId: project.id }, orderBy: { id: 'asc' } });
    },
  }),
);

interface Created {
  integration: Awaited<ReturnType<typeof createIntegration>>['integration'];
  secret: string;
}
const CreatedIntegration = builder.objectRef<Created>('CreatedIntegration').implement({
  fields: (t) => ({
    integration: t.field({ type: Integration, resolve: (c) => c.integration }),
    secret: t.exposeString('secret', { description: 'Shown this once: configure it at the provider now.' }),
  }),
});

builder.mutationFields((t) => ({
  createIntegration: t.field({
    authScopes: (_root, args) => ({ maintainerOfProject: args.project }),
    type: CreatedIntegration,
    args: { project: t.arg.string({ required: true }), provider: t.arg({ type: IntegrationProviderEnum, required: true }) },
    errors: writeErrors,
    resolve: (_root, args, ctx) => createIntegration(ctx, args.project, args.provider),
  }),
  setIntegrationToken: t.prismaField({
    authScopes: (_root, args) => ({ maintainerOfProject: args.project }),
    type: Integration,
    description:
      "Sets the token (null removes it) Lectern reports commit statuses with on pull requests' previews (GitHub: a token with the statuses permission; GitLab: a token with the api scope), and the API's base URL when not the provider's public one. The token is stored encrypted and never shown.",
    args: {
      project: t.arg.string({ required: true }),
      id: t.arg.int({ required: true }),
      token: t.arg.string({ required: false }),
      apiUrl: t.arg.string({ required: false }),
    },
    errors: writeErrors,
    resolve: (query, _root, args, ctx) =>
      setIntegrationToken(
        ctx,
        args.project,
        args.id,
        { token: args.token ?? null, apiUrl: args.apiUrl === undefined ? undefined : args.apiUrl },
        rowQuery(query),
      ),
  }),
  deleteIntegration: t.prismaField({
    authScopes: (_root, args) => ({ maintainerOfProject: args.project }),
    type: Integration,
    description: 'Answers with the integration as it was.',
    args: { project: t.arg.string({ required: true }), id: t.arg.int({ required: true }) },
    errors: writeErrors,
    // The selection is loaded before the row is deleted: afterwards its relations cannot be.
    resolve: (query, _root, args, ctx) => deleteIntegration(ctx, args.project, args.id, rowQuery(query)),
  }),
}));
