// Passwords: the common-passwords list compared lowercased, and a hash begun ahead by the command
// line (hashPasswordAhead) taken by the one hashPassword of that password, and only by it.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { hashPassword, hashPasswordAhead, passwordProblem, verifyPassword } from '../../src/domain/passwords.ts';

describe('the common passwords', () => {
  it('are stored lowercased, so an uppercase spelling of one is refused too', () => {
    // passwordProblem compares the lowercased password with the list as shipped: an entry with a capital would never match.
    const { dictionary } = createRequire(import.meta.url)('@zxcvbn-ts/language-common') as typeof import('@zxcvbn-ts/language-common');
    const list = dictionary['passwords-common'];
    expect(list.length).toBeGreaterThan(10_000);
    expect(list.filter((p) => p !== p.toLowerCase())).toEqual([]);
    for (const p of ['password', 'PassWord', ' IloveYou ', 'QWERTYUIOP']) expect(passwordProblem(p), p).toMatch(/too common/);
  });
});

describe('a hash begun ahead', () => {
  it('is the hash of that password, taken once: the next hash of it is new (another salt)', async () => {
    const password = 'ahead-of-time horse battery';
    hashPasswordAhead(password, 'alice');
    const first = await hashPassword(password);
    const second = await hashPassword(password);
    expect(await verifyPassword(first, password)).toBe(true);
    expect(await verifyPassword(second, password)).toBe(true);
    expect(second).not.toBe(first);
  });

  it('is not begun for a password that will be refused, nor taken for another password', async () => {
    hashPasswordAhead('alice', 'alice'); // the username itself: refused, never hashed
    hashPasswordAhead('one horse battery staple', 'bob');
    const other = await hashPassword('another horse battery staple');
    expect(await verifyPassword(other, 'another horse battery staple')).toBe(true);
    expect(await verifyPassword(other, 'one horse battery staple')).toBe(false);
    expect(await verifyPassword(await hashPassword('one horse battery staple'), 'one horse battery staple')).toBe(true);
  });
});
