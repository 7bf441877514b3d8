// Server-side search (issue 13): `search` over published docs, within the versions the caller may
// open (domain/search.ts). Results are sections: the page, its heading and anchor, a highlight.

import type { PageSearchHit, SearchedVersion, SearchHit } from '../../domain/search.ts';
import { search, searchPages } from '../../domain/search.ts';
import type { BlockHit } from '../../search/index.ts';
import { builder } from '../builder.ts';
import { pageComplexity, window } from './common.ts';
import { Project } from './project.ts';
import { Version } from './version.ts';

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

/** The project and version of something found in a version (a section, a page, a version searched). */
function inVersion<T extends { projectId: number; versionId: number }>(t: PothosSchemaTypes.ObjectFieldBuilder<Types, T>) {
  return {
    project: t.prismaField({
      type: Project,
      resolve: (query, hit, _args, ctx) => ctx.prisma.project.findUniqueOrThrow({ ...query, where: { id: hit.projectId } }),
    }),
    version: t.prismaField({
      type: Version,
      resolve: (query, hit, _args, ctx) => ctx.prisma.version.findUniqueOrThrow({ ...query, where: { id: hit.versionId } }),
    }),
  };
}

const SearchResult = builder.objectRef<SearchHit>('SearchResult').implement({
  description: 'A section of a published page that matches.',
  fields: (t) => ({
    ...inVersion(t),
    path: t.exposeString('path', { description: "The page, relative to the version's root." }),
    pageTitle: t.exposeString('pageTitle'),
    title: t.exposeString('title', { description: "The section's heading, or the domain object's name." }),
    role: t.string({
      nullable: true,
      description: "A domain object's role (`py:function`, `std:label`, from Sphinx's objects.inv); null for a section.",
      resolve: (h) => h.role || null,
    }),
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

const SearchBlock = builder.objectRef<BlockHit>('SearchBlock').implement({
  description: 'A matching section of a page found by `searchPages`.',
  fields: (t) => ({
    anchor: t.exposeString('anchor', { description: 'The id of the section in the page; "" for its top.' }),
    title: t.exposeString('title', { description: "The section's heading, or the domain object's name." }),
    role: t.string({
      nullable: true,
      description: "A domain object's role (`py:function`, `std:label`…); null for a section.",
      resolve: (b) => b.role || null,
    }),
    content: t.exposeString('content', { description: "The section's text." }),
    titleHighlight: t.exposeString('titleHighlight', { nullable: true, description: 'The title as HTML with the words found in `<span>`, when it matched.' }),
    contentHighlight: t.exposeString('contentHighlight', { nullable: true, description: 'The matched part of the text, HTML, when the text matched.' }),
  }),
});

const SearchPage = builder.objectRef<PageSearchHit>('SearchPage').implement({
  description: 'A published page with sections that match, and its best sections.',
  fields: (t) => ({
    ...inVersion(t),
    alias: t.exposeString('alias', { nullable: true, description: "The project's alias under the superproject searched with `includeSubprojects`." }),
    path: t.exposeString('path', { description: "The page, relative to the version's root." }),
    title: t.exposeString('pageTitle'),
    titleHighlight: t.exposeString('titleHighlight', { nullable: true }),
    url: t.exposeString('url', { description: 'Where to read it.' }),
    rank: t.exposeFloat('rank'),
    blocks: t.field({ type: [SearchBlock], resolve: (p) => p.blocks }),
  }),
});

const SearchedVersionRef = builder.objectRef<SearchedVersion>('SearchedVersion').implement({
  fields: (t) => ({
    ...inVersion(t),
    alias: t.exposeString('alias', { nullable: true }),
  }),
});

const SearchPageResults = builder.objectRef<{ pages: PageSearchHit[]; total: number; searched: SearchedVersion[] }>('SearchPageResults').implement({
  fields: (t) => ({
    totalCount: t.exposeInt('total', { description: 'Pages that match.' }),
    searched: t.field({ type: [SearchedVersionRef], description: 'The versions that were searched.', resolve: (r) => r.searched }),
    nodes: t.field({ type: [SearchPage], complexity: { field: 0, multiplier: 1 }, resolve: (r) => r.pages }),
  }),
});

const SearchScopeInput = builder.inputType('SearchScope', {
  description:
    'A project to search, in `version` (its default version unless named), with its subprojects (each in that version when it has it, else its default one).',
  fields: (t) => ({
    project: t.string({ required: true }),
    version: t.string(),
    includeSubprojects: t.boolean(),
  }),
});

builder.queryField('searchPages', (t) =>
  t.field({
    authScopes: { public: true },
    type: SearchPageResults,
    description:
      "Full-text search by page, as Read the Docs' search API answers it: the pages of the `scopes` (and with `maintained`, of each project the caller maintains, in its default version) with sections that match, best first, each with its best sections and highlights. Scopes the caller cannot read add nothing.",
    args: {
      query: t.arg.string({ required: true }),
      scopes: t.arg({ type: [SearchScopeInput], required: true }),
      maintained: t.arg.boolean(),
      limit: t.arg.int(),
      offset: t.arg.int(),
    },
    complexity: pageComplexity,
    resolve: (_root, args, ctx) => {
      const { take, skip } = window(args, ctx);
      return searchPages(ctx, { query: args.query, scopes: args.scopes, maintained: args.maintained, limit: take, offset: skip });
    },
  }),
);
