// Server-side search (issue 13): `search` over published docs, within the versions the caller may
// open (domain/search.ts). Results are sections: the page, its heading and anchor, a highlight.

import type { SearchHit } from '../../domain/search.ts';
import { search } from '../../domain/search.ts';
import { builder } from '../builder.ts';
import { pageComplexity, window } from './common.ts';
import { Project } from './project.ts';
import { Version } from './version.ts';

const SearchResult = builder.objectRef<SearchHit>('SearchResult').implement({
  description: 'A section of a published page that matches.',
  fields: (t) => ({
    project: t.prismaField({
      type: Project,
      resolve: (query, hit, _args, ctx) => ctx.prisma.project.findUniqueOrThrow({ ...query, where: { id: hit.projectId } }),
    }),
    version: t.prismaField({
      type: Version,
      resolve: (query, hit, _args, ctx) => ctx.prisma.version.findUniqueOrThrow({ ...query, where: { id: hit.versionId } }),
    }),
    path: t.exposeString('path', { description: "The page, relative to the version's root." }),
    pageTitle: t.exposeString('pageTitle'),
    title: t.exposeString('title', { description: "The section's heading." }),
    anchor: t.exposeString('anchor', { description: 'The id of the section in the page; "" for its top.' }),
    url: t.exposeString('url', { description: 'Where to read it.' }),
    highlight: t.exposeString('highlight', {
      description: "The matched text, HTML: the page's text escaped, the words found in `<span>`.",
    }),
    rank: t.exposeFloat('rank'),
  }),
});

const SearchResults = builder.objectRef<{ hits: SearchHit[]; total: number }>('SearchResults').implement({
  fields: (t) => ({
    totalCount: t.exposeInt('total'),
    nodes: t.field({ type: [SearchResult], complexity: { field: 0, multiplier: 1 }, resolve: (r) => r.hits }),
  }),
});

builder.queryField('search', (t) =>
  t.field({
    authScopes: { public: true },
    type: SearchResults,
    description:
      "Full-text search of published docs, best first: one project's default version (or `version`), with `includeSubprojects` its subprojects' too, or without `project` every project the caller can see. Words are matched as prefixes, stemmed in the project's language; headings weigh most. Private docs only for those who may read them.",
    args: {
      query: t.arg.string({ required: true }),
      project: t.arg.string(),
      version: t.arg.string(),
      includeSubprojects: t.arg.boolean(),
      limit: t.arg.int(),
      offset: t.arg.int(),
    },
    complexity: pageComplexity,
    resolve: (_root, args, ctx) => {
      const { take, skip } = window(args, ctx);
      return search(ctx, { ...args, limit: take, offset: skip });
    },
  }),
);
