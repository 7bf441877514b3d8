// Passwords: the common-passwords list compared lowercased, a hash begun ahead by the command line
// (beginHash) used by hashPassword for that password only, and the stored hashes read: Argon2id in
// the PHC string format (as the reference implementation writes it), the scrypt hashes of earlier
// versions, and nothing beyond the bounds a stored hash may ask.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { beginHash, hashPassword, needsRehash, passwordProblem, verifyPassword } from '../../src/domain/passwords.ts';
import { LOCAL_CACHE_DIR } from '../../src/local-cache.ts';

describe('the common passwords', () => {
  it('are stored lowercased, so an uppercase spelling of one is refused too', () => {
    // passwordProblem compares the lowercased password with the list as shipped: an entry with a capital would never match.
    const { dictionary } = createRequire(import.meta.url)('@zxcvbn-ts/language-common') as typeof import('@zxcvbn-ts/language-common');
    const list = dictionary['passwords-common'];
    expect(list.length).toBeGreaterThan(10_000);
    expect(list.filter((p) => p !== p.toLowerCase())).toEqual([]);
    for (const p of ['password', 'PassWord', ' IloveYou ', 'QWERTYUIOP']) expect(passwordProblem(p), p).toMatch(/too common/);
  });

  it("are kept as text in the local cache, every entry of the package's list and nothing else", () => {
    const require = createRequire(import.meta.url);
    const { dictionary } = require('@zxcvbn-ts/language-common') as typeof import('@zxcvbn-ts/language-common');
    const { version } = require('@zxcvbn-ts/language-common/package.json') as { version: string };
    passwordProblem('a password long enough');
    const kept = readFileSync(path.join(LOCAL_CACHE_DIR, `common-passwords-${version}.txt`), 'utf8');
    expect(kept.split('\n').slice(1, -1)).toEqual(dictionary['passwords-common']);
    // A line of the file is never matched across two entries, nor by a password holding a line break.
    const [first, second] = dictionary['passwords-common'];
    expect(passwordProblem(`${first}\n${second}`)).toBeUndefined();
    expect(passwordProblem(`${first}x`.padEnd(8, 'x'))).toBeUndefined();
  });
});

describe('a hash begun ahead', () => {
  it('is the hash of that password, used when given; without it each hash is new (another salt)', async () => {
    const password = 'ahead-of-time horse battery';
    const begun = beginHash(password, 'alice');
    const first = await hashPassword(password, begun);
    expect(first).toBe(await begun?.hash);
    const second = await hashPassword(password);
    expect(await verifyPassword(first, password)).toBe(true);
    expect(await verifyPassword(second, password)).toBe(true);
    expect(second).not.toBe(first);
  });

  it('is not begun for a password refused without the list, nor used for another password', async () => {
    for (const [password, username] of [
      ['alice', 'alice'],
      ['short', 'bob'],
      ['        ', 'bob'],
    ]) {
      expect(beginHash(password as string, username), password).toBeUndefined();
    }
    const begun = beginHash('one horse battery staple', 'bob');
    const other = await hashPassword('another horse battery staple', begun);
    expect(await verifyPassword(other, 'another horse battery staple')).toBe(true);
    expect(await verifyPassword(other, 'one horse battery staple')).toBe(false);
  });

  it('is begun for a common password too (the list is loaded after), which is still refused when stored', () => {
    expect(beginHash('password1', 'bob')).toBeDefined();
    expect(passwordProblem('password1', 'bob')).toMatch(/too common/);
  });
});

describe('a stored hash', () => {
  it('is read as the Argon2 reference implementation writes it (its own test vector: m=65536, t=2, p=1)', async () => {
    // The test vectors of the reference implementation (github.com/P-H-C/phc-winner-argon2, its
    // test.c): "password", salt "somesalt", version 0x13.
    const reference = '$argon2id$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc';
    expect(await verifyPassword(reference, 'password')).toBe(true);
    expect(await verifyPassword(reference, 'Password')).toBe(false);
    expect(needsRehash(reference)).toBe(true);
    expect(needsRehash(await hashPassword('a long enough password'))).toBe(false);
  });

  it('is refused, in the time a wrong password takes, when it asks too much or is no hash at all', async () => {
    const salt = 'c29tZXNhbHQ';
    const tag = 'CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc';
    for (const stored of [
      `$argon2id$v=19$m=4194304,t=2,p=1$${salt}$${tag}`, // 4 GiB
      `$argon2id$v=19$m=65536,t=999,p=1$${salt}$${tag}`,
      `$argon2id$v=19$m=65536,t=0,p=1$${salt}$${tag}`,
      `$argon2i$v=19$m=65536,t=2,p=1$${salt}$${tag}`,
      `scrypt$30$8$1$${salt}$${tag}`, // N = 2^30
      'password',
      '',
    ]) {
      expect(await verifyPassword(stored, 'password'), stored).toBe(false);
      expect(needsRehash(stored), stored).toBe(true);
    }
  });
});
