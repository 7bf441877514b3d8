// Passwords: the common-passwords list compared lowercased, and a hash begun ahead by the command
// line (beginHash) used by hashPassword for that password only.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { beginHash, hashPassword, passwordProblem, verifyPassword } from '../../src/domain/passwords.ts';
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
