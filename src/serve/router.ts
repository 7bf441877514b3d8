// The docs server (docs/design/urls.md): `/docs/<project>/<lang>/<version>/<path>`, subprojects under
// `/projects/<alias>/`, translations under their main project, downloads under `/_/downloads/`,
// and with LECTERN_DOCS_DOMAIN the same on `<project>.<domain>`, a pull request's preview on
// `<project>--<n>.<domain>` alone. One middleware, mounted in app.ts before the API routes, so a
// docs host answers every path itself. Private docs are read under docs-reading grants
// (./grants.ts, docs/design/grants.md); README "Serving docs" and "Pull-request previews".
import compression from 'compression';
import type { Request, RequestHandler, Response } from 'express';
import { audit } from '../domain/audit.ts';
import { languageName } from '../domain/choices.ts';
import { anonymousContext, contextFor, createContext, type Services } from '../domain/context.ts';
import { UnauthenticatedError } from '../domain/errors.ts';
import { searchPages } from '../domain/search.ts';
import { sessionIdOf, signedIn } from '../domain/sessions.ts';
import { artifactPrefix, downloadKey } from '../storage/artifacts.ts';
import { StorageKeyError } from '../storage/index.ts';
import { readObject } from '../storage/storage.ts';
import { docsRoot, oneString, servedRoot } from '../urls.ts';
import { type AddonsTarget, addonsParams, addonsV1 } from './addons.ts';
import { type Freshness, ServedGeneration, TtlCache } from './cache.ts';
import { generatedRobots, generatedSitemap } from './crawlers.ts';
import type { FastPath } from './fast.ts';
import { cookieGrants, GRANT_PATH, type Grant, issueTicket, peekTicket, takeTicket, underGrant, urlGrant } from './grants.ts';
import { DOCS_SANDBOX, type DocPath, docsDomainOf, docsHostLabel, encodePath, headerSafe, parseDocPath, previewNumberOf, queryOf, withQuery } from './paths.ts';
import { matchRedirect, type RedirectMatch, type RedirectRequest } from './redirects.ts';
import { type ReadableVersion, Reader, Resolver, type ServedProjectRow } from './resolve.ts';
import { answerSearchPage, type BoxResult, isSearchPage, resultsPage, SEARCH_JS, searchTag } from './search-box.ts';
import { Sender } from './send.ts';
import { compareVersions, escapeAttr, injectTag, type PageTags, pageTags, previewBanner, SANDBOX_HEAD, SWITCHER_JS, switcherTag } from './switcher.ts';

export interface ServeDeps {
  /** The app's database, storage, settings and logger. */
  services: Services;
  /** Told the pages it may answer again itself (anonymous, public, sent whole). */
  fast?: FastPath;
  /** The app's count of `servedChanged` (./cache.ts), which empties the resolution cache; its own when not given. */
  served?: ServedGeneration;
}

/** How a request reached a project's docs: a `/docs/<slug>` path or a `<label>.<docs domain>` host. */
interface Site {
  /** URL path of the docs root as requested: `/docs/<slug>`, or '' on a docs host. */
  base: string;
  /** The raw path below it. */
  rest: string;
  slug?: string;
  hostLabel?: string;
  /** On a preview host `<project>--<n>.<domain>`: the pull request's number, the one version it serves. */
  preview?: string;
  /** A docs-reading grant's path segment (./grants.ts), taken off `base`'s end and `rest`'s start. */
  grant?: string;
}

/**
 * What a request reads under (./grants.ts): `url`, a URL grant (no docs domain); `cookie`, a docs
 * host's grant cookie; `ticket`, a one-time ticket being exchanged for that cookie (nothing is
 * answered under it but redirects on the way to the page, where it is taken).
 */
interface GrantScope {
  kind: 'url' | 'cookie' | 'ticket';
  sessionId: number;
  /** The versions it reads (none for a ticket). */
  versions: Set<number>;
  /** The cookie's grants (kind cookie), kept when one is added. */
  held: Grant[];
  /** The segment in the path (url, ticket), and the docs root before it. */
  segment?: string;
  root: string;
  /** The same request's path without the segment: where a reader goes to be granted anew. */
  plainPath: string;
  /** url: the request also carries the grant's own session cookie (a navigation of its reader). */
  withCookie: boolean;
  /** url: issued long enough ago that a navigation is sent on under a fresh one. */
  stale: boolean;
}

/** A project reached under a root, with what the answer needs to know about that root. */
interface Scope {
  req: Request;
  res: Response;
  reader: Reader;
  /** The project the root belongs to (a subproject when reached by alias). */
  top: ServedProjectRow;
  base: string;
  /** `base` without a grant's segment: public data (the version menu's) is read there. */
  plainBase: string;
  /** On a preview host: the one version (the pull request's number) it serves. */
  preview?: string;
  /** The root as docsRoot()/servedRoot() would write it, to tell canonical requests from others. */
  requestRoot: string;
  query: string;
  /** The earliest expiry of the lookups this answer was made from. */
  fresh: Freshness;
  /** The fast path's epoch() when the request began: an answer made across a change is not recorded. */
  epoch: number;
  /**
   * Something private went into the answer (a private project or version the reader may see):
   * then no answer to it, redirect or 404 included, may be kept by a shared cache.
   */
  private: boolean;
  /**
   * The reader came by the session cookie (a navigation, docs on Lectern's origin): a private page
   * is then answered with a redirect to the same page under a grant for its version (./grants.ts),
   * whose stylesheets and images the sandboxed page can load without the cookie.
   */
  granted?: (project: { id: number }, version: { id: number }) => string;
  /** The grant the request came with. */
  grant?: GrantScope;
}

const FORMATS = { pdf: 'pdf', htmlzip: 'zip', epub: 'epub' } as const;
type DownloadFormat = keyof typeof FORMATS;

/** Read the Docs' embed paths on a docs host, v2 or v3, and which. */
const EMBED_PATH = /^\/_\/api\/(v2|v3)\/embed\/?$/;

/** The path of a request URL, without its query. */
const pathOf = (url: string) => url.replace(/[?#].*$/s, '');

/** Put into a project's own 404 page for a reader who may not be signed in: a way to sign in. */
function signInNote(href: string): string {
  return (
    `<div role="note" aria-label="Sign in" data-lectern-sign-in style="position:fixed;left:0;right:0;bottom:0;z-index:2147483647;` +
    `margin:0;padding:.5em 1em;background:#eef4ff;color:#1a3a6b;border-top:1px solid #9bb7e0;font:14px/1.4 system-ui,sans-serif">` +
    `This page may be private. <a href="${escapeAttr(href)}" style="color:inherit;text-decoration:underline">Sign in to read private documentation.</a></div>`
  );
}

const NOT_FOUND_PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Not found</title></head>' +
  '<body><h1>Not found</h1><p>There is no documentation page at this address.</p></body></html>';

export function serveRouter(deps: ServeDeps): RequestHandler {
  return new DocsServer(deps).handler;
}

/** The docs server: its settings, stores and caches, and how it answers a request. */
class DocsServer {
  readonly deps: ServeDeps;
  readonly services: Services;
  readonly config: Services['config'];
  readonly log: Services['log'];
  readonly sender: Sender;
  readonly resolve: Resolver;
  /** The addons API's answers to anonymous readers (the same for all of them), emptied by every change served. */
  readonly addonsAnswers: TtlCache;
  // Stored files come with their own gzip copy (./send.ts); only the few answers made here per
  // request (the versions JSON, the switcher script) go through the middleware, invoked for them alone.
  readonly compress = compression();
  /** Anonymous readers all have the same (empty) rights: one Reader for all of them. */
  readonly anonymous: Reader;
  readonly domain: string | undefined;

  constructor(deps: ServeDeps) {
    this.deps = deps;
    this.services = deps.services;
    this.config = deps.services.config;
    this.log = deps.services.log;
    this.sender = new Sender(this.services.storage, this.config.serveXAccel);
    const served = deps.served ?? new ServedGeneration(this.services.events);
    this.resolve = new Resolver(this.services.prisma, this.config.serveCacheSeconds, served);
    this.addonsAnswers = new TtlCache({ ttlMs: this.config.serveCacheSeconds * 1000, generation: served, maxBytes: 8 * 1024 * 1024 });
    this.anonymous = new Reader(anonymousContext(this.services));
    this.domain = docsDomainOf(this.config.docsDomain);
  }

  /**
   * The docs site a request asks for; `elsewhere` when it asks for `/docs/…` on a host that serves
   * no docs: with a docs domain set, projects' HTML runs only on their own `<project>.<domain>`
   * origins, never on the API's, where it could call the API with a reader's browser.
   */
  siteOf(req: Request): Site | 'elsewhere' | null {
    if (this.domain) {
      const host = (this.domain.includes(':') ? req.get('host') : req.hostname) ?? '';
      const label = docsHostLabel(this.domain, host);
      if (label !== null) return { base: '', rest: req.path, hostLabel: label, preview: previewNumberOf(this.domain, host) };
    }
    const p = req.path;
    if (p !== '/docs' && !p.startsWith('/docs/')) return null;
    if (this.domain) return 'elsewhere';
    const m = /^\/docs\/([^/]+)(\/.*)?$/.exec(p);
    if (!m) return { base: '/docs', rest: '' };
    let slug: string;
    try {
      slug = decodeURIComponent(m[1]!);
    } catch {
      return { base: '/docs', rest: '' };
    }
    return { base: `/docs/${m[1]}`, rest: m[2] ?? '', slug };
  }

  /** The site with a grant's segment (`/_/r/<grant>` right after the docs root) taken apart. */
  withGrant(site: Site): Site {
    const m = GRANT_PATH.exec(site.rest);
    return m ? { ...site, base: underGrant(site.base, m[1]!), rest: m[2] ?? '', grant: m[1] } : site;
  }

  async handle(req: Request, res: Response, unparsed: Site): Promise<void> {
    const site = this.withGrant(unparsed);
    // On a docs host, a reader without credentials who meets a 404 may be one who could read it signed in.
    if (this.domain && site.grant === undefined && !req.headers.authorization && isNavigation(req)) {
      res.locals.signIn = `${this.config.publicUrl}/_/docs-access?next=${encodeURIComponent(`${req.protocol}://${req.host}${req.originalUrl}`)}`;
    }
    const epoch = this.deps.fast?.epoch() ?? 0;
    const fresh: Freshness = { until: Infinity };
    if (this.answeredWithoutLookups(req, res, site)) return;
    const slugOk = (s: string | undefined) => s !== undefined && /^[a-z0-9][a-z0-9_-]*$/.test(s);
    if (!slugOk(site.slug ?? site.hostLabel)) return notFound(res);
    const who = await this.readerFor(req, res, site, `${unparsed.base}${site.rest || '/'}`, unparsed.base);
    if (!who) return;
    const { reader, grant, sessionId } = who;
    // Without a docs domain, an anonymous reader's navigation that meets a 404 may be one who could
    // read the page signed in: the 404 offers sign-in, and back to the page (where the session
    // cookie then grants it).
    if (!this.domain && grant === undefined && sessionId === undefined && !req.headers.authorization && isNavigation(req)) {
      res.locals.signIn = `${this.config.publicUrl}/sign-in?next=${encodeURIComponent(req.originalUrl)}`;
    }
    const root = site.slug ? await this.resolve.projectBySlug(site.slug, fresh) : await this.resolve.projectByHostLabel(site.hostLabel!, fresh);
    // A private project reads as a missing one: its existence is not revealed.
    if (!root || !(await reader.canSeeProject(root))) return notFound(res, grant !== undefined);
    const granted =
      sessionId === undefined
        ? undefined
        : (project: { id: number }, version: { id: number }) =>
            underGrant(site.base, urlGrant.issue(this.services.cipher, { sessionId, projectId: project.id, versionId: version.id }, req.ip), site.rest || '/');
    let priv = root.privacyLevel !== 'public';
    const path = parseDocPath(site.rest);
    if (!path) return notFound(res, priv);
    const at = await this.subprojectOf(root, reader, path, site, unparsed.base, fresh);
    priv ||= at.top.privacyLevel !== 'public';
    const scope: Scope = {
      req,
      res,
      reader,
      top: at.top,
      base: at.base,
      plainBase: at.plainBase,
      preview: site.preview,
      requestRoot: at.requestRoot,
      query: queryOf(req.originalUrl),
      fresh,
      epoch,
      private: priv || grant !== undefined,
      granted,
      grant,
    };
    await this.serveUnder(scope, at.segments, at.raw, path.dir);
  }

  /**
   * What is answered before any lookup: without a docs domain, docs get the sandbox's CSP and no
   * service worker; the switcher and search scripts are the same for every project. True when answered.
   */
  private answeredWithoutLookups(req: Request, res: Response, site: Site): boolean {
    if (!this.domain) {
      res.setHeader('Content-Security-Policy', DOCS_SANDBOX);
      // A service worker would outlive the page and answer for Lectern's origin: none is served
      // from docs sharing it (the sandbox already keeps a page from registering one).
      if (req.headers['service-worker'] !== undefined) {
        res.status(403).set('Cache-Control', 'no-store').type('text/plain').send("Service workers are not served from docs on the dashboard's origin.\n");
        return true;
      }
    }
    const script = /^(?:\/projects\/[^/]+)?\/_\/(switcher|search)\.js$/.exec(site.rest);
    if (!script) return false;
    this.compress(req, res, () => {
      res
        .set('Cache-Control', 'public, max-age=86400')
        .type('text/javascript; charset=utf-8')
        .send(script[1] === 'search' ? SEARCH_JS : SWITCHER_JS);
    });
    return true;
  }

  /**
   * The project a path is under: the root project, or its subproject named by `/projects/<alias>/`
   * where the reader may see it (never through a preview host, which serves its one version), with
   * the bases and the path below it.
   */
  private async subprojectOf(root: ServedProjectRow, reader: Reader, path: DocPath, site: Site, plainBase: string, fresh: Freshness) {
    const { segments, raw } = path;
    const own = { top: root, base: site.base, plainBase, requestRoot: this.ownRootOf(root), segments, raw };
    if (segments[0] !== 'projects' || segments.length < 2 || site.preview !== undefined) return own;
    const child = await this.resolve.subprojectByAlias(root.id, segments[1]!, fresh);
    if (!child || !(await reader.canSeeProject(child))) return own;
    return {
      top: child,
      base: `${site.base}/projects/${raw[1]}`,
      plainBase: `${plainBase}/projects/${raw[1]}`,
      requestRoot: `${own.requestRoot}/projects/${segments[1]}`,
      segments: segments.slice(2),
      raw: raw.slice(2),
    };
  }

  /**
   * Who reads, and under which grant: a grant's segment in the path (a URL grant on Lectern's
   * origin, a one-time ticket on a docs host), an API token, a docs host's grant cookie, or
   * Lectern's session cookie on a navigation (without a docs domain); else the anonymous reader.
   * Null when the request is already answered (a grant that no longer reads: 302 or 404; a bad
   * token: 401).
   */
  async readerFor(
    req: Request,
    res: Response,
    site: Site,
    plainPath: string,
    root: string,
  ): Promise<{ reader: Reader; grant?: GrantScope; sessionId?: number } | null> {
    try {
      if (site.grant !== undefined) return await this.grantReader(req, res, site.grant, plainPath, root);
      // Anonymous readers (no Authorization header) cost no lookup at all.
      const authorization = req.headers.authorization;
      if (authorization) {
        const client = { ip: req.ip ?? '', userAgent: req.headers['user-agent'] ?? '' };
        return { reader: new Reader(await createContext(this.services, authorization, undefined, client)) };
      }
      if (this.domain) return await this.cookieGrantReader(req, res, plainPath);
      const cookie = isNavigation(req) ? sessionIdOf(req, this.config.publicUrl) : undefined;
      const who = cookie ? await signedIn(this.services.prisma, { cookie }, this.config.sessionIdleSeconds) : null;
      return who ? { reader: new Reader(contextFor(this.services, who.viewer)), sessionId: who.sessionId } : { reader: this.anonymous };
    } catch (e) {
      if (!(e instanceof UnauthenticatedError)) throw e;
      res.status(401).set('WWW-Authenticate', 'Token').set('Cache-Control', 'no-store').type('text/plain').send(e.message);
      return null;
    }
  }

  /** The reader of a grant's segment (`segment`): on a docs host a one-time ticket, on Lectern's origin a URL grant. */
  async grantReader(req: Request, res: Response, segment: string, plainPath: string, root: string): Promise<{ reader: Reader; grant: GrantScope } | null> {
    res.setHeader('Referrer-Policy', 'no-referrer');
    const host = (req.host ?? '').toLowerCase();
    const url = this.domain ? null : urlGrant.read(this.services.cipher, segment, req.ip);
    const ticketSession = this.domain ? await peekTicket(this.services.prisma, segment, host) : null;
    const grantSession = url?.sessionId ?? ticketSession;
    const who = grantSession != null && (await signedIn(this.services.prisma, { sessionId: grantSession }, this.config.sessionIdleSeconds));
    if (!who) {
      // Expired, used, ended or forged: a reader following a link goes to the page itself (and is granted again there when signed in).
      if (isNavigation(req)) redirect(plainScope(req, res), 302, plainPath);
      else notFound(res, true);
      return null;
    }
    let withCookie = false;
    if (url) {
      const cookie = sessionIdOf(req, this.config.publicUrl);
      withCookie = cookie !== undefined && (await signedIn(this.services.prisma, { cookie }, this.config.sessionIdleSeconds))?.sessionId === url.sessionId;
    }
    return {
      reader: new Reader(contextFor(this.services, who.viewer)),
      grant: {
        kind: url ? 'url' : 'ticket',
        sessionId: who.sessionId,
        versions: new Set(url ? [url.versionId] : []),
        held: [],
        segment,
        root,
        plainPath,
        withCookie,
        stale: url ? urlGrant.stale(url) : false,
      },
    };
  }

  /**
   * A docs host's reader without a token: the grant cookie's, which speaks only for this host's own
   * pages and for a reader's navigation (never for a request another origin, a preview's or a
   * sibling's, makes); else the anonymous reader.
   */
  async cookieGrantReader(req: Request, res: Response, plainPath: string): Promise<{ reader: Reader; grant?: GrantScope }> {
    const host = (req.host ?? '').toLowerCase();
    const held = ownRequest(req) ? cookieGrants.read(this.services.cipher, host, req.headers.cookie, req.protocol === 'https') : [];
    const who = held.length > 0 && (await signedIn(this.services.prisma, { sessionId: held[0]!.sessionId }, this.config.sessionIdleSeconds));
    if (!who) return { reader: this.anonymous };
    res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
    return {
      reader: new Reader(contextFor(this.services, who.viewer)),
      grant: {
        kind: 'cookie',
        sessionId: who.sessionId,
        versions: new Set(held.map((g) => g.versionId)),
        held,
        root: '',
        plainPath,
        withCookie: true,
        stale: false,
      },
    };
  }

  // Roots computed once per project row: rows are the resolver's cached objects, replaced (and
  // so computed again) whenever they are read anew.
  readonly ownRoots = new WeakMap<ServedProjectRow, string>();
  readonly servedRoots = new WeakMap<ServedProjectRow, string>();

  ownRootOf(p: ServedProjectRow): string {
    return this.ownRoots.get(p) ?? this.ownRoots.set(p, docsRoot(this.config, p.slug)).get(p)!;
  }

  servedRootOf(p: ServedProjectRow): string {
    return this.servedRoots.get(p) ?? this.servedRoots.set(p, servedRoot(this.config, p)).get(p)!;
  }

  /** Where `project` is reached from this request: the same root when it is canonical here, else its canonical root. */
  rootFor(s: Scope, project: ServedProjectRow) {
    const canonical = this.servedRootOf(project);
    return canonical === s.requestRoot ? s.base : canonical;
  }

  /** `fresh`: the version was just read from the database (not the cache), after a miss. */
  async serveUnder(s: Scope, segments: string[], raw: string[], dir: boolean, fresh = false): Promise<void> {
    const { top, reader } = s;
    if (segments.length === 0) {
      if (s.preview !== undefined) return redirect(s, 302, `${s.base}/${top.language}/${s.preview}/`);
      return redirect(s, 302, `${this.rootFor(s, top)}/${top.language}/${encodeURIComponent(top.defaultVersion)}/`);
    }
    if (segments[0] === '_') return this.special(s, segments.slice(1));
    if (segments.length === 1 && !dir && (segments[0] === 'robots.txt' || segments[0] === 'sitemap.xml')) return this.crawlerFile(s, segments[0]);

    const decodedPath = `/${segments.join('/')}${dir ? '/' : ''}`;
    const language = segments[0]!;
    // A preview host serves its project's own language only (a translation's preview has a host of its own).
    const project = s.preview !== undefined ? (language === top.language ? top : null) : await this.resolve.projectForLanguage(top, language, s.fresh);
    if (!project || !(await reader.canSeeProject(project))) {
      if (s.preview !== undefined) return notFound(s.res, s.private);
      // Not a language of this project: only exact and prefix redirects can know the path.
      return this.missing(s, top, { path: decodedPath, filename: null, language: top.language, version: top.defaultVersion }, null);
    }
    s.private ||= project.privacyLevel !== 'public';
    if (s.preview === undefined) {
      const canonical = this.rootFor(s, project);
      if (canonical !== s.base) return redirect(s, 302, `${canonical}/${raw.join('/')}${dir ? '/' : ''}`);
    }
    if (segments.length === 1) return redirect(s, 302, `${s.base}/${raw[0]}/${encodeURIComponent(s.preview ?? project.defaultVersion)}/`);
    // mike's list beside the versions (a version named so is still served at `versions.json/`).
    if (segments.length === 2 && !dir && segments[1] === 'versions.json' && s.preview === undefined) return this.mikeVersions(s, project);
    if (s.preview !== undefined && segments[1] !== s.preview) return notFound(s.res, s.private);

    const versionSlug = segments[1]!;
    const file = segments.slice(2);
    const fileRaw = raw.slice(2);
    const filename = `/${file.join('/')}${dir && file.length ? '/' : ''}`;
    const rr: RedirectRequest = { path: decodedPath, filename, language, version: versionSlug };
    const row = fresh ? await this.resolve.freshVersionOf(project.id, versionSlug, s.fresh) : await this.resolve.versionOf(project.id, versionSlug, s.fresh);
    const version = await reader.readable(project, row);
    if (!version) return this.missing(s, project, rr, null);
    s.private ||= version.privacyLevel !== 'public';
    // A preview is the pull request's author's code: with a docs domain it runs on its own host
    // only, and its host serves nothing else.
    if (this.domain && (s.preview !== undefined) !== (version.type === 'external')) {
      if (s.preview !== undefined) return notFound(s.res, s.private);
      return this.toPreviewHost(s, project, version, `${fileRaw.join('/')}${dir && fileRaw.length ? '/' : ''}`);
    }
    return this.serveFile(s, project, version, { segments, raw, dir, fresh, file, fileRaw, filename, rr });
  }

  /**
   * A file of `version` the reader may read, as the request names it (`file`, below the version;
   * `rr`, as redirects see it): a forced redirect, the version's root, Sphinx's search page with a
   * question, or the stored file; else what is missing (after one more look in the database when
   * the cached row may be stale).
   */
  private async serveFile(
    s: Scope,
    project: ServedProjectRow,
    version: ReadableVersion,
    at: { segments: string[]; raw: string[]; dir: boolean; fresh: boolean; file: string[]; fileRaw: string[]; filename: string; rr: RedirectRequest },
  ): Promise<void> {
    const { segments, raw, dir, fresh, file, fileRaw, filename, rr } = at;
    const { reader } = s;
    const versionSlug = rr.version;
    const forced = matchRedirect(project.redirects, rr, (r) => r.force);
    if (forced) return this.userRedirect(s, forced);
    // `/en/latest` is the version's root: relative links in its index need the slash.
    if (file.length === 0 && !dir) return redirect(s, 302, `${s.base}/${raw.join('/')}/`);

    const prefix = artifactPrefix(project.slug, version.slug, version.publishedBuildId, 'html');
    const key = file.length === 0 ? 'index.html' : `${file.join('/')}${dir ? '/index.html' : ''}`;
    const isPrivate = s.private;
    if (await this.gate(s, project, version, isHtmlKey(key) || isDocumentRequest(s.req) ? 'document' : 'file')) return;
    const tag = this.tagsOf(s, project, version, versionSlug, `${fileRaw.join('/')}${dir && fileRaw.length ? '/' : ''}`);
    // Sphinx's search page, asked a question: answered with the server's results.
    const q = project.docsSearch && isSearchPage(key) ? oneString(s.req.query.q)?.trim() : undefined;
    if (q) return this.searchPage(s, project, version.slug, `${prefix}/${key}`, q, tag);
    // Public files sent to anonymous readers (no Authorization header) are the same for every such reader.
    // A page read (not its images or scripts) counts in the project's analytics, here or on the fast path.
    const analytics = this.services.analytics;
    const view = analytics && isHtmlKey(key) && s.req.method === 'GET' ? () => analytics.pageView(project.id, version.slug, filename, 200) : undefined;
    const record = this.deps.fast && reader === this.anonymous && !isPrivate ? this.deps.fast.recorder(s.req, s.epoch, s.fresh, view) : undefined;
    // Public files answer any origin (a sandboxed page's fonts, a theme's fetch of its own JSON, a
    // search worker's index): never private ones, nor anything read under a grant.
    if (!isPrivate && !s.grant) s.res.setHeader('Access-Control-Allow-Origin', '*');
    if (await this.sender.send(s.req, s.res, `${prefix}/${key}`, { cacheControl: cacheControl(key, isPrivate), tag, record })) {
      if (view && (s.res.statusCode === 200 || s.res.statusCode === 304)) view();
      return;
    }
    s.res.removeHeader('Access-Control-Allow-Origin');
    // `dir` names a directory with an index: the same page at `dir/`, whose relative links work.
    if (!dir && (await this.sender.exists(`${prefix}/${key}/index.html`))) return redirect(s, 302, `${s.base}/${raw.join('/')}/`);
    // The cached row may name a build another process has since replaced (and removed): look
    // once more in the database before answering 404, so a publish elsewhere never shows as missing pages.
    if (!fresh && this.config.serveCacheSeconds > 0) {
      const now = await this.resolve.freshVersionOf(project.id, versionSlug);
      if (now?.publishedBuildId !== version.publishedBuildId || now?.privacyLevel !== version.privacyLevel || !now?.active) {
        // Pages the fast path keeps may be of the version as it was: it forgets them all (a rare event).
        this.deps.fast?.dropAll();
        return this.serveUnder(s, segments, raw, dir, true);
      }
    }
    return this.missing(s, project, rr, { version, prefix });
  }

  /**
   * Whether an answer about `version` may be given as the request stands; when not, the answer
   * given instead, and true: a navigation with the session cookie is sent to the page under a URL
   * grant for that version; a ticket is taken and exchanged for the docs host's grant cookie; a
   * grant that does not read the version, or a URL grant asked for a `document` (HTML, a download,
   * search) without its session's cookie, sends a navigation where it can be granted anew and
   * refuses anything else (docs/design/grants.md).
   */
  async gate(s: Scope, project: { id: number }, version: { id: number }, what: 'document' | 'file'): Promise<boolean> {
    const g = s.grant;
    if (!g) {
      if (s.private && s.granted) {
        redirect(s, 302, s.granted(project, version));
        return true;
      }
      return false;
    }
    if (g.kind === 'ticket') {
      const host = (s.req.host ?? '').toLowerCase();
      if (!(await takeTicket(this.services.prisma, g.segment!, host))) {
        notFound(s.res, true);
        return true;
      }
      const secure = s.req.protocol === 'https';
      const held = cookieGrants.read(this.services.cipher, host, s.req.headers.cookie, secure);
      s.res.append(
        'Set-Cookie',
        cookieGrants.add(this.services.cipher, host, held, { sessionId: g.sessionId, projectId: project.id, versionId: version.id }, secure),
      );
      redirect(s, 302, g.plainPath);
      return true;
    }
    if (!g.versions.has(version.id)) {
      if (g.kind === 'url' && isNavigation(s.req)) redirect(s, 302, g.plainPath);
      else if (g.kind === 'cookie' && isTopNavigation(s.req) && s.res.locals.signIn) {
        // A reader of this host who may read the version: granted it through Lectern's host.
        s.query = '';
        redirect(s, 302, s.res.locals.signIn as string);
      } else notFound(s.res, true);
      return true;
    }
    if (g.kind === 'url' && what === 'document' && !g.withCookie) {
      if (isNavigation(s.req)) redirect(s, 302, g.plainPath);
      else notFound(s.res, true);
      return true;
    }
    if (g.kind === 'url' && g.stale && isNavigation(s.req)) {
      const fresh = urlGrant.issue(this.services.cipher, { sessionId: g.sessionId, projectId: project.id, versionId: version.id }, s.req.ip);
      redirect(s, 302, underGrant(g.root, fresh, g.plainPath.slice(g.root.length)));
      return true;
    }
    return false;
  }

  /**
   * A pull request's preview asked for under its project's docs host: sent to its own host
   * `<project>--<n>.<domain>`, never served here. A reader under a grant goes by Lectern's host,
   * which hands that host a ticket of its own (no grant of this host ever reads a preview).
   */
  toPreviewHost(s: Scope, project: ServedProjectRow, version: { slug: string }, rest: string): void {
    const host = s.req.host ?? '';
    const label = `${project.slug.replace(/_/g, '-')}--${version.slug}`;
    const target = `${s.req.protocol}://${host.replace(/^[^.:]+/, label)}/${project.language}/${encodeURIComponent(version.slug)}/${rest}${s.query}`;
    s.query = '';
    redirect(s, 302, s.grant && s.private ? `${this.config.publicUrl}/_/docs-access?next=${encodeURIComponent(target)}` : target);
  }

  /**
   * A page that is not there: the redirects not tried yet, then the project's own 404.html (of
   * this version, else of the default version), then a plain 404.
   */
  async missing(s: Scope, project: ServedProjectRow, rr: RedirectRequest, current: { version: ReadableVersion; prefix: string } | null): Promise<void> {
    const hit = matchRedirect(project.redirects, rr, (r) => !r.force || current === null);
    if (hit) return this.userRedirect(s, hit);
    // A page asked for and not found, for the project's analytics (a browser's other files too: a missing image is as broken).
    if (s.req.method === 'GET') this.services.analytics?.pageView(project.id, current?.version.slug ?? '', rr.path, 404);
    // A private project's 404 page is its own HTML: never kept by a shared cache.
    const signIn = s.res.locals.signIn as string | undefined;
    const tag = signIn ? pageTags(this.domain ? '' : SANDBOX_HEAD, '', '', signInNote(signIn)) : undefined;
    const page = (priv: boolean) => ({ status: 404 as const, cacheControl: priv ? 'private, no-cache' : 'no-cache', tag });
    const g = s.grant;
    // Under a grant: the granted version's own 404 page only, and (a URL grant) only to its session's navigation.
    if (g && !(current && g.versions.has(current.version.id) && (g.kind !== 'url' || g.withCookie))) return notFound(s.res, true);
    if (current && (await this.sender.send(s.req, s.res, `${current.prefix}/404.html`, page(s.private)))) return;
    // A preview host shows nothing of another version, its project's default one included.
    if (current?.version.slug !== project.defaultVersion && !g && s.preview === undefined) {
      const fallback = await s.reader.readable(project, await this.resolve.versionOf(project.id, project.defaultVersion));
      if (fallback) {
        const prefix = artifactPrefix(project.slug, fallback.slug, fallback.publishedBuildId, 'html');
        if (await this.sender.send(s.req, s.res, `${prefix}/404.html`, page(s.private || fallback.privacyLevel !== 'public'))) return;
      }
    }
    notFound(s.res, s.private);
  }

  /** `/_/versions/<lang>.json` (the switcher's data) and `/_/downloads/<lang>/<version>/<format>/`. */
  async special(s: Scope, segments: string[]): Promise<void> {
    // A ticket is exchanged on a page's way only; a preview host has no version menu.
    if (s.grant?.kind === 'ticket') return notFound(s.res, true);
    if (segments[0] === 'versions' && segments.length === 2 && segments[1]!.endsWith('.json') && s.preview === undefined) {
      return this.versionsJson(s, segments[1]!.slice(0, -'.json'.length));
    }
    if (segments[0] === 'addons' && segments.length === 1) return this.addons(s);
    if (segments[0] === 'search.json' && segments.length === 1) return this.searchJson(s);
    if (segments[0] === 'search' && segments.length === 1) return this.searchResults(s);
    if (segments[0] === 'downloads' && segments.length === 4) {
      const [language, versionSlug, format] = segments.slice(1) as [string, string, string];
      if (Object.hasOwn(FORMATS, format)) return this.download(s, language, versionSlug, format as DownloadFormat);
    }
    notFound(s.res, s.private);
  }

  /**
   * The docs site's JSON (the version menu's data, the search box's results). Sandboxed pages
   * (DOCS_SANDBOX) ask from an opaque origin: public data answers any origin. Private data, and
   * anything answered under a grant, answers no other origin: no Access-Control-Allow-Origin, so
   * only a page of the docs host itself reads it (docs/design/grants.md).
   */
  sendJson(s: Scope, body: unknown) {
    s.res.set('Cache-Control', s.private ? 'private, no-cache' : 'public, max-age=60');
    if (!s.private && !s.grant) s.res.set('Access-Control-Allow-Origin', '*');
    this.compress(s.req, s.res, () => s.res.json(body));
  }

  /**
   * A search of the site's project (and its subprojects) in `version`, as its reader may read them:
   * BoxResults, 20 pages at most. Under a grant, or on a preview host, the one version it reads
   * only (its subprojects are other versions); null when `version` is not that one.
   */
  async searchFor(s: Scope, q: string, version: string | undefined): Promise<{ count: number; results: BoxResult[] } | null> {
    const g = s.grant;
    if (g || s.preview !== undefined) {
      const named = version || s.preview;
      const v = named ? await s.reader.readable(s.top, await this.resolve.versionOf(s.top.id, named)) : null;
      if (!v || (g && !g.versions.has(v.id)) || (s.preview !== undefined && v.slug !== s.preview)) return null;
    }
    const found = await searchPages(s.reader.ctx, {
      query: q.slice(0, 200),
      scopes: [{ project: s.top.slug, version: version || s.preview || null, includeSubprojects: !g && s.preview === undefined }],
      limit: 20,
      offset: 0,
    });
    return {
      count: found.total,
      results: found.pages.map((p) => ({
        title: p.pageTitle,
        url: s.grant?.kind === 'url' ? withGrantIn(p.url, s.grant.root, s.grant.segment!) : p.url,
        blocks: p.blocks.map((b) => ({ id: b.anchor, title: b.title, highlight: b.contentHighlight ?? b.titleHighlight })),
      })),
    };
  }

  /** `<root>/_/search.json?q=&version=`: what the search box shows. */
  async searchJson(s: Scope): Promise<void> {
    // Search reads a version's text: under a URL grant, for its session's own request only.
    if (s.grant?.kind === 'url' && !s.grant.withCookie) return notFound(s.res, true);
    const q = oneString(s.req.query.q)?.trim() ?? '';
    const body = q ? await this.searchFor(s, q, oneString(s.req.query.version)) : { count: 0, results: [] };
    if (!body) return notFound(s.res, true);
    this.sendJson(s, body);
  }

  /** `<root>/_/search/?q=&version=`: the search box's results as a page, for a reader whose page cannot read search.json (a URL grant's). */
  async searchResults(s: Scope): Promise<void> {
    // A page of the version's text: under a URL grant, to its session's own navigation only.
    if (s.grant?.kind === 'url' && !s.grant.withCookie) return isNavigation(s.req) ? redirect(s, 302, s.grant.plainPath) : notFound(s.res, true);
    const q = oneString(s.req.query.q)?.trim() ?? '';
    const found = q ? await this.searchFor(s, q, oneString(s.req.query.version)) : { count: 0, results: [] };
    if (!found) return notFound(s.res, true);
    s.res.set('Cache-Control', s.private ? 'private, no-cache' : 'no-cache').type('html');
    this.compress(s.req, s.res, () => s.res.send(resultsPage(q, found.results, found.count)));
  }

  /** Sphinx's search page with the server's results for `q` (./search-box.ts answerSearchPage), and the page's tags. */
  async searchPage(s: Scope, project: ServedProjectRow, version: string, key: string, q: string, tag: PageTags | undefined): Promise<void> {
    const page = await readObject(this.services.storage, key, MAX_SEARCH_PAGE_BYTES);
    if (page === null) return this.missing(s, project, { path: '/search.html', filename: '/search.html', language: project.language, version }, null);
    // A search page too large to rewrite here is sent as it is (its own client-side search runs).
    if (page === 'too large') {
      if (!(await this.sender.send(s.req, s.res, key, { cacheControl: cacheControl(key, s.private), tag }))) notFound(s.res, s.private);
      return;
    }
    const found = await this.searchFor(s, q, version);
    if (!found) return notFound(s.res, true);
    const { count, results } = found;
    const html = Buffer.from(answerSearchPage(page.toString('utf8'), q, results, count));
    s.res.set('Cache-Control', s.private ? 'private, no-cache' : 'no-cache').type('html');
    this.compress(s.req, s.res, () => s.res.send(tag ? injectTag(html, tag) : html));
  }

  async download(s: Scope, language: string, versionSlug: string, format: DownloadFormat): Promise<void> {
    // downloadUrl() names the project's own slug and language; a translation is also found under its main project.
    const project = s.preview !== undefined ? (language === s.top.language ? s.top : null) : await this.resolve.projectForLanguage(s.top, language);
    if (!project || !(await s.reader.canSeeProject(project))) return notFound(s.res, s.private);
    s.private ||= project.privacyLevel !== 'public';
    const version = await s.reader.readable(project, await this.resolve.versionOf(project.id, versionSlug));
    if (!version) return notFound(s.res, s.private);
    s.private ||= version.privacyLevel !== 'public';
    // With a docs domain a preview's files are on its own host only, and that host serves no other version's.
    if (this.domain && (s.preview !== undefined) !== (version.type === 'external' && version.slug === s.preview)) return notFound(s.res, s.private);
    const has = { pdf: version.hasPdf, htmlzip: version.hasHtmlzip, epub: version.hasEpub }[format];
    if (!has) return notFound(s.res, s.private);
    const isPrivate = s.private;
    if (await this.gate(s, project, version, 'document')) return;
    const sent = await this.sender.send(s.req, s.res, downloadKey(project.slug, version.slug, version.publishedBuildId, format), {
      cacheControl: isPrivate ? 'private, no-cache' : 'public, max-age=3600',
      downloadName: `${project.slug}-${version.slug}.${FORMATS[format]}`,
    });
    if (!sent) return notFound(s.res, s.private);
    // A private download made with an API token is in the audit log (docs/design/audit.md): it is how docs leave the company.
    if (isPrivate && s.req.headers.authorization && s.reader.ctx.viewer) {
      const entry = { action: 'private-download', project, method: 'token', data: { version: version.slug, format } } as const;
      // The file is sent already: a log that cannot be written is reported, not answered.
      await audit(s.reader.ctx, entry).catch((e: unknown) => this.services.log.error({ err: (e as Error).message }, 'the audit log could not be written'));
    }
  }

  async versionsJson(s: Scope, language: string): Promise<void> {
    const project = await this.resolve.projectForLanguage(s.top, language);
    if (!project || !(await s.reader.canSeeProject(project))) return notFound(s.res, s.private);
    s.private ||= project.privacyLevel !== 'public';
    const root = this.rootFor(s, project);
    // Copied before sorting: the cached list is shared.
    const versions = [...(await this.resolve.listedVersions(project.id))].sort((a, b) => compareVersions(a.slug, b.slug));
    const family = project.privacyLevel === 'public' ? await this.resolve.publicFamily(project) : [project];
    const body = {
      project: project.slug,
      language: project.language,
      defaultVersion: project.defaultVersion,
      versions: versions.map((v) => ({ slug: v.slug, name: v.verboseName, url: `${root}/${project.language}/${encodeURIComponent(v.slug)}/` })),
      translations: family.map((t) => ({
        language: t.language,
        name: languageName(t.language),
        project: t.slug,
        url: `${this.rootFor(s, t)}/${t.language}/`,
      })),
    };
    this.sendJson(s, body);
  }

  /** What is put into a served HTML page of `version` (`page`: its path below the version, URL-encoded); undefined for nothing. */
  tagsOf(s: Scope, project: ServedProjectRow, version: ReadableVersion, versionSlug: string, page: string): PageTags | undefined {
    // The addons data and the version menu read what a reader without grant reads, from the root;
    // a preview host has neither.
    const switcher =
      project.addonsEnabled && s.preview === undefined
        ? switcherTag({ base: s.plainBase, root: this.servedRootOf(s.top), project: project.slug, version: versionSlug, page })
        : '';
    // Under a URL grant the search box cannot read search.json (answers there need the session
    // cookie, which a sandboxed page's fetch never carries): it sends the reader to a results page.
    const search = project.docsSearch ? searchTag(s.base, versionSlug, s.grant?.kind === 'url') : '';
    const banner = version.type === 'external' ? previewBanner(version.externalSource as { number?: unknown; url?: unknown } | null) : '';
    return switcher || search || banner || !this.domain ? pageTags(this.domain ? '' : SANDBOX_HEAD, switcher, search, banner) : undefined;
  }

  /**
   * `<root>/<lang>/versions.json`: the versions a menu lists, in mike's format (`version`, `title`,
   * `aliases`), which Material for MkDocs' version selector reads (`extra.version.provider: mike`)
   * from `versions.json` one level above a version's root. As its reader may read them; under a grant, which
   * reads one version, none.
   */
  async mikeVersions(s: Scope, project: ServedProjectRow): Promise<void> {
    if (s.grant) return notFound(s.res, true);
    const viewer = s.reader === this.anonymous ? null : s.reader.ctx.viewer;
    // What a signed-in reader is answered may name private versions: theirs alone.
    if (viewer) s.private = true;
    const versions = [...(await this.resolve.listedVersionsFor(project.id, viewer))].sort((a, b) => compareVersions(a.slug, b.slug));
    this.sendJson(
      s,
      versions.map((v) => ({ version: v.slug, title: v.verboseName, aliases: [] })),
    );
  }

  /**
   * `robots.txt` or `sitemap.xml` at the root of a project's docs (docs/design/crawlers.md): the
   * project's own, from its default version's HTML, when anyone can read that version; else the
   * one Lectern generates. robots.txt answers 404 when the default version is not readable by
   * anyone, and the sitemap when no version is. Not below a subproject or on a preview host, nor
   * for a project whose docs are served under another's root (a translation's, a subproject's).
   */
  async crawlerFile(s: Scope, name: 'robots.txt' | 'sitemap.xml'): Promise<void> {
    const project = s.top;
    const root = this.servedRootOf(project);
    if (s.preview !== undefined || s.grant || s.requestRoot !== this.ownRootOf(project) || root !== this.ownRootOf(project)) {
      return notFound(s.res, s.private);
    }
    // The default version as Read the Docs takes it: the project's when it is active, else latest.
    let row = await this.resolve.versionOf(project.id, project.defaultVersion, s.fresh);
    if (!row?.active) row = await this.resolve.versionOf(project.id, 'latest', s.fresh);
    const published = project.privacyLevel === 'public' ? await this.anonymous.readable(project, row) : null;
    if (name === 'robots.txt' && !published) return notFound(s.res, s.private);
    const cacheControl = 'public, max-age=60';
    if (published) {
      const key = `${artifactPrefix(project.slug, published.slug, published.publishedBuildId, 'html')}/${name}`;
      if (await this.sender.send(s.req, s.res, key, { cacheControl })) return;
    }
    const family = project.privacyLevel === 'public' ? await this.resolve.publicFamily(project) : [project];
    const site = {
      project,
      root,
      translations: family.filter((t) => t.id !== project.id).map((t) => ({ id: t.id, language: t.language, root: this.servedRootOf(t) })),
    };
    const prisma = this.services.prisma;
    const body = name === 'robots.txt' ? await generatedRobots(prisma, site) : project.privacyLevel === 'public' ? await generatedSitemap(prisma, site) : null;
    if (body === null) return notFound(s.res, s.private);
    s.res
      .status(200)
      .set('Cache-Control', cacheControl)
      .type(name === 'robots.txt' ? 'text/plain; charset=utf-8' : 'application/xml; charset=utf-8')
      .send(body);
  }

  /** Read the Docs' addons API (src/serve/addons.ts): the page's project, versions and addons, as its reader may read them. */
  async addons(s: Scope): Promise<void> {
    const params = addonsParams(s.req.query as Record<string, unknown>);
    let answer: { status: number; body: unknown };
    if ('status' in params) answer = params;
    else if (params.apiMajor === 2) answer = { status: 200, body: { api_version: '2', comment: 'Undefined yet. Use v1 for now' } };
    else {
      const target = params.url
        ? await this.addonsTargetOf(s, params.url)
        : { projectSlug: params.project!, versionSlug: params.version, filename: null, byUrl: false };
      const deps = {
        ctx: s.reader.ctx,
        siteRoot: this.servedRootOf(s.top),
        publicUrl: this.config.publicUrl,
      };
      const ask = () => (target ? addonsV1(deps, target) : Promise.resolve({ status: 404, body: { detail: 'No Project matches the given query.' } }));
      // Every anonymous reader is answered the same: one answer per page, kept as the docs' rows are.
      answer = s.reader === this.anonymous ? await this.addonsAnswers.get(JSON.stringify([deps.siteRoot, target]), ask) : await ask();
    }
    // What a signed-in reader is answered may name private versions: theirs alone, to no other origin.
    if (s.reader !== this.anonymous) s.private = true;
    s.res.status(answer.status);
    this.sendJson(s, answer.body);
  }

  /** The project, version and file a page's URL names below this docs root; null when it names none here. */
  async addonsTargetOf(s: Scope, url: string): Promise<AddonsTarget | null> {
    let path: string;
    try {
      path = decodeURI(new URL(url, this.servedRootOf(s.top)).pathname);
    } catch {
      return null;
    }
    const base = new URL(this.servedRootOf(s.top)).pathname.replace(/\/$/, '');
    if (path !== base && !path.startsWith(`${base}/`)) return null;
    let parts = path.slice(base.length).split('/').slice(1);
    let top = s.top;
    if (parts[0] === 'projects' && parts[1]) {
      const child = await this.resolve.subprojectByAlias(s.top.id, parts[1]);
      if (!child) return null;
      top = child;
      parts = parts.slice(2);
    }
    const [language, version, ...file] = parts;
    const project = language ? await this.resolve.projectForLanguage(top, language) : top;
    if (!project || !version) return { projectSlug: (project ?? top).slug, versionSlug: null, filename: null, byUrl: true };
    return { projectSlug: project.slug, versionSlug: version, filename: `/${file.join('/')}`, byUrl: true };
  }

  userRedirect(s: Scope, m: RedirectMatch): void {
    s.res.set('X-Lectern-Redirect', 'user');
    if (m.absolute) {
      redirect(s, m.status, m.target);
      return;
    }
    // Relative targets stay on this host and under this docs root; encodePath leaves exactly one
    // leading slash, so a splat can never turn the path into `//other.host`.
    const cut = m.target.search(/[?#]/);
    const [p, tail] = cut < 0 ? [m.target, ''] : [m.target.slice(0, cut), m.target.slice(cut)];
    redirect(s, m.status, `${s.base}${encodePath(p)}${tail}`);
  }

  /**
   * `/docs/<project>/<rest>` asked on the API's host while docs have a domain of their own: sent to
   * `<project>.<domain>/<rest>`, as Read the Docs sends its old `/docs/<project>/` URLs to the
   * project's subdomain. Nothing is looked up (a private project is not told apart from a missing
   * one) and nothing of the project is served here.
   */
  toDocsHost(req: Request, res: Response): void {
    const m = /^\/docs\/([^/]+)(\/.*)?$/.exec(req.path);
    let slug: string | undefined;
    try {
      slug = m ? decodeURIComponent(m[1]!) : undefined;
    } catch {
      slug = undefined;
    }
    if (!slug || !/^[a-z0-9][a-z0-9_-]*$/.test(slug)) {
      notFound(res);
      return;
    }
    const location = headerSafe(withQuery(`${docsRoot(this.config, slug)}${m![2] ?? '/'}`, queryOf(req.originalUrl)));
    res.status(302).set('Location', location).set('Cache-Control', 'no-cache').type('text/plain').end(`Redirecting to ${location}`);
  }

  /**
   * `/_/docs-access?next=<docs URL>` on Lectern's own host, for docs on their own hosts (the session
   * cookie stays with Lectern's host): a signed-in reader who may read the project is sent to the
   * page under a grant (./grants.ts); one who is not signed in, to sign in and back here.
   */
  async docsAccess(req: Request, res: Response): Promise<void> {
    res.set('Cache-Control', 'no-store').set('Referrer-Policy', 'no-referrer');
    const next = typeof req.query.next === 'string' ? req.query.next : '';
    let target: URL;
    try {
      target = new URL(next);
    } catch {
      return void res.status(400).type('text/plain').send('next must be the address of a docs page.');
    }
    const label =
      this.domain && /^https?:$/.test(target.protocol) ? docsHostLabel(this.domain, this.domain.includes(':') ? target.host : target.hostname) : null;
    if (label === null || target.username || target.password)
      return void res.status(400).type('text/plain').send('next must be the address of a page on a docs host.');
    const cookie = sessionIdOf(req, this.config.publicUrl);
    const who = cookie ? await signedIn(this.services.prisma, { cookie }, this.config.sessionIdleSeconds) : null;
    if (!who) return void res.redirect(302, `/sign-in?next=${encodeURIComponent(req.originalUrl)}`);
    const project = await this.resolve.projectByHostLabel(label);
    if (!project || !(await new Reader(contextFor(this.services, who.viewer)).canSeeProject(project))) return notFound(res, true);
    // An address already under a ticket (a used one, say) is given a fresh one.
    const under = GRANT_PATH.exec(target.pathname);
    const rest = under ? (under[2] ?? '') : target.pathname;
    // A ticket for that one host, taken once there within a minute for its grant cookie: what
    // version it reads is decided there, as the reader may read it then.
    const ticket = await issueTicket(this.services.prisma, who.sessionId, target.host);
    res.redirect(302, `${target.origin}${underGrant('', ticket, rest || '/')}${target.search}`);
  }

  /**
   * A CORS preflight for a docs path (a theme's fetch of its own `_static/*.json` with a custom
   * header, from a sandboxed page's opaque origin): 204, with the CORS headers when the project is
   * public and nothing is asked under a grant, as its GET would answer any origin. A private
   * project's, or one under a grant, is 204 without them: the browser then sends nothing.
   */
  async preflight(req: Request, res: Response, unparsed: Site): Promise<void> {
    const site = this.withGrant(unparsed);
    res.set('Allow', 'GET, HEAD, OPTIONS').set('Cache-Control', 'no-cache');
    const label = site.slug ?? site.hostLabel;
    const asked = req.get('access-control-request-method');
    if (site.grant === undefined && asked && label && /^[a-z0-9][a-z0-9_-]*$/.test(label) && ['GET', 'HEAD'].includes(asked.toUpperCase())) {
      const project = site.slug ? await this.resolve.projectBySlug(site.slug) : await this.resolve.projectByHostLabel(label);
      if (project?.privacyLevel === 'public') {
        const headers = req.get('access-control-request-headers');
        res.set('Access-Control-Allow-Origin', '*').set('Access-Control-Allow-Methods', 'GET, HEAD, OPTIONS').set('Access-Control-Max-Age', '86400');
        if (headers) res.set('Access-Control-Allow-Headers', headerSafe(headers));
      }
    }
    res.status(204).end();
  }

  /** The middleware: docs requests answered here, the rest passed on. */
  readonly handler: RequestHandler = (req, res, next) => {
    if (req.path === '/_/docs-access' && this.domain && (req.method === 'GET' || req.method === 'HEAD') && this.siteOf(req) === null) {
      this.docsAccess(req, res).catch(next);
      return;
    }
    const site = this.siteOf(req);
    if (!site) return next();
    // The embed API on a docs host, at Read the Docs' `/_/api/v3/embed/` (sphinx-hoverxref's default
    // API host is `/_`) and `/_/api/v2/embed/`: answered by the REST routes, as on Lectern's host.
    const embed = site !== 'elsewhere' && site.hostLabel !== undefined ? EMBED_PATH.exec(pathOf(req.originalUrl)) : null;
    if (embed) {
      req.url = `/api/${embed[1]}/embed/${queryOf(req.originalUrl)}`;
      return next();
    }
    if (req.method === 'OPTIONS' && site !== 'elsewhere') {
      this.preflight(req, res, site).catch(next);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.status(405).set('Allow', 'GET, HEAD').type('text/plain').send('Method not allowed.');
      return;
    }
    if (site === 'elsewhere') return this.toDocsHost(req, res);
    this.handle(req, res, site).catch((err: unknown) => {
      // A key storage refuses is a path that names nothing: 404, never 500.
      if (err instanceof StorageKeyError) return notFound(res);
      this.log.error({ err, path: req.path }, 'docs request failed');
      if (res.headersSent) res.destroy();
      else res.status(500).set('Cache-Control', 'no-store').type('text/plain').send('Internal server error.');
    });
  };
}

function redirect(s: Scope, status: 301 | 302, location: string): void {
  s.res
    .status(status)
    .set('Location', headerSafe(withQuery(location, s.query)))
    // A private project's redirect says where its pages are: for the reader who may see it only.
    .set('Cache-Control', s.private ? 'private, no-cache' : status === 301 ? 'public, max-age=3600' : 'no-cache')
    .type('text/plain')
    .end(`Redirecting to ${headerSafe(withQuery(location, s.query))}`);
}

/** `priv`: the reader was answered about something private (a private project it may see). */
/** Largest search.html answered with the server's results. */
const MAX_SEARCH_PAGE_BYTES = 1024 * 1024;

/** A query parameter's value when given once or more (its last), as express parses it. */

/** `url` read under a URL grant when it is a page of the grant's docs site: the grant's segment after its root. */
function withGrantIn(url: string, root: string, segment: string): string {
  const u = new URL(url);
  if (u.pathname !== root && !u.pathname.startsWith(`${root}/`)) return url;
  u.pathname = underGrant(root, segment, u.pathname.slice(root.length));
  return u.toString();
}

/** A navigation (or a client that does not say: curl, an old browser), not a page's subresource. */
const isNavigation = (req: Request) => {
  const mode = req.headers['sec-fetch-mode'];
  return (req.method === 'GET' || req.method === 'HEAD') && (mode === undefined || mode === 'navigate');
};

/** A navigation of the browser's window itself (not a frame's), or a client that does not say. */
const isTopNavigation = (req: Request) => isNavigation(req) && (req.headers['sec-fetch-dest'] ?? 'document') === 'document';

/**
 * A request whose answer may become a document: a navigation or a frame, an `<embed>`, or a
 * client that does not say what it loads (curl). What browsers load into a page (a stylesheet,
 * a script, an image, a font, a fetch) says so in Sec-Fetch-Dest.
 */
const isDocumentRequest = (req: Request) => {
  const dest = req.headers['sec-fetch-dest'];
  return dest === undefined || ['document', 'iframe', 'frame', 'embed', 'object', 'fencedframe'].includes(String(dest));
};

/** A stored file browsers take for a document. */
const isHtmlKey = (key: string) => /\.(?:html?|xhtml?|xht|svgz?|xml)$/i.test(key);

/**
 * A request a docs host's grant cookie may speak in: one of the host's own pages (Sec-Fetch-Site
 * same-origin), the reader's own (none: typed, a bookmark), or the reader's navigation. Never one
 * a page of another origin makes, though it be of the same site (a preview or a sibling project's
 * host, to which the browser sends the cookie as SameSite allows). A client without Fetch Metadata
 * (curl) holding the cookie is its holder.
 */
const ownRequest = (req: Request) => {
  const site = req.headers['sec-fetch-site'];
  return site === undefined || site === 'same-origin' || site === 'none' || isTopNavigation(req);
};

/** A scope for answers given before any project is looked up. */
const plainScope = (req: Request, res: Response) => ({ req, res, query: queryOf(req.originalUrl), private: true }) as Scope;

function notFound(res: Response, priv = false): void {
  const signIn = res.locals.signIn as string | undefined;
  res
    .status(404)
    .set('Cache-Control', priv ? 'private, no-cache' : 'no-cache')
    .type('html')
    .send(signIn ? NOT_FOUND_PAGE.replace('</p>', ` <a href="${escapeAttr(signIn)}">Sign in to read private documentation.</a></p>`) : NOT_FOUND_PAGE);
}

/** HTML is revalidated on every view (a new build may have replaced it); other files are kept a while. */
function cacheControl(key: string, isPrivate: boolean): string {
  if (isPrivate) return 'private, no-cache';
  return /\.html?$/.test(key) ? 'public, no-cache' : 'public, max-age=3600';
}
