// The one interface every part of Lectern uses to keep build artifacts (HTML, PDF, ePub, zip),
// so the local-disk and S3 backends are interchangeable (LECTERN_STORAGE), plus the rules both
// backends share: which keys are allowed, content types, and uploading a build's output directory
// (read through src/storage/output.ts, which refuses anything but the build's own regular files).
// @see docs/design/settings.md "Storage"
import path from 'node:path';
import type { Readable } from 'node:stream';
import mime from 'mime-types';
import { type OutputDir, type OutputLimits, PublishBudget, useOutputDir } from './output.ts';

/** What `head` says about an object. `etag` is a quoted HTTP entity tag, usable as the ETag header. */
export interface ObjectInfo {
  size: number;
  contentType: string | undefined;
  etag: string;
  lastModified: Date;
}

/** An object and its body; the caller must consume or destroy `body`. */
export interface StoredObject extends ObjectInfo {
  notModified?: false;
  /** The object's bytes, or with `get`'s `range` those bytes only (`size` stays the object's). */
  body: Readable;
}

/** Bytes `start` to `end` of an object, both included: a part of it that a reader resumes from (an HTTP Range). */
export interface ByteRange {
  start: number;
  end: number;
}

export interface GetOptions {
  /** An If-None-Match header value: when it matches, no body (`{ notModified: true }`). */
  ifNoneMatch?: string;
  /** Only these bytes in the body; `start` must be within the object, `end` past its last byte reads to the end. */
  range?: ByteRange;
}

/** `get` with `ifNoneMatch` naming the current version: no body, the caller answers 304. */
export interface NotModified {
  notModified: true;
  etag: string;
}

export interface PutDirectoryResult {
  files: number;
  bytes: number;
  /** Files not uploaded because their names cannot be keys (a backslash…), relative to the directory. */
  skipped: { path: string; reason: string }[];
}

export interface PutDirectoryOptions {
  /** At most this many files and bytes, else OutputRefused before anything is uploaded. */
  limits?: OutputLimits;
  /** Counts shared with other uploads of the same build (its downloads), whose limits then apply to the sum. */
  budget?: PublishBudget;
}

export interface Storage {
  /** Writes one object, replacing any previous one whole (readers see the old or the new body, never a mix). */
  put(key: string, body: Buffer | Readable, opts?: { contentType?: string }): Promise<void>;
  /**
   * Uploads every file under localDir (a path, or an OutputDir already open) to prefix/relative/path
   * (content types from the extension), with bounded concurrency. The directory is a build's output:
   * anything in it but regular files with a single name (a symbolic link, hard link, fifo, socket,
   * device) raises OutputRefused (src/storage/output.ts), as do counts over `opts.limits`, before
   * anything is uploaded; a refusal found while reading stops the upload (the caller removes what
   * went up).
   */
  putDirectory(localDir: string | OutputDir, prefix: string, opts?: PutDirectoryOptions): Promise<PutDirectoryResult>;
  /** null when missing; `{ notModified: true }` when `ifNoneMatch` (an If-None-Match header value) matches. */
  get(key: string, opts?: GetOptions): Promise<StoredObject | NotModified | null>;
  head(key: string): Promise<ObjectInfo | null>;
  /** Every key starting with `prefix` (a plain string prefix, as in S3), in byte order. */
  list(prefix: string): Promise<string[]>;
  /** Deletes every key starting with `prefix` (which must not be empty); returns how many. */
  deletePrefix(prefix: string): Promise<number>;
}

export class StorageKeyError extends Error {
  override name = 'StorageKeyError';
}

/**
 * Keys are relative paths such as `projects/p/versions/latest/builds/12/html/index.html`. Anything
 * that could escape the storage root or mean different things to the two backends is refused:
 * absolute paths, `.`/`..`/empty segments, backslashes and NUL.
 */
export function assertKey(key: string): void {
  if (typeof key !== 'string' || key === '') throw new StorageKeyError('storage key is empty');
  const bad = (why: string) => new StorageKeyError(`invalid storage key ${JSON.stringify(key)}: ${why}`);
  if (key.startsWith('/')) throw bad('must be relative');
  if (key.includes('\\')) throw bad('must not contain a backslash');
  if (key.includes('\0')) throw bad('must not contain NUL');
  for (const segment of key.split('/')) {
    if (segment === '') throw bad('must not contain empty segments or end with "/"');
    if (segment === '.' || segment === '..') throw bad(`must not contain "${segment}" segments`);
  }
}

/** A prefix is empty, or a key, or a key followed by one `/`. */
export function assertPrefix(prefix: string): void {
  if (prefix === '') return;
  assertKey(prefix.endsWith('/') ? prefix.slice(0, -1) : prefix);
}

/** `prefix` + `/` + `rel`, for putDirectory: `prefix` may be empty or end with `/`. */
export function joinKey(prefix: string, rel: string): string {
  if (prefix === '') return rel;
  return prefix.endsWith('/') ? prefix + rel : `${prefix}/${rel}`;
}

/**
 * From the extension, through mime-types (mime-db): the same table express 5 already uses, so
 * hosted docs get the types express.static would give, with `charset=utf-8` on text types.
 */
export function contentTypeFor(key: string): string {
  const ext = path.posix.extname(key);
  return (ext && mime.contentType(ext)) || 'application/octet-stream';
}

/** Byte order of the UTF-8 encodings, the order S3 lists keys in. */
export function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/**
 * Whether an If-None-Match header value matches `etag`: `*`, a list, weak tags (`W/"…"`, compared
 * weakly as RFC 9110 asks for If-None-Match) and, for convenience, a bare unquoted tag.
 */
export function etagMatches(ifNoneMatch: string, etag: string): boolean {
  const candidates = parseEtags(ifNoneMatch);
  const ours = stripEtag(etag);
  return candidates.some((c) => c === '*' || c === ours);
}

/** The bare tags of an If-None-Match value (no W/, no quotes); `*` stays `*`. */
export function parseEtags(ifNoneMatch: string): string[] {
  return ifNoneMatch
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => (s === '*' ? s : stripEtag(s)));
}

function stripEtag(tag: string): string {
  const t = tag.startsWith('W/') ? tag.slice(2) : tag;
  return t.length >= 2 && t.startsWith('"') && t.endsWith('"') ? t.slice(1, -1) : t;
}

/** Runs `fn` over `items` with at most `limit` at once; waits for the running ones, then throws the first error. */
export async function mapLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (!failure && next < items.length) {
      const item = items[next++];
      try {
        await fn(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failure) throw failure.error;
}

/** Files up to this size are read whole (one simple request on S3); larger ones are streamed. */
export const SMALL_FILE = 1024 * 1024;
/** Tries for one streamed (large) file in putDirectory. */
const STREAM_ATTEMPTS = 3;
/** Files uploaded at once by putDirectory. */
export const UPLOAD_CONCURRENCY = 8;

/**
 * putDirectory for any backend, given how it stores a body of known length. The directory is a
 * build's output, so it is read through src/storage/output.ts: the walk refuses (OutputRefused)
 * anything but regular files with one name, and any count over `opts.limits`, before anything is
 * uploaded; each file is then opened without following links and checked again on its descriptor,
 * and the bytes read are counted against the limits again (a file may grow after the walk).
 * @param putSized stores `body` (exactly `size` bytes) under `key`.
 */
export async function uploadDirectory(
  localDir: string | OutputDir,
  prefix: string,
  opts: PutDirectoryOptions,
  putSized: (key: string, body: Buffer | Readable, size: number, contentType: string) => Promise<void>,
): Promise<PutDirectoryResult> {
  assertPrefix(prefix);
  const { dir, close } = await useOutputDir(localDir);
  try {
    const skipped: PutDirectoryResult['skipped'] = [];
    const budget = opts.budget ?? new PublishBudget(opts.limits);
    const files = (await dir.list({ limits: budget.limits })).filter((entry) => {
      try {
        assertKey(entry.relPath);
        return true;
      } catch {
        skipped.push({ path: entry.relPath, reason: 'name cannot be a storage key' });
        return false;
      }
    });
    budget.check(
      files.length,
      files.reduce((n, f) => n + f.size, 0),
    );
    const before = { files: budget.files, bytes: budget.bytes };
    await mapLimit(files, UPLOAD_CONCURRENCY, async (entry) => {
      const key = joinKey(prefix, entry.relPath);
      const { handle, size } = await dir.openFile(entry.relPath);
      try {
        budget.add(size);
        const contentType = contentTypeFor(entry.relPath);
        if (size <= SMALL_FILE) {
          const buf = Buffer.alloc(size);
          let read = 0;
          while (read < size) {
            const { bytesRead } = await handle.read(buf, read, size - read, read);
            if (bytesRead === 0) throw new Error(`${dir.name(entry.relPath)} shrank while it was being uploaded`);
            read += bytesRead;
          }
          await putSized(key, buf, size, contentType);
        } else {
          // A stream cannot be replayed by the S3 client's own retries: a new one per attempt.
          for (let attempt = 1; ; attempt++) {
            // Exactly `size` bytes even if the file grows meanwhile, so a known length stays true.
            const stream = handle.createReadStream({ start: 0, end: size - 1, autoClose: false });
            try {
              await putSized(key, stream, size, contentType);
              break;
            } catch (e) {
              stream.destroy();
              if (attempt >= STREAM_ATTEMPTS) throw e;
            }
          }
        }
      } finally {
        await handle.close();
      }
    });
    return { files: budget.files - before.files, bytes: budget.bytes - before.bytes, skipped };
  } finally {
    await close();
  }
}

/** A stream's bytes, read to its end. */
export async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** The bytes of the object at `key` when it has at most `maxBytes` ('too large', unread, when it has more); null when there is none. */
export async function readObject(storage: Storage, key: string, maxBytes: number): Promise<Buffer | 'too large' | null> {
  const got = await storage.get(key);
  if (!got || ('notModified' in got && got.notModified)) return null;
  if (got.size > maxBytes) {
    got.body.destroy();
    return 'too large';
  }
  return readAll(got.body);
}
