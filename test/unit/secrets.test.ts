// Secrets at rest: AES-256-GCM for values read back, SHA-256 for API token keys, and the instance
// key generated once into the data dir.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Cipher, hashToken, loadSecretKey, newTokenKey } from '../../src/secrets.ts';

const KEY = 'unit-test-secret-key-0123456789abcdef0123';

/** The stored value with one byte of its decoded body flipped. */
function flip(stored: string, at: number): string {
  const raw = Buffer.from(stored.slice(3), 'base64');
  raw[at] ^= 0x01;
  return `v1:${raw.toString('base64')}`;
}

describe('Cipher', () => {
  const c = new Cipher(KEY);

  it.each(['hello', '', 'ünïcødé ✓ 日本', 'x'.repeat(100_000), 'line1\nline2\0end'])('round-trips %#', (plain) => {
    const stored = c.encrypt(plain);
    expect(stored.startsWith('v1:')).toBe(true);
    expect(c.decrypt(stored)).toBe(plain);
    expect(new Cipher(KEY).decrypt(stored)).toBe(plain); // another instance with the same key
  });

  it('never stores the plain text, and encrypts the same value differently each time', () => {
    const a = c.encrypt('the-secret-value');
    const b = c.encrypt('the-secret-value');
    expect(a).not.toBe(b);
    expect(a).not.toContain('the-secret-value');
    expect(Buffer.from(a.slice(3), 'base64').toString('latin1')).not.toContain('the-secret-value');
  });

  it('detects a change anywhere: iv, tag or body', () => {
    const stored = c.encrypt('do not touch');
    const size = Buffer.from(stored.slice(3), 'base64').length;
    for (const at of [0, 11, 12, 27, 28, size - 1]) {
      expect(() => c.decrypt(flip(stored, at)), `byte ${at}`).toThrow();
    }
  });

  it('detects a truncated or extended value', () => {
    for (const plain of ['do not touch', '']) {
      const stored = c.encrypt(plain);
      const raw = Buffer.from(stored.slice(3), 'base64');
      for (const n of [0, 8, 12, 16, 20, 27, raw.length - 1]) {
        if (n >= raw.length) continue;
        expect(() => c.decrypt(`v1:${raw.subarray(0, n).toString('base64')}`), `${JSON.stringify(plain)} cut to ${n} bytes`).toThrow();
      }
      const longer = Buffer.concat([raw, Buffer.from([0])]);
      expect(() => c.decrypt(`v1:${longer.toString('base64')}`)).toThrow();
    }
  });

  it('refuses a value encrypted under another key', () => {
    const other = new Cipher('another-secret-key-0123456789abcdef0123');
    expect(() => other.decrypt(c.encrypt('mine'))).toThrow();
  });

  it('refuses an unknown format', () => {
    expect(() => c.decrypt('plain text')).toThrow(/unknown encrypted value format/);
    expect(() => c.decrypt(`v2:${c.encrypt('x').slice(3)}`)).toThrow(/unknown encrypted value format/);
  });
});

describe('API token keys', () => {
  it('are 40 hex characters, and different every time', () => {
    const keys = Array.from({ length: 50 }, () => newTokenKey());
    for (const k of keys) expect(k).toMatch(/^[0-9a-f]{40}$/);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('are stored as a SHA-256 hash that is not the key and does not contain it', () => {
    const key = newTokenKey();
    const hash = hashToken(key);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).not.toBe(key);
    expect(hash).not.toContain(key);
    expect(hash).toBe(createHash('sha256').update(key).digest('hex'));
    expect(hashToken(key)).toBe(hash); // deterministic: a lookup by hash finds it
    expect(hashToken(newTokenKey())).not.toBe(hash);
  });
});

describe('loadSecretKey', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const d = mkdtempSync(path.join(os.tmpdir(), 'lectern-secret-'));
    dirs.push(d);
    return d;
  };
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('uses LECTERN_SECRET_KEY when set, and writes nothing', () => {
    const dir = tempDir();
    expect(loadSecretKey(dir, 'configured-key-0123456789abcdef0123456')).toEqual({
      key: 'configured-key-0123456789abcdef0123456',
      generated: false,
    });
    expect(() => statSync(path.join(dir, 'secret.key'))).toThrow();
  });

  it('generates a key once into the data dir, readable by its owner only, and reuses it', () => {
    const dir = path.join(tempDir(), 'not-yet-created');
    const first = loadSecretKey(dir, undefined);
    expect(first.generated).toBe(true);
    expect(first.key.length).toBeGreaterThanOrEqual(32);
    const file = path.join(dir, 'secret.key');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8').trim()).toBe(first.key);
    expect(loadSecretKey(dir, undefined)).toEqual({ key: first.key, generated: false });
    expect(loadSecretKey(tempDir(), undefined).key).not.toBe(first.key);
  });
});
