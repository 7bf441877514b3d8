// Email to maintainers about builds (docs/design/email.md), through a real SMTP server in the test
// (smtp-server from npm on 127.0.0.1, with STARTTLS under a certificate made here and a login),
// for real builds run by a worker: a failed build of the default version emails each maintainer who
// has an address and wants it, a build that passes after it says so, one that passes after a pass
// says nothing; the server refusing for a while is retried as webhooks are; the project's switch
// and the user's own turn them off; an installation without SMTP settings queues none. And a
// forgotten password reset by email: the link, used once, ending every session, and the same
// answer for an account that does not exist.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import supertest from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '../../src/builds/worker.ts';
import { DASHBOARD_DIR } from '../../src/dashboard.ts';
import { RESET_REFUSED, RESET_REQUESTED } from '../../src/domain/password-reset.ts';
import { setPassword } from '../../src/domain/users.ts';
import { hashToken } from '../../src/secrets.ts';
import { servedTestApp, type TestApp, testApp } from '../helpers/app.ts';
import { importProject, latestBuildOf, startTestWorker, waitForBuild } from '../helpers/builds.ts';
import { type GitServer, git as runGit, startGitServer } from '../helpers/git.ts';
import { launchChromium, requireTool } from '../helpers/publish.ts';
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
/** The SMTP settings of the test's apps. */
let smtpEnv: Record<string, string>;

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
  smtpEnv = {
    LECTERN_SMTP_HOST: '127.0.0.1',
    LECTERN_SMTP_PORT: String(port),
    LECTERN_SMTP_USER: SMTP_USER,
    LECTERN_SMTP_PASSWORD: SMTP_PASSWORD,
    LECTERN_SMTP_FROM: 'Lectern Docs <docs@lectern.test>',
    // The server's own certificate, self-signed, is the one authority trusted.
    LECTERN_SMTP_CA_FILE: cert,
    LECTERN_WEBHOOK_TIMEOUT_SECONDS: '5',
  };
  t = await testApp(smtpEnv);
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

/** A GraphQL request as the dashboard makes it (Lectern's own origin), with a session cookie when given; the answer and any cookie set. */
async function browser(app: TestApp, query: string, variables: Record<string, unknown> = {}, cookie?: string) {
  const req = supertest(app.handler).post('/graphql').set('accept', 'application/json').set('origin', app.config.publicUrl);
  if (cookie) req.set('cookie', cookie);
  const res = await req.send({ query, variables });
  const set = ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith('lectern_session='));
  return { data: res.body.data, cookie: set?.split(';')[0] };
}

const REQUEST = `mutation($n: String!) { requestPasswordReset(nameOrEmail: $n) { __typename ... on MutationRequestPasswordResetSuccess { data } ... on Error { message } } }`;
const RESET = `mutation($t: String!, $p: String!) { resetPassword(token: $t, newPassword: $p) { __typename ... on ValidationError { fieldErrors { field messages } } } }`;
const SIGN_IN = `mutation($u: String!, $p: String!) { signIn(username: $u, password: $p) { __typename } }`;

describe('password reset by email', () => {
  let link: string;

  it('emails a link to the account asked for, by name or address, and answers the same when there is none', async () => {
    await account('carol', { email: 'Carol@Example.com' });
    expect((await browser(t, 'query { passwordResetAvailable }')).data).toEqual({ passwordResetAvailable: true });
    const asked = await browser(t, REQUEST, { n: 'carol@example.com' });
    expect(asked.data.requestPasswordReset).toEqual({ __typename: 'MutationRequestPasswordResetSuccess', data: RESET_REQUESTED });
    const mail = await until('the reset email', () => mails.find((m) => m.subject === 'Set a new password for Lectern'));
    expect(mail.to.toLowerCase()).toBe('carol@example.com');
    link = /(http\S+\/reset-password\?token=\S+)/.exec(mail.text)![1]!;
    expect(link.startsWith(`${t.config.publicUrl}/reset-password?token=`)).toBe(true);
    // Only the token's hash is kept.
    const token = new URL(link).searchParams.get('token')!;
    const rows = await t.db.prisma.passwordReset.findMany();
    expect(rows.map((r) => r.tokenHash)).toEqual([hashToken(token)]);
    expect(JSON.stringify(rows)).not.toContain(token);
    // No such account: the same answer, and nothing made; asking again at once sends no second link.
    for (const n of ['nobody@example.com', 'nobody', 'carol']) {
      expect((await browser(t, REQUEST, { n })).data.requestPasswordReset.data).toBe(RESET_REQUESTED);
    }
    expect(await t.db.prisma.passwordReset.count()).toBe(1);
  });

  it('sets the new password once, with the rules every password follows, and ends every session', async () => {
    await setPassword(t.db.prisma, 'carol', 'the old password of carol');
    const session = (await browser(t, SIGN_IN, { u: 'carol', p: 'the old password of carol' })).cookie!;
    expect((await browser(t, 'query { viewer { username } }', {}, session)).data.viewer).toEqual({ username: 'carol' });
    const token = new URL(link).searchParams.get('token')!;
    const weak = await browser(t, RESET, { t: token, p: 'carol' });
    expect(weak.data.resetPassword.__typename).toBe('ValidationError');
    expect(weak.data.resetPassword.fieldErrors[0].field).toBe('newPassword');
    expect((await browser(t, RESET, { t: token, p: 'a brand new password 9' })).data.resetPassword).toEqual({ __typename: 'MutationResetPasswordSuccess' });
    expect((await browser(t, 'query { viewer { username } }', {}, session)).data.viewer).toBeNull();
    expect((await browser(t, SIGN_IN, { u: 'carol', p: 'a brand new password 9' })).data.signIn.__typename).toBe('MutationSignInSuccess');
    // Used once; a made-up token is refused the same way.
    for (const tok of [token, 'made-up-token']) {
      expect((await browser(t, RESET, { t: tok, p: 'another new password 10' })).data.resetPassword).toEqual({
        __typename: 'ValidationError',
        fieldErrors: [{ field: 'token', messages: [RESET_REFUSED] }],
      });
    }
  });
});

describe('invitations to an organization by email', () => {
  it('sends the one-time link to the address given, which the invited person takes', async () => {
    const owner = await t.user('inviting-owner');
    await t.gql(`mutation { createOrganization(input: { name: "Mailco" }) { __typename } }`, {}, owner);
    const res = await t.gql(
      `mutation { inviteToOrganization(organization: "mailco", input: { email: "dana@example.com" }) { ... on MutationInviteToOrganizationSuccess { data { link emailed } } } }`,
      {},
      owner,
    );
    expect(res.data.inviteToOrganization.data.emailed).toBe(true);
    const mail = await until('the invitation email', () => mails.find((m) => m.subject === 'Join Mailco on Lectern'));
    expect(mail.to).toBe('dana@example.com');
    expect(mail.text).toContain(res.data.inviteToOrganization.data.link);
    const dana = await t.user('dana');
    const token = new URL(res.data.inviteToOrganization.data.link).searchParams.get('token');
    const joined = await t.gql(`mutation($t: String!) { acceptInvitation(token: $t) { __typename } }`, { t: token }, dana);
    expect(joined.data.acceptInvitation.__typename).toBe('MutationAcceptInvitationSuccess');
  });
});

describe('password reset in the dashboard', () => {
  it('takes a person from "Forgot your password?" at phone width to signing in with the new one', async () => {
    if (!existsSync(path.join(DASHBOARD_DIR, 'index.html'))) throw new Error('the dashboard is not built: run `npm run web:build` (npm test runs it first)');
    const served = await servedTestApp(smtpEnv);
    const chromium = await launchChromium();
    try {
      await served.t.user('erin');
      await served.t.db.prisma.user.update({ where: { username: 'erin' }, data: { email: 'erin@example.com' } });
      await setPassword(served.t.db.prisma, 'erin', 'the password erin forgot');
      const page = await chromium.newPage({ viewport: { width: 390, height: 844 } });
      await page.goto(`${served.origin}/sign-in`);
      await page.getByRole('link', { name: 'Forgot your password?' }).click();
      await page.getByLabel('Username or email address').fill('erin@example.com');
      await page.getByRole('button', { name: 'Email me a link' }).click();
      // The status reads "Working…" until the server answers.
      await expect.poll(() => page.getByRole('status').textContent(), { timeout: 15_000 }).toBe(RESET_REQUESTED);
      const mail = await until('the reset email', () => mails.find((m) => m.to === 'erin@example.com'));
      const link = /(http\S+\/reset-password\?token=\S+)/.exec(mail.text)![1]!;
      expect(link.startsWith(`${served.origin}/reset-password?token=`)).toBe(true);
      await page.goto(link);
      await page.getByLabel('New password', { exact: true }).fill('erin remembers this one 3');
      await page.getByLabel('New password, again').fill('erin remembers this one 3');
      await page.getByRole('button', { name: 'Set the password' }).click();
      await page.getByRole('heading', { name: 'Your password is set' }).waitFor();
      const { scroll, inner } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
      expect(scroll).toBeLessThanOrEqual(inner);
      await page.getByRole('link', { name: 'Sign in' }).click();
      await page.getByLabel('Username').fill('erin');
      await page.getByLabel('Password').fill('erin remembers this one 3');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${served.origin}/`);
      await page.screenshot({ path: 'test-results/password-reset-phone.png' });
    } finally {
      await chromium.close();
      await served.stop();
    }
  }, 120_000);
});

describe('an installation without SMTP settings', () => {
  it('queues no email, and offers no password reset', async () => {
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
        expect((await browser(quiet, 'query { passwordResetAvailable }')).data).toEqual({ passwordResetAvailable: false });
        const refused = await browser(quiet, REQUEST, { n: 'dora@example.com' });
        expect(refused.data.requestPasswordReset.__typename).toBe('ForbiddenError');
      } finally {
        await w.stop(1000);
      }
    } finally {
      await quiet.close();
    }
  }, 120_000);
});
