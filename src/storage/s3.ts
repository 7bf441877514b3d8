// Storage in any S3-compatible object store (LECTERN_STORAGE=s3://bucket/prefix), so several
// Lectern processes on several machines share build artifacts. Keys map to `<prefix>/<key>`.
// @see ./storage.ts; docs/design/settings.md "Storage"

import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import type * as ClientS3 from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import type * as LibStorage from '@aws-sdk/lib-storage';
import type { OutputDir } from './output.ts';
import {
  assertKey,
  assertPrefix,
  compareKeys,
  contentTypeFor,
  etagMatches,
  type GetOptions,
  type NotModified,
  type ObjectInfo,
  type PutDirectoryOptions,
  type PutDirectoryResult,
  parseEtags,
  type Storage,
  type StoredObject,
  uploadDirectory,
} from './storage.ts';

/** Above this a body of known length goes up in parts (a single PUT is limited to 5 GB). */
const MULTIPART_FROM = 64 * 1024 * 1024;
const PART_SIZE = 8 * 1024 * 1024;

export interface S3Settings {
  bucket: string;
  /** Key prefix inside the bucket, without leading or trailing `/`; may be empty. */
  prefix: string;
  /** For S3-compatible stores (path-style addressing); unset for AWS. */
  endpoint?: string;
  region?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Keys per listing page (and so per DeleteObjects request): at most 1000, S3's limit; smaller in tests. */
  pageSize?: number;
}

/**
 * The AWS SDK, loaded (synchronously, as CommonJS) when an S3 storage is made: an installation on
 * file storage never loads it, which took 0.17 s of every start (docs/design/startup.md).
 */
function sdk(): { s3: typeof ClientS3; lib: typeof LibStorage } {
  const require = createRequire(import.meta.url);
  return { s3: require('@aws-sdk/client-s3') as typeof ClientS3, lib: require('@aws-sdk/lib-storage') as typeof LibStorage };
}

export class S3Storage implements Storage {
  readonly bucket: string;
  readonly prefix: string;
  readonly client: S3Client;
  readonly #pageSize: number;
  readonly #s3: typeof ClientS3;
  readonly #lib: typeof LibStorage;

  constructor(settings: S3Settings) {
    const { s3, lib } = sdk();
    this.#s3 = s3;
    this.#lib = lib;
    this.bucket = settings.bucket;
    this.#pageSize = Math.min(settings.pageSize ?? 1000, 1000);
    this.prefix = settings.prefix ? `${settings.prefix}/` : '';
    this.client = new s3.S3Client({
      region: settings.region ?? 'us-east-1',
      endpoint: settings.endpoint,
      forcePathStyle: Boolean(settings.endpoint),
      credentials: settings.credentials,
      // The SDK's default CRC32 checksums and aws-chunked uploads are refused by many
      // S3-compatible stores (radosgw among them); MD5/none is what they all accept.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async put(key: string, body: Buffer | Readable, opts: { contentType?: string } = {}): Promise<void> {
    assertKey(key);
    const contentType = opts.contentType ?? contentTypeFor(key);
    if (Buffer.isBuffer(body)) {
      await this.client.send(new this.#s3.PutObjectCommand({ Bucket: this.bucket, Key: this.prefix + key, Body: body, ContentType: contentType }));
    } else {
      await this.#upload(key, body, contentType);
    }
  }

  /** A stream of unknown length: lib-storage buffers it into parts (one PUT if it fits in one). */
  async #upload(key: string, body: Readable, contentType: string): Promise<void> {
    const upload = new this.#lib.Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: this.prefix + key, Body: body, ContentType: contentType },
      partSize: PART_SIZE,
      queueSize: 4,
      leavePartsOnError: false,
    });
    await upload.done();
  }

  putDirectory(localDir: string | OutputDir, prefix: string, opts: PutDirectoryOptions = {}): Promise<PutDirectoryResult> {
    return uploadDirectory(localDir, prefix, opts, async (key, body, size, contentType) => {
      if (Buffer.isBuffer(body) || size <= MULTIPART_FROM) {
        await this.client.send(
          new this.#s3.PutObjectCommand({ Bucket: this.bucket, Key: this.prefix + key, Body: body, ContentLength: size, ContentType: contentType }),
        );
      } else {
        await this.#upload(key, body, contentType);
      }
    });
  }

  async get(key: string, opts: GetOptions = {}): Promise<StoredObject | NotModified | null> {
    assertKey(key);
    // S3 takes one tag; radosgw understands neither `*`, lists nor W/. One tag goes to the server
    // (no body is sent on a match); anything else is compared here.
    const tags = opts.ifNoneMatch ? parseEtags(opts.ifNoneMatch) : [];
    const single = tags.length === 1 && tags[0] !== '*' ? `"${tags[0]}"` : undefined;
    try {
      // A ranged GetObject: the store sends those bytes only, and the object's length in Content-Range.
      const range = opts.range ? `bytes=${opts.range.start}-${opts.range.end}` : undefined;
      const res = await this.client.send(new this.#s3.GetObjectCommand({ Bucket: this.bucket, Key: this.prefix + key, IfNoneMatch: single, Range: range }));
      const body = res.Body as Readable;
      const etag = res.ETag ?? '';
      if (opts.ifNoneMatch && etagMatches(opts.ifNoneMatch, etag)) {
        body.destroy();
        return { notModified: true, etag };
      }
      const size = range ? Number(/\/(\d+)$/.exec(res.ContentRange ?? '')?.[1]) : (res.ContentLength ?? 0);
      if (Number.isNaN(size)) {
        body.destroy();
        throw new Error(`S3 answered a ranged GetObject of ${key} without the object's length (Content-Range: ${res.ContentRange ?? 'none'})`);
      }
      return {
        body,
        size,
        contentType: res.ContentType,
        etag,
        lastModified: res.LastModified ?? new Date(0),
      };
    } catch (e) {
      const status = httpStatus(e);
      if (status === 304 && single) return { notModified: true, etag: single };
      if (status === 404) return null;
      throw e;
    }
  }

  async head(key: string): Promise<ObjectInfo | null> {
    assertKey(key);
    try {
      const res = await this.client.send(new this.#s3.HeadObjectCommand({ Bucket: this.bucket, Key: this.prefix + key }));
      return {
        size: res.ContentLength ?? 0,
        contentType: res.ContentType,
        etag: res.ETag ?? '',
        lastModified: res.LastModified ?? new Date(0),
      };
    } catch (e) {
      if (httpStatus(e) === 404) return null;
      throw e;
    }
  }

  async list(prefix: string): Promise<string[]> {
    assertPrefix(prefix);
    const keys: string[] = [];
    for await (const page of this.#pages(prefix)) keys.push(...page);
    return keys.sort(compareKeys);
  }

  async deletePrefix(prefix: string): Promise<number> {
    assertPrefix(prefix);
    if (prefix === '') throw new Error('deletePrefix needs a non-empty prefix (refusing to delete everything)');
    let deleted = 0;
    // Each page (at most 1000 keys) is one DeleteObjects request, the most it accepts.
    for await (const page of this.#pages(prefix)) {
      if (page.length === 0) continue;
      const res = await this.client.send(
        new this.#s3.DeleteObjectsCommand({
          Bucket: this.bucket,
          Delete: { Objects: page.map((k) => ({ Key: this.prefix + k })), Quiet: true },
        }),
      );
      const errors = res.Errors ?? [];
      if (errors.length) {
        const first = errors[0];
        throw new Error(`could not delete ${errors.length} object(s) under ${prefix}: ${first.Key}: ${first.Code} ${first.Message ?? ''}`.trim());
      }
      deleted += page.length;
    }
    return deleted;
  }

  /** Keys under `prefix`, relative to the storage prefix, one listing page at a time. */
  async *#pages(prefix: string): AsyncGenerator<string[]> {
    let token: string | undefined;
    do {
      const res = await this.client.send(
        new this.#s3.ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: this.prefix + prefix,
          ContinuationToken: token,
          MaxKeys: this.#pageSize,
        }),
      );
      yield (res.Contents ?? []).flatMap((o) => (o.Key ? [o.Key.slice(this.prefix.length)] : []));
      token = res.IsTruncated ? res.NextContinuationToken : undefined;
    } while (token);
  }
}

function httpStatus(e: unknown): number | undefined {
  return (e as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}
