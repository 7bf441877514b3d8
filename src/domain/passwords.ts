// Passwords, stored as scrypt hashes (node:crypto; memory-hard, so a stolen table is slow to guess
// through on GPUs). A stored hash names its parameters, so they can be raised later and old hashes
// still verify: `scrypt$<log2 N>$<r>$<p>$<salt>$<hash>`, salt and hash in base64. A new password
// must not be blank, nor one of the passwords people use most (those are guessed first, whatever
// the throttle): the list zxcvbn-ts keeps, from leaked password sets (docs/design/sessions.md).
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { cachedText } from '../local-cache.ts';

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number, options: object) => Promise<Buffer>;

/** N = 2^15, r = 8: 32 MiB and about a tenth of a second per hash on these machines. */
const LOG_N = 15;
const R = 8;
const P = 1;
const KEY_BYTES = 32;
const SALT_BYTES = 16;
const maxmem = (logN: number, r: number) => 256 * 2 ** logN * r;

export const PASSWORD_MIN = 8;
/** Longer passwords are refused: hashing megabytes on request is a way to burn the server's CPU. */
export const PASSWORD_MAX = 1024;

/**
 * Whether `lowercased` is one of the common passwords (lowercase as shipped; a password is compared
 * lowercased, as Django's CommonPasswordValidator does). The list ships compressed: it is
 * decompressed once per installed version (0.05 s) and kept as text, one per line, in the local
 * cache; a process reads it when first asked (`lectern token create` or a server answering docs
 * never does) and looks the password up in it (docs/design/startup.md).
 */
function isCommon(lowercased: string): boolean {
  return !lowercased.includes('\n') && commonPasswordsText().includes(`\n${lowercased}\n`);
}

let common: string | undefined;
const commonPasswordsText = (): string => {
  if (common !== undefined) return common;
  const require = createRequire(import.meta.url);
  const { version } = require('@zxcvbn-ts/language-common/package.json') as { version: string };
  common = cachedText(`common-passwords-${version}.txt`, () => {
    const { dictionary } = require('@zxcvbn-ts/language-common') as typeof import('@zxcvbn-ts/language-common');
    return `\n${dictionary['passwords-common'].join('\n')}\n`;
  });
  return common;
};

/**
 * Why a new password is refused, or undefined when it is acceptable. Every path that sets a
 * password asks this (GraphQL's createUser, changePassword and setUpFirstAdmin, the command line).
 */
export function passwordProblem(password: string, username?: string): string | undefined {
  const problem = shapeProblem(password, username);
  if (problem) return problem;
  if (isCommon(password.trim().toLowerCase())) return 'This password is too common: it is on a list of the passwords people use most, which are guessed first.';
  return undefined;
}

/** What passwordProblem finds without the list of common passwords. */
function shapeProblem(password: string, username?: string): string | undefined {
  if (password.trim() === '') return 'This password is blank: it must contain characters other than spaces.';
  if (password.length < PASSWORD_MIN) return `This password is too short. It must contain at least ${PASSWORD_MIN} characters.`;
  if (password.length > PASSWORD_MAX) return `This password is too long. It must contain at most ${PASSWORD_MAX} characters.`;
  if (username !== undefined && password.toLowerCase() === username.toLowerCase()) return 'The password is too similar to the username.';
  return undefined;
}

/** A hash of `password`, begun before it is needed; hashPassword takes it for that password only. */
export interface BegunHash {
  readonly password: string;
  readonly hash: Promise<string>;
}

/**
 * Begins hashing `password` now, on libuv's thread pool (0.2 s of CPU), for a command line that
 * will store it once its database has opened (docs/design/startup.md): begun before the list of
 * common passwords loads (0.06 s), so a password the list refuses costs a hash nobody takes. Nothing
 * is begun for one refused without the list (undefined).
 */
export function beginHash(password: string, username?: string): BegunHash | undefined {
  if (shapeProblem(password, username) !== undefined) return undefined;
  const hash = newHash(password).catch(() => newHash(password));
  // A hash never taken is no unhandled rejection; the one who takes it still sees its failure.
  hash.catch(() => {});
  return { password, hash };
}

/** A new hash of `password`: `begun`'s where it is of this password. */
export function hashPassword(password: string, begun?: BegunHash): Promise<string> {
  return begun?.password === password ? begun.hash : newHash(password);
}

async function newHash(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await scryptAsync(password, salt, KEY_BYTES, { N: 2 ** LOG_N, r: R, p: P, maxmem: maxmem(LOG_N, R) });
  return `scrypt$${LOG_N}$${R}$${P}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

/** A hash of no one's password: checked when there is no user, so that takes as long as a wrong password. */
let decoy: Promise<string> | undefined;

/**
 * Whether `password` is the one `stored` was made from. With `stored` null (no such user, or no
 * password set) it still hashes, and answers false in the same time.
 */
export async function verifyPassword(stored: string | null | undefined, password: string): Promise<boolean> {
  const parts = stored?.split('$') ?? [];
  if (parts.length !== 6 || parts[0] !== 'scrypt') {
    await verifyPassword(await (decoy ??= hashPassword(randomBytes(16).toString('hex'))), password);
    return false;
  }
  const [, logN, r, p, salt, hash] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(hash, 'base64');
  const n = Number(logN);
  const rr = Number(r);
  const actual = await scryptAsync(password.slice(0, PASSWORD_MAX), Buffer.from(salt, 'base64'), expected.length, {
    N: 2 ** n,
    r: rr,
    p: Number(p),
    maxmem: maxmem(n, rr),
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
