// Incoming webhooks played by someone who captured a signed delivery, or who writes numbers the
// way some parser reads them (issue 21): a delivery sent again under a new delivery id, with the
// id left out, or with another event header is known by its body and queues nothing, for a day,
// on GitHub, GitLab and Bitbucket integrations alike; the generic API, a build request with no
// signature, builds each time it is asked. Numbers in pull-request payloads are JSON numbers or
// ASCII digits, nothing else: every other spelling is a 400 naming the field, and changes nothing.
// docs/design/deliveries.md.
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncProjectVersions } from '../../src/domain/version-sync.ts';
import { SYNC_TASK } from '../../src/queue/version-syncs.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { importProject } from '../helpers/builds.ts';
import { type GitServer, startGitServer } from '../helpers/git.ts';

let t: TestApp;
let git: GitServer;
let token: string;
let slug: string;
const hooks: Record<string, { id: number; secret: string }> = {};
const ALREADY = { detail: 'Delivery already processed' };

const sign = (secret: string, body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

async function post(path: string, body: string, headers: Record<string, string>) {
  const req = t.http.post(path).set('content-type', 'application/json');
  for (const [k, v] of Object.entries(headers)) req.set(k, v);
  return req.send(body);
}

/** The project's builds so far. */
const buildCount = () => t.db.prisma.build.count({ where: { project: { slug } } });

/** Sends, and says how many builds it queued, with the answer. */
async function queued(send: () => Promise<{ status: number; body: unknown }>) {
  const before = await buildCount();
  const res = await send();
  return { builds: (await buildCount()) - before, status: res.status, body: res.body };
}

async function integration(provider: string) {
  const r = await t.gql(
    `mutation($p: String!, $provider: IntegrationProvider!) { createIntegration(project: $p, provider: $provider) { ... on MutationCreateIntegrationSuccess { data { secret integration { id } } } } }`,
    { p: slug, provider },
    token,
  );
  return { id: r.data.createIntegration.data.integration.id as number, secret: r.data.createIntegration.data.secret as string };
}

beforeAll(async () => {
  t = await testApp();
  token = await t.user('maintainer');
  git = await startGitServer();
  const repo = git.repo('replays');
  const p = await importProject(t, token, 'Replays', repo.url);
  slug = p.slug;
  await syncProjectVersions(t.services, p.id, repo.url);
  await t.gql(`mutation($p: String!) { updateProject(slug: $p, input: {externalBuildsEnabled: true}) { __typename } }`, { p: slug }, token);
  for (const provider of ['github', 'gitlab', 'bitbucket']) hooks[provider] = await integration(provider);
  hooks.generic = await integration('generic');
}, 120_000);
afterAll(async () => {
  await git?.close();
  await t?.close();
});

/** A push of each provider, each with a commit of its own, and how it is sent with a given delivery id (null: none). */
const providers = {
  github: () => {
    const body = JSON.stringify({ ref: 'refs/heads/main', after: randomBytes(20).toString('hex'), created: false, deleted: false });
    return (id: string | null, event = 'push') =>
      post(`/api/v2/webhook/github/${slug}/`, body, {
        'x-github-event': event,
        'x-hub-signature-256': sign(hooks.github!.secret, body),
        ...(id ? { 'x-github-delivery': id } : {}),
      });
  },
  gitlab: () => {
    const body = JSON.stringify({ object_kind: 'push', ref: 'refs/heads/main', before: 'a'.repeat(40), after: randomBytes(20).toString('hex') });
    return (id: string | null) =>
      post(`/api/v2/webhook/gitlab/${slug}/`, body, { 'x-gitlab-token': hooks.gitlab!.secret, ...(id ? { 'idempotency-key': id } : {}) });
  },
  bitbucket: () => {
    const hash = randomBytes(20).toString('hex');
    const body = JSON.stringify({ push: { changes: [{ old: { type: 'branch', name: 'main' }, new: { type: 'branch', name: 'main', target: { hash } } }] } });
    return (id: string | null) =>
      post(`/api/v2/webhook/bitbucket/${slug}/`, body, {
        'x-event-key': 'repo:push',
        'x-hub-signature': sign(hooks.bitbucket!.secret, body),
        ...(id ? { 'x-request-uuid': `{${id}}` } : {}),
      });
  },
};

describe('a delivery sent again is known by its body', () => {
  for (const [provider, push] of Object.entries(providers)) {
    it(`${provider}: the same body under a new delivery id, or none, queues nothing; another push builds`, async () => {
      const send = push();
      expect(await queued(() => send(randomUUID()))).toMatchObject({ status: 200, builds: 1 });
      for (const id of [randomUUID(), null, `${randomUUID()}-${'x'.repeat(300)}`]) {
        expect(await queued(() => send(id)), String(id)).toEqual({ status: 200, builds: 0, body: ALREADY });
      }
      expect(await queued(() => push()(randomUUID()))).toMatchObject({ status: 200, builds: 1 });
    });
  }

  it('github: the signed body of a push under another event header (create: a version sync) is the same delivery', async () => {
    const send = providers.github();
    expect(await queued(() => send(randomUUID()))).toMatchObject({ status: 200, builds: 1 });
    const syncs = await t.db.prisma.job.count({ where: { task: SYNC_TASK } });
    expect(await queued(() => send(randomUUID(), 'create'))).toEqual({ status: 200, builds: 0, body: ALREADY });
    expect(await t.db.prisma.job.count({ where: { task: SYNC_TASK } })).toBe(syncs);
  });

  it('a body first sent with a bad signature is not remembered: the real delivery is acted on', async () => {
    const body = JSON.stringify({ ref: 'refs/heads/main', after: randomBytes(20).toString('hex') });
    const forged = await post(`/api/v2/webhook/github/${slug}/`, body, { 'x-github-event': 'push', 'x-hub-signature-256': sign('guessed', body) });
    expect(forged.status).toBe(400);
    const real = await queued(() =>
      post(`/api/v2/webhook/github/${slug}/`, body, {
        'x-github-event': 'push',
        'x-hub-signature-256': sign(hooks.github!.secret, body),
        'x-github-delivery': randomUUID(),
      }),
    );
    expect(real).toMatchObject({ status: 200, builds: 1 });
  });

  it('remembers a body for a day, then acts on it again', async () => {
    const send = providers.gitlab();
    expect(await queued(() => send(randomUUID()))).toMatchObject({ builds: 1 });
    expect(await queued(() => send(randomUUID()))).toMatchObject({ builds: 0 });
    await t.db.prisma.webhookDelivery.updateMany({ where: { integrationId: hooks.gitlab!.id }, data: { receivedAt: new Date(Date.now() - 25 * 3600 * 1000) } });
    expect(await queued(() => send(randomUUID()))).toMatchObject({ status: 200, builds: 1 });
  });

  it('the generic API (a build request, its token no signature) builds each time it is asked', async () => {
    const body = JSON.stringify({ token: hooks.generic!.secret, branches: 'main' });
    for (let i = 0; i < 2; i++)
      expect(await queued(() => post(`/api/v2/webhook/${slug}/${hooks.generic!.id}/`, body, {}))).toMatchObject({ status: 200, builds: 1 });
  });
});

/** Numbers written as JSON text, each as some parser would read it. */
const BAD_NUMBERS = [
  '"0x10"',
  '"1e3"',
  '" 8"',
  '"8 "',
  '"+8"',
  '"-8"',
  '"08"',
  '"8.0"',
  '"8_000"',
  '"\uFF18"', // full-width 8
  '"\u0668"', // Arabic-Indic 8
  '"8\\u0000"',
  '""',
  '"0"',
  '0',
  '8.5',
  '-1',
  '1e21',
  '9007199254740993',
  '123456789012345678901234567890',
  '"99999999999999999999"',
  'true',
  'null',
  '[8]',
  '{"n": 8}',
];

describe('numbers in payloads are JSON numbers or ASCII digits', () => {
  const github = (number: string, sha = randomBytes(20).toString('hex'), defaultBranch = 'main') => {
    const body = `{"action": "opened", "number": ${number}, "pull_request": {"head": {"sha": "${sha}"}}, "repository": {"full_name": "acme/docs", "default_branch": "${defaultBranch}"}}`;
    return post(`/api/v2/webhook/github/${slug}/`, body, {
      'x-github-event': 'pull_request',
      'x-hub-signature-256': sign(hooks.github!.secret, body),
      'x-github-delivery': randomUUID(),
    });
  };
  const gitlab = (iid: string, id: string) => {
    const body = `{"object_kind": "merge_request", "project": {"id": ${id}, "default_branch": "elsewhere"}, "object_attributes": {"action": "open", "iid": ${iid}, "last_commit": {"id": "${randomBytes(20).toString('hex')}"}}}`;
    return post(`/api/v2/webhook/gitlab/${slug}/`, body, { 'x-gitlab-token': hooks.gitlab!.secret, 'idempotency-key': randomUUID() });
  };

  /** What a refused payload could have changed: versions, builds, delivery records, where latest points. */
  const state = async () => ({
    versions: await t.db.prisma.version.findMany({ where: { project: { slug } }, select: { slug: true, identifier: true }, orderBy: { slug: 'asc' } }),
    builds: await buildCount(),
    deliveries: await t.db.prisma.webhookDelivery.count(),
  });

  it('accepts 8 and "8" as pull request 8', async () => {
    for (const [n, pr] of [
      ['8', '8'],
      ['"9"', '9'],
      ['2147483648', '2147483648'],
    ] as const) {
      const res = await github(n);
      expect(res.status, `${n}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body).toMatchObject({ build_triggered: true, versions: [pr] });
    }
  });

  it(`refuses every other spelling with a 400 naming the field, and changes nothing (${BAD_NUMBERS.length} spellings, GitHub and GitLab)`, async () => {
    const before = await state();
    for (const n of BAD_NUMBERS) {
      // A payload whose default branch would move latest, if anything were acted on.
      const res = await github(n, undefined, 'moved');
      expect(res.status, n).toBe(400);
      expect(res.body.detail, n).toMatch(/^Invalid payload\. number (is required|must be a positive whole number|holds U\+0000)/);
      const iid = await gitlab(n, '42');
      expect(iid.status, n).toBe(400);
      expect(iid.body.detail, n).toMatch(/^Invalid payload\. (object_attributes\.)?iid /);
      const id = await gitlab('3', n);
      expect(id.status, n).toBe(400);
      expect(id.body.detail, n).toMatch(/^Invalid payload\. (project\.)?id /);
    }
    expect(await state()).toEqual(before);
  });

  it('refuses a NUL or another control character anywhere in a payload, naming the field, and changes nothing', async () => {
    const before = await state();
    for (const [payload, field] of [
      [{ ref: 'refs/heads/ma\u0000in', after: randomBytes(20).toString('hex') }, 'ref'],
      [{ ref: 'refs/heads/main', after: randomBytes(20).toString('hex'), repository: { default_branch: 'x\u001b[2J' } }, 'repository.default_branch'],
      [{ ref: 'refs/heads/main', commits: [{ message: 'fine' }, { message: 'half \ud800' }] }, 'commits.1.message'],
    ] as const) {
      const body = JSON.stringify(payload);
      const res = await post(`/api/v2/webhook/github/${slug}/`, body, {
        'x-github-event': 'push',
        'x-hub-signature-256': sign(hooks.github!.secret, body),
        'x-github-delivery': randomUUID(),
      });
      expect(res.status, body).toBe(400);
      expect(res.body.detail).toMatch(new RegExp(`^Invalid payload\\. ${field.replace(/\./g, '\\.')} holds U\\+`));
    }
    expect(await state()).toEqual(before);
  });

  it('refuses a head sha that is not a string of hex digits, naming it', async () => {
    for (const sha of ['g'.repeat(40), '12345', `${'a'.repeat(40)}\\n`]) {
      const res = await github('5', sha);
      expect(res.status, sha).toBe(400);
      expect(res.body.detail).toMatch(/^Invalid payload\. sha /);
    }
  });
});
