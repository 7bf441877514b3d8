// Incoming webhooks from GitHub, GitLab, Bitbucket and generic clients (docs/design/read-the-docs.md §6): find the
// project and integration, verify the payload against the integration's secret, then build the
// versions a push touches or sync versions on branch/tag create and delete. HTTP-free: the router
// in src/webhooks/ hands in the raw request and writes back the status and body this returns.
// Replays and the numbers payloads may hold: docs/design/deliveries.md.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IntegrationProvider, Project, Version } from '../generated/prisma/client.ts';
import type { ExternalSource } from '../notifications/send.ts';
import { isMaintainer } from './access.ts';
import { announceBuild, queueBuild } from './builds.ts';
import { findDisallowed } from './characters.ts';
import { authenticate, contextFor, type Services } from './context.ts';
import { LecternError } from './errors.ts';
import { queueProjectVersionSync } from './version-sync.ts';

export interface WebhookRequest {
  /** From `/webhook/<provider>/<project>/`; undefined on `/webhook/<project>/<id>/`. */
  provider?: IntegrationProvider;
  projectSlug: string;
  integrationId?: number;
  /** Lower-case header names. */
  header: (name: string) => string | undefined;
  body: Buffer;
}

export interface WebhookResponse {
  status: number;
  body: Record<string, unknown>;
  /** For the log line: which event was handled; never a secret or signature. */
  event?: string;
}

// The exact bodies of docs/design/read-the-docs.md §6.2–§6.4.
const PROJECT_NOT_FOUND = 'Project not found';
const NO_INTEGRATION = 'No Integration matches the given query.';
const MULTIPLE = 'Multiple integrations found for this project. Please use the webhook URL with an explicit integration ID.';
const NO_SECRET =
  "This webhook doesn't have a secret configured.\nFor security reasons, webhooks without a secret are no longer permitted.\nFor more information, read our blog post: https://blog.readthedocs.com/security-update-on-incoming-webhooks/.";
const INVALID_PAYLOAD: Record<IntegrationProvider, string> = {
  github: 'Payload not valid, invalid or missing signature',
  gitlab: 'Payload not valid, invalid or missing token',
  bitbucket: 'Payload not valid',
  generic: PROJECT_NOT_FOUND,
};
const UNHANDLED = 'Unhandled webhook event';
const ALREADY_PROCESSED = 'Delivery already processed';
/** How long a delivery (its id and its body) is remembered: a replay within this time is answered without acting again. */
const DELIVERY_MEMORY_MS = 24 * 60 * 60 * 1000;
const ZERO_SHA = '0'.repeat(40);

const answer = (status: number, body: Record<string, unknown>, event?: string): WebhookResponse => ({ status, body, event });
const detail = (status: number, text: string, event?: string) => answer(status, { detail: text }, event);

/** A refusal that ends the pipeline with its status and `{"detail": ...}`. */
class Refused extends Error {
  readonly status: number;
  readonly detail: string;
  constructor(status: number, detail: string) {
    super(detail);
    this.status = status;
    this.detail = detail;
  }
}

/**
 * Constant-time equality of two strings of any lengths: both are hashed first, so the comparison
 * is over equal-length digests and its time says nothing about where they differ, or their length.
 */
export function safeEqual(a: string, b: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(a), digest(b));
}

/** `sha256=<hex HMAC-SHA256 of the raw body>`, as GitHub and Bitbucket sign. */
export function signatureOf(secret: string, body: Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** The payload as an object: JSON, or a form (GitHub's `payload=` field holds JSON; other forms are their fields). */
function parsePayload(body: Buffer, contentType: string | undefined): Record<string, unknown> {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  const text = body.toString('utf8');
  let parsed: unknown;
  if (type === 'application/x-www-form-urlencoded') {
    const form = new URLSearchParams(text);
    const payload = form.get('payload');
    if (payload !== null) parsed = parseJson(payload);
    else {
      const fields: Record<string, unknown> = {};
      for (const key of new Set(form.keys())) {
        const all = form.getAll(key);
        fields[key] = all.length === 1 ? all[0] : all;
      }
      parsed = fields;
    }
  } else {
    parsed = text.trim() === '' ? {} : parseJson(text);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new Refused(400, 'JSON parse error - the payload must be a JSON object.');
  }
  return parsed as Record<string, unknown>;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Not the parser's message: it quotes the body back.
    throw new Refused(400, 'JSON parse error - the request body is not valid JSON.');
  }
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);
const obj = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/**
 * What a delivery is known by: the id its provider gives it (the same on its retries), under the
 * header it came in, and its body's hash. GitHub: `X-GitHub-Delivery`. GitLab: `Idempotency-Key`
 * (17.4+, kept on retries), else `X-Gitlab-Webhook-UUID`, else `X-Gitlab-Event-UUID`. Bitbucket:
 * `X-Request-UUID` (its `X-Hook-UUID` names the webhook, the same on every delivery, so it
 * identifies none). The id is not signed: a captured delivery sent again with a new id (or none) is
 * still the same signed body, so the body is a key too (GitHub's and Bitbucket's signatures are
 * HMACs of the body and nothing else; GitLab's token says nothing of the body). Two real events
 * never have the same body (a push names its commits and times). The generic API has neither: it
 * is a request to build ("build main"), which may be asked again and again, and its proof is the
 * token itself, not a signature of something sent once.
 */
export function deliveryKeysOf(provider: IntegrationProvider, req: WebhookRequest): string[] {
  if (provider === 'generic') return [];
  const names: Record<Exclude<IntegrationProvider, 'generic'>, string[]> = {
    github: ['x-github-delivery'],
    gitlab: ['idempotency-key', 'x-gitlab-webhook-uuid', 'x-gitlab-event-uuid'],
    bitbucket: ['x-request-uuid'],
  };
  const keys = [`body:sha256:${createHash('sha256').update(req.body).digest('hex')}`];
  for (const name of names[provider]) {
    const value = req.header(name)?.trim();
    if (!value) continue;
    const id = `${name}:${value}`;
    // The column holds 255 characters; a longer id is kept as its hash.
    keys.unshift(id.length <= 255 ? id : `${name}:sha256:${createHash('sha256').update(value).digest('hex')}`);
    break;
  }
  return keys;
}

/**
 * Records that `integrationId` received the delivery known by `keys`; false when any of them came
 * in the last day. Atomic across processes (the unique key decides); records older than a day are
 * deleted here.
 */
async function firstDelivery(s: Services, integrationId: number, keys: string[]): Promise<boolean> {
  await s.prisma.webhookDelivery.deleteMany({ where: { receivedAt: { lt: new Date(Date.now() - DELIVERY_MEMORY_MS) } } });
  const { count } = await s.prisma.webhookDelivery.createMany({ data: keys.map((deliveryId) => ({ integrationId, deliveryId })), skipDuplicates: true });
  return count === keys.length;
}

/** Forgets a delivery that was not handled (an error, or refused): the provider's retry is acted on. */
async function forgetDelivery(s: Services, integrationId: number, keys: string[]): Promise<void> {
  await s.prisma.webhookDelivery.deleteMany({ where: { integrationId, deliveryId: { in: keys } } });
}

export async function handleWebhook(s: Services, req: WebhookRequest): Promise<WebhookResponse> {
  const seen: Seen = {};
  let res: WebhookResponse;
  try {
    res = await pipeline(s, req, seen);
  } catch (e) {
    if (seen.delivery) await forgetDelivery(s, seen.delivery.integrationId, seen.delivery.keys).catch(() => undefined);
    if (e instanceof Refused) return detail(e.status, e.detail);
    throw e;
  }
  if (seen.delivery && res.status >= 300) await forgetDelivery(s, seen.delivery.integrationId, seen.delivery.keys);
  return res;
}

/** The delivery this request recorded, once it has. */
interface Seen {
  delivery?: { integrationId: number; keys: string[] };
}

async function pipeline(s: Services, req: WebhookRequest, seen: Seen): Promise<WebhookResponse> {
  const project = await s.prisma.project.findUnique({ where: { slug: req.projectSlug } });
  if (!project) return detail(404, PROJECT_NOT_FOUND);
  if (project.uploadOnly) return detail(400, 'This project is upload-only: it has no repository to build from.');
  // docs/design/read-the-docs.md §6.2 step 2 (406 for a disabled project) has no counterpart: Lectern has no
  // disabled projects.

  // An id past the column's range names no integration (and must not reach the query as one).
  if (req.integrationId !== undefined && !(req.integrationId <= 2 ** 31 - 1)) return detail(404, NO_INTEGRATION);
  const candidates = await s.prisma.integration.findMany({
    where: req.integrationId !== undefined ? { id: req.integrationId, projectId: project.id } : { projectId: project.id, provider: req.provider! },
    orderBy: { id: 'asc' },
  });
  if (candidates.length === 0) return detail(404, NO_INTEGRATION);
  if (candidates.length > 1) return detail(400, MULTIPLE);
  const integration = candidates[0]!;
  const provider = integration.provider;

  if (!integration.secretEncrypted) return detail(400, NO_SECRET);
  const secret = s.cipher.decrypt(integration.secretEncrypted);

  // Signatures are checked over the raw bytes, before anything is parsed.
  if (provider === 'github' || provider === 'bitbucket') {
    const given = req.header(provider === 'github' ? 'x-hub-signature-256' : 'x-hub-signature');
    if (!given || !safeEqual(given, signatureOf(secret, req.body))) return detail(400, INVALID_PAYLOAD[provider]);
  } else if (provider === 'gitlab') {
    const given = req.header('x-gitlab-token');
    if (!given || !safeEqual(given, secret)) return detail(400, INVALID_PAYLOAD.gitlab);
  }

  // Only a delivery that proved it comes from the provider is remembered (anyone could send ids).
  const keys = deliveryKeysOf(provider, req);
  if (keys.length) {
    if (!(await firstDelivery(s, integration.id, keys))) return detail(200, ALREADY_PROCESSED, 'duplicate');
    seen.delivery = { integrationId: integration.id, keys };
  }

  const payload = parsePayload(req.body, req.header('content-type'));
  // Text no field may hold (a NUL, which PostgreSQL cannot store, other controls, half a
  // surrogate pair), anywhere in the payload: refused before any of it is read (domain/characters.ts).
  const bad = findDisallowed(payload);
  if (bad) throw new Refused(400, `Invalid payload. ${bad.path.join('.') || 'The payload'} holds ${bad.codePoint}: control characters are not allowed.`);

  // A generic integration is called by a maintainer with an API token (as a logged-in maintainer
  // on Read the Docs), or with the integration's token in the body. On `/webhook/generic/<project>/`
  // the body token works too (Read the Docs answers 404 there by accident, docs/design/read-the-docs.md §6.5).
  if (provider === 'generic' && !(await maintainerCalls(s, project, req))) {
    const token = payload.token;
    if (token === undefined) return detail(403, 'Authentication credentials were not provided.');
    if (typeof token !== 'string' || !safeEqual(token, secret)) return detail(404, PROJECT_NOT_FOUND);
  }

  switch (provider) {
    case 'github':
      return github(s, project, integration.id, req, payload);
    case 'gitlab':
      return gitlab(s, project, integration.id, payload);
    case 'bitbucket':
      return bitbucket(s, project, req, payload);
    case 'generic':
      return genericApi(s, project, payload);
  }
}

/** True when the request carries a maintainer's API token; a token for anyone else is refused as 404. */
async function maintainerCalls(s: Services, project: Project, req: WebhookRequest): Promise<boolean> {
  const authorization = req.header('authorization');
  if (!authorization) return false;
  let viewer;
  try {
    viewer = await authenticate(s.prisma, authorization);
  } catch (e) {
    if (e instanceof LecternError) throw new Refused(e.status, e.message);
    throw e;
  }
  if (!viewer) return false;
  if (!(await isMaintainer(contextFor(s, viewer), project.id))) throw new Refused(404, PROJECT_NOT_FOUND);
  return true;
}

type Ref = { name: string; type: 'branch' | 'tag' | null };

function parseRef(ref: unknown): Ref {
  if (typeof ref !== 'string' || ref === '') throw new Refused(400, 'Parameter "ref" is required');
  if (ref.startsWith('refs/heads/') && ref.length > 11) return { name: ref.slice(11), type: 'branch' };
  if (ref.startsWith('refs/tags/') && ref.length > 10) return { name: ref.slice(10), type: 'tag' };
  // Read the Docs raises an uncaught ValueError here (a 500, docs/design/read-the-docs.md §6.4); this is bad input, so a 400.
  throw new Refused(400, 'Parameter "ref" must be refs/heads/<branch> or refs/tags/<tag>');
}

async function github(s: Services, project: Project, integrationId: number, req: WebhookRequest, payload: Record<string, unknown>): Promise<WebhookResponse> {
  const event = req.header('x-github-event') || 'push';
  // A pull request's payload is read whole before anything changes: a refused one changes nothing.
  let preview: { action: string; source: ExternalSource; sha: string } | undefined;
  if (event === 'pull_request' && project.externalBuildsEnabled) {
    const action = str(payload.action);
    if (action !== 'opened' && action !== 'synchronize' && action !== 'reopened' && action !== 'closed') return detail(200, UNHANDLED, event);
    const pr = obj(payload.pull_request);
    const number = positiveInteger(payload.number, 'number');
    const source: ExternalSource = {
      provider: 'github',
      integrationId,
      repository: repositoryName(need(obj(payload.repository)?.full_name, 'full_name')),
      number,
      url: str(pr?.html_url) ?? null,
      ref: `pull/${number}/head`,
    };
    preview = { action, source, sha: action === 'closed' ? '' : commitSha(obj(pr?.head)?.sha, 'sha') };
  }
  await followDefaultBranch(s, project, str(obj(payload.repository)?.default_branch));
  if (preview) {
    if (preview.action === 'closed') return closePreview(s, project, preview.source, event);
    return buildPreview(s, project, preview.source, preview.sha, event);
  }
  if (event === 'ping') return detail(200, 'Webhook configured correctly', event);
  if (event === 'create' || event === 'delete') return sync(s, project, event);
  if (event === 'push') {
    if (payload.created === true || payload.deleted === true) return sync(s, project, event);
    return build(s, project, [parseRef(payload.ref)], event);
  }
  return detail(200, UNHANDLED, event);
}

/** GitHub's `owner/name`: it goes into the statuses API's path, so nothing but a name. */
function repositoryName(v: string | number): string {
  const name = String(v);
  if (!/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(name) || name.split('/').some((p) => /^\.+$/.test(p)))
    throw new Refused(400, 'Invalid payload. full_name is required.');
  return name;
}

/**
 * A number of a payload (a pull request's number, GitLab's iid and project id): a JSON number
 * that is a whole number from 1 to 2^53 - 1, or a string of ASCII digits naming one, without a
 * leading zero. Nothing else: no sign, space, exponent, fraction, hex or other digits (`"0x10"`,
 * `"1e3"`, `" 8"`, `"+8"`, `"８"`, 8.5, -1, 1e21), each of which some parser reads as a number
 * and another does not. A leading zero is refused too: `"010"` is 10 to JavaScript and Python 3,
 * 8 to C's strtol(…, 0) and YAML 1.1, and no forge writes one, so one spelling per number.
 */
export function payloadNumber(v: unknown): number | null {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v > 0 ? v : null;
  if (typeof v !== 'string' || !/^[1-9][0-9]{0,15}$/.test(v)) return null;
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : null;
}

/** payloadNumber(), or a 400 naming the field. */
function positiveInteger(v: unknown, key: string): number {
  if (v === undefined || v === null || v === '') throw new Refused(400, `Invalid payload. ${key} is required.`);
  const n = payloadNumber(v);
  if (n === null) throw new Refused(400, `Invalid payload. ${key} must be a positive whole number: a JSON number or ASCII digits without a leading zero.`);
  return n;
}

/** A commit's sha as the forges write it: 7 to 64 hexadecimal digits, as a string. */
function commitSha(v: unknown, key: string): string {
  if (v === undefined || v === null || v === '') throw new Refused(400, `Invalid payload. ${key} is required.`);
  if (typeof v !== 'string' || !/^[0-9a-f]{7,64}$/i.test(v)) throw new Refused(400, `Invalid payload. ${key} must be a commit's hexadecimal sha.`);
  return v;
}

/** A value a pull request's payload must have, as Read the Docs' ParseError names it. */
function need(v: unknown, key: string): string | number {
  if ((typeof v === 'string' && v !== '') || (typeof v === 'number' && Number.isSafeInteger(v))) return v;
  throw new Refused(400, `Invalid payload. ${key} is required.`);
}

/**
 * Builds a pull request's head as its external version (Read the Docs' get_or_create_external_version
 * and trigger_build): named by the number, private or public as the project's
 * externalBuildsPrivacyLevel says, open again if it was closed.
 */
async function buildPreview(s: Services, project: Project, source: ExternalSource, commit: string, event: string): Promise<WebhookResponse> {
  const slug = String(source.number);
  const build = await s.prisma.$transaction(async (tx) => {
    const existing = await tx.version.findUnique({ where: { projectId_slug: { projectId: project.id, slug } } });
    if (existing && existing.type !== 'external') throw new Refused(400, `The project has a version named ${slug} that is not a pull request's preview.`);
    const data = {
      identifier: commit,
      active: true,
      privacyLevel: project.externalBuildsPrivacyLevel,
      externalState: 'open',
      externalClosedAt: null,
      externalSource: source as unknown as object,
    };
    const version = existing
      ? await tx.version.update({ where: { id: existing.id }, data })
      : await tx.version.create({ data: { ...data, projectId: project.id, slug, verboseName: slug, type: 'external' } });
    return queueBuild(tx, s.events, version, commit);
  });
  announceBuild(s.events, build);
  return answer(200, { build_triggered: true, project: project.slug, versions: [slug] }, event);
}

/** Marks a pull request's preview closed: it is removed with its files LECTERN_PREVIEW_RETENTION_DAYS later. */
async function closePreview(s: Services, project: Project, source: ExternalSource, event: string): Promise<WebhookResponse> {
  const slug = String(source.number);
  const { count } = await s.prisma.version.updateMany({
    where: { projectId: project.id, slug, type: 'external', externalState: 'open' },
    data: { externalState: 'closed', externalClosedAt: new Date() },
  });
  return answer(200, { closed: count > 0, project: project.slug, versions: count > 0 ? [slug] : [] }, event);
}

async function gitlab(s: Services, project: Project, integrationId: number, payload: Record<string, unknown>): Promise<WebhookResponse> {
  const event = str(payload.object_kind) ?? 'push';
  // A merge request's payload is read whole before anything changes: a refused one changes nothing.
  let preview: { open: boolean; source: ExternalSource; sha: string } | undefined;
  if (event === 'merge_request' && project.externalBuildsEnabled) {
    const mr = obj(payload.object_attributes);
    const action = str(mr?.action);
    const open = action === 'open' || action === 'reopen' || action === 'update';
    if (!open && action !== 'close' && action !== 'merge') return detail(200, UNHANDLED, event);
    const number = positiveInteger(mr?.iid, 'iid');
    const source: ExternalSource = {
      provider: 'gitlab',
      integrationId,
      repository: String(positiveInteger(obj(payload.project)?.id, 'id')),
      number,
      url: str(mr?.url) ?? null,
      ref: `merge-requests/${number}/head`,
    };
    preview = { open, source, sha: open ? commitSha(obj(mr?.last_commit)?.id, 'id') : '' };
  }
  await followDefaultBranch(s, project, str(obj(payload.project)?.default_branch));
  if (preview) {
    if (!preview.open) return closePreview(s, project, preview.source, event);
    return buildPreview(s, project, preview.source, preview.sha, event);
  }
  if (event === 'push' || event === 'tag_push') {
    if (payload.before === ZERO_SHA || payload.after === ZERO_SHA) return sync(s, project, event);
    return build(s, project, [parseRef(payload.ref)], event);
  }
  return detail(200, UNHANDLED, event);
}

async function bitbucket(s: Services, project: Project, req: WebhookRequest, payload: Record<string, unknown>): Promise<WebhookResponse> {
  const event = req.header('x-event-key') || 'repo:push';
  if (event !== 'repo:push') return detail(200, UNHANDLED, event);
  const changes = obj(payload.push)?.changes;
  if (!Array.isArray(changes)) return detail(400, 'Invalid request', event);
  const refs: Ref[] = [];
  for (const change of changes) {
    const c = obj(change);
    if (!c) return detail(400, 'Invalid request', event);
    const old = obj(c.old);
    const next = obj(c.new);
    if (!old || !next) continue; // a created or deleted branch or tag: handled by the sync below
    const name = str(next.name);
    if (!name) return detail(400, 'Invalid request', event);
    refs.push({ name, type: next.type === 'branch' ? 'branch' : 'tag' });
  }
  return refs.length ? build(s, project, refs, event) : sync(s, project, event);
}

async function genericApi(s: Services, project: Project, payload: Record<string, unknown>): Promise<WebhookResponse> {
  const event = 'generic';
  const defaultBranch = str(payload.default_branch);
  if (payload.default_branch !== undefined && defaultBranch === undefined) return detail(400, '"default_branch" must be a branch name', event);
  await followDefaultBranch(s, project, defaultBranch);
  const given = payload.branches;
  let names: string[];
  if (given === undefined) {
    // The project's default branch: the one configured, else the one `latest` follows.
    const latest = await s.prisma.version.findUnique({ where: { projectId_slug: { projectId: project.id, slug: 'latest' } } });
    const name = project.defaultBranch ?? latest?.identifier;
    if (!name) {
      const versions = latest?.active ? await queueBuilds(s, [latest]) : [];
      return answer(200, pushResponse(project, versions), event);
    }
    names = [name];
  } else if (typeof given === 'string') names = [given];
  else if (Array.isArray(given) && given.every((b) => typeof b === 'string')) names = given as string[];
  else return detail(400, '"branches" must be a branch name or a list of them', event);
  return build(
    s,
    project,
    names.map((name) => ({ name, type: null })),
    event,
  );
}

/**
 * Points a machine-managed `latest` at the provider's default branch, when the project has not
 * chosen one itself (docs/design/read-the-docs.md §4.2, `update_default_branch`).
 */
async function followDefaultBranch(s: Services, project: Project, branch: string | undefined): Promise<void> {
  if (!branch || project.defaultBranch) return;
  await s.prisma.version.updateMany({
    where: { projectId: project.id, slug: 'latest', machine: true, OR: [{ identifier: null }, { identifier: { not: branch } }] },
    data: { identifier: branch, type: 'branch' },
  });
}

const pushResponse = (project: Project, versions: string[]) => ({ build_triggered: versions.length > 0, project: project.slug, versions });

/**
 * Builds every active version a ref names: a branch or tag version of that name, or a machine
 * version (`latest`, `stable`) that follows it (`build_versions_from_names`). Inactive ones are skipped.
 */
async function build(s: Services, project: Project, refs: Ref[], event: string): Promise<WebhookResponse> {
  const versions = await s.prisma.version.findMany({
    where: {
      projectId: project.id,
      active: true,
      OR: refs.flatMap((r) => {
        const type = r.type ? { type: r.type } : { type: { in: ['branch' as const, 'tag' as const] } };
        return [
          { machine: false, verboseName: r.name, ...type },
          { machine: true, identifier: r.name, ...type },
        ];
      }),
    },
    orderBy: { id: 'asc' },
  });
  return answer(200, pushResponse(project, await queueBuilds(s, versions)), event);
}

/** Queues one build per version in one transaction, and announces them once it has committed. */
async function queueBuilds(s: Services, versions: Version[]): Promise<string[]> {
  if (!versions.length) return [];
  const builds = await s.prisma.$transaction(async (tx) => {
    const queued = [];
    for (const v of versions) queued.push(await queueBuild(tx, s.events, v));
    return queued;
  });
  for (const b of builds) announceBuild(s.events, b);
  return versions.map((v) => v.slug);
}

/**
 * Queues a sync of the versions from the repository (a branch or tag was created or deleted), run
 * by a worker. As Read the Docs' `sync_versions_response`: `versions_synced` says a sync was
 * queued (not that it is done), and `versions` names the `latest` it syncs from; without one,
 * nothing is queued and both say so.
 */
async function sync(s: Services, project: Project, event: string): Promise<WebhookResponse> {
  const queued = await queueProjectVersionSync(s, project.id);
  return answer(200, { build_triggered: false, project: project.slug, versions: queued ? ['latest'] : [], versions_synced: queued }, event);
}
