// Turns the LECTERN_STORAGE setting (Config.storage) into a Storage: `file:/dir` or
// `s3://bucket/prefix` with S3_ENDPOINT, S3_REGION, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
// This is the module's entry point: the rest of Lectern imports the interface from here too.
// @see docs/design/settings.md "Storage"
import { FileStorage } from './file.ts';
import { S3Storage } from './s3.ts';
import { fileStorageDir } from './spec.ts';
import type { Storage } from './storage.ts';

export { fileStorageDir } from './spec.ts';
export type { ByteRange, GetOptions, NotModified, ObjectInfo, PutDirectoryOptions, PutDirectoryResult, Storage, StoredObject } from './storage.ts';
export { StorageKeyError } from './storage.ts';

export function openStorage(spec: string, env: Record<string, string | undefined> = process.env): Storage {
  const dir = fileStorageDir(spec);
  if (dir) return new FileStorage(dir);
  if (spec.startsWith('s3://')) {
    const rest = spec.slice('s3://'.length);
    const slash = rest.indexOf('/');
    const bucket = slash < 0 ? rest : rest.slice(0, slash);
    const prefix = slash < 0 ? '' : rest.slice(slash + 1).replace(/^\/+|\/+$/g, '');
    // Bucket name rules shared by S3 and the compatible stores (lowercase, digits, dots, hyphens).
    if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
      throw new Error(`LECTERN_STORAGE: "${bucket}" is not a valid bucket name (s3://bucket/prefix)`);
    }
    if (prefix.split('/').some((s) => s === '.' || s === '..' || (prefix && s === ''))) {
      throw new Error('LECTERN_STORAGE: the prefix after the bucket must not contain ".", ".." or empty segments');
    }
    const accessKeyId = env.AWS_ACCESS_KEY_ID || undefined;
    const secretAccessKey = env.AWS_SECRET_ACCESS_KEY || undefined;
    if (Boolean(accessKeyId) !== Boolean(secretAccessKey)) {
      throw new Error('LECTERN_STORAGE: set both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or neither');
    }
    return new S3Storage({
      bucket,
      prefix,
      endpoint: env.S3_ENDPOINT || undefined,
      region: env.S3_REGION || env.AWS_REGION || undefined,
      // Neither set: the SDK's own chain (instance role, shared config…) decides.
      credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey, sessionToken: env.AWS_SESSION_TOKEN || undefined } : undefined,
    });
  }
  throw new Error(`LECTERN_STORAGE must be file:/dir or s3://bucket/prefix, not ${JSON.stringify(spec)}`);
}
