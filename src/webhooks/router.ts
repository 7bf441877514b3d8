// The HTTP side of incoming webhooks (docs/design/read-the-docs.md §6.1), mounted at /api/v2/webhook: reads the raw
// body (signatures are over the exact bytes), hands it to src/domain/webhooks.ts, writes its answer.
// Every refusal is a 4xx with a JSON `{"detail": ...}` body; secrets and signatures are never logged.
import express, { type ErrorRequestHandler, type Request, type Response, type Router } from 'express';
import type { Services } from '../domain/context.ts';
import { handleWebhook, type WebhookRequest } from '../domain/webhooks.ts';
import type { IntegrationProvider } from '../generated/prisma/client.ts';

export interface WebhookRouterOptions {
  maxBodyBytes: number;
  services: Services;
}

const PROVIDERS: IntegrationProvider[] = ['github', 'gitlab', 'bitbucket', 'generic'];
/** Read the Docs' slug pattern for these URLs, `[-\w]+`. */
const SLUG = /^[-\w]+$/;
/** Integration ids are positive integers that fit the column. */
const ID = /^[1-9]\d{0,9}$/;

export function webhookRouter(opts: WebhookRouterOptions): Router {
  const router = express.Router();

  const handle = (provider: IntegrationProvider | undefined, projectSlug: string, integrationId?: number) => async (req: Request, res: Response) => {
    const request: WebhookRequest = {
      provider,
      projectSlug,
      integrationId,
      header: (name) => req.get(name),
      body: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0),
    };
    const answer = await handleWebhook(opts.services, request);
    opts.services.log.info(
      { project: projectSlug, provider: provider ?? 'by-id', integration: integrationId, event: answer.event, status: answer.status },
      'webhook',
    );
    res.status(answer.status).json(answer.body);
  };

  const notAllowed = (req: Request, res: Response) => {
    res
      .status(405)
      .set('allow', 'POST, OPTIONS')
      .json({ detail: `Method "${req.method}" not allowed.` });
  };

  router.all('/:first/:second', (req, res, next) => {
    const first = req.params.first as string;
    const second = req.params.second as string;
    let target: [IntegrationProvider | undefined, string, number?] | undefined;
    if ((PROVIDERS as string[]).includes(first) && SLUG.test(second)) target = [first as IntegrationProvider, second];
    else if (SLUG.test(first) && ID.test(second)) target = [undefined, first, Number(second)];
    if (!target) return next();
    if (req.method === 'OPTIONS') {
      res.set('allow', 'POST, OPTIONS').status(200).end();
      return;
    }
    if (req.method !== 'POST') return notAllowed(req, res);
    // Bytes of any content type, bounded: JSON, GitHub's form posts and the generic API's forms.
    express.raw({ limit: opts.maxBodyBytes, type: () => true })(req, res, (err?: unknown) => {
      if (err) return next(err);
      handle(...target)(req, res).catch(next);
    });
  });

  const onError: ErrorRequestHandler = (err, _req, res, _next) => {
    const status = typeof err?.status === 'number' && err.status >= 400 && err.status < 500 ? err.status : 500;
    if (status === 500) opts.services.log.error({ err }, 'webhook failed');
    const message =
      status === 413 ? `Request body larger than ${opts.maxBodyBytes} bytes.` : status === 500 ? 'Internal server error.' : 'Invalid request body.';
    res.status(status).json({ detail: message });
  };
  router.use(onError);
  return router;
}
