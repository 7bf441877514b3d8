// Passwords, stored as Argon2id hashes in the PHC string format (`$argon2id$v=19$m=…,t=…,p=…$<salt>$<hash>`,
// node:crypto's argon2, OWASP's first choice, with its first recommended parameters: 19 MiB, two
// passes, one lane). Memory-hard, so a stolen table is slow to guess through on GPUs; the string
// names its parameters, so they can be raised later and old hashes still verify. Hashes of
// earlier versions (`scrypt$<log2 N>$<r>$<p>$<salt>$<hash>`) still verify, and are made again as
// Argon2id when their owner next signs in (docs/design/sessions.md). A new password must not be
// blank, nor one of the passwords people use most (those are guessed first, whatever the
// throttle): the list zxcvbn-ts keeps, from leaked password sets.
import { argon2, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { cachedText } from '../local-cache.ts';

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number, options: object) => Promise<Buffer>;
const argon2Async = promisify(argon2);

/** Argon2id's parameters for new hashes: memory in KiB, passes, lanes (0.02-0.1 s of CPU here). */
const ARGON2 = { memory: 19_456, passes: 2, parallelism: 1 } as const;
const KEY_BYTES = 32;
const SALT_BYTES = 16;
/** What a stored hash may ask of verifyPassword at most: 256 MiB, 10 passes, 8 lanes; scrypt's N 2^20. */
const LIMITS = { memory: 262_144, passes: 10, parallelism: 8, logN: 20, r: 16, p: 4 } as const;

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
 * Begins hashing `password` now, on libuv's thread pool (0.1 s of CPU for a process's first hash),
 * for a command line that will store it once its database has opened (docs/design/startup.md):
 * begun before the list of common passwords loads (0.06 s), so a password the list refuses costs a
 * hash nobody takes. Nothing is begun for one refused without the list (undefined).
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
  const nonce = randomBytes(SALT_BYTES);
  const hash = await argon2Async('argon2id', { message: password, nonce, tagLength: KEY_BYTES, ...ARGON2 });
  const { memory: m, passes: t, parallelism: p } = ARGON2;
  return `$argon2id$v=19$m=${m},t=${t},p=${p}$${b64(nonce)}$${b64(hash)}`;
}

/** PHC strings carry base64 without padding. */
const b64 = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '');

/** A stored hash read: how to hash a candidate the same way, and what it must give. */
interface StoredHash {
  readonly expected: Buffer;
  readonly hash: (password: string) => Promise<Buffer>;
  /** Made with today's algorithm and parameters. */
  readonly current: boolean;
}

const PHC_ARGON2ID = /^\$argon2id\$v=19\$m=(\d{1,7}),t=(\d{1,3}),p=(\d{1,3})\$([A-Za-z0-9+/]{11,})\$([A-Za-z0-9+/]{22,})$/;
const SCRYPT = /^scrypt\$(\d{1,2})\$(\d{1,3})\$(\d{1,3})\$([A-Za-z0-9+/]+=*)\$([A-Za-z0-9+/]+=*)$/;

/** `stored` read, or undefined when it is no hash this module made or parameters beyond LIMITS. */
function readStored(stored: string): StoredHash | undefined {
  const argon = PHC_ARGON2ID.exec(stored);
  if (argon) {
    const [memory, passes, parallelism] = [Number(argon[1]), Number(argon[2]), Number(argon[3])];
    if (memory > LIMITS.memory || passes > LIMITS.passes || parallelism > LIMITS.parallelism || passes < 1 || parallelism < 1 || memory < 8 * parallelism)
      return undefined;
    const nonce = Buffer.from(argon[4]!, 'base64');
    const expected = Buffer.from(argon[5]!, 'base64');
    const params = { nonce, tagLength: expected.length, memory, passes, parallelism };
    const current = memory === ARGON2.memory && passes === ARGON2.passes && parallelism === ARGON2.parallelism && expected.length === KEY_BYTES;
    return { expected, current, hash: (password) => argon2Async('argon2id', { message: password, ...params }) };
  }
  const old = SCRYPT.exec(stored);
  if (!old) return undefined;
  const [logN, r, p] = [Number(old[1]), Number(old[2]), Number(old[3])];
  if (logN > LIMITS.logN || r > LIMITS.r || p > LIMITS.p || logN < 1 || r < 1 || p < 1) return undefined;
  const salt = Buffer.from(old[4]!, 'base64');
  const expected = Buffer.from(old[5]!, 'base64');
  const options = { N: 2 ** logN, r, p, maxmem: 256 * 2 ** logN * r * p };
  return { expected, current: false, hash: (password) => scryptAsync(password, salt, expected.length, options) };
}

/** A hash of no one's password: checked when there is no user, so that takes as long as a wrong password. */
let decoy: Promise<string> | undefined;

/**
 * Whether `password` is the one `stored` was made from. With `stored` null (no such user, or no
 * password set) or unreadable it still hashes, and answers false in the same time.
 */
export async function verifyPassword(stored: string | null | undefined, password: string): Promise<boolean> {
  const read = stored ? readStored(stored) : undefined;
  if (!read) {
    await verifyPassword(await (decoy ??= hashPassword(randomBytes(16).toString('hex'))), password);
    return false;
  }
  const actual = await read.hash(password.slice(0, PASSWORD_MAX));
  return actual.length === read.expected.length && timingSafeEqual(actual, read.expected);
}

/** Whether `stored` (a hash verifyPassword accepted) was made with other than today's algorithm and parameters. */
export function needsRehash(stored: string): boolean {
  return readStored(stored)?.current !== true;
}
