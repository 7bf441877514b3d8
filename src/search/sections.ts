// A published HTML page as search reads it: its title and its sections (heading, anchor, text),
// from the page's main content only. Navigation, headers, footers, scripts and Sphinx's heading
// links are not text of the page. Works on Sphinx's output (sections with ids, `role="main"`) and
// MkDocs' (headings with ids, `<article>`/`role="main"`), and on any HTML with headings.

import type * as Cheerio from 'cheerio';
import type { AnyNode } from 'domhandler';
import { lazyModule } from '../lazy-module.ts';

const cheerio = lazyModule<typeof Cheerio>('cheerio');

export interface PageSection {
  title: string;
  /** The id to link to (`#anchor`); "" for the top of the page. */
  anchor: string;
  content: string;
}

export interface IndexedPage {
  title: string;
  sections: PageSection[];
}

/** Pages never indexed: search pages, 404s and generated indexes (Read the Docs' `search.ignore` defaults, and Sphinx's). */
export const IGNORED_PAGES = /(^|\/)(search\.html|search\/index\.html|404\.html|404\/index\.html|genindex(-[^/]*)?\.html|py-modindex\.html)$/;
/** Directories of assets and sources, not pages. */
export const IGNORED_DIRS = /(^|\/)(_static|_sources|_images|_downloads|_modules|assets|search)\//;

const MAIN = ['[role="main"]', 'main', 'article', '.document', 'body'];
const NOT_TEXT =
  'script, style, noscript, nav, header, footer, form, .headerlink, .toctree-wrapper, [role="navigation"], [role="search"], .md-sidebar, .sphinxsidebar, .related';
const HEADINGS = 'h1, h2, h3, h4, h5, h6';
/** Text kept per section: enough for ranking and snippets, bounded for hostile pages. */
const MAX_SECTION_CHARS = 20_000;
const MAX_SECTIONS = 500;

const clean = (s: string) => s.replace(/\s+/g, ' ').trim();

/** The sections of one page; a page with no heading is one section, titled by the page. */
export function pageSections(html: string): IndexedPage {
  // htmlparser2 rather than cheerio's default parse5: 2.3 times as fast on Python's docs (498 pages,
  // 5.3 s -> 2.3 s) with the same sections on every page of them. It does not rebuild the tree of
  // malformed HTML as browsers do, which can only move a hostile page's section boundaries.
  const $ = cheerio().load(html, { xml: { xmlMode: false, decodeEntities: true } });
  const main = MAIN.map((sel) => $(sel).first()).find((m) => m.length > 0)!;
  main.find(NOT_TEXT).remove();
  const headings = main.find(HEADINGS).toArray();
  const pageTitle =
    clean(
      $(headings[0] ?? 'title')
        .first()
        .text(),
    ) ||
    clean($('title').text()) ||
    '';
  if (headings.length === 0) return { title: pageTitle, sections: [{ title: pageTitle, anchor: '', content: clean(main.text()).slice(0, MAX_SECTION_CHARS) }] };

  const sections: PageSection[] = [];
  const intro = textBefore(main, headings[0]!);
  if (intro) sections.push({ title: pageTitle, anchor: '', content: intro });
  for (const h of headings.slice(0, MAX_SECTIONS)) {
    const heading = $(h);
    // Sphinx puts the id on the section the heading opens; MkDocs on the heading.
    const section = heading.parent('section[id], div.section[id]');
    const anchor = heading.attr('id') ?? (section.length && section.children(HEADINGS).first().is(h) ? section.attr('id') : undefined) ?? '';
    const text: string[] = [];
    // The heading's following siblings up to the next heading or the next (sub)section.
    for (const el of heading.nextUntil(`${HEADINGS}, section, div.section`).toArray()) text.push($(el).text());
    sections.push({ title: clean(heading.text()), anchor, content: clean(text.join(' ')).slice(0, MAX_SECTION_CHARS) });
  }
  return { title: pageTitle, sections };
}

/** The text of `main` that comes before its first heading (a page's introduction). */
function textBefore(main: Cheerio.Cheerio<AnyNode>, first: AnyNode): string {
  const parts: string[] = [];
  let stop = false;
  const walk = (node: AnyNode) => {
    if (stop) return;
    if (node === first) {
      stop = true;
      return;
    }
    if (node.type === 'text') parts.push(node.data);
    else if ('children' in node) for (const c of node.children) walk(c);
  };
  const root = main.get(0);
  if (root && 'children' in root) for (const n of root.children) walk(n);
  return clean(parts.join(' ')).slice(0, MAX_SECTION_CHARS);
}
