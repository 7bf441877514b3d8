// Outgoing webhooks (build notifications) and what became of their deliveries; maintainers only.
// The secret is answered once, by the write that sets it, and never read back.
import { createWebhook, deleteWebhook, updateWebhook } from '../../domain/notifications.ts';
import { OutgoingState } from '../../generated/prisma/enums.ts';
import type { WebhookEvent as Event } from '../../queue/deliveries.ts';
import { builder } from '../builder.ts';
import { rowQuery } from './common.ts';
import { writeErrors } from './errors.ts';
import { Project } from './project.ts';

const WebhookEventEnum = builder.enumType('WebhookEvent', {
  values: {
    BUILD_TRIGGERED: { value: 'build:triggered', description: 'A build was queued (an upload: started).' },
    BUILD_PASSED: { value: 'build:passed', description: 'A build finished successfully.' },
    BUILD_FAILED: { value: 'build:failed', description: 'A build failed (not when it was cancelled or superseded).' },
  } as const,
});
const DeliveryStateEnum = builder.enumType(OutgoingState, { name: 'DeliveryState' });

export const NotificationDelivery = builder.prismaObject('NotificationDelivery', {
  description: 'One event sent (or being sent) to a webhook, and how its last attempt went.',
  fields: (t) => ({
    id: t.exposeInt('id'),
    event: t.field({ type: WebhookEventEnum, resolve: (d) => d.event as Event }),
    buildId: t.exposeInt('buildId'),
    state: t.expose('state', {
      type: DeliveryStateEnum,
      description: 'queued (waiting, or waiting to retry), running, delivered (a 2xx answer), failed (no attempts left).',
    }),
    attempts: t.exposeInt('attempts'),
    statusCode: t.exposeInt('statusCode', { nullable: true, description: "The receiver's status code at the last attempt; null when none came." }),
    error: t.exposeString('error', { nullable: true, description: 'Why the last attempt failed.' }),
    durationMs: t.exposeInt('durationMs', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    lastAttemptAt: t.expose('lastAttemptAt', { type: 'DateTime', nullable: true }),
    nextAttemptAt: t.field({
      type: 'DateTime',
      nullable: true,
      select: { runAt: true },
      resolve: (d) => (d.state === 'queued' ? d.runAt : null),
    }),
  }),
});

export const Webhook = builder.prismaObject('Webhook', {
  fields: (t) => ({
    id: t.exposeInt('id'),
    url: t.exposeString('url'),
    events: t.field({ type: [WebhookEventEnum], resolve: (w) => w.events as Event[] }),
    payload: t.exposeString('payload', { nullable: true, description: 'The template; null sends the default JSON.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    modifiedAt: t.expose('modifiedAt', { type: 'DateTime' }),
    project: t.relation('project'),
    deliveries: t.relation('deliveries', {
      description: 'The most recent deliveries, newest first (20 unless `limit`, at most 100).',
      args: { limit: t.arg.int() },
      query: (args) => ({ orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: Math.min(Math.max(args.limit ?? 20, 1), 100) }),
    }),
  }),
});

builder.prismaObjectField(Project, 'webhooks', (t) =>
  t.prismaField({
    type: [Webhook],
    description: 'Outgoing webhooks (build notifications). Maintainers only.',
    authScopes: (project) => ({ maintainerOf: project.id }),
    resolve: (query, project, _args, ctx) => ctx.prisma.webhook.findMany({ ...query, where: { projectId: project.id }, orderBy: { id: 'asc' } }),
  }),
);

const WebhookInput = builder.inputType('WebhookInput', {
  fields: (t) => ({
    url: t.string({ description: 'http(s); loopback and private addresses only where LECTERN_WEBHOOK_ALLOW names them.' }),
    events: t.field({ type: [WebhookEventEnum] }),
    payload: t.string({
      description:
        "A template with Read the Docs' variables ({{ event }}, {{ build.id }}, {{ build.url }}, {{ build.docs_url }}, {{ build.commit }}, {{ build.start_date }}, {{ project.slug }}, {{ project.name }}, {{ project.url }}, {{ version.slug }}, {{ version.name }}); empty for the default JSON.",
    }),
    secret: t.string({ description: 'Your own signing secret (8 to 255 characters); generated on creation when left out.' }),
  }),
});

interface Written {
  webhook: Awaited<ReturnType<typeof createWebhook>>['webhook'];
  secret: string | null;
}
const WrittenWebhook = builder.objectRef<Written>('WrittenWebhook').implement({
  fields: (t) => ({
    webhook: t.field({ type: Webhook, resolve: (c) => c.webhook }),
    secret: t.exposeString('secret', {
      nullable: true,
      description: 'The signing secret, shown this once when this write set it (X-Hub-Signature is its HMAC-SHA256 of the body, in hex); null otherwise.',
    }),
  }),
});

builder.mutationFields((t) => ({
  createWebhook: t.field({
    authScopes: (_root, args) => ({ maintainerOfProject: args.project }),
    type: WrittenWebhook,
    args: { project: t.arg.string({ required: true }), input: t.arg({ type: WebhookInput, required: true }) },
    errors: writeErrors,
    resolve: (_root, args, ctx) => createWebhook(ctx, args.project, args.input, {}),
  }),
  updateWebhook: t.field({
    authScopes: (_root, args) => ({ maintainerOfProject: args.project }),
    type: WrittenWebhook,
    args: { project: t.arg.string({ required: true }), id: t.arg.int({ required: true }), input: t.arg({ type: WebhookInput, required: true }) },
    errors: writeErrors,
    resolve: (_root, args, ctx) => updateWebhook(ctx, args.project, args.id, args.input, {}),
  }),
  deleteWebhook: t.prismaField({
    authScopes: (_root, args) => ({ maintainerOfProject: args.project }),
    type: Webhook,
    description: 'Answers with the webhook as it was; its deliveries go with it.',
    args: { project: t.arg.string({ required: true }), id: t.arg.int({ required: true }) },
    errors: writeErrors,
    resolve: (query, _root, args, ctx) => deleteWebhook(ctx, args.project, args.id, rowQuery(query)),
  }),
}));
