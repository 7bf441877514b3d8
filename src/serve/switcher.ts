// Read the Docs' addons data on hosted pages, and Lectern's small version and language menu drawn
// from it (docs/design/addons.md): a script tag put into served HTML pages and the script itself
// (one static file). The script reads the page's `/_/addons/` answer, dispatches Read the Docs'
// `readthedocs-addons-data-ready` event with it (themes that draw their own version selector wait
// for it), and draws the menu when the answer's flyout addon is on and no script of the page took
// the data over. A project turns it all off with Project.addonsEnabled, the menu alone with
// Project.versionSwitcher. The menu is built with DOM calls only (no innerHTML), so no version name
// or URL can inject markup.

/** Bumped when the script changes, so browsers holding the old one fetch the new one. */
export const SWITCHER_REVISION = '2';

export const SWITCHER_JS = `/* Lectern: Read the Docs' addons data, and a version and language menu */
(function () {
  var script = document.currentScript;
  if (!script || !window.fetch) return;
  var d = script.dataset;
  var page = d.page || '';
  // The answer's URLs are canonical (Lectern's public URL): this site's are followed as the reader
  // reached it (another host name, a grant's path), so the menu keeps them where they are.
  function here(url) { return url.indexOf(d.root + '/') === 0 ? d.base + url.slice(d.root.length) : url; }
  var box = null;
  var taken = false;
  // A script of the page that reads the data draws its own selectors (sphinx_rtd_theme 3's, for
  // one): the menu goes, and is not drawn.
  function takeOver() {
    taken = true;
    if (box && box.parentNode) box.parentNode.removeChild(box);
  }
  function status() {
    var meta = document.querySelector('meta[name="readthedocs-http-status"]');
    return meta ? meta.content : '200';
  }
  function eventData(data) {
    return { data: function () { takeOver(); return data; }, initialize: function () {}, httpStatus: status };
  }
  // Material for MkDocs draws its own version selector from mike's versions.json.
  function materialVersions() {
    var config = document.getElementById('__config');
    try { return !!config && JSON.parse(config.textContent).version.provider === 'mike'; } catch (e) { return false; }
  }
  function pick(label, name, items, current, go) {
    var wrap = document.createElement('label');
    wrap.style.cssText = 'display:inline-block;margin:0 .3em';
    wrap.appendChild(document.createTextNode(label + ' '));
    var select = document.createElement('select');
    select.name = name;
    select.setAttribute('aria-label', label);
    items.forEach(function (item) {
      var option = document.createElement('option');
      option.value = item.value;
      option.textContent = item.text;
      if (item.value === current) option.selected = true;
      select.appendChild(option);
    });
    select.addEventListener('change', function () { go(select.value); });
    wrap.appendChild(select);
    return wrap;
  }
  function draw(data) {
    var nav = document.createElement('nav');
    nav.id = 'lectern-switcher';
    nav.setAttribute('aria-label', 'Versions and languages');
    nav.style.cssText = 'position:fixed;right:1em;bottom:1em;z-index:2147483647;background:#fff;color:#222;' +
      'border:1px solid #bbb;border-radius:4px;padding:.4em .5em;font:13px/1.4 sans-serif;box-shadow:0 1px 4px rgba(0,0,0,.2)';
    var current = data.versions.current;
    var versions = data.versions.active.slice();
    // A hidden version is served but not listed: still show where the reader is.
    if (current && !versions.some(function (v) { return v.slug === current.slug; })) versions.unshift(current);
    if (!materialVersions() && versions.length) {
      var byVersion = {};
      versions.forEach(function (v) { byVersion[v.slug] = v; });
      nav.appendChild(pick('Version', 'version', versions.map(function (v) { return { value: v.slug, text: v.verbose_name }; }), d.version,
        function (slug) { window.location.href = here(byVersion[slug].urls.documentation) + page; }));
    }
    var languages = [data.projects.current].concat(data.projects.translations);
    if (languages.length > 1) {
      languages.sort(function (a, b) { return a.language.code < b.language.code ? -1 : a.language.code > b.language.code ? 1 : 0; });
      var byLanguage = {};
      languages.forEach(function (p) { byLanguage[p.language.code] = p; });
      nav.appendChild(pick('Language', 'language', languages.map(function (p) { return { value: p.language.code, text: p.language.name }; }),
        data.projects.current.language.code, function (code) { window.location.href = here(byLanguage[code].urls.documentation) + page; }));
    }
    return nav.firstChild ? nav : null;
  }
  fetch(d.addons, { credentials: 'same-origin' })
    .then(function (r) { return r.ok ? r.json() : null; })
    .then(function (data) {
      if (!data || !data.projects) return;
      // Read the Docs' addons script's contract: the data on the window for scripts that come
      // later, and the event for those already listening.
      window.ReadTheDocsEventData = eventData(data);
      document.dispatchEvent(new CustomEvent('readthedocs-addons-data-ready', { detail: eventData(data) }));
      if (taken || !data.addons.flyout.enabled) return;
      box = draw(data);
      if (box) document.body.appendChild(box);
    })
    .catch(function () {});
})();
`;

/** Made for every page sent: most values need no escaping, and are then returned as they are. */
/** Text as an HTML attribute value (or element text): `&`, `"`, `<` and `>` escaped. */
export const escapeAttr = (s: string) => (/[&"<>]/.test(s) ? s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;') : s);

export interface SwitcherTag {
  /** URL path of the docs root the page was reached by ('' on a project's own host). */
  base: string;
  /** The same docs root as Lectern's public URL writes it (absolute): the addons answer's URLs start with it. */
  root: string;
  /** The project whose page it is (a translation's or subproject's own slug). */
  project: string;
  version: string;
  /** The page, still URL-encoded, relative to the version's root ('' for the root page). */
  page: string;
}

export function switcherTag(t: SwitcherTag): string {
  const base = escapeAttr(t.base);
  const addons = `${t.base}/_/addons/?api-version=1&project-slug=${encodeURIComponent(t.project)}&version-slug=${encodeURIComponent(t.version)}`;
  return (
    `<script src="${base}/_/switcher.js?v=${SWITCHER_REVISION}" data-addons="${escapeAttr(addons)}" data-root="${escapeAttr(t.root)}" data-base="${base}"` +
    ` data-version="${escapeAttr(t.version)}" data-page="${escapeAttr(t.page)}"></script>`
  );
}

/**
 * What is put into a served HTML page: `head` first in it, `body` before its `</body>`; `key` names
 * them, `mark` the kind (in the page's ETag: 's' the switcher, 'q' the search box, 'b' the storage
 * shim, in that order; '' nothing, the stored bytes as they are).
 */
export interface PageTags {
  head: string;
  body: string;
  key: string;
  mark: string;
}

/**
 * The tags of a page: `head` (the storage shim), then before `</body>` the version menu, the search
 * box and a pull request preview's banner, each '' when not put in.
 */
export const pageTags = (head: string, switcher: string, search = '', banner = ''): PageTags => ({
  head,
  body: switcher + search + banner,
  key: `${head}\n${switcher}\n${search}\n${banner}`,
  mark: `${switcher ? 's' : ''}${search ? 'q' : ''}${head ? 'b' : ''}${banner ? 'p' : ''}`,
});

/**
 * The banner of a pull request's preview (an external version): fixed at the foot of every page,
 * saying what it is and linking the pull request. Plain HTML with inline styles, no script.
 */
export function previewBanner(source: { number?: unknown; url?: unknown } | null): string {
  const number = typeof source?.number === 'number' ? source.number : null;
  if (number === null) return '';
  const url = typeof source?.url === 'string' && /^https?:\/\//.test(source.url) ? source.url : null;
  const link = url ? ` <a href="${escapeAttr(url)}" style="color:inherit;text-decoration:underline">View the pull request</a>.` : '';
  return (
    `<div role="note" aria-label="Pull request preview" data-lectern-preview="${number}" style="position:fixed;left:0;right:0;bottom:0;z-index:2147483647;` +
    `margin:0;padding:.5em 1em;background:#fff3cd;color:#5c4400;border-top:1px solid #e0c36b;font:14px/1.4 system-ui,sans-serif">` +
    `This page is a preview of pull request #${number}, not a published version of these docs.${link}</div>`
  );
}

/**
 * The page with `tags.body` before its last `</body>` (at the end when there is none) and
 * `tags.head` right after its `<head>` (or `<html>`, or a leading doctype, else at the start), so it
 * runs before the page's own scripts. Works on bytes, so pages in any ASCII-compatible encoding
 * come out unchanged apart from the tags.
 */
export function injectTag(html: Buffer, tags: PageTags): Buffer {
  const parts: Buffer[] = [];
  let from = 0;
  if (tags.head) {
    const start = html.subarray(0, 4096).toString('latin1');
    const open = /<head\b[^>]*>/i.exec(start) ?? /<html\b[^>]*>/i.exec(start) ?? /^\s*<!doctype[^>]*>/i.exec(start);
    from = open ? open.index + open[0].length : 0;
    parts.push(html.subarray(0, from), Buffer.from(tags.head));
  }
  const end = Math.max(html.lastIndexOf('</body>'), html.lastIndexOf('</BODY>'), html.lastIndexOf('</Body>'));
  const at = end < from ? html.length : end;
  parts.push(html.subarray(from, at), Buffer.from(tags.body), html.subarray(at));
  return Buffer.concat(parts);
}

/**
 * A page served sandboxed (paths.ts DOCS_SANDBOX) has no `localStorage` or `sessionStorage`: reading
 * either throws, which stops themes' scripts (a remembered dark mode, Sphinx's highlight of search
 * terms). Put first in such a page, this gives it storage kept in memory for the page's life.
 */
export const STORAGE_SHIM =
  '<script>(function(){try{window.localStorage;return}catch(e){}function S(){var m=new Map();' +
  'this.getItem=function(k){k=String(k);return m.has(k)?m.get(k):null};this.setItem=function(k,v){m.set(String(k),String(v))};' +
  'this.removeItem=function(k){m.delete(String(k))};this.clear=function(){m.clear()};' +
  'this.key=function(i){return Array.from(m.keys())[i]===undefined?null:Array.from(m.keys())[i]};' +
  "Object.defineProperty(this,'length',{get:function(){return m.size}})}" +
  "['localStorage','sessionStorage'].forEach(function(n){try{Object.defineProperty(window,n,{value:new S(),configurable:true})}catch(e){}})})()</script>";

/** Menu order: latest, stable, then the rest newest first (numbers compared as numbers). */
export function compareVersions(a: string, b: string): number {
  const rank = (s: string) => (s === 'latest' ? 0 : s === 'stable' ? 1 : 2);
  return rank(a) - rank(b) || b.localeCompare(a, 'en', { numeric: true });
}

/**
 * Put into sandboxed pages' heads beside STORAGE_SHIM: a page in an opaque origin cannot start a
 * Worker from its own site's URL (Chromium: "cannot be accessed from origin 'null'"), so MkDocs'
 * search never ran. A classic Worker of an http(s) URL is started instead from a `blob:` URL the
 * page makes (same opaque origin, so allowed) whose script loads the real one with importScripts
 * (a no-cors script load) and resolves the worker's relative `importScripts`, XHR and `fetch` URLs
 * against the real script's address; what it then reads (a search index) answers any origin when
 * public (router.ts). Module workers, blob and data URLs are started as asked.
 */
export const WORKER_SHIM =
  '<script>(function(){var W=window.Worker;if(!W||!window.Blob||!window.URL||!URL.createObjectURL)return;' +
  'function L(u,o){var a;try{a=new URL(String(u),document.baseURI)}catch(e){return new W(u,o)}' +
  "if(!/^https?:$/.test(a.protocol)||(o&&o.type==='module'))return new W(u,o);" +
  "var s='var __b='+JSON.stringify(a.href)+';var __i=self.importScripts;self.importScripts=function(){return __i.apply(self,Array.prototype.map.call(arguments,function(u){return new URL(u,__b).href}))};'+" +
  "'if(self.XMLHttpRequest){var __o=XMLHttpRequest.prototype.open;XMLHttpRequest.prototype.open=function(m,u){arguments[1]=new URL(u,__b).href;return __o.apply(this,arguments)}}'+" +
  '\'if(self.fetch){var __f=self.fetch;self.fetch=function(u,o){return __f.call(self,typeof u==="string"?new URL(u,__b).href:u,o)}}\'+' +
  "'importScripts(__b);';" +
  "return new W(URL.createObjectURL(new Blob([s],{type:'text/javascript'})),o)}" +
  'L.prototype=W.prototype;window.Worker=L})()</script>';

/** What every sandboxed page (no docs domain) gets in its head. */
export const SANDBOX_HEAD = STORAGE_SHIM + WORKER_SHIM;
