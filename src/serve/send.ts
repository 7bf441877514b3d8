// Answers a request with one stored object: content type, ETag and Last-Modified with their
// conditional requests (304), Cache-Control, HEAD, Range requests (206/416, ./range.ts), an
// optional tag put into HTML pages, gzip for clients that accept it, and with LECTERN_SERVE_X_ACCEL
// an `X-Accel-Redirect` so nginx sends the bytes instead of Node.
// A build's files are immutable by key: the key names the build (../storage/artifacts.ts), a new
// build publishes under a new prefix, and a request only names a key after resolving the
// version's current build. So what was read under a key is kept and sent again without asking
// storage at all (no stat): small files with their bytes and, for text, a gzip copy made once (of
// the page with its switcher tag too); any other object's metadata, so only its bytes are asked
// for again (whole, or the range a reader resumes from). A key whose build has since been removed
// is only asked for again through a stale resolution, which the resolution cache's TTL bounds
// (./cache.ts), exactly as it bounds serving the previous build at all.
// The keeping is lru-cache's: bounded in entries and in bytes of every copy kept, least recently
// used first out, and one read of a key shared by the requests that ask for it meanwhile.
// Ranges count in the bytes without content coding: a Range request gets a part of the stored
// bytes (or of the page with its tag), whatever its Accept-Encoding, under that representation's ETag.

import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Request, Response } from 'express';
import { LRUCache } from 'lru-cache';
import mime from 'mime-types';
import { FileStorage } from '../storage/file.ts';
import type { ByteRange, ObjectInfo, Storage } from '../storage/index.ts';
import { contentTypeFor, parseEtags, readAll } from '../storage/storage.ts';
import { contentRangeOf, rangeOf, unsatisfiedRangeOf } from './range.ts';
import { injectTag, type PageTags } from './switcher.ts';

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
/** What an entry costs besides its bytes: the key, the metadata, the cache's slot. */
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
}

/** What one send() asks of the read of a key it is the first to ask for. */
interface Load {
  /** Only the metadata is wanted (X-Accel hands the bytes to nginx): a head, not a get. */
  metaOnly: boolean;
  /** A larger object's body, opened by the read: for the request that started it, which consumes or destroys it. */
  body?: Readable;
}

/** Every byte a kept entry holds, its copies included: what the cache's byte bound counts. */
function weightOf(key: string, kept: Kept): number {
  const repBytes = (r: Rep) => r.bytes.length + (r.gz?.length ?? 0);
  let weight = ENTRY_OVERHEAD + 2 * key.length + (kept.plain ? repBytes(kept.plain) : 0);
  for (const rep of kept.tagged?.values() ?? []) weight += repBytes(rep);
  return weight;
}

export interface SendOptions {
  status?: 200 | 404;
  /** Cache-Control of the answer (and of its 304). */
  cacheControl: string;
  /** Put into an HTML page (./switcher.ts injectTag). */
  tag?: PageTags;
  /** Sent as an attachment under this file name. */
  downloadName?: string;
  /**
   * Told the answer when one kept in memory was sent whole with status 200, with whether the
   * request accepted gzip (which of the two answers it is): the fast path (./fast.ts) sends it again.
   */
  record?: (gzipOk: boolean, answer: Answer) => void;
}

/** The request headers an answer depends on besides the file and the encoding: its conditionals and Range. */
export interface Conditions {
  ifNoneMatch?: string;
  ifModifiedSince?: string;
  range?: string;
  ifRange?: string;
}

const conditionsOf = (req: Request): Conditions => ({
  ifNoneMatch: req.headers['if-none-match'],
  ifModifiedSince: req.headers['if-modified-since'],
  range: req.headers.range,
  // node joins a repeated If-Range into one string, as every field but Set-Cookie.
  ifRange: req.headers['if-range'] as string | undefined,
});

/** What an answer is, whatever its body: the representation sent and the headers that describe it. */
interface Representation {
  status: 200 | 404;
  /** The stored object's tag, and the kind of representation sent: what If-None-Match is compared with. */
  bare: string;
  /** '' for the stored bytes as they are, else the PageTags mark of what was put in. */
  tagged: string;
  gzip: boolean;
  /** Large enough to have a gzip encoding: the answer varies on Accept-Encoding. */
  gzippable: boolean;
  /** Quoted. */
  etag: string;
  contentType: string;
  cacheControl: string;
  downloadName: string | undefined;
  lastModified: Date;
  lastModifiedHttp: string;
}

/** Everything a kept file's answer is made of, whatever the request's conditional headers. */
export interface Answer extends Representation {
  /** The bytes sent, gzip-encoded when `gzip`. */
  body: Buffer;
  /** The bytes without the gzip encoding (`body` itself when not gzip): what a Range counts in. */
  identity: Buffer;
  /** Its headers when sent whole, once made. */
  headers?: Record<string, string | number>;
}

/** The headers of `r` sent whole (`length`: its Content-Length, when known). */
function headersOf(r: Representation, length: number | undefined): Record<string, string | number> {
  const headers: Record<string, string | number> = {
    'Content-Type': r.contentType,
    'Cache-Control': r.cacheControl,
    'X-Content-Type-Options': 'nosniff',
  };
  if (length !== undefined) headers['Content-Length'] = length;
  if (r.downloadName) headers['Content-Disposition'] = dispositionOf(r.downloadName);
  if (r.status === 200) {
    headers.ETag = r.etag;
    headers['Last-Modified'] = r.lastModifiedHttp;
    headers['Accept-Ranges'] = 'bytes';
  }
  if (r.gzippable) headers.Vary = 'Accept-Encoding';
  if (r.gzip) headers['Content-Encoding'] = 'gzip';
  return headers;
}

/** The headers of a 206 carrying `range` of the `size` bytes of `r` without content coding, whose ETag is `etag`. */
function partialHeadersOf(r: Representation, etag: string, range: ByteRange, size: number): Record<string, string | number> {
  const headers: Record<string, string | number> = {
    'Content-Type': r.contentType,
    'Content-Length': range.end - range.start + 1,
    'Content-Range': contentRangeOf(range, size),
    'Accept-Ranges': 'bytes',
    'Cache-Control': r.cacheControl,
    'X-Content-Type-Options': 'nosniff',
    ETag: etag,
    'Last-Modified': r.lastModifiedHttp,
  };
  if (r.downloadName) headers['Content-Disposition'] = dispositionOf(r.downloadName);
  if (r.gzippable) headers.Vary = 'Accept-Encoding';
  return headers;
}

const UNSATISFIABLE = Buffer.from('Range not satisfiable.\n');

/** 416: no range asked for is in the `size` bytes; Content-Range says how many there are. */
function unsatisfiable(res: ServerResponse, size: number): 416 {
  res.writeHead(416, {
    'Content-Range': unsatisfiedRangeOf(size),
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': UNSATISFIABLE.length,
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  });
  res.end(UNSATISFIABLE);
  return 416;
}

/** The ETag of `r` without content coding: the representation a Range is of. */
const identityEtagOf = (r: Representation): string => (r.gzip ? `"${repTag(r.bare, r.tagged, false)}"` : r.etag);

/**
 * Answers 304 when the conditions allow (a 200 answer only): when If-None-Match names a
 * representation of the same stored object, else (without If-None-Match) when If-Modified-Since
 * is not older. Whether it did.
 */
function answeredNotModified(res: ServerResponse, r: Representation, c: Conditions): boolean {
  if (r.status !== 200) return false;
  if (c.ifNoneMatch) {
    const held = heldTag(c.ifNoneMatch, r.bare, r.tagged, r.gzip);
    if (held === null) return false;
    notModified(res, held === '*' ? r.etag : `"${held}"`, r.gzippable, r.cacheControl);
    return true;
  }
  if (!notModifiedSince(c.ifModifiedSince, r.lastModified)) return false;
  res.setHeader('Last-Modified', r.lastModifiedHttp);
  notModified(res, r.etag, r.gzippable, r.cacheControl);
  return true;
}

/**
 * Sends `a` as the request asks (HEAD: `head`; its conditions `c`): 304 as answeredNotModified()
 * decides, else for a GET with a Range (RFC 9110's order: after If-None-Match and
 * If-Modified-Since) the part asked for (206) or 416, else the whole answer (its headers alone for
 * HEAD, which ignores Range). Returns the status sent.
 */
export function respond(res: ServerResponse, a: Answer, head: boolean, c: Conditions): number {
  if (answeredNotModified(res, a, c)) return 304;
  if (c.range !== undefined && a.status === 200 && !head) {
    const range = rangeOf(c.range, c.ifRange, a.identity.length, identityEtagOf(a), a.lastModifiedHttp);
    if (range === 'unsatisfiable') return unsatisfiable(res, a.identity.length);
    if (range) {
      res.writeHead(206, partialHeadersOf(a, identityEtagOf(a), range, a.identity.length));
      res.end(a.identity.subarray(range.start, range.end + 1));
      return 206;
    }
  }
  // One object handed to writeHead (node only reads it): written out without a setHeader() per
  // field, and made once per answer, which the fast path sends many times.
  const headers = (a.headers ??= headersOf(a, a.body.length));
  res.writeHead(a.status, headers);
  res.end(head ? undefined : a.body);
  return a.status;
}

export class Sender {
  readonly #storage: Storage;
  readonly #xAccel: string | undefined;
  readonly #kept: LRUCache<string, Kept, Load>;

  constructor(storage: Storage, xAccelPrefix: string | undefined) {
    this.#storage = storage;
    // nginx reads the files itself, so only local storage can be handed over (config.ts checks the setting).
    this.#xAccel = xAccelPrefix && storage instanceof FileStorage ? xAccelPrefix : undefined;
    this.#kept = new LRUCache<string, Kept, Load>({
      max: KEEP_ENTRIES,
      maxSize: KEEP_BYTES,
      sizeCalculation: (kept, key) => weightOf(key, kept),
      // A read whose entry was evicted meanwhile still answers the requests waiting for it.
      ignoreFetchAbort: true,
      fetchMethod: (key, _stale, { context }) => this.#load(key, context),
    });
  }

  /** Whether the object exists (for the `dir` -> `dir/` redirect): kept, else a cheap stat. */
  async exists(key: string): Promise<boolean> {
    return this.#kept.has(key) || (await this.#storage.head(key)) !== null;
  }

  /** Sends the object under `key`; false (having sent nothing) when there is none. */
  async send(req: Request, res: Response, key: string, opts: SendOptions): Promise<boolean> {
    const status = opts.status ?? 200;
    // Whether the tag goes in is decided by the name, before anything is read, so the ETag a
    // client holds and the one it is compared with are always of the same kind.
    const tagged = opts.tag !== undefined && isHtml(key) ? opts.tag.mark : '';
    // A page that gets the switcher is changed on the way out: Lectern sends that one itself.
    const handOver = this.#xAccel !== undefined && status === 200 && !tagged;
    let kept = this.#kept.get(key);
    let load: Load | undefined;
    // Not kept (or kept for X-Accel without the bytes this answer needs): read once, however many ask meanwhile.
    if (!kept || (!handOver && !kept.plain && kept.size <= KEEP_MAX_OBJECT)) {
      load = { metaOnly: handOver };
      kept = await this.#kept.fetch(key, { context: load, forceRefresh: kept !== undefined });
      if (!kept) return false;
    }

    if (handOver) {
      res.statusCode = 200;
      res.setHeader('Content-Type', kept.contentType);
      res.setHeader('Cache-Control', opts.cacheControl);
      if (opts.downloadName) res.setHeader('Content-Disposition', dispositionOf(opts.downloadName));
      res.setHeader('X-Accel-Redirect', this.#xAccel + key.split('/').map(encodeURIComponent).join('/'));
      res.end();
      return true;
    }

    const gzipOk = acceptsGzip(req.headers['accept-encoding']);
    if (!kept.plain) return this.#stream(req, res, key, kept, load?.body, tagged, gzipOk, opts);

    const plain = kept.plain;
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
      identity: rep.bytes,
      contentType: kept.contentType,
      cacheControl: opts.cacheControl,
      downloadName: opts.downloadName,
      lastModified: kept.lastModified,
      lastModifiedHttp: kept.lastModifiedHttp,
    };
    const sent = respond(res, answer, req.method === 'HEAD', conditionsOf(req));
    if (sent === 200 && opts.record) opts.record(gzipOk, answer);
    return true;
  }

  /**
   * An object too large to keep, of which only the metadata is kept: its bytes streamed from
   * storage (`opened`, when the read of its metadata opened them for this request), a Range asked
   * of storage, the whole object gzipped on the way when asked; a page that gets the tag is read
   * whole and answered as a kept one is.
   */
  async #stream(
    req: Request,
    res: Response,
    key: string,
    kept: Kept,
    opened: Readable | undefined,
    tagged: string,
    gzipOk: boolean,
    opts: SendOptions,
  ): Promise<boolean> {
    let body = opened;
    try {
      const status = opts.status ?? 200;
      const head = req.method === 'HEAD';
      const c = conditionsOf(req);
      const gzip = kept.text && gzipOk;
      const r: Representation = {
        status,
        bare: kept.bare,
        tagged,
        gzip,
        gzippable: kept.text,
        etag: `"${repTag(kept.bare, tagged, gzip)}"`,
        contentType: kept.contentType,
        cacheControl: opts.cacheControl,
        downloadName: opts.downloadName,
        lastModified: kept.lastModified,
        lastModifiedHttp: kept.lastModifiedHttp,
      };
      // Decided from the metadata kept, so a large object is not opened for a 304.
      if (answeredNotModified(res, r, c)) return true;

      if (tagged && kept.size <= INJECT_MAX_BYTES) {
        body ??= (await this.#open(key)) ?? undefined;
        if (!body) return false;
        const read = body;
        body = undefined;
        const page = injectTag(await readAll(read), opts.tag!);
        respond(res, { ...r, body: gzip ? await gzipAsync(page) : page, identity: page }, head, c);
        return true;
      }

      // The stored bytes as they are (a page too large for the tag keeps its tagged ETag).
      const identityEtag = identityEtagOf(r);
      const range = c.range !== undefined && status === 200 && !head ? rangeOf(c.range, c.ifRange, kept.size, identityEtag, kept.lastModifiedHttp) : null;
      if (range === 'unsatisfiable') {
        unsatisfiable(res, kept.size);
        return true;
      }
      if (range) {
        body?.destroy();
        body = undefined;
        const part = await this.#open(key, range);
        if (!part) return false;
        res.writeHead(206, partialHeadersOf(r, identityEtag, range, kept.size));
        await sendBody(part, res, false);
        return true;
      }
      // The length of what GET sends is known only for the stored bytes as they are.
      const headers = headersOf(r, gzip ? undefined : kept.size);
      if (head) {
        res.writeHead(status, headers);
        res.end();
        return true;
      }
      body ??= (await this.#open(key)) ?? undefined;
      if (!body) return false;
      const whole = body;
      body = undefined;
      res.writeHead(status, headers);
      await sendBody(whole, res, gzip);
      return true;
    } finally {
      body?.destroy();
    }
  }

  /** The bytes of `key` (those of `range` only, when given); null, and forgotten, when storage no longer holds it. */
  async #open(key: string, range?: ByteRange): Promise<Readable | null> {
    const found = await this.#storage.get(key, range ? { range } : {});
    if (found && !found.notModified) return found.body;
    this.#kept.delete(key);
    return null;
  }

  /** Reads what is kept of `key`: its metadata, with its bytes when small; a larger object's opened body goes to the request that asked. */
  async #load(key: string, load: Load): Promise<Kept | undefined> {
    if (load.metaOnly) {
      const info = await this.#storage.head(key);
      return info ? this.#describe(info) : undefined;
    }
    const found = await this.#storage.get(key);
    if (!found || found.notModified) return undefined;
    const { body, ...info } = found;
    const kept = this.#describe(info);
    if (info.size > KEEP_MAX_OBJECT) {
      load.body = body;
      return kept;
    }
    // Read from the file get() opened, so the bytes and the metadata kept belong together.
    const bytes = await readAll(body);
    kept.plain = { bytes, gz: kept.text && bytes.length >= GZIP_MIN_BYTES ? undefined : null };
    return kept;
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
    };
  }

  /** `kept` holds more bytes now: counted again while it is still the entry of `key`. */
  #grew(key: string, kept: Kept): void {
    if (this.#kept.peek(key) !== kept) return; // evicted or replaced meanwhile: counts no more
    // lru-cache sizes an entry when it is set to another value only: set anew.
    this.#kept.delete(key);
    this.#kept.set(key, kept);
  }

  /** The page with `tag` in it, made once per tag (a few tags per page). */
  #taggedRep(key: string, kept: Kept, tag: PageTags): Rep {
    kept.tagged ??= new Map();
    const hit = kept.tagged.get(tag.key);
    if (hit) return hit;
    const bytes = injectTag(kept.plain!.bytes, tag);
    const rep: Rep = { bytes, gz: kept.text && bytes.length >= GZIP_MIN_BYTES ? undefined : null };
    if (kept.tagged.size >= TAGS_PER_PAGE) kept.tagged.delete(kept.tagged.keys().next().value!);
    kept.tagged.set(tag.key, rep);
    this.#grew(key, kept);
    return rep;
  }

  /** The gzip encoding of `rep`, made once (concurrent requests share the making), or null when not smaller. */
  #gzipOf(key: string, kept: Kept, rep: Rep): Promise<Buffer | null> {
    if (rep.gz !== undefined) return Promise.resolve(rep.gz);
    rep.gzLoad ??= gzipAsync(rep.bytes, { level: zlib.constants.Z_BEST_COMPRESSION }).then(
      (gz) => {
        const made = gz.length < rep.bytes.length ? gz : null;
        rep.gz = made;
        rep.gzLoad = undefined;
        if (made) this.#grew(key, kept);
        return made;
      },
      () => {
        // Not expected; the identity bytes are always right.
        rep.gz = null;
        rep.gzLoad = undefined;
        return null;
      },
    );
    return rep.gzLoad;
  }
}

/** Streams `body` as the answer's body, gzipped on the way when `gzip`. */
async function sendBody(body: Readable, res: ServerResponse, gzip: boolean): Promise<void> {
  try {
    if (gzip) await pipeline(body, zlib.createGzip(), res);
    else await pipeline(body, res);
  } catch {
    // The reader went away mid-way, or storage failed after the headers were out: nothing to answer.
    res.destroy();
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
function repTag(bare: string, tagged: string, gzip: boolean): string {
  return `${bare}${tagged ? `-${tagged}` : ''}${gzip ? '-gz' : ''}`;
}

/** The stored object's tag a client's tag stands for, or null when it names another kind of representation. */
function storedTagOf(held: string, tagged: string): string | null {
  const t = held.endsWith('-gz') ? held.slice(0, -3) : held;
  if (!tagged) return t;
  return t.endsWith(`-${tagged}`) ? t.slice(0, -tagged.length - 1) : null;
}

/**
 * Which tag of If-None-Match names a representation of the stored object `bare` (of the right
 * kind: with the switcher or without), so the answer is 304: the one this request would be sent
 * (gzip or not) when listed, else the other encoding's (the copy the client holds is still
 * right), `*` for `*`; null when none matches.
 */
function heldTag(ifNoneMatch: string, bare: string, tagged: string, gzip: boolean): string | null {
  const wanted = repTag(bare, tagged, gzip);
  let other: string | null = null;
  for (const t of parseEtags(ifNoneMatch)) {
    if (t === '*' || t === wanted) return t;
    if (other === null && storedTagOf(t, tagged) === bare) other = t;
  }
  return other;
}

const stripQuotes = (etag: string) => (etag.length >= 2 && etag.startsWith('"') && etag.endsWith('"') ? etag.slice(1, -1) : etag);

const isHtml = (key: string) => key.endsWith('.html') || contentTypeFor(key).startsWith('text/html');

/** Types worth compressing: text, JSON, JavaScript, XML and SVG. */
function isText(type: string): boolean {
  return /^(?:text\/|image\/svg\+xml|application\/(?:javascript|ecmascript|json|xml|xhtml\+xml|rss\+xml|atom\+xml|manifest\+json|ld\+json|[\w.-]+\+(?:json|xml))(?:;|$))/i.test(
    type,
  );
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
