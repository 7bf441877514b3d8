// The docs server's fast path: a warm public page asked for by an anonymous reader is answered
// here, in front of express, because express's router and middleware cost several times what
// sending the page does. Only answers the docs router itself made are sent: after it sent a public
// file of a public version whole (status 200) to a reader without an Authorization header, it
// records that answer here (./send.ts Answer), keyed by docs site + path and by whether gzip was
// accepted; the same answer is then sent again by ./send.ts respond(), so headers, ETags, 304s,
// ranges (206, 416) and HEAD are exactly the router's. Anything else (another method, a token, a
// page not recorded) goes to express unchanged.
// Freshness is the resolution cache's (./cache.ts): every entry is dropped on `servedChanged`, and
// expires with the earliest of the lookups it was made from, so a write this process did not see
// shows after LECTERN_SERVE_CACHE_SECONDS at the latest, as without this path; 0 turns it off.
// The answers are kept by lru-cache, each with that expiry as its own TTL, bounded in entries and
// in bytes, least recently used first out.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { LRUCache } from 'lru-cache';
import type { Freshness, ServedGeneration } from './cache.ts';
import { DOCS_SANDBOX, docsHostLabel, hostnameOf, previewNumberOf } from './paths.ts';
import { type Answer, acceptsGzip, type Conditions, respond } from './send.ts';

/** Pages answered here, at most; their bytes are mostly the file cache's own buffers, but counted again. */
const MAX_ENTRIES = 4096;
const MAX_BYTES = 32 * 1024 * 1024;
/** What an entry costs besides its bytes and key. */
const ENTRY_OVERHEAD = 512;

/** express's compiled 'trust proxy' setting: whether the hop at `i` (0: the peer) is a trusted proxy. */
export type TrustProxy = (address: string | undefined, i: number) => boolean;

/** The request headers the fast path reads: those that choose the page, and those respond() answers. */
interface Asked extends Conditions {
  host?: string;
  forwardedHost?: string;
  authorization?: string;
  acceptEncoding?: string;
}

/**
 * The headers the fast path reads, from rawHeaders: node makes req.headers only when asked, at a
 * cost close to the rest of the answer's. Null when one of them is given twice: node would keep
 * the first of some and join others, and such a request is left to express.
 */
function askedOf(raw: string[]): Asked | null {
  const asked: Asked = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    let field: keyof Asked | undefined;
    // Only names of the lengths sought are lowered.
    switch (name.length) {
      case 4:
        if (name.toLowerCase() === 'host') field = 'host';
        break;
      case 5:
        if (name.toLowerCase() === 'range') field = 'range';
        break;
      case 8:
        if (name.toLowerCase() === 'if-range') field = 'ifRange';
        break;
      case 13: {
        const n = name.toLowerCase();
        field = n === 'authorization' ? 'authorization' : n === 'if-none-match' ? 'ifNoneMatch' : undefined;
        break;
      }
      case 15:
        if (name.toLowerCase() === 'accept-encoding') field = 'acceptEncoding';
        break;
      case 16:
        if (name.toLowerCase() === 'x-forwarded-host') field = 'forwardedHost';
        break;
      case 17:
        if (name.toLowerCase() === 'if-modified-since') field = 'ifModifiedSince';
        break;
    }
    if (field === undefined) continue;
    if (asked[field] !== undefined) return null;
    asked[field] = raw[i + 1]!;
  }
  return asked;
}

/** Characters with which parseurl (express's req.path) reads a URL differently than up to its `?`. */
const UNUSUAL_URL = /[\t\n\f\r #\u00a0\ufeff]/;

export class FastPath {
  readonly #ttlMs: number;
  readonly #domain: string | undefined;
  /** What reading a recorded page counts (the project's analytics), by the answer: dropped with it. */
  readonly #views = new WeakMap<Answer, () => void>();
  /**
   * The answers, keyed by whether the request accepted gzip ('1' or '0': the router chose a
   * different answer for each) then docs site and path. Each expires with the lookups it was made from.
   */
  readonly #answers = new LRUCache<string, Answer>({
    max: MAX_ENTRIES,
    maxSize: MAX_BYTES,
    sizeCalculation: (answer, key) => ENTRY_OVERHEAD + 2 * key.length + answer.body.length,
    // Expiries are Date times (Freshness), read on every check: the default clock is another, and
    // caches its reading for 1 ms behind a timer per read.
    perf: { now: () => Date.now() },
    ttlResolution: 0,
  });
  readonly #served: ServedGeneration;
  #generation: number;
  /** Times dropAll() was called. */
  #drops = 0;

  readonly #trust: TrustProxy;

  /**
   * `domain` as docsDomainOf() gives it; `trust` is express's 'trust proxy fn' of the app; `served`
   * the app's count of `servedChanged`, which empties this cache.
   */
  constructor(ttlSeconds: number, domain: string | undefined, trust: TrustProxy, served: ServedGeneration) {
    this.#ttlMs = ttlSeconds * 1000;
    this.#domain = domain;
    this.#trust = trust;
    this.#served = served;
    this.#generation = served.value;
  }

  get size(): number {
    return this.#answers.size;
  }

  /** Grows with every `servedChanged` and dropAll(): an answer made across a change is not recorded. */
  epoch(): number {
    return this.#served.value + this.#drops;
  }

  /** Forgets every answer: the router found a version changed by a write this process did not see. */
  dropAll(): void {
    this.#drops += 1;
    this.#clear();
  }

  /**
   * Answers `req` when it is a GET or HEAD without Authorization for a recorded page; false (having
   * sent nothing) otherwise.
   */
  tryAnswer(req: IncomingMessage, res: ServerResponse): boolean {
    if (this.#answers.size === 0 || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
    const asked = askedOf(req.rawHeaders);
    if (asked === null || asked.authorization) return false;
    const key = this.#keyOf(acceptsGzip(asked.acceptEncoding) ? '1' : '0', req.url, asked, req.socket.remoteAddress);
    if (key === null) return false;
    if (this.#generation !== this.#served.value) {
      this.#clear();
      return false;
    }
    // Expired answers are not returned (and are dropped).
    const answer = this.#answers.get(key);
    if (!answer) return false;
    if (this.#domain === undefined) res.setHeader('Content-Security-Policy', DOCS_SANDBOX);
    // Only public files are recorded, and those answer any origin (./router.ts).
    res.setHeader('Access-Control-Allow-Origin', '*');
    respond(res, answer, req.method === 'HEAD', asked);
    // A page read here counts as one read through the router does (the project's analytics).
    if (req.method === 'GET' && (res.statusCode === 200 || res.statusCode === 304)) this.#views.get(answer)?.();
    return true;
  }

  /**
   * What the router gives the sender to record the answer to `req` with, made from lookups
   * `fresh` tells the expiry of, begun at epoch() `epoch`; undefined when the request could not
   * be answered here anyway.
   */
  recorder(req: IncomingMessage, epoch: number, fresh: Freshness, view?: () => void): ((gzipOk: boolean, answer: Answer) => void) | undefined {
    if (this.#ttlMs <= 0 || req.headers.authorization) return undefined;
    const asked: Asked = { host: req.headers.host, forwardedHost: req.headers['x-forwarded-host'] as string | undefined };
    const site = this.#keyOf('', (req as { originalUrl?: string }).originalUrl ?? req.url, asked, req.socket.remoteAddress);
    if (site === null) return undefined;
    return (gzipOk, answer) => {
      // A write came in between: the answer may be of what it changed.
      if (epoch !== this.epoch() || answer.status !== 200) return;
      const now = Date.now();
      const ttl = Math.min(fresh.until - now, this.#ttlMs);
      if (ttl <= 0) return;
      if (this.#generation !== this.#served.value) this.#clear();
      this.#answers.set(`${gzipOk ? '1' : '0'}${site}`, answer, { ttl });
      if (view) this.#views.set(answer, view);
    };
  }

  /**
   * The docs site and path `req` asks for (without the query, which does not change which file is
   * sent), as the router reads them (./router.ts siteOf, with express's req.hostname and req.path);
   * null when it is no docs request, or a URL parseurl would take apart otherwise.
   */
  #keyOf(slot: string, url: string | undefined, asked: Asked, peer: string | undefined): string | null {
    if (url?.charCodeAt(0) !== 0x2f || UNUSUAL_URL.test(url)) return null;
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const domain = this.#domain;
    if (domain) {
      const host = domain.includes(':') ? (asked.host ?? '') : this.#hostnameOf(asked, peer);
      const label = docsHostLabel(domain, host);
      // A preview's host `<project>--<n>` is a site of its own: never answered with its project's pages, nor they with its.
      const preview = previewNumberOf(domain, host);
      if (label !== null) return `${slot}${label}${preview === undefined ? '' : `--${preview}`} ${path}`;
      // With a docs domain, `/docs/…` on any other host is sent to the docs host (./router.ts): never a page.
      return null;
    }
    return path === '/docs' || path.startsWith('/docs/') ? `${slot} ${path}` : null;
  }

  /** express's req.hostname: X-Forwarded-Host (its first value) from a trusted proxy, else Host; without the port. */
  #hostnameOf(asked: Asked, peer: string | undefined): string {
    let host = asked.forwardedHost;
    if (!host || !this.#trust(peer, 0)) host = asked.host;
    else if (host.includes(',')) host = host.slice(0, host.indexOf(',')).trimEnd();
    return host ? hostnameOf(host) : '';
  }

  #clear(): void {
    this.#answers.clear();
    this.#generation = this.#served.value;
  }
}
