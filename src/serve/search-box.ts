// Lectern's search box in served docs (issue 13): one static script put into HTML pages beside the
// version menu when the project has `docsSearch`, reading `<docs root>/_/search.json` on the docs
// site itself (so a private page read under a grant searches as its reader, and a sandboxed page
// needs no credentials it does not have). It opens with "/" or its button, queries as the reader
// types (debounced), is keyboard navigable (arrows, Enter, Escape) and links each result to its
// section's anchor. It builds everything with DOM calls: no result text becomes markup, and the
// highlights' `<span>`s are rebuilt from the escaped text.
// Sphinx's own search.html, asked with ?q=, is answered with the server's results (answerSearchPage).
// Under a URL grant (private docs without a docs domain) the box cannot read search.json (no
// answer there carries Access-Control-Allow-Origin, and the sandboxed page's fetch carries no
// session cookie): it sends the reader to `<docs root>/_/search/?q=` instead, a page of results
// (resultsPage) that the reader's navigation opens (docs/design/grants.md).

import type * as Cheerio from 'cheerio';
import { lazyModule } from '../lazy-module.ts';
import { escapeAttr } from './switcher.ts';

const cheerio = lazyModule<typeof Cheerio>('cheerio');

/** Bumped when the script changes. */
export const SEARCH_REVISION = '3';

export const SEARCH_JS = `/* Lectern search box */
(function () {
  var script = document.currentScript;
  if (!script || !window.fetch) return;
  var d = script.dataset;
  /* The theme's own search (Sphinx's searchbox, the Read the Docs theme's and Furo's forms, MkDocs'
     modal, Material's header): no second button beside it, as Read the Docs' addons do. "/" still
     opens this box, unless the theme took the key first. */
  var themed = document.querySelector('form[action$="search.html"], form[action$="search/"], [role="search"] input, #mkdocs-search-query, [data-md-component="search"]');
  var button = document.createElement('button');
  button.type = 'button';
  button.id = 'lectern-search-button';
  button.textContent = 'Search';
  button.setAttribute('aria-haspopup', 'dialog');
  button.style.cssText = 'position:fixed;right:1em;top:1em;z-index:2147483646;font:14px sans-serif;padding:.3em .7em;background:#fff;color:#222;border:1px solid #bbb;border-radius:4px;cursor:pointer';
  var dialog = document.createElement('div');
  dialog.id = 'lectern-search';
  dialog.setAttribute('role', 'dialog');
  dialog.setAttribute('aria-modal', 'true');
  dialog.setAttribute('aria-label', 'Search the documentation');
  dialog.hidden = true;
  dialog.style.cssText = 'position:fixed;inset:0;z-index:2147483647;background:rgba(0,0,0,.4);font:15px/1.4 sans-serif;color:#222';
  var panel = document.createElement('div');
  panel.style.cssText = 'max-width:40em;margin:8vh auto 0;background:#fff;border-radius:6px;padding:1em;max-height:80vh;overflow:auto';
  var input = document.createElement('input');
  input.type = 'search';
  input.setAttribute('aria-label', 'Search the documentation');
  input.setAttribute('aria-controls', 'lectern-search-results');
  input.placeholder = 'Search the documentation';
  input.style.cssText = 'width:100%;box-sizing:border-box;font:inherit;padding:.5em;border:1px solid #888;border-radius:4px';
  var status = document.createElement('p');
  status.setAttribute('role', 'status');
  status.style.cssText = 'color:#555;margin:.5em 0';
  var list = document.createElement('ul');
  list.id = 'lectern-search-results';
  list.setAttribute('role', 'listbox');
  list.style.cssText = 'list-style:none;margin:0;padding:0';
  panel.appendChild(input);
  panel.appendChild(status);
  panel.appendChild(list);
  dialog.appendChild(panel);
  var links = [];
  var active = -1;
  var timer = null;
  var asked = 0;
  function unescape(s) { return s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&'); }
  /* A highlight is escaped text with <span> around the words found: rebuilt as nodes, never as markup. */
  function highlighted(html) {
    var box = document.createElement('span');
    html.split(/(<span>|<\\/span>)/).reduce(function (inMark, part) {
      if (part === '<span>') return true;
      if (part === '</span>') return false;
      if (!part) return inMark;
      var node = inMark ? document.createElement('mark') : document.createTextNode(unescape(part));
      if (inMark) node.textContent = unescape(part);
      box.appendChild(node);
      return inMark;
    }, false);
    return box;
  }
  function select(i) {
    if (active >= 0 && links[active]) links[active].parentNode.setAttribute('aria-selected', 'false');
    active = i;
    if (active >= 0 && links[active]) {
      links[active].parentNode.setAttribute('aria-selected', 'true');
      links[active].scrollIntoView({ block: 'nearest' });
    }
  }
  function show(data) {
    list.textContent = '';
    links = [];
    active = -1;
    status.textContent = data.count ? data.count + (data.count === 1 ? ' page found' : ' pages found') : 'Nothing found';
    data.results.forEach(function (page) {
      (page.blocks.length ? page.blocks : [{ id: '', title: page.title, highlight: null }]).forEach(function (block) {
        var item = document.createElement('li');
        item.setAttribute('role', 'option');
        item.style.cssText = 'border-top:1px solid #eee;padding:.4em 0';
        var a = document.createElement('a');
        a.href = page.url + (block.id ? '#' + encodeURIComponent(block.id) : '');
        a.style.cssText = 'display:block;color:#0b5cad;text-decoration:none';
        var title = document.createElement('strong');
        title.textContent = block.title && block.title !== page.title ? page.title + ' › ' + block.title : page.title;
        a.appendChild(title);
        if (block.highlight) {
          var text = document.createElement('span');
          text.style.cssText = 'display:block;color:#333;font-size:.9em';
          text.appendChild(highlighted(block.highlight));
          a.appendChild(text);
        }
        item.appendChild(a);
        list.appendChild(item);
        links.push(a);
      });
    });
  }
  function query() {
    var q = input.value.trim();
    var mine = ++asked;
    if (!q) { list.textContent = ''; status.textContent = ''; links = []; return; }
    if (d.page) { status.textContent = 'Press Enter to search.'; return; }
    status.textContent = 'Searching…';
    fetch(d.endpoint + '?q=' + encodeURIComponent(q) + '&version=' + encodeURIComponent(d.version), { credentials: 'same-origin' })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) { if (mine === asked) { if (data) show(data); else status.textContent = 'Search is not available.'; } })
      .catch(function () { if (mine === asked) status.textContent = 'Search is not available.'; });
  }
  function open() { dialog.hidden = false; input.focus(); input.select(); }
  function close() { dialog.hidden = true; if (button.isConnected) button.focus(); }
  button.addEventListener('click', open);
  input.addEventListener('input', function () { clearTimeout(timer); timer = setTimeout(query, 200); });
  input.addEventListener('keydown', function (e) {
    if (e.key === 'ArrowDown') { e.preventDefault(); select(Math.min(links.length - 1, active + 1)); }
    else if (e.key === 'ArrowUp') { e.preventDefault(); select(Math.max(0, active - 1)); }
    else if (e.key === 'Enter' && d.page) { if (input.value.trim()) { e.preventDefault(); window.location.href = d.page + '?q=' + encodeURIComponent(input.value.trim()) + '&version=' + encodeURIComponent(d.version); } }
    else if (e.key === 'Enter') { var a = links[active >= 0 ? active : 0]; if (a) { e.preventDefault(); window.location.href = a.href; } }
  });
  dialog.addEventListener('keydown', function (e) { if (e.key === 'Escape') close(); });
  dialog.addEventListener('click', function (e) { if (e.target === dialog) close(); });
  document.addEventListener('keydown', function (e) {
    var t = e.target && e.target.tagName;
    if (e.key === '/' && !e.defaultPrevented && dialog.hidden && t !== 'INPUT' && t !== 'TEXTAREA' && !(e.target && e.target.isContentEditable)) { e.preventDefault(); open(); }
  });
  if (!themed) document.body.appendChild(button);
  document.body.appendChild(dialog);
})();
`;

/**
 * The script tag for a page under the docs root `base` (as requested), in `version`. `navigate`:
 * the box sends the reader to the results page instead of reading search.json (a URL grant).
 */
export function searchTag(base: string, version: string, navigate = false): string {
  const page = navigate ? ` data-page="${escapeAttr(base)}/_/search/"` : '';
  return `<script src="${escapeAttr(base)}/_/search.js?v=${SEARCH_REVISION}" data-endpoint="${escapeAttr(base)}/_/search.json" data-version="${escapeAttr(version)}"${page}></script>`;
}

/** `<docs root>/_/search/?q=`: a page of the results, every text escaped, the highlights' spans rebuilt as marks. */
export function resultsPage(q: string, results: BoxResult[], count: number): string {
  const mark = (h: string) => h.replace(/<span>/g, '<mark>').replace(/<\/span>/g, '</mark>');
  const items = results
    .map(
      (r) =>
        `<li><a href="${escapeAttr(r.url)}">${escapeText(r.title)}</a>${r.blocks
          .map(
            (b) =>
              `<p>${b.title && b.title !== r.title ? `<a href="${escapeAttr(`${r.url}#${encodeURIComponent(b.id)}`)}">${escapeText(b.title)}</a> ` : ''}${b.highlight ? mark(b.highlight) : ''}</p>`,
          )
          .join('')}</li>`,
    )
    .join('');
  const summary = count ? `${count} page${count === 1 ? '' : 's'} found for "${escapeText(q)}".` : `Nothing found for "${escapeText(q)}".`;
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>Search: ${escapeText(q)}</title></head><body><main><h1>Search results</h1><p role="status">${summary}</p><ul>${items}</ul></main></body></html>`
  );
}

const escapeText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A result of `<docs root>/_/search.json`: a page and its best sections, highlights as escaped text with `<span>`s. */
export interface BoxResult {
  title: string;
  url: string;
  blocks: { id: string; title: string; highlight: string | null }[];
}

/** Whether a page is Sphinx's search page (html and dirhtml builders). */
export const isSearchPage = (key: string) => key === 'search.html' || key === 'search/index.html';

/**
 * Sphinx's search.html with the server's results for `q` in its `#search-results` (its main
 * content when there is none), and its client-side search scripts taken out: the results cover the
 * whole version, for readers without the index or without JavaScript too.
 */
export function answerSearchPage(html: string, q: string, results: BoxResult[], count: number): string {
  const $ = cheerio().load(html);
  $('script[src*="searchtools"], script[src*="searchindex"]').remove();
  // Themes that load the index themselves (the Read the Docs theme's `Search.loadIndex(...)`) would
  // then call a Search that is no longer there.
  $('script:not([src])')
    .filter((_, el) => /\bSearch\.loadIndex\b/.test($(el).text()))
    .remove();
  const out = $('#search-results').first().length ? $('#search-results').first() : $('[role="main"], main, body').first();
  out.empty();
  out.append($('<h2>').text('Search Results'));
  out.append($('<p class="search-summary">').text(count ? `${count} page${count === 1 ? '' : 's'} found for "${q}".` : `Nothing found for "${q}".`));
  const list = $('<ul class="search">');
  for (const r of results) {
    const item = $('<li>');
    item.append($('<a>').attr('href', r.url).text(r.title));
    for (const b of r.blocks) {
      const block = $('<p class="context">');
      if (b.title && b.title !== r.title)
        block.append(
          $('<a>')
            .attr('href', `${r.url}#${encodeURIComponent(b.id)}`)
            .text(b.title),
          ' ',
        );
      // The highlight is the page's text escaped, with <span> around the words found: kept as it is.
      if (b.highlight) block.append(b.highlight);
      item.append(block);
    }
    list.append(item);
  }
  out.append(list);
  const form = $('form[action$="search.html"], form.search').first();
  form.find('input[name="q"]').attr('value', q);
  return $.html();
}
