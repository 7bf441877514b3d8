// Answers a request with one stored object: content type, ETag and Last-Modified with their
// conditional requests (304), Cache-Control, HEAD, an optional tag put into HTML pages, gzip for
// clients that accept it, and with LECTERN_SERVE_X_ACCEL an `X-Accel-Redirect` so nginx sends the
// bytes instead of Node.
// A build's files are immutable by key: the key names the build (../builds/artifacts.ts), a new
// build publishes under a new prefix, and a request only names a key after resolving the
// version's current build. So what was read under a key is kept and sent again without asking
// storage at all (no stat): small files with their bytes and, for text, a gzip copy made once (of
// the page with its switcher tag too); any object's metadata for X-Accel. A key whose build has
// since been removed is only asked for again through a stale resolution, which the resolution
// cache's TTL bounds (./cache.ts), exactly as it bounds serving the previous build at all.
import type { Request, Response } from 'express';
import type { ServerResponse } from 'node:http';
import mime from 'mime-types';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { FileStorage } from '../storage/file.ts';
import type { ObjectInfo, Storage } from '../storage/index.ts';
import { contentTypeFor, parseEtags } from '../storage/storage.ts';
import { injectTag } from './switcher.ts';

/** Larger HTML pages are sent as stored, without the switcher (they are not documentation pages anyone reads). */
const INJECT_MAX_BYTES = 8 * 1024 * 1024;
/** Objects up to this size are kept in memory with their bytes, up to KEEP_BYTES (every copy counted) and KEEP_ENTRIES in all. */
const KEEP_MAX_OBJECT = 256 * 1024;
const KEEP_BYTES = 32 * 1024 * 1024;
const KEEP_ENTRIES = 4096;
/** Tagged copies kept per page: the same file is reached as `dir/` and `dir/index.html`, by path and by host. */
const TAGS_PER_PAGE = 4;
/** Smaller bodies are not worth compressing (the compression middleware's default threshold). */
const GZIP_MIN_BYTES = 1024;
/** What an entry costs besides its bytes: the key, the metadata, the Map slot. */
const ENTRY_OVERHEAD = 256;

const gzipAsync = promisify(zlib.gzip);

/** One representation of a kept file: the stored bytes, or a page with one switcher tag in it. */
interface Rep {
  bytes: Buffer;
  /** Its gzip encoding once made; null when it is not worth making (not text, too small, no smaller). */
  gz: Buffer | null | undefined;
  gzLoad?: Promise<Buffer | null>;
}

/** What is kept of one key. */
interface Kept {
  /** The stored object's ETag without quotes: the base of every representation's tag. */
  bare: string;
  size: number;
  /** The Content-Type header as express would write it (with a charset for text). */
  contentType: string;
  lastModified: Date;
  lastModifiedHttp: string;
  /** A text type, worth compressing. */
  text: boolean;
  /** The stored bytes; undefined when only the metadata is kept (a larger object, or one X-Accel hands over). */
  plain: Rep | undefined;
  /** Copies with the switcher tag, by tag, oldest first. */
  tagged: Map<string, Rep> | undefined;
  weight: number;
}

/** Least recently used first out, bounded in entries and in bytes of every copy kept. */
class KeptFiles {
  readonly #map = new Map<string, Kept>();
  #bytes = 0;

  get(key: string): Kept | undefined {
    const hit = this.#map.get(key);
    if (hit) {
      // Insertion order is recency order.
      this.#map.delete(key);
      this.#map.set(key, hit);
    }
    return hit;
  }

  set(key: string, kept: Kept): void {
    const old = this.#map.get(key);
    if (old) {
      this.#map.delete(key);
      this.#bytes -= old.weight;
    }
    this.#map.set(key, kept);
    this.#bytes += kept.weight;
    this.#evict();
  }

  /** `kept` (under `key`) holds `delta` more bytes now. */
  grow(key: string, kept: Kept, delta: number): void {
    kept.weight += delta;
    if (this.#map.get(key) !== kept) return; // evicted or replaced meanwhile: counts no more
    this.#bytes += delta;
    this.#evict();
  }

  #evict(): void {
    while (this.#map.size > KEEP_ENTRIES || (this.#bytes > KEEP_BYTES && this.#map.size > 0)) {
      const [k, v] = this.#map.entries().next().value as [string, Kept];
      this.#map.delete(k);
      this.#bytes -= v.weight;
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
  /**
   * Told the answer when one kept in memory was sent whole with status 200, with whether the
   * request accepted gzip (which of the two answers it is): the fast path (./fast.ts) sends it again.
   */
  record?: (gzipOk: boolean, answer: Answer) => void;
}

/** The headers of `a` sent whole. */
function headersOf(a: Answer): Record<string, string | number> {
  const headers: Record<string, string | number> = {
    'Content-Type': a.contentType,
    'Content-Length': a.body.length,
    'Cache-Control': a.cacheControl,
    'X-Content-Type-Options': 'nosniff',
  };
  if (a.downloadName) headers['Content-Disposition'] = dispositionOf(a.downloadName);
  if (a.status === 200) {
    headers.ETag = a.etag;
    headers['Last-Modified'] = a.lastModifiedHttp;
  }
  if (a.gzippable) headers.Vary = 'Accept-Encoding';
  if (a.gzip) headers['Content-Encoding'] = 'gzip';
  return headers;
}

/** Everything a kept file's answer is made of, whatever the request's conditional headers. */
export interface Answer {
  status: 200 | 404;
  /** The stored object's tag, and the kind of representation sent: what If-None-Match is compared with. */
  bare: string;
  tagged: boolean;
  gzip: boolean;
  /** Large enough to have a gzip encoding: the answer varies on Accept-Encoding. */
  gzippable: boolean;
  /** Quoted. */
  etag: string;
  /** The bytes sent, gzip-encoded when `gzip`. */
  body: Buffer;
  contentType: string;
  cacheControl: string;
  downloadName: string | undefined;
  lastModified: Date;
  lastModifiedHttp: string;
  /** Its headers when sent whole, once made. */
  headers?: Record<string, string | number>;
}

/**
 * Sends `a` as the request asks (HEAD: `head`; its If-None-Match and If-Modified-Since): 304 when If-None-Match names a representation of the same stored
 * object (else, without If-None-Match, when If-Modified-Since is not older), else the whole
 * answer (its headers alone for HEAD). Returns the status sent.
 */
export function respond(res: ServerResponse, a: Answer, head: boolean, ifNoneMatchHeader: string | undefined, ifModifiedSince: string | undefined): number {
  const ifNoneMatch = a.status === 200 ? ifNoneMatchHeader : undefined;
  if (ifNoneMatch) {
    const held = heldTag(ifNoneMatch, a.bare, a.tagged, a.gzip);
    if (held !== null) return notModified(res, held === '*' ? a.etag : `"${held}"`, a.gzippable, a.cacheControl);
  } else if (a.status === 200 && notModifiedSince(ifModifiedSince, a.lastModified)) {
    res.setHeader('Last-Modified', a.lastModifiedHttp);
    return notModified(res, a.etag, a.gzippable, a.cacheControl);
  }
  // One object handed to writeHead (node only reads it): written out without a setHeader() per
  // field, and made once per answer, which the fast path sends many times.
  const headers = (a.headers ??= headersOf(a));
  res.writeHead(a.status, headers);
  res.end(head ? undefined : a.body);
  return a.status;
}

export class Sender {
  readonly #storage: Storage;
  readonly #xAccel: string | undefined;
  readonly #kept = new KeptFiles();

  constructor(storage: Storage, xAccelPrefix: string | undefined) {
    this.#storage = storage;
    // nginx reads the files itself, so only local storage can be handed over (config.ts checks the setting).
    this.#xAccel = xAccelPrefix && storage instanceof FileStorage ? xAccelPrefix : undefined;
  }

  /** Whether the object exists (for the `dir` -> `dir/` redirect): kept, else a cheap stat. */
  async exists(key: string): Promise<boolean> {
    return this.#kept.get(key) !== undefined || (await this.#storage.head(key)) !== null;
  }

  /** Sends the object under `key`; false (having sent nothing) when there is none. */
  async send(req: Request, res: Response, key: string, opts: SendOptions): Promise<boolean> {
    const status = opts.status ?? 200;
    // Whether the tag goes in is decided by the name, before anything is read, so the ETag a
    // client holds and the one it is compared with are always of the same kind.
    const tagged = opts.tag !== undefined && opts.tag !== '' && isHtml(key);
    let kept = this.#kept.get(key);

    if (this.#xAccel && status === 200 && !tagged) {
      if (!kept) {
        const info = await this.#storage.head(key);
        if (!info) return false;
        kept = this.#keep(key, info, undefined);
      }
      // A page that gets the switcher is changed on the way out: Lectern sends that one itself.
      res.statusCode = 200;
      res.setHeader('Content-Type', kept.contentType);
      res.setHeader('Cache-Control', opts.cacheControl);
      if (opts.downloadName) res.setHeader('Content-Disposition', dispositionOf(opts.downloadName));
      res.setHeader('X-Accel-Redirect', this.#xAccel + key.split('/').map(encodeURIComponent).join('/'));
      res.end();
      return true;
    }

    const ifNoneMatch = status === 200 ? req.headers['if-none-match'] : undefined;
    const gzipOk = acceptsGzip(req.headers['accept-encoding']);

    if (!kept?.plain) {
      // Asked for the stored tags the client's could stand for, so a large object is not opened for a 304.
      const asked = ifNoneMatch ? storedForms(ifNoneMatch, tagged) : undefined;
      const found = await this.#storage.get(key, asked ? { ifNoneMatch: asked } : {});
      if (!found) return false;
      if (found.notModified) {
        const held = heldTag(ifNoneMatch!, stripQuotes(found.etag), tagged, gzipOk && isText(contentTypeFor(key)));
        res.statusCode = 304;
        res.setHeader('ETag', `"${held ?? repTag(stripQuotes(found.etag), tagged, false)}"`);
        res.setHeader('Cache-Control', opts.cacheControl);
        res.end();
        return true;
      }
      const { body, ...info } = found;
      if (info.size > KEEP_MAX_OBJECT) return this.#stream(req, res, body, this.#describe(info), tagged, gzipOk, opts);
      // Read from the file get() opened, so the bytes and the metadata kept belong together.
      kept = this.#keep(key, info, await readAll(body));
    }

    const plain = kept.plain!;
    let rep = plain;
    if (tagged) rep = this.#taggedRep(key, kept, opts.tag!);
    const gzippable = kept.text && rep.bytes.length >= GZIP_MIN_BYTES;
    // Made once: from then on the warm path awaits nothing here.
    const gz = !gzippable || !gzipOk ? null : rep.gz !== undefined ? rep.gz : await this.#gzipOf(key, kept, rep);
    const answer: Answer = {
      status,
      bare: kept.bare,
      tagged,
      gzip: gz !== null,
      gzippable,
      etag: `"${repTag(kept.bare, tagged, gz !== null)}"`,
      body: gz ?? rep.bytes,
      contentType: kept.contentType,
      cacheControl: opts.cacheControl,
      downloadName: opts.downloadName,
      lastModified: kept.lastModified,
      lastModifiedHttp: kept.lastModifiedHttp,
    };
    const sent = respond(res, answer, req.method === 'HEAD', req.headers['if-none-match'], req.headers['if-modified-since']);
    if (sent === 200 && opts.record) opts.record(gzipOk, answer);
    return true;
  }

  /** An object too large to keep: streamed from storage (read whole when the tag goes in), gzipped on the way when asked. */
  async #stream(req: Request, res: Response, body: Readable, info: Kept, tagged: boolean, gzipOk: boolean, opts: SendOptions): Promise<boolean> {
    const status = opts.status ?? 200;
    const ifNoneMatch = status === 200 ? req.headers['if-none-match'] : undefined;
    const inject = tagged && info.size <= INJECT_MAX_BYTES;
    const gzip = info.text && gzipOk;
    const etag = `"${repTag(info.bare, tagged, gzip)}"`;
    if (ifNoneMatch) {
      // Storage found none of the stored forms; a held gzip tag of the same object can still match here.
      const held = heldTag(ifNoneMatch, info.bare, tagged, gzip);
      if (held !== null) {
        body.destroy();
        notModified(res, held === '*' ? etag : `"${held}"`, info.text, opts.cacheControl);
        return true;
      }
    } else if (status === 200 && notModifiedSince(req.headers['if-modified-since'], info.lastModified)) {
      body.destroy();
      res.setHeader('Last-Modified', info.lastModifiedHttp);
      notModified(res, etag, info.text, opts.cacheControl);
      return true;
    }
    res.statusCode = status;
    res.setHeader('Content-Type', info.contentType);
    res.setHeader('Cache-Control', opts.cacheControl);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (opts.downloadName) res.setHeader('Content-Disposition', dispositionOf(opts.downloadName));
    if (status === 200) {
      res.setHeader('ETag', etag);
      res.setHeader('Last-Modified', info.lastModifiedHttp);
    }
    if (info.text) res.setHeader('Vary', 'Accept-Encoding');
    if (gzip) res.setHeader('Content-Encoding', 'gzip');
    if (req.method === 'HEAD') {
      body.destroy();
      // The length of what GET would send is known only for the stored bytes as they are.
      if (!inject && !gzip) res.setHeader('Content-Length', info.size);
      res.end();
      return true;
    }
    if (inject) {
      const page = injectTag(await readAll(body), opts.tag!);
      const out = gzip ? await gzipAsync(page) : page;
      res.setHeader('Content-Length', out.length);
      res.end(out);
      return true;
    }
    if (!gzip) res.setHeader('Content-Length', info.size);
    try {
      if (gzip) await pipeline(body, zlib.createGzip(), res);
      else await pipeline(body, res);
    } catch {
      // The reader went away mid-way, or storage failed after the headers were out: nothing to answer.
      res.destroy();
    }
    return true;
  }

  #describe(info: ObjectInfo): Kept {
    const type = info.contentType ?? 'application/octet-stream';
    return {
      bare: stripQuotes(info.etag),
      size: info.size,
      contentType: mime.contentType(type) || type,
      lastModified: info.lastModified,
      lastModifiedHttp: info.lastModified.toUTCString(),
      text: isText(type),
      plain: undefined,
      tagged: undefined,
      weight: 0,
    };
  }

  /** Keeps what was read of `key`: its metadata, and its bytes when given (a small object). */
  #keep(key: string, info: ObjectInfo, bytes: Buffer | undefined): Kept {
    const kept = this.#describe(info);
    if (bytes) kept.plain = { bytes, gz: kept.text && bytes.length >= GZIP_MIN_BYTES ? undefined : null };
    kept.weight = ENTRY_OVERHEAD + 2 * key.length + (bytes?.length ?? 0);
    this.#kept.set(key, kept);
    return kept;
  }

  /** The page with `tag` in it, made once per tag (a few tags per page). */
  #taggedRep(key: string, kept: Kept, tag: string): Rep {
    kept.tagged ??= new Map();
    const hit = kept.tagged.get(tag);
    if (hit) return hit;
    const bytes = injectTag(kept.plain!.bytes, tag);
    const rep: Rep = { bytes, gz: kept.text && bytes.length >= GZIP_MIN_BYTES ? undefined : null };
    let delta = bytes.length;
    if (kept.tagged.size >= TAGS_PER_PAGE) {
      const [oldTag, old] = kept.tagged.entries().next().value as [string, Rep];
      kept.tagged.delete(oldTag);
      delta -= old.bytes.length + (old.gz?.length ?? 0);
    }
    kept.tagged.set(tag, rep);
    this.#kept.grow(key, kept, delta);
    return rep;
  }

  /** The gzip encoding of `rep`, made once (concurrent requests share the making), or null when not smaller. */
  #gzipOf(key: string, kept: Kept, rep: Rep): Promise<Buffer | null> {
    if (rep.gz !== undefined) return Promise.resolve(rep.gz);
    rep.gzLoad ??= gzipAsync(rep.bytes, { level: zlib.constants.Z_BEST_COMPRESSION }).then((gz) => {
      const made = gz.length < rep.bytes.length ? gz : null;
      rep.gz = made;
      rep.gzLoad = undefined;
      if (made) this.#kept.grow(key, kept, made.length);
      return made;
    }, () => {
      // Not expected; the identity bytes are always right.
      rep.gz = null;
      rep.gzLoad = undefined;
      return null;
    });
    return rep.gzLoad;
  }
}

function notModified(res: ServerResponse, etag: string, vary: boolean, cacheControl: string): 304 {
  res.statusCode = 304;
  res.setHeader('ETag', etag);
  res.setHeader('Cache-Control', cacheControl);
  if (vary) res.setHeader('Vary', 'Accept-Encoding');
  res.end();
  return 304;
}

/**
 * The ETag (unquoted) of one representation of a stored object whose tag is `bare`: `-s` for a
 * page with the switcher in it, then `-gz` for the gzip encoding. Stored tags are hex (file: a
 * hash; S3 an MD5, `-<parts>` for multipart), so they never end in either suffix themselves.
 */
function repTag(bare: string, tagged: boolean, gzip: boolean): string {
  return `${bare}${tagged ? '-s' : ''}${gzip ? '-gz' : ''}`;
}

/** The stored object's tag a client's tag stands for, or null when it names another kind of representation. */
function storedTagOf(held: string, tagged: boolean): string | null {
  const t = held.endsWith('-gz') ? held.slice(0, -3) : held;
  if (!tagged) return t;
  return t.endsWith('-s') ? t.slice(0, -2) : null;
}

/**
 * Which tag of If-None-Match names a representation of the stored object `bare` (of the right
 * kind: with the switcher or without), so the answer is 304: the one this request would be sent
 * (gzip or not) when listed, else the other encoding's (the copy the client holds is still
 * right), `*` for `*`; null when none matches.
 */
function heldTag(ifNoneMatch: string, bare: string, tagged: boolean, gzip: boolean): string | null {
  const wanted = repTag(bare, tagged, gzip);
  let other: string | null = null;
  for (const t of parseEtags(ifNoneMatch)) {
    if (t === '*' || t === wanted) return t;
    if (other === null && storedTagOf(t, tagged) === bare) other = t;
  }
  return other;
}

/** If-None-Match as storage can compare it: the stored tags the client's tags stand for. */
function storedForms(ifNoneMatch: string, tagged: boolean): string | undefined {
  const stored: string[] = [];
  for (const t of parseEtags(ifNoneMatch)) {
    const s = t === '*' ? t : storedTagOf(t, tagged);
    if (s !== null) stored.push(s === '*' ? s : `"${s}"`);
  }
  return stored.length ? stored.join(', ') : undefined;
}

const stripQuotes = (etag: string) => (etag.length >= 2 && etag.startsWith('"') && etag.endsWith('"') ? etag.slice(1, -1) : etag);

const isHtml = (key: string) => key.endsWith('.html') || contentTypeFor(key).startsWith('text/html');

/** Types worth compressing: text, JSON, JavaScript, XML and SVG. */
function isText(type: string): boolean {
  return /^(?:text\/|image\/svg\+xml|application\/(?:javascript|ecmascript|json|xml|xhtml\+xml|rss\+xml|atom\+xml|manifest\+json|ld\+json|[\w.-]+\+(?:json|xml))(?:;|$))/i.test(type);
}

/** Parsed Accept-Encoding values, a few distinct ones in practice (browsers send the same one each time). */
const gzipAccepted = new Map<string, boolean>();

/** Whether Accept-Encoding allows gzip: `gzip` (or `x-gzip`) with q > 0, else `*` with q > 0. */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  const known = gzipAccepted.get(header);
  if (known !== undefined) return known;
  let gzip = -1;
  let star = -1;
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.split(';');
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p);
      if (m) q = Number(m[1]);
    }
    const coding = name.trim().toLowerCase();
    if (coding === 'gzip' || coding === 'x-gzip') gzip = Math.max(gzip, q);
    else if (coding === '*') star = Math.max(star, q);
  }
  const ok = gzip >= 0 ? gzip > 0 : star > 0;
  if (gzipAccepted.size >= 64) gzipAccepted.clear();
  gzipAccepted.set(header, ok);
  return ok;
}

function dispositionOf(name: string): string {
  return `attachment; filename="${name.replace(/["\\\r\n]/g, '_')}"`;
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
