// Email to a project's maintainers about its builds (docs/design/email.md), as Read the Docs sends
// it: when a build of the default version fails, and when one passes again after a failure. A
// delivery of the same queue as webhooks (kind `email`, one per recipient), with the same retries;
// sent through the installation's SMTP server (LECTERN_SMTP_*) with nodemailer, the library Node
// programs send mail with (SMTP, STARTTLS, authentication, and header encoding, so no project or
// version name can add a header).
import nodemailer from 'nodemailer';
import type { EmailSettings } from '../config.ts';
import type { ClaimedDelivery, Outcome } from '../queue/deliveries.ts';
import { eventContext, MAX_ERROR, type SendDeps } from './send.ts';

/** The message about `context`'s build: subject and plain text, in the words Read the Docs uses. */
export function buildEmail(
  event: string,
  c: {
    project: { name: string; slug: string };
    version: { slug: string };
    build: { id: number; commit: string | null };
    urls: { build: string; docs: string; project: string };
  },
  error: string | null,
): { subject: string; text: string } {
  const failed = event === 'build:failed';
  const subject = `${failed ? 'Failed' : 'Passed again'}: ${c.project.name} (${c.version.slug})`;
  const lines = [
    failed
      ? `Build #${c.build.id} of ${c.project.name}, version ${c.version.slug}, failed.`
      : `Build #${c.build.id} of ${c.project.name}, version ${c.version.slug}, passed: the docs are published again.`,
    '',
    ...(failed && error ? [`Error: ${error}`, ''] : []),
    ...(c.build.commit ? [`Commit: ${c.build.commit}`] : []),
    `Build: ${c.urls.build}`,
    ...(failed ? [] : [`Docs: ${c.urls.docs}`]),
    '',
    `You get this email as a maintainer of ${c.project.name}. Turn these emails off for yourself in your account's settings, or for the project in its settings: ${c.urls.project}/settings`,
  ];
  return { subject, text: lines.join('\n') };
}

/** Sends one email delivery and says how it went; never throws for the server's failures. */
export async function sendEmail(deps: SendDeps, job: ClaimedDelivery): Promise<Outcome & { terminal?: boolean }> {
  const settings = deps.config.email;
  if (!settings) return { statusCode: null, error: 'This installation sends no email (LECTERN_SMTP_HOST is not set).', durationMs: 0, terminal: true };
  const found = await eventContext(deps, job);
  const user =
    job.userId === null
      ? null
      : await deps.prisma.user.findUnique({
          where: { id: job.userId },
          select: { email: true, emailNotifications: true, disabledAt: true, projects: { where: { id: job.projectId ?? -1 }, select: { id: true } } },
        });
  // Asked again when it is sent: the recipient may have turned email off, or left the project.
  if (!found || !user?.email || !user.emailNotifications || user.disabledAt || user.projects.length === 0) {
    return {
      statusCode: null,
      error: 'Not sent: the recipient turned email off or is no longer a maintainer, or the build is gone.',
      durationMs: 0,
      terminal: true,
    };
  }
  const { subject, text } = buildEmail(job.event, found.context, found.build.error);
  const started = Date.now();
  try {
    await sendMessage(settings, deps.config.webhooks.timeoutSeconds, { to: user.email, subject, text, headers: { 'X-Lectern-Delivery': String(job.id) } });
    return { statusCode: 250, error: null, durationMs: Date.now() - started };
  } catch (e) {
    const err = e as Error & { responseCode?: number };
    return { statusCode: err.responseCode ?? null, error: `Could not send: ${err.message}`.slice(0, MAX_ERROR), durationMs: Date.now() - started };
  }
}

/**
 * Sends one message through the SMTP server of `settings` within `seconds` (one deadline for the
 * whole conversation, as a webhook's attempt has: nodemailer's timeouts are idle ones); throws
 * nodemailer's error (with the server's `responseCode`) when it is not accepted.
 */
export async function sendMessage(
  settings: EmailSettings,
  seconds: number,
  message: { to: string; subject: string; text: string; headers?: Record<string, string> },
): Promise<void> {
  const transport = nodemailer.createTransport({
    host: settings.host,
    port: settings.port,
    secure: settings.security === 'tls',
    requireTLS: settings.security === 'starttls',
    ignoreTLS: settings.security === 'none',
    ...(settings.user ? { auth: { user: settings.user, pass: settings.password } } : {}),
    tls: settings.ca ? { ca: settings.ca } : {},
    connectionTimeout: seconds * 1000,
    greetingTimeout: seconds * 1000,
    socketTimeout: seconds * 1000,
  });
  let deadline: NodeJS.Timeout | undefined;
  try {
    const timedOut = new Promise<never>((_, reject) => {
      deadline = setTimeout(() => reject(new Error(`No answer within ${seconds} seconds.`)), seconds * 1000);
    });
    await Promise.race([transport.sendMail({ from: settings.from, ...message }), timedOut]);
  } finally {
    clearTimeout(deadline);
    transport.close();
  }
}
