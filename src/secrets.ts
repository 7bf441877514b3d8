// Secrets at rest: API tokens are stored as SHA-256 hashes (the key is shown once), and values that
// must be read back (environment variables, webhook secrets) are encrypted with AES-256-GCM under
// the instance's secret key. That key comes from LECTERN_SECRET_KEY or is generated once into the
// data dir; processes sharing a PostgreSQL server must share LECTERN_SECRET_KEY.
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export function loadSecretKey(dataDir: string, configured: string | undefined): { key: string; generated: boolean } {
  if (configured) return { key: configured, generated: false };
  const file = path.join(dataDir, 'secret.key');
  if (existsSync(file)) return { key: readFileSync(file, 'utf8').trim(), generated: false };
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32).toString('base64url');
  writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return { key, generated: true };
}

export class Cipher {
  readonly #key: Buffer;
  readonly #macKey: Buffer;
  constructor(secretKey: string) {
    this.#key = createHash('sha256').update(`lectern-at-rest:${secretKey}`).digest();
    this.#macKey = createHash('sha256').update(`lectern-mac:${secretKey}`).digest();
  }

  /** An HMAC-SHA256 of `text` for `purpose` (a key of its own per purpose), base64url, 22 characters (128 bits). */
  mac(purpose: string, text: string): string {
    return createHmac('sha256', this.#macKey).update(`${purpose}\n${text}`).digest().subarray(0, 16).toString('base64url');
  }

  /** Whether `mac` is mac(purpose, text), compared in constant time. */
  verifyMac(purpose: string, text: string, mac: string): boolean {
    const want = Buffer.from(this.mac(purpose, text));
    const got = Buffer.from(mac);
    return got.length === want.length && timingSafeEqual(got, want);
  }

  encrypt(plain: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.#key, iv);
    const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return `v1:${Buffer.concat([iv, c.getAuthTag(), body]).toString('base64')}`;
  }

  decrypt(stored: string): string {
    if (!stored.startsWith('v1:')) throw new Error('unknown encrypted value format');
    const raw = Buffer.from(stored.slice(3), 'base64');
    // iv (12) + tag (16): without a fixed tag length GCM accepts a truncated tag, so a value cut
    // short would still "authenticate".
    if (raw.length < 28) throw new Error('encrypted value is truncated');
    const d = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, 12), { authTagLength: 16 });
    d.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString('utf8');
  }
}

/** A new API token key: 40 hex characters, like Read the Docs' (DRF authtoken) keys. */
export function newTokenKey(): string {
  return randomBytes(20).toString('hex');
}

export function hashToken(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
