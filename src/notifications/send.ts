// Sending one webhook notification, as Read the Docs does (readthedocs/builds/tasks.py
// send_webhook, projects/models.py WebHook): the payload is the webhook's template with its
// `{{ variables }}` substituted (99 times each at most), or a default JSON body; it is POSTed with
// `X-RTD-Event` and, signed with the webhook's secret, `X-Hub-Signature` (hex HMAC-SHA256, Read the
// Docs' header) and `X-Hub-Signature-256` (`sha256=<hex>`, GitHub's).
//
// A webhook's URL is the project's to choose, and Lectern sends from inside the company's network:
// it must not become a way to reach what only Lectern can (server-side request forgery). The
// receiver's addresses are checked where the connection is made (the socket's own DNS lookup), so a
// name that resolves elsewhere on the second lookup (DNS rebinding) is refused too: loopback,
// private, link-local, shared, multicast and reserved addresses are refused unless
// LECTERN_WEBHOOK_ALLOW names them. Redirects are not followed.
import { createHmac } from 'node:crypto';
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP } from 'node:net';
import type { Config } from '../config.ts';
import type { PrismaClient } from '../db/database.ts';
import type { ClaimedDelivery, Outcome } from '../queue/deliveries.ts';
import type { Cipher } from '../secrets.ts';
import { documentationUrl, servedProjectSelect } from '../urls.ts';

/** Ranges no notification reaches unless LECTERN_WEBHOOK_ALLOW names them. */
const REFUSED_V4 = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
];
const REFUSED_V6 = ['::/128', '::1/128', '64:ff9b::/96', '100::/64', '2001:db8::/32', 'fc00::/7', 'fe80::/10', 'ff00::/8'];

function blockList(cidrs: string[]): BlockList {
  const list = new BlockList();
  for (const c of cidrs) {
    const [addr, bits] = c.split('/');
    const family = isIP(addr!) === 6 ? 'ipv6' : 'ipv4';
    list.addSubnet(addr!, Number(bits ?? (family === 'ipv6' ? 128 : 32)), family);
  }
  return list;
}
const refused = blockList([...REFUSED_V4, ...REFUSED_V6]);

/** Why Lectern will not send to this address, or null when it may. `allow`: LECTERN_WEBHOOK_ALLOW's ranges. */
export function refusedAddress(address: string, allow: string[]): string | null {
  let ip = address.replace(/^\[|\]$/g, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) ip = mapped[1]!;
  const family = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
  if (!isIP(ip)) return `${address} is not an IP address`;
  if (!refused.check(ip, family)) return null;
  if (allow.length && blockList(allow).check(ip, family)) return null;
  return `${ip} is a loopback, private or reserved address; Lectern sends notifications there only when LECTERN_WEBHOOK_ALLOW names it`;
}

/**
 * Why a webhook URL cannot be used, or null: http(s) only, and a host given as an address (or
 * `localhost`) must be one notifications may reach. Names are resolved when sending.
 */
export function checkWebhookUrl(raw: string, allow: string[]): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'Enter a valid URL.';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'Only http and https URLs are allowed.';
  if (url.username || url.password) return 'The URL may not hold a user name or password; sign with the secret instead.';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return refusedAddress(host, allow);
  if (host === 'localhost' || host.endsWith('.localhost')) return refusedAddress('127.0.0.1', allow);
  return null;
}

type Lookup = NonNullable<http.RequestOptions['lookup']>;

/** dns.lookup, refusing when any address the name resolves to is one notifications may not reach. */
function guardedLookup(allow: string[]): Lookup {
  return ((hostname: string, options: dns.LookupOptions, callback: (...args: unknown[]) => void) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err);
      const list = addresses as dns.LookupAddress[];
      for (const a of list) {
        const why = refusedAddress(a.address, allow);
        if (why) return callback(Object.assign(new Error(`${hostname} resolves to ${why}`), { code: 'LECTERN_REFUSED' }));
      }
      if (options.all) return callback(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  }) as unknown as Lookup;
}

export interface PayloadContext {
  event: string;
  build: { id: number; commit: string | null; createdAt: Date };
  project: { slug: string; name: string };
  version: { slug: string; name: string };
  urls: { build: string; docs: string; project: string };
}

/** Read the Docs' substitutions: `{{ name }}` and `{{name}}`, each replaced 99 times at most. */
export function renderTemplate(template: string, c: PayloadContext): string {
  const values: Record<string, string> = {
    event: c.event,
    'build.id': String(c.build.id),
    'build.commit': c.build.commit ?? '',
    'build.url': c.urls.build,
    'build.docs_url': c.urls.docs,
    'build.start_date': c.build.createdAt.toISOString().slice(0, 19),
    'organization.name': '',
    'organization.slug': '',
    'project.slug': c.project.slug,
    'project.name': c.project.name,
    'project.url': c.urls.project,
    'version.slug': c.version.slug,
    'version.name': c.version.name,
  };
  let out = template;
  for (const [name, value] of Object.entries(values)) {
    for (const token of [`{{ ${name} }}`, `{{${name}}}`]) {
      for (let i = 0; i < 99 && out.includes(token); i++) out = out.replace(token, () => value);
    }
  }
  return out;
}

/** The JSON sent when a webhook has no template: Read the Docs' default, with the event and URLs. */
export function defaultPayload(c: PayloadContext): string {
  const finished = c.event !== 'build:triggered';
  return JSON.stringify({
    event: c.event,
    name: c.project.name,
    slug: c.project.slug,
    version: c.version.slug,
    build: {
      id: c.build.id,
      commit: c.build.commit,
      state: finished ? 'finished' : 'triggered',
      success: finished ? c.event === 'build:passed' : null,
      date: c.build.createdAt.toISOString().slice(0, 19).replace('T', ' '),
      url: c.urls.build,
      docs_url: c.urls.docs,
    },
  });
}

export function sign(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

export interface SendDeps {
  prisma: PrismaClient;
  cipher: Cipher;
  config: Pick<Config, 'publicUrl' | 'docsDomain' | 'webhooks' | 'email'>;
}

/** Characters of an attempt's error kept (a receiver's or a server's words). */
export const MAX_ERROR = 1000;

/** Sends one delivery and says how it went; never throws for the receiver's failures. */
export async function sendDelivery(deps: SendDeps, job: ClaimedDelivery): Promise<Outcome & { terminal?: boolean }> {
  // Email's module (and nodemailer) loads with the first email: most installations send none.
  if (job.kind === 'email') return (await import('./email.ts')).sendEmail(deps, job);
  return job.kind === 'status' ? sendStatus(deps, job) : sendWebhook(deps, job);
}

/** The build an event is about, with what payloads, statuses and emails say of it. */
export async function eventContext(deps: SendDeps, job: ClaimedDelivery) {
  const build = await deps.prisma.build.findUnique({
    where: { id: job.buildId },
    select: {
      id: true,
      commit: true,
      createdAt: true,
      error: true,
      versionSlug: true,
      version: { select: { slug: true, verboseName: true, externalSource: true } },
      project: { select: { ...servedProjectSelect, name: true } },
    },
  });
  if (!build) return null;
  const versionSlug = build.version?.slug ?? build.versionSlug ?? '';
  const { publicUrl } = deps.config;
  const context: PayloadContext = {
    event: job.event,
    build,
    project: { slug: build.project.slug, name: build.project.name },
    version: { slug: versionSlug, name: build.version?.verboseName ?? versionSlug },
    urls: {
      build: `${publicUrl}/projects/${build.project.slug}/builds/${build.id}`,
      docs: documentationUrl(deps.config, build.project, versionSlug),
      project: `${publicUrl}/projects/${build.project.slug}`,
    },
  };
  return { build, context };
}

async function sendWebhook(deps: SendDeps, job: ClaimedDelivery): Promise<Outcome & { terminal?: boolean }> {
  const webhook = job.webhookId === null ? null : await deps.prisma.webhook.findUnique({ where: { id: job.webhookId } });
  const found = await eventContext(deps, job);
  if (!webhook || !found) return { statusCode: null, error: 'The webhook or the build no longer exists.', durationMs: 0, terminal: true };
  const { context } = found;
  const body = webhook.payload ? renderTemplate(webhook.payload, context) : defaultPayload(context);
  const signature = sign(deps.cipher.decrypt(webhook.secretEncrypted), body);
  return post(deps, webhook.url, body, {
    'x-rtd-event': job.event,
    'x-lectern-delivery': String(job.id),
    'x-hub-signature': signature,
    'x-hub-signature-256': `sha256=${signature}`,
  });
}

/** The forges' public APIs, when an integration names no other. */
export const FORGE_API = { github: 'https://api.github.com', gitlab: 'https://gitlab.com/api/v4' } as const;

export interface ExternalSource {
  provider: 'github' | 'gitlab';
  integrationId: number;
  /** GitHub's `owner/name`, GitLab's project id. */
  repository: string;
  number: number;
  /** The pull request's page. */
  url: string | null;
  /** What the build fetches: `pull/<n>/head`, `merge-requests/<n>/head`. */
  ref: string;
}

/**
 * A commit status on a pull request's head, as Read the Docs reports it: pending while it builds
 * (linking the build), then success (linking the preview) or failure (linking the build).
 */
async function sendStatus(deps: SendDeps, job: ClaimedDelivery): Promise<Outcome & { terminal?: boolean }> {
  const integration = job.integrationId === null ? null : await deps.prisma.integration.findUnique({ where: { id: job.integrationId } });
  const found = await eventContext(deps, job);
  const source = found?.build.version?.externalSource as ExternalSource | null | undefined;
  if (!integration?.tokenEncrypted || !found || !source || !found.build.commit) {
    return { statusCode: null, error: 'The integration, its token, the build or its commit no longer exists.', durationMs: 0, terminal: true };
  }
  const { build, context } = found;
  const token = deps.cipher.decrypt(integration.tokenEncrypted);
  const state = job.event === 'build:triggered' ? 'pending' : job.event === 'build:passed' ? 'success' : 'failure';
  const description = { pending: 'The documentation is building.', success: 'The documentation preview is ready.', failure: 'The documentation build failed.' }[
    state
  ];
  const target = state === 'success' ? context.urls.docs : context.urls.build;
  const name = `docs/lectern:${context.project.slug}`;
  const sha = encodeURIComponent(build.commit!);
  if (integration.provider === 'gitlab') {
    const base = (integration.apiUrl ?? FORGE_API.gitlab).replace(/\/+$/, '');
    const body = JSON.stringify({ state: state === 'failure' ? 'failed' : state, target_url: target, description, name });
    return post(deps, `${base}/projects/${encodeURIComponent(source.repository)}/statuses/${sha}`, body, { 'private-token': token });
  }
  const base = (integration.apiUrl ?? FORGE_API.github).replace(/\/+$/, '');
  const repo = source.repository.split('/').map(encodeURIComponent).join('/');
  const body = JSON.stringify({ state, target_url: target, description, context: name });
  return post(deps, `${base}/repos/${repo}/statuses/${sha}`, body, { authorization: `Bearer ${token}`, accept: 'application/vnd.github+json' });
}

/**
 * POSTs JSON to a URL notifications may reach; the outcome, never an exception. The attempt has one
 * deadline, LECTERN_WEBHOOK_TIMEOUT_SECONDS, for everything together: the name's lookup, the
 * connection (TLS included), sending the body and the answer's status line and headers. It is not
 * an idle timeout: a receiver sending one byte every few seconds is cut at the deadline all the
 * same (docs/design/deliveries.md). The answer's status is the outcome: its body is not waited for.
 */
async function post(deps: SendDeps, target: string, body: string, headers: Record<string, string>): Promise<Outcome> {
  const started = Date.now();
  const allow = deps.config.webhooks.allow;
  const problem = checkWebhookUrl(target, allow);
  if (problem) return { statusCode: null, error: `Refused: ${problem}`, durationMs: 0 };
  const url = new URL(target);
  const seconds = deps.config.webhooks.timeoutSeconds;
  return new Promise((resolve) => {
    let settled = false;
    let deadline: NodeJS.Timeout | undefined;
    const done = (o: Omit<Outcome, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      // Whatever is still open of this attempt goes: a receiver keeps nothing of Lectern's.
      req.destroy();
      resolve({ ...o, error: o.error?.slice(0, MAX_ERROR) ?? null, durationMs: Date.now() - started });
    };
    const req = (url.protocol === 'https:' ? https : http).request(
      url,
      {
        method: 'POST',
        lookup: guardedLookup(allow),
        // A connection of its own, closed with the attempt: no socket outlives its deadline in a pool.
        agent: false,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': `Lectern (${new URL(deps.config.publicUrl).host})`,
          connection: 'close',
          ...headers,
        },
      },
      (res) => {
        const code = res.statusCode ?? null;
        done({ statusCode: code, error: code !== null && code >= 200 && code < 300 ? null : `The receiver answered ${code}.` });
      },
    );
    deadline = setTimeout(() => done({ statusCode: null, error: `No answer within ${seconds} seconds.` }), seconds * 1000);
    req.on('error', (e: NodeJS.ErrnoException) =>
      done({ statusCode: null, error: e.code === 'LECTERN_REFUSED' ? `Refused: ${e.message}` : `Could not send: ${e.message}` }),
    );
    req.end(body);
  });
}
