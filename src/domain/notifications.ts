// Outgoing webhooks of a project, as Read the Docs has them (WebHook): a URL, the build events it
// wants, an optional payload template, and a signing secret. The secret is generated unless given,
// stored encrypted, and shown once, in the answer to the write that set it. Sending is the
// workers' (queue/deliveries.ts, notifications/send.ts).
import { randomBytes } from 'node:crypto';
import type { Prisma } from '../generated/prisma/client.ts';
import { checkWebhookUrl } from '../notifications/send.ts';
import { WEBHOOK_EVENTS, type WebhookEvent } from '../queue/deliveries.ts';
import { projectToChange } from './access.ts';
import type { Context } from './context.ts';
import { NotFoundError } from './errors.ts';
import { Collector, checkString } from './validate.ts';

export interface WebhookInput {
  url?: string | null;
  events?: WebhookEvent[] | null;
  /** A template with Read the Docs' `{{ variables }}`; '' or null: the default JSON payload. */
  payload?: string | null;
  /** Set a secret of your own (8 to 255 characters); a new one is generated when a webhook is created without. */
  secret?: string | null;
}

export interface WebhookQuery {
  include?: Prisma.WebhookInclude;
  select?: Prisma.WebhookSelect;
}

function check(ctx: Context, input: WebhookInput, creating: boolean): void {
  const c = new Collector();
  if (creating || input.url !== undefined) {
    const bad = checkString(input.url, { max: 600, required: true });
    c.add('url', bad ?? (input.url ? (checkWebhookUrl(input.url.trim(), ctx.config.webhooks.allow) ?? undefined) : undefined));
  }
  if (creating || input.events !== undefined) {
    if (!input.events?.length) c.add('events', 'Choose at least one event.');
    else if (input.events.some((e) => !WEBHOOK_EVENTS.includes(e))) c.add('events', `Events are ${WEBHOOK_EVENTS.join(', ')}.`);
  }
  if (input.payload) c.add('payload', checkString(input.payload, { max: 25_000 }));
  if (input.secret !== undefined && input.secret !== null && (input.secret.length < 8 || input.secret.length > 255)) {
    c.add('secret', 'A secret has 8 to 255 characters.');
  }
  c.throwIfAny();
}

export async function createWebhook<Q extends WebhookQuery>(ctx: Context, projectSlug: string, input: WebhookInput, query: Q) {
  const project = await projectToChange(ctx, projectSlug);
  check(ctx, input, true);
  const secret = input.secret ?? randomBytes(24).toString('hex');
  const webhook = await ctx.prisma.webhook.create({
    ...query,
    data: {
      projectId: project.id,
      url: input.url!.trim(),
      events: [...new Set(input.events!)],
      payload: input.payload || null,
      secretEncrypted: ctx.cipher.encrypt(secret),
    },
  });
  return { webhook, secret };
}

/** Changes what is given; a new `secret` is answered once, as on creation. */
export async function updateWebhook<Q extends WebhookQuery>(ctx: Context, projectSlug: string, id: number, input: WebhookInput, query: Q) {
  const project = await projectToChange(ctx, projectSlug);
  check(ctx, input, false);
  const where = { id, projectId: project.id };
  if (!(await ctx.prisma.webhook.findFirst({ where, select: { id: true } }))) throw new NotFoundError('Webhook');
  const webhook = await ctx.prisma.webhook.update({
    ...query,
    where: { id },
    data: {
      ...(input.url !== undefined ? { url: input.url!.trim() } : {}),
      ...(input.events !== undefined ? { events: [...new Set(input.events!)] } : {}),
      ...(input.payload !== undefined ? { payload: input.payload || null } : {}),
      ...(input.secret ? { secretEncrypted: ctx.cipher.encrypt(input.secret) } : {}),
    },
  });
  return { webhook, secret: input.secret ?? null };
}

export async function deleteWebhook<Q extends WebhookQuery>(ctx: Context, projectSlug: string, id: number, query: Q) {
  const project = await projectToChange(ctx, projectSlug);
  const where = { id, projectId: project.id };
  return ctx.prisma.$transaction(async (tx) => {
    const shown = await tx.webhook.findFirst({ ...query, where });
    if (!shown || (await tx.webhook.deleteMany({ where })).count === 0) throw new NotFoundError('Webhook');
    return shown;
  });
}
