// `Query.embed`: a page or a section of a version's built docs as HTML, with the page's table of
// contents (the v2 embed API runs this field). The HTML work is in src/embed/.
import { type EmbedResult, embed } from '../../embed/embed.ts';
import type { TocEntry } from '../../embed/sphinx.ts';
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
