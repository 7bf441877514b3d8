// Email to maintainers about builds (docs/design/email.md), through a real SMTP server in the test
// (smtp-server from npm on 127.0.0.1, with STARTTLS under a certificate made here and a login),
// for real builds run by a worker: a failed build of the default version emails each maintainer who
// has an address and wants it, a build that passes after it says so, one that passes after a pass
// says nothing; the server refusing for a while is retried as webhooks are; the project's switch
// and the user's own turn them off; an installation without SMTP settings queues none.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '../../src/builds/worker.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { importProject, latestBuildOf, startTestWorker, waitForBuild } from '../helpers/builds.ts';
import { type GitServer, git as runGit, startGitServer } from '../helpers/git.ts';
import { requireTool } from '../helpers/publish.ts';
import { until } from '../helpers/wait.ts';

interface Mail {
  to: string;
  from: string;
  subject: string;
  text: string;
  secure: boolean;
  user: string | undefined;
}

const SMTP_USER = 'lectern';
const SMTP_PASSWORD = 'smtp password 42';
const FAILING = 'version: 2\nbuild:\n  commands:\n    - "exit 3"\n';
const PASSING = 'version: 2\nbuild:\n  commands:\n    - mkdir -p $READTHEDOCS_OUTPUT/html\n    - echo "<h1>ok</h1>" > $READTHEDOCS_OUTPUT/html/index.html\n';

let t: TestApp;
let worker: Worker;
let git: GitServer;
let smtp: SMTPServer;
let dir: string;
let alice: string;
/** Each user's API token. */
const tokens: Record<string, string> = {};
const mails: Mail[] = [];
/** How many more RCPT TO the server refuses (451, a temporary failure). */
let refuse = 0;

beforeAll(async () => {
  requireTool('/usr/bin/openssl', 'openssl');
  dir = mkdtempSync(path.join(os.tmpdir(), 'lectern-smtp-'));
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync(
    '/usr/bin/openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    {
      stdio: 'ignore',
    },
  );
  smtp = new SMTPServer({
    key: readFileSync(key),
    cert: readFileSync(cert),
    authMethods: ['PLAIN', 'LOGIN'],
    // No login before STARTTLS: a password never goes in clear.
    allowInsecureAuth: false,
    onAuth(auth, _session, cb) {
      if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD) cb(null, { user: auth.username });
      else cb(new Error('Invalid username or password'));
    },
    onRcptTo(_address, _session, cb) {
      if (refuse > 0) {
        refuse--;
        const e = new Error('Mailbox busy, try again later') as Error & { responseCode: number };
        e.responseCode = 451;
        return cb(e);
      }
      cb();
    },
    onData(stream, session, cb) {
      simpleParser(stream).then(
        (m) => {
          const to = Array.isArray(m.to) ? m.to[0] : m.to;
          mails.push({
            to: to?.text ?? '',
            from: m.from?.text ?? '',
            subject: m.subject ?? '',
            text: m.text ?? '',
            secure: session.secure,
            user: session.user as string | undefined,
          });
          cb();
        },
        (e: Error) => cb(e),
      );
    },
  });
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
  const port = (smtp.server.address() as { port: number }).port;
  t = await testApp({
    LECTERN_SMTP_HOST: '127.0.0.1',
    LECTERN_SMTP_PORT: String(port),
    LECTERN_SMTP_USER: SMTP_USER,
    LECTERN_SMTP_PASSWORD: SMTP_PASSWORD,
    LECTERN_SMTP_FROM: 'Lectern Docs <docs@lectern.test>',
    // The server's own certificate, self-signed, is the one authority trusted.
    LECTERN_SMTP_CA_FILE: cert,
    LECTERN_WEBHOOK_TIMEOUT_SECONDS: '5',
  });
  for (const u of ['alice', 'bob', 'carol']) tokens[u] = await t.user(u);
  alice = tokens.alice!;
  git = await startGitServer();
  worker = await startTestWorker(t, { notifications: { retry: { baseSeconds: 0.2, capSeconds: 0.4, maxAttempts: 5 } } });
}, 60_000);
afterAll(async () => {
  await worker?.stop(1000);
  await git?.close();
  await t?.close();
  await new Promise((r) => (smtp ? smtp.close(() => r(undefined)) : r(undefined)));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Sets a user's own email settings, as they would (updateAccount with their token). */
async function account(username: string, input: Record<string, unknown>) {
  const token = tokens[username]!;
  const r = await t.gql(
    `mutation($input: UpdateAccountInput!) { updateAccount(input: $input) { __typename ... on ValidationError { fieldErrors { field messages } } } }`,
    { input },
    token,
  );
  return r.data.updateAccount;
}

/** A project of alice's, with bob and carol as maintainers too, whose first build has ended. */
async function project(name: string, files: Record<string, string>) {
  const repo = git.repo(name.toLowerCase(), files);
  const p = await importProject(t, alice, name, repo.url);
  for (const u of ['bob', 'carol']) await t.gql(`mutation { addMaintainer(project: "${p.slug}", username: "${u}") { __typename } }`, {}, alice);
  return { ...p, repo, first: await waitForBuild(t, await latestBuildOf(t, p.slug)) };
}

async function build(slug: string) {
  const res = await t.http.post(`/api/v3/projects/${slug}/versions/latest/builds/`).set('authorization', `Token ${alice}`);
  return waitForBuild(t, res.body.build.id);
}

/** The email deliveries of a build, once none is still waiting or being sent. */
const settled = (buildId: number) =>
  until(`the emails of build ${buildId}`, async () => {
    const rows = await t.db.prisma.notificationDelivery.findMany({ where: { buildId, kind: 'email' }, include: { user: { select: { username: true } } } });
    return rows.every((d) => d.state === 'delivered' || d.state === 'failed') && rows;
  });

describe('email about builds', () => {
  beforeAll(async () => {
    expect(await account('alice', { email: 'alice@example.com' })).toEqual({ __typename: 'MutationUpdateAccountSuccess' });
    await account('bob', { email: 'bob@example.com', emailNotifications: false });
    // carol has no address.
  });

  it('checks the address a user gives, and changes nothing when it is refused', async () => {
    expect(await account('carol', { email: 'not an address' })).toEqual({
      __typename: 'ValidationError',
      fieldErrors: [{ field: 'email', messages: ['Enter a valid email address.'] }],
    });
    expect((await t.db.prisma.user.findUniqueOrThrow({ where: { username: 'carol' } })).email).toBeNull();
  });

  it('emails each maintainer who wants it when a build of the default version fails, over STARTTLS with the login set', async () => {
    const p = await project('Mailed', { '.readthedocs.yaml': FAILING });
    expect(p.first.success).toBe(false);
    const rows = await settled(p.first.id);
    expect(rows.map((d) => [d.user?.username, d.state])).toEqual([['alice', 'delivered']]);
    const mail = await until('the email', () => mails.find((m) => m.subject === 'Failed: Mailed (latest)'));
    expect(mail).toMatchObject({ to: 'alice@example.com', from: '"Lectern Docs" <docs@lectern.test>', secure: true, user: SMTP_USER });
    expect(mail.text).toContain(`Build #${p.first.id} of Mailed, version latest, failed.`);
    expect(mail.text).toContain(`${t.config.publicUrl}/projects/${p.slug}/builds/${p.first.id}`);
    expect(mails.filter((m) => m.to === 'bob@example.com')).toEqual([]);
  });

  it('says when a build passes again, and nothing when it passes after a pass', async () => {
    const p = await project('Recovers', { '.readthedocs.yaml': FAILING });
    await settled(p.first.id);
    p.repo.commit({ '.readthedocs.yaml': PASSING });
    runGit(p.repo.work, 'push', '--quiet', 'origin', 'main');
    const passed = await build(p.slug);
    expect(passed.success).toBe(true);
    expect((await settled(passed.id)).map((d) => d.state)).toEqual(['delivered']);
    const mail = await until('the email', () => mails.find((m) => m.subject === 'Passed again: Recovers (latest)'));
    expect(mail.text).toContain('passed: the docs are published again.');
    const again = await build(p.slug);
    expect(again.success).toBe(true);
    expect(await settled(again.id)).toEqual([]);
  });

  it('retries when the SMTP server refuses for a while, as webhooks are', async () => {
    refuse = 2;
    const p = await project('Retried', { '.readthedocs.yaml': FAILING });
    const [row] = await settled(p.first.id);
    expect(row).toMatchObject({ state: 'delivered', attempts: 3, statusCode: 250, error: null });
    expect(mails.filter((m) => m.subject === 'Failed: Retried (latest)')).toHaveLength(1);
  });

  it('sends none when the project turns them off, nor to a maintainer who turned them off since', async () => {
    const p = await project('Quiet', { '.readthedocs.yaml': FAILING });
    await settled(p.first.id);
    await t.gql(`mutation { updateProject(slug: "${p.slug}", input: { emailNotifications: false }) { __typename } }`, {}, alice);
    expect(await settled((await build(p.slug)).id)).toEqual([]);
    await t.gql(`mutation { updateProject(slug: "${p.slug}", input: { emailNotifications: true }) { __typename } }`, {}, alice);
    await account('alice', { emailNotifications: false });
    try {
      expect(await settled((await build(p.slug)).id)).toEqual([]);
    } finally {
      await account('alice', { emailNotifications: true });
    }
  });

  it('never shows the SMTP password: not in GraphQL, not in the deliveries', async () => {
    const rows = await t.db.prisma.notificationDelivery.findMany({ where: { kind: 'email' } });
    expect(JSON.stringify(rows)).not.toContain(SMTP_PASSWORD);
    const me = await t.gql('query { viewer { email emailNotifications } }', {}, alice);
    expect(me.data.viewer).toEqual({ email: 'alice@example.com', emailNotifications: true });
  });
});

describe('an installation without SMTP settings', () => {
  it('queues no email', async () => {
    const quiet = await testApp();
    try {
      const token = await quiet.user('dora');
      await quiet.gql(`mutation { updateAccount(input: { email: "dora@example.com" }) { __typename } }`, {}, token);
      const w = await startTestWorker(quiet);
      try {
        const repo = git.repo('unmailed', { '.readthedocs.yaml': FAILING });
        const p = await importProject(quiet, token, 'Unmailed', repo.url);
        const b = await waitForBuild(quiet, await latestBuildOf(quiet, p.slug));
        expect(b.success).toBe(false);
        expect(await quiet.db.prisma.notificationDelivery.count({ where: { kind: 'email' } })).toBe(0);
      } finally {
        await w.stop(1000);
      }
    } finally {
      await quiet.close();
    }
  }, 120_000);
});
