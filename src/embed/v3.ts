// Embed API v3 (readthedocs/embed/v3/views.py, what link previews and sphinx-hoverxref call): the
// HTML of the element a docs URL's `#fragment` names, or of the page's main content, from the
// HTML the version's published build stored. Lectern reads no page from outside its own docs: a
// URL that is not one of its docs is refused as an external domain, as Read the Docs refuses
// domains outside its allow list. Private projects and versions are found only by those who may
// see them; for anyone else they are simply not there.
import type { Cheerio, CheerioAPI } from 'cheerio';
import type { Element } from 'domhandler';
import { readableVersionRule } from '../domain/access.ts';
import type { Context } from '../domain/context.ts';
import { ValidationError } from '../domain/errors.ts';
import { artifactPrefix } from '../storage/artifacts.ts';
import { assertKey } from '../storage/storage.ts';
import { findEmbeddedVersion, loadPage } from './embed.ts';
import { unresolveDocsUrl } from './locate.ts';

export interface EmbedV3Args {
  url?: string | null;
  doctool?: string | null;
  doctoolversion?: string | null;
  maincontent?: string | null;
}

export interface EmbedV3Result {
  url: string;
  fragment: string | null;
  content: string;
  external: boolean;
}

/** Read the Docs' 400s, under `url` (the REST route answers them as `{"error": ...}`). */
const invalid = (message: string) => ValidationError.field('url', message);

/** `url` without its fragment and query, as links in the content are made absolute against it. */
function sanitized(url: URL): string {
  const u = new URL(url.href);
  u.hash = '';
  u.search = '';
  return u.href;
}

/** readthedocs/embed/utils.py clean_references: relative links and images made absolute against the page. */
function cleanReferences(node: Cheerio<Element>, pageUrl: string): void {
  const base = new URL(pageUrl);
  node.find('a[href], img[src]').each((_i, el) => {
    const attribute = el.name === 'a' ? 'href' : 'src';
    const value = el.attribs[attribute]!;
    const scheme = /^[a-z][a-z0-9+.-]*:/i.test(value);
    const path = value.split('#')[0]!.split('?')[0]!;
    if (scheme || path.startsWith('/')) return;
    if (el.name === 'a' && path === '' && value.includes('#')) {
      el.attribs[attribute] = pageUrl + value;
      return;
    }
    const dir = base.pathname.endsWith('/') ? base.pathname : `${base.pathname.slice(0, base.pathname.lastIndexOf('/'))}/`;
    el.attribs[attribute] = `${base.origin}${dir}${value}`;
  });
}

/**
 * The node the request asks for: the element with the fragment's id, else the main content
 * (`maincontent`, `[role=main]`, `main`, the first h1's parent); with `doctool=sphinx`, Sphinx's
 * special cases (an empty reference span stands for its section; a glossary or citation term for
 * its own term and definition; another definition term for its whole list).
 */
function findNode($: CheerioAPI, fragment: string, doctool: string | null, selector: string | null): Cheerio<Element> | null {
  // By attribute, not `#id`: an id may hold characters a CSS selector would need escaped.
  const original = fragment
    ? ($('[id]')
        .filter((_i, el) => (el as Element).attribs.id === fragment)
        .first() as Cheerio<Element>)
    : null;
  let node: Cheerio<Element>;
  if (original) {
    node = original;
  } else if (selector) {
    try {
      node = $(selector).first() as Cheerio<Element>;
    } catch {
      return null;
    }
  } else {
    node = $('[role=main]').first() as Cheerio<Element>;
    if (!node.length) node = $('main').first() as Cheerio<Element>;
    if (!node.length) node = $('body h1').first().parent() as Cheerio<Element>;
  }
  if (!node.length) return null;
  if (doctool === 'sphinx' && original) {
    const el = original.get(0)!;
    const parent = original.parent();
    const parentEl = parent.get(0) as Element | undefined;
    const classes = (parentEl?.attribs.class ?? '').split(/\s+/);
    if (el.name === 'span' && original.text() === '' && parentEl) {
      const isSection = (parentEl.name === 'div' && classes.includes('section')) || (parentEl.name === 'section' && parentEl.attribs.id);
      if (isSection) return parent.clone() as Cheerio<Element>;
    }
    if (el.name === 'dt' && parentEl) {
      if (classes.includes('glossary') || classes.includes('citation')) {
        // The term and its definition only: the list without the other terms.
        const dd = original.nextAll('dd').first();
        const list = parent.clone() as Cheerio<Element>;
        list.children().each((i, child) => {
          const keep = i === original.index() || (dd.length > 0 && i === dd.index());
          if (!keep) $(child).remove();
        });
        return list;
      }
      return parent.clone() as Cheerio<Element>;
    }
  }
  return node.clone();
}

/** One embed; null when the page or the element is not there (for this caller). */
export async function embedV3(ctx: Context, args: EmbedV3Args): Promise<EmbedV3Result | null> {
  const text = args.url || null;
  if (!text) throw invalid('Invalid arguments. Please provide "url".');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid(`The URL requested is malformed. url=${text}`);
  }
  if (!url.host || !/^https?:$/.test(url.protocol)) throw invalid(`The URL requested is malformed. url=${text}`);
  const at = unresolveDocsUrl(ctx.config, text);
  if (!at) throw invalid(`External domain not allowed. domain=${url.host}`);

  const found = await findEmbeddedVersion(ctx, at.project, at.version, { alias: at.alias, language: at.language, hostLabel: at.byHost });
  const buildId = found?.version.publishedBuildId;
  if (!found || buildId === null || buildId === undefined) return null;
  const { project, version } = found;
  if (!(await readableVersionRule.allows(ctx, { ...version, project }))) return null;

  const prefix = artifactPrefix(project.slug, version.slug, buildId, 'html');
  const filename = at.filename.replace(/^\/+/, '');
  for (const file of [filename, `${filename.replace(/\/+$/, '')}/index.html`.replace(/^\//, '')]) {
    if (!file || file.split('/').some((s) => s === '..' || s === '.')) continue;
    const key = `${prefix}/${file}`;
    try {
      assertKey(key);
    } catch {
      continue;
    }
    const page = await loadPage(ctx.storage, key);
    if (!page) continue;
    const node = findNode(page.$, at.fragment, args.doctool ?? null, args.maincontent ?? null);
    if (!node) return null;
    cleanReferences(node, sanitized(url));
    return { url: text, fragment: at.fragment || null, content: page.$.html(node), external: false };
  }
  return null;
}
