// `Query.embed`: a page or a section of a version's built docs as HTML, with the page's table of
// contents (the v2 embed API runs this field). The HTML work is in src/embed/.
import { type EmbedResult, embed } from '../../embed/embed.ts';
import type { TocEntry } from '../../embed/sphinx.ts';
import { type EmbedV3Result, embedV3 } from '../../embed/v3.ts';
import { builder } from '../builder.ts';

const EmbedHeader = builder.objectRef<TocEntry>('EmbedHeader').implement({
  description: "An entry of the page's table of contents.",
  fields: (t) => ({
    title: t.exposeString('title'),
    anchor: t.exposeString('anchor', { description: '`#<id>` of the section; `#` for the page itself.' }),
  }),
});

const EmbedMeta = builder.objectRef<EmbedResult['meta']>('EmbedMeta').implement({
  fields: (t) => ({
    project: t.exposeString('project'),
    version: t.exposeString('version'),
    doc: t.exposeString('doc', { description: 'The document name, such as `guide/install`.' }),
    section: t.exposeString('section', { nullable: true, description: 'The section embedded; by default the lowercased title of the page.' }),
  }),
});

const Embed = builder.objectRef<EmbedResult>('Embed').implement({
  description: 'A section of a page of built docs.',
  fields: (t) => ({
    content: t.exposeStringList('content', {
      description: 'The HTML of each element the section names, links made absolute; empty when the section is not on the page.',
    }),
    headers: t.field({ type: [EmbedHeader], resolve: (e) => e.headers }),
    url: t.exposeString('url', { description: 'The page (the `url` asked for, when one was).' }),
    meta: t.field({ type: EmbedMeta, resolve: (e) => e.meta }),
  }),
});

builder.queryField('embed', (t) =>
  t.field({
    authScopes: { public: true },
    type: Embed,
    nullable: true,
    description:
      "A section of a page of a version's published Sphinx docs. Give `project` and `doc` (or `path`), with `version` (default `latest`) " +
      'and `section` (an id or a heading; default the page title), or a docs `url` with a `#fragment`. ' +
      'Null when the version has no such page; a NOT_FOUND error when the project or version is not there for the caller.',
    args: {
      project: t.arg.string(),
      version: t.arg.string(),
      doc: t.arg.string(),
      path: t.arg.string({ description: 'The file, such as `/guide/install.html`; replaces `doc`.' }),
      section: t.arg.string(),
      url: t.arg.string({ description: 'A full docs URL; replaces the other arguments.' }),
    },
    resolve: (_root, args, ctx) => embed(ctx, args),
  }),
);

const EmbedPage = builder.objectRef<EmbedV3Result>('EmbedPage').implement({
  description: "An element of a page of built docs (Read the Docs' embed API v3): the one a URL's fragment names, or the page's main content.",
  fields: (t) => ({
    url: t.exposeString('url', { description: 'The URL asked for.' }),
    fragment: t.exposeString('fragment', { nullable: true }),
    content: t.exposeString('content', { description: 'The element as HTML, its relative links and images made absolute.' }),
    external: t.exposeBoolean('external', { description: 'Always false: Lectern embeds its own docs only.' }),
  }),
});

builder.queryField('embedPage', (t) =>
  t.field({
    authScopes: { public: true },
    type: EmbedPage,
    nullable: true,
    description:
      'The element a docs `url` names with its `#fragment` (else the main content, or the `maincontent` CSS selector); `doctool: "sphinx"` applies ' +
      "Sphinx's cases (a reference label's section, a glossary term with its definition). Null when the page or element is not there for the caller; " +
      'a VALIDATION error for a missing, malformed or outside URL.',
    args: { url: t.arg.string(), doctool: t.arg.string(), doctoolversion: t.arg.string(), maincontent: t.arg.string() },
    resolve: (_root, args, ctx) => embedV3(ctx, args),
  }),
);
