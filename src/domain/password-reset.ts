// Password reset by email (docs/design/email.md), where the installation sends email: a person who
// forgot their password asks with their username or address, and gets a link that sets a new one,
// once, within an hour. The answer to the asking is the same whether or not such an account
// exists, and is given before the email goes: its words do not tell, nor the time the SMTP
// server takes.
import { randomBytes } from 'node:crypto';
import { hashToken } from '../secrets.ts';
import type { Context } from './context.ts';
import { ForbiddenError, ThrottledError, ValidationError } from './errors.ts';
import { hashPassword, passwordProblem } from './passwords.ts';
import { endOtherSessions } from './sessions.ts';

/** How long a link works. */
const VALID_MS = 60 * 60 * 1000;
/** A new link is not sent while one younger than this is outstanding: asking again does not fill someone's mailbox. */
const RESEND_AFTER_MS = 5 * 60 * 1000;

export const RESET_REQUESTED =
  'If an account has that username or address, an email with a link to set a new password is on its way. The link works for an hour.';
export const RESET_REFUSED = 'This link is used, expired or wrong: ask for a new one.';

/** Whether this installation offers password reset (it sends email). */
export const passwordResetAvailable = (ctx: Context): boolean => ctx.mail !== undefined;

/**
 * Asks for a reset link for the account with this username or email address. Throttled per
 * client and name as sign-ins are (a browser's request only). Answers the same in every case.
 */
export async function requestPasswordReset(ctx: Context, nameOrEmail: string): Promise<string> {
  const mail = ctx.mail;
  if (!mail) throw new ForbiddenError('This installation sends no email: ask a site administrator to set a new password for you.');
  const session = ctx.session;
  if (!session) throw new ForbiddenError('Ask for a new password from a browser, through /graphql.');
  const asked = nameOrEmail.trim();
  if (!asked) throw ValidationError.field('nameOrEmail', 'This field may not be blank.');
  // Counted as a failed sign-in of that name: asking again and again is slowed as guessing is.
  const attempt = await session.admit(`reset:${asked.toLowerCase()}`);
  if (attempt.wait > 0) throw new ThrottledError(attempt.wait);
  const user = await ctx.prisma.user.findFirst({
    where: { disabledAt: null, email: { not: null }, OR: [{ username: asked }, { email: { equals: asked, mode: 'insensitive' } }] },
    select: {
      id: true,
      username: true,
      email: true,
      passwordResets: { where: { usedAt: null, createdAt: { gt: new Date(Date.now() - RESEND_AFTER_MS) } }, select: { id: true } },
    },
  });
  if (!user?.email || user.passwordResets.length > 0) return RESET_REQUESTED;
  const token = randomBytes(32).toString('base64url');
  await ctx.prisma.passwordReset.create({ data: { userId: user.id, tokenHash: hashToken(token), expiresAt: new Date(Date.now() + VALID_MS) } });
  const link = `${ctx.config.publicUrl}/reset-password?token=${token}`;
  const text = [
    `Someone (you, we hope) asked for a new password for ${user.username} on ${ctx.config.publicUrl}.`,
    '',
    `Set a new password here within the hour: ${link}`,
    '',
    'If you did not ask, ignore this email: your password stays as it is.',
  ].join('\n');
  // Not waited for: the answer takes the same time whether or not an email goes.
  mail.send({ to: user.email, subject: 'Set a new password for Lectern', text }).catch((e: unknown) => {
    ctx.log.error({ err: (e as Error).message, user: user.username }, 'the password reset email could not be sent');
  });
  return RESET_REQUESTED;
}

/** Sets a new password with a reset link's token: once, within its hour. Every session of the account ends; its other links stop working. */
export async function resetPassword(ctx: Context, token: string, newPassword: string): Promise<void> {
  const tokenHash = hashToken(token);
  const reset = await ctx.prisma.passwordReset.findUnique({
    where: { tokenHash },
    select: { id: true, usedAt: true, expiresAt: true, user: { select: { id: true, username: true, disabledAt: true } } },
  });
  if (!reset || reset.usedAt || reset.expiresAt.getTime() <= Date.now() || reset.user.disabledAt) throw ValidationError.field('token', RESET_REFUSED);
  const problem = passwordProblem(newPassword, reset.user.username);
  if (problem) throw ValidationError.field('newPassword', problem);
  const passwordHash = await hashPassword(newPassword);
  await ctx.prisma.$transaction(async (tx) => {
    // Used once: of two requests with the same link, one sets the password.
    const taken = await tx.passwordReset.updateMany({ where: { id: reset.id, usedAt: null }, data: { usedAt: new Date() } });
    if (taken.count !== 1) throw ValidationError.field('token', RESET_REFUSED);
    await tx.user.update({ where: { id: reset.user.id }, data: { passwordHash } });
    await tx.passwordReset.deleteMany({ where: { userId: reset.user.id, usedAt: null } });
    await endOtherSessions(tx, reset.user.id);
  });
}
