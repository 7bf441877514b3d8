// Answers a request with one stored object: content type, ETag and Last-Modified with their
// conditional requests (304), Cache-Control, HEAD, an optional tag put into HTML pages, and with
// LECTERN_SERVE_X_ACCEL an `X-Accel-Redirect` so nginx sends the bytes instead of Node.
// With file: storage, small objects are kept in memory with their ETag and checked by one stat
// per request (the ETag changes whenever the file is replaced), instead of a dozen file calls.
import type { Request, Response } from 'express';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { FileStorage } from '../storage/file.ts';
import type { Storage, StoredObject } from '../storage/index.ts';
import { contentTypeFor, etagMatches, parseEtags, type ObjectInfo } from '../storage/storage.ts';
import { injectTag } from './switcher.ts';

/** Larger HTML pages are sent as stored, without the switcher (they are not documentation pages anyone reads). */
const INJECT_MAX_BYTES = 8 * 1024 * 1024;
/** Objects up to this size are kept in memory (file: storage), up to FILE_CACHE_BYTES and FILE_CACHE_ENTRIES in all. */
const FILE_CACHE_MAX_OBJECT = 256 * 1024;
const FILE_CACHE_BYTES = 32 * 1024 * 1024;
const FILE_CACHE_ENTRIES = 4096;

/** An object as sent: streamed from storage, or bytes kept in memory. */
type Body = ObjectInfo & ({ body: Readable; bytes?: undefined } | { bytes: Buffer; body?: undefined });
type CachedFile = ObjectInfo & { bytes: Buffer };

/** Least recently used small files, by storage key; each is valid only while its ETag is the stored one. */
class FileCache {
  readonly #map = new Map<string, CachedFile>();
  readonly #storage: FileStorage;
  #bytes = 0;

  constructor(storage: FileStorage) {
    this.#storage = storage;
  }

  /** The kept copy, when the file under `key` is still the one it was read from. */
  async get(key: string): Promise<CachedFile | null> {
    const hit = this.#map.get(key);
    if (!hit) return null;
    const now = await this.#storage.etagOf(key);
    if (this.#map.get(key) !== hit) return now === hit.etag ? hit : null;
    this.#map.delete(key);
    if (now !== hit.etag) {
      this.#bytes -= hit.bytes.length;
      return null;
    }
    this.#map.set(key, hit);
    return hit;
  }

  set(key: string, file: CachedFile): void {
    const old = this.#map.get(key);
    if (old) {
      this.#map.delete(key);
      this.#bytes -= old.bytes.length;
    }
    this.#map.set(key, file);
    this.#bytes += file.bytes.length;
    while (this.#map.size > FILE_CACHE_ENTRIES || this.#bytes > FILE_CACHE_BYTES) {
      const [k, v] = this.#map.entries().next().value as [string, CachedFile];
      this.#map.delete(k);
      this.#bytes -= v.bytes.length;
    }
  }
}

export interface SendOptions {
  status?: 200 | 404;
  /** Cache-Control of the answer (and of its 304). */
  cacheControl: string;
  /** Put before `</body>` of an HTML page. */
  tag?: string;
  /** Sent as an attachment under this file name. */
  downloadName?: string;
}

export class Sender {
  readonly #storage: Storage;
  readonly #xAccel: string | undefined;
  readonly #files: FileCache | undefined;

  constructor(storage: Storage, xAccelPrefix: string | undefined) {
    this.#storage = storage;
    // Only local files can be checked that cheaply; S3 objects are fetched every time.
    this.#files = storage instanceof FileStorage ? new FileCache(storage) : undefined;
    // nginx reads the files itself, so only local storage can be handed over (config.ts checks the setting).
    this.#xAccel = xAccelPrefix && storage instanceof FileStorage ? xAccelPrefix : undefined;
  }

  /** Whether the object exists (a cheap stat, for the `dir` -> `dir/` redirect). */
  async exists(key: string): Promise<boolean> {
    return (await this.#storage.head(key)) !== null;
  }

  /** Sends the object under `key`; false (having sent nothing) when there is none. */
  async send(req: Request, res: Response, key: string, opts: SendOptions): Promise<boolean> {
    const status = opts.status ?? 200;
    const disposition = opts.downloadName ? `attachment; filename="${opts.downloadName.replace(/["\\\r\n]/g, '_')}"` : undefined;

    // Whether the tag goes in is decided by the name, before anything is read, so the ETag a
    // client holds and the one it is compared with are always of the same kind.
    const tagged = Boolean(opts.tag) && contentTypeFor(key).startsWith('text/html');
    if (this.#xAccel && status === 200) {
      const info = await this.#storage.head(key);
      if (!info) return false;
      // A page that gets the switcher is changed on the way out: Lectern sends that one itself.
      if (!tagged) {
        res.set('Content-Type', info.contentType ?? 'application/octet-stream');
        res.set('Cache-Control', opts.cacheControl);
        if (disposition) res.set('Content-Disposition', disposition);
        res.set('X-Accel-Redirect', this.#xAccel + key.split('/').map(encodeURIComponent).join('/'));
        res.status(200).end();
        return true;
      }
    }

    // An injected page is not the stored bytes: its ETag carries a suffix, removed again before
    // storage compares the tags the client holds.
    const suffix = tagged ? '-s' : '';
    const ifNoneMatch = status === 200 ? req.get('if-none-match') : undefined;
    let asked = ifNoneMatch;
    if (ifNoneMatch && suffix) {
      const stored = parseEtags(ifNoneMatch)
        .filter((t) => t === '*' || t.endsWith(suffix))
        .map((t) => (t === '*' ? t : `"${t.slice(0, -suffix.length)}"`));
      asked = stored.length ? stored.join(', ') : undefined;
    }
    const etagOut = (etag: string) => (etag && suffix ? `${etag.replace(/"$/, '')}${suffix}"` : etag);
    const notModified = (etag: string) => {
      res.set('ETag', etagOut(etag)).set('Cache-Control', opts.cacheControl).status(304).end();
      return true;
    };
    let obj: Body;
    const kept = await this.#files?.get(key);
    if (kept) {
      if (asked && etagMatches(asked, kept.etag)) return notModified(kept.etag);
      obj = kept;
    } else {
      const found = await this.#storage.get(key, asked ? { ifNoneMatch: asked } : {});
      if (!found) return false;
      if (found.notModified) return notModified(found.etag);
      obj = found;
      if (this.#files && found.size <= FILE_CACHE_MAX_OBJECT && req.method === 'GET') {
        // Read from the file get() opened, so the bytes and the ETag kept belong together.
        const { body, ...info } = found satisfies StoredObject;
        obj = { ...info, bytes: await readAll(body) };
        this.#files.set(key, obj);
      }
    }
    if (status === 200 && !ifNoneMatch && notModifiedSince(req.get('if-modified-since'), obj.lastModified)) {
      obj.body?.destroy();
      if (obj.etag) res.set('ETag', etagOut(obj.etag));
      res.set('Last-Modified', obj.lastModified.toUTCString()).set('Cache-Control', opts.cacheControl).status(304).end();
      return true;
    }

    const contentType = obj.contentType ?? 'application/octet-stream';
    const inject = tagged && obj.size <= INJECT_MAX_BYTES;
    res.status(status);
    res.set('Content-Type', contentType);
    res.set('Cache-Control', opts.cacheControl);
    res.set('X-Content-Type-Options', 'nosniff');
    if (disposition) res.set('Content-Disposition', disposition);
    if (status === 200) {
      if (obj.etag) res.set('ETag', etagOut(obj.etag));
      res.set('Last-Modified', obj.lastModified.toUTCString());
    }
    if (req.method === 'HEAD') {
      obj.body?.destroy();
      if (!inject) res.set('Content-Length', String(obj.size));
      res.end();
      return true;
    }
    if (inject) {
      const page = injectTag(obj.bytes ?? (await readAll(obj.body)), opts.tag!);
      res.set('Content-Length', String(page.length));
      res.end(page);
      return true;
    }
    res.set('Content-Length', String(obj.size));
    if (obj.bytes) {
      res.end(obj.bytes);
      return true;
    }
    try {
      await pipeline(obj.body, res);
    } catch {
      // The reader went away mid-way, or storage failed after the headers were out: nothing to answer.
      res.destroy();
    }
    return true;
  }
}

/** If-Modified-Since, to the second (HTTP dates have no smaller unit). */
function notModifiedSince(header: string | undefined, lastModified: Date): boolean {
  if (!header) return false;
  const since = Date.parse(header);
  return !Number.isNaN(since) && Math.floor(lastModified.getTime() / 1000) <= Math.floor(since / 1000);
}

async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks);
}
