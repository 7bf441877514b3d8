// The HTML half of the v2 embed API (docs/design/read-the-docs.md §5.2), on the HTML pages
// Sphinx wrote rather than the `.fjson` files Read the Docs kept: a page is parsed once into what
// every embed of it needs (its table of contents and its elements by id), and each request only
// picks a section out of that and writes it with absolute links.

import type * as Cheerio from 'cheerio';
import type { CheerioAPI } from 'cheerio';
import type { AnyNode, Element } from 'domhandler';
import { lazyModule } from '../lazy-module.ts';

const cheerio = lazyModule<typeof Cheerio>('cheerio');

/** One entry of a page's table of contents: its title and the anchor it links to (`#` for the page itself). */
export interface TocEntry {
  title: string;
  anchor: string;
}

export interface ParsedPage {
  $: CheerioAPI;
  /** The page's own content (Sphinx's `body`), without the theme's navigation around it. */
  body: Element;
  toc: TocEntry[];
  /** The first element with each id, inside the body. */
  ids: Map<string, Element>;
  /** Headings (h1–h6) in document order with their whole text, for the `:header:contains()` fallback. */
  headings: { element: Element; text: string }[];
  /** Rough size in bytes, for the cache's budget. */
  size: number;
}

// Where themes put the page's content: Read the Docs' theme, then Sphinx's basic layout
// (alabaster, classic, …), then anything that calls itself the main part.
const BODY_SELECTORS = ['[itemprop="articleBody"]', 'div.body[role="main"]', '[role="main"]', 'div.body', 'main', 'body'];

const isElement = (n: AnyNode): n is Element => n.type === 'tag' || n.type === 'script' || n.type === 'style';

/** Text of an element without its permalink (`a.headerlink`, the `¶`), as the toc shows titles. */
function titleText(el: Element): string {
  let out = '';
  const walk = (n: AnyNode) => {
    if (n.type === 'text') out += (n as unknown as { data: string }).data;
    else if (isElement(n)) {
      if (n.name === 'a' && /(^|\s)headerlink(\s|$)/.test(n.attribs.class ?? '')) return;
      for (const c of n.children) walk(c);
    }
  };
  walk(el);
  return out.replace(/\s+/g, ' ').trim();
}

export function parsePage(html: string): ParsedPage {
  const $ = cheerio().load(html);
  let body: Element | undefined;
  for (const sel of BODY_SELECTORS) {
    body = $(sel).get(0) as Element | undefined;
    if (body) break;
  }
  body ??= $.root().children().get(0) as Element;

  const ids = new Map<string, Element>();
  const headings: ParsedPage['headings'] = [];
  const toc: TocEntry[] = [];
  const walk = (el: Element) => {
    const id = el.attribs.id;
    if (id !== undefined && !ids.has(id)) ids.set(id, el);
    if (/^h[1-6]$/.test(el.name)) headings.push({ element: el, text: $(el).text() });
    // A section of the document (docutils' html5 `<section>`, or html4's `div.section`): its
    // heading is a toc entry. The first one is the page's title, which the toc links as `#`.
    if (id && (el.name === 'section' || (el.name === 'div' && /(^|\s)section(\s|$)/.test(el.attribs.class ?? '')))) {
      const heading = el.children.find((c): c is Element => isElement(c) && /^h[1-6]$/.test(c.name));
      if (heading) toc.push({ title: titleText(heading), anchor: toc.length === 0 ? '#' : `#${id}` });
    }
    for (const c of el.children) if (isElement(c)) walk(c);
  };
  walk(body);
  return { $, body, toc, ids, headings, size: html.length * 4 };
}

/** Django's `slugify` (ASCII): what Read the Docs tried second. */
export function slugify(s: string): string {
  const ascii = s.normalize('NFKD').replace(/[^\x00-\x7f]/g, '');
  return ascii
    .toLowerCase()
    .replace(/[^\w\s-]/g, '')
    .replace(/[-\s]+/g, '-')
    .replace(/^[-_]+|[-_]+$/g, '');
}

/** docutils' `make_id`: how Sphinx makes a section's id from its title. */
export function makeId(s: string): string {
  const ascii = s
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^\x00-\x7f]/g, '');
  return ascii
    .split(/\s+/)
    .filter(Boolean)
    .join(' ')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^[-0-9]+|-+$/g, '');
}

const hasClass = (el: Element | null | undefined, cls: string) => !!el && new RegExp(`(^|\\s)${cls}(\\s|$)`).test(el.attribs.class ?? '');
const parentElement = (el: Element): Element | null => (el.parent && isElement(el.parent as AnyNode) ? (el.parent as Element) : null);

/**
 * The elements a section names (steps 9–10 of the historical algorithm): by id as given, then its
 * slug, its docutils id and `module-<section>`; else the parents of the headings containing it. A
 * glossary or citation term gives its definition, another definition-list term its whole list.
 */
export function findSection(page: ParsedPage, section: string): Element[] {
  let found: Element[] = [];
  for (const id of [section, slugify(section), makeId(section), `module-${section}`]) {
    const el = id ? page.ids.get(id) : undefined;
    if (el) {
      found = [el];
      break;
    }
  }
  if (found.length === 0) {
    const parents = new Set<Element>();
    for (const h of page.headings) {
      if (!h.text.includes(section)) continue;
      const p = parentElement(h.element);
      if (p) parents.add(p);
    }
    found = [...parents];
  }
  if (found.length === 1 && found[0]!.name === 'dt') {
    const dt = found[0]!;
    const dl = parentElement(dt);
    if (hasClass(dl, 'glossary') || hasClass(dl, 'citation')) {
      const next = page.$(dt).nextAll('dd').get(0) as Element | undefined;
      found = next ? [next] : [];
    } else if (dl) found = [dl];
  }
  return found;
}

/**
 * An href or src made absolute against the page's URL, so it still works where the HTML is
 * embedded (a `/root` path too, which Read the Docs left as it was); links with a scheme or a
 * host of their own are left alone.
 */
function absolute(value: string, base: string): string {
  const v = value.trim();
  if (v === '' || /^[a-z][a-z0-9+.-]*:/i.test(v) || v.startsWith('//')) return value;
  try {
    return new URL(v, base).href;
  } catch {
    return value;
  }
}

/**
 * The HTML of each element (a `span` or `h2` stands for its parent, as Read the Docs wrote it),
 * with relative links and images made absolute against `baseUrl`. The cached page is never
 * changed: each element is copied first.
 */
export function renderSection(page: ParsedPage, elements: Element[], baseUrl: string): string[] {
  const { $ } = page;
  return elements.map((el) => {
    const target = (el.name === 'span' || el.name === 'h2') && parentElement(el) ? parentElement(el)! : el;
    const copy = $(target).clone();
    copy
      .find('[href]')
      .add(copy.filter('[href]'))
      .each((_i, e) => {
        e.attribs.href = absolute(e.attribs.href!, baseUrl);
      });
    copy
      .find('[src]')
      .add(copy.filter('[src]'))
      .each((_i, e) => {
        e.attribs.src = absolute(e.attribs.src!, baseUrl);
      });
    return $.html(copy);
  });
}
