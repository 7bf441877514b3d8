// Full-text search over published docs, in the database Lectern already has (PostgreSQL's text
// search, the same on PGlite). A published build's pages are read back from storage (what is
// served is what is indexed), cut into sections (./sections.ts) and stored as weighted tsvectors
// in the project's language's configuration; a version's previous sections go in the same
// transaction, so a search sees the old build's sections or the new one's, never a mix or none.
// Indexing never fails a build: a page that cannot be read or parsed is skipped and counted.

import { artifactPrefix } from '../builds/artifacts.ts';
import type { PrismaClient } from '../db/database.ts';
import { Prisma } from '../generated/prisma/client.ts';
import type { Storage } from '../storage/index.ts';
import { parseInventory, roleName } from './inventory.ts';
import { IGNORED_DIRS, IGNORED_PAGES, type IndexedPage, pageSections } from './sections.ts';

/** PostgreSQL's text search configuration for a project language (stemming); `simple` where it has none. */
const CONFIGS: Record<string, string> = {
  ar: 'arabic',
  ca: 'catalan',
  da: 'danish',
  de: 'german',
  el: 'greek',
  en: 'english',
  es: 'spanish',
  eu: 'basque',
  fi: 'finnish',
  fr: 'french',
  hi: 'hindi',
  hu: 'hungarian',
  hy: 'armenian',
  id: 'indonesian',
  it: 'italian',
  lt: 'lithuanian',
  ne: 'nepali',
  nl: 'dutch',
  no: 'norwegian',
  nb: 'norwegian',
  pt: 'portuguese',
  ro: 'romanian',
  ru: 'russian',
  sr: 'serbian',
  sv: 'swedish',
  ta: 'tamil',
  tr: 'turkish',
  yi: 'yiddish',
};
export const searchConfig = (language: string) => CONFIGS[language.split(/[-_]/)[0]!.toLowerCase()] ?? 'simple';

/** Pages larger than this are not indexed (a hostile build's giant page costs parsing time only once, bounded). */
const MAX_PAGE_BYTES = 5 * 1024 * 1024;

export interface IndexInput {
  projectId: number;
  versionId: number;
  buildId: number;
  language: string;
  /** Storage prefix of the build's HTML (`projects/<p>/<v>/<build>/html`). */
  htmlPrefix: string;
}

export interface IndexResult {
  pages: number;
  sections: number;
  /** Pages skipped, with why (unreadable, too large, not parseable). */
  skipped: { path: string; why: string }[];
}

async function readText(storage: Storage, key: string): Promise<string | null> {
  return (await readBytes(storage, key))?.toString('utf8') ?? null;
}

async function readBytes(storage: Storage, key: string): Promise<Buffer | null> {
  const got = await storage.get(key);
  if (!got || ('notModified' in got && got.notModified)) return null;
  if (got.size > MAX_PAGE_BYTES) {
    got.body.destroy();
    throw new Error(`larger than ${MAX_PAGE_BYTES} bytes`);
  }
  const chunks: Buffer[] = [];
  for await (const c of got.body) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Replaces the version's sections with those of the build whose HTML is at `htmlPrefix`. */
export async function indexBuild(prisma: PrismaClient, storage: Storage, input: IndexInput): Promise<IndexResult> {
  const base = `${input.htmlPrefix}/`;
  const keys = (await storage.list(base)).filter((k) => k.endsWith('.html'));
  const rows: { path: string; page: IndexedPage }[] = [];
  const skipped: IndexResult['skipped'] = [];
  for (const key of keys) {
    const path = key.slice(base.length);
    if (IGNORED_PAGES.test(path) || IGNORED_DIRS.test(path)) continue;
    try {
      const html = await readText(storage, key);
      if (html !== null) rows.push({ path, page: pageSections(html) });
    } catch (e) {
      skipped.push({ path, why: (e as Error).message });
    }
  }
  const flat = rows.flatMap(({ path, page }) => page.sections.map((s, position) => ({ path, pageTitle: page.title, position, role: '', ...s })));
  // Sphinx's domain objects, each found by its name at the place that documents it.
  try {
    const inventory = await readBytes(storage, `${base}objects.inv`);
    if (inventory) {
      const titles = new Map(rows.map((r) => [r.path, r.page.title]));
      parseInventory(inventory).forEach((o, i) => {
        const described = o.display !== o.name ? ` ${o.display}` : '';
        flat.push({
          path: o.path,
          pageTitle: titles.get(o.path) ?? '',
          position: 100_000 + i,
          role: o.role,
          title: o.name,
          anchor: o.anchor,
          content: `${roleName(o.role)}${described}`,
        });
      });
    }
  } catch (e) {
    skipped.push({ path: 'objects.inv', why: (e as Error).message });
  }
  const config = searchConfig(input.language);
  await prisma.$transaction(async (tx) => {
    await tx.searchSection.deleteMany({ where: { versionId: input.versionId } });
    // In pages of 1,000 rows: each is one statement, whatever the page count.
    for (let i = 0; i < flat.length; i += 1000) {
      const part = flat.slice(i, i + 1000);
      await tx.$executeRaw`
        INSERT INTO "SearchSection" ("projectId", "versionId", "buildId", path, "pageTitle", title, anchor, content, position, role, config, document)
        SELECT ${input.projectId}, ${input.versionId}, ${input.buildId}, s.path, s.page_title, s.title, s.anchor, s.content, s.position, s.role, ${config},
          -- A dotted name's parts are words too (json.dumps: json, dumps), as a query's are read.
          setweight(to_tsvector(${config}::regconfig, s.title || ' ' || translate(s.title, '.', ' ')), 'A') || setweight(to_tsvector(${config}::regconfig, s.page_title), 'B')
            || setweight(to_tsvector(${config}::regconfig, s.content), 'C')
        FROM unnest(${part.map((r) => r.path)}::text[], ${part.map((r) => r.pageTitle)}::text[], ${part.map((r) => r.title)}::text[],
          ${part.map((r) => r.anchor)}::text[], ${part.map((r) => r.content)}::text[], ${part.map((r) => r.position)}::int[], ${part.map((r) => r.role)}::text[])
          AS s(path, page_title, title, anchor, content, position, role)`;
    }
  });
  return { pages: rows.length, sections: flat.length, skipped };
}

/**
 * A search query as a tsquery: its words (letters, digits, `_`; dotted names split as the parser
 * splits them), each a prefix, all required. Anything else a reader types (quotes, operators, SQL)
 * is not syntax here. Null when there is no word to look for.
 */
export function toPrefixQuery(text: string): string | null {
  const words = (text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []).slice(0, 16).map((w) => w.slice(0, 64));
  return words.length ? words.map((w) => `${w}:*`).join(' & ') : null;
}

export interface SectionHit {
  projectId: number;
  versionId: number;
  path: string;
  pageTitle: string;
  title: string;
  anchor: string;
  /** '' for a section; a domain object's role (`py:function`). */
  role: string;
  /** The matched text with `<span>` around the words found; the page's own text is HTML-escaped. */
  highlight: string;
  rank: number;
}

/**
 * Sections of the given versions matching `query`, best first, and how many match in all. The
 * query is read in each configuration the versions' projects were indexed with (`languages`), so
 * a Spanish project's stems match a Spanish reader's words, and the index serves each one.
 */
export async function searchSections(
  prisma: PrismaClient,
  opts: { query: string; versionIds: number[]; languages: string[]; limit: number; offset: number },
): Promise<{ hits: SectionHit[]; total: number }> {
  const tsquery = toPrefixQuery(opts.query);
  if (!tsquery || opts.versionIds.length === 0) return { hits: [], total: 0 };
  const configs = [...new Set(opts.languages.map(searchConfig))];
  const matches = Prisma.join(
    configs.map((c) => Prisma.sql`(s.config = ${c} AND s.document @@ to_tsquery(${c}::regconfig, ${tsquery}))`),
    ' OR ',
  );
  const where = Prisma.sql`s."versionId" = ANY(${opts.versionIds}::int[]) AND (${matches})`;
  const q = Prisma.sql`to_tsquery(s.config::regconfig, ${tsquery})`;
  const [hits, count] = await Promise.all([
    prisma.$queryRaw<SectionHit[]>`
      SELECT s."projectId", s."versionId", s.path, s."pageTitle", s.title, s.anchor, s.role,
        ts_rank_cd(s.document, ${q})::float8 AS rank,
        ts_headline(s.config::regconfig, replace(replace(replace(s.content, '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), ${q},
          'StartSel=<span>, StopSel=</span>, MaxWords=35, MinWords=15, MaxFragments=1') AS highlight
      FROM "SearchSection" s WHERE ${where}
      ORDER BY rank DESC, s.path, s.position LIMIT ${opts.limit} OFFSET ${opts.offset}`,
    prisma.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM "SearchSection" s WHERE ${where}`,
  ]);
  return { hits, total: count[0]?.n ?? 0 };
}

/**
 * Indexes again what every published version serves (of one project, or all): for installations
 * that had builds before search, or whose index was lost. Each version is replaced as a whole.
 */
export async function reindexPublished(
  prisma: PrismaClient,
  storage: Storage,
  projectSlug?: string,
): Promise<{ project: string; version: string; result: IndexResult }[]> {
  const versions = await prisma.version.findMany({
    where: { publishedBuildId: { not: null }, ...(projectSlug ? { project: { slug: projectSlug } } : {}) },
    select: { id: true, slug: true, publishedBuildId: true, project: { select: { id: true, slug: true, language: true } } },
    orderBy: [{ projectId: 'asc' }, { slug: 'asc' }],
  });
  const done = [];
  for (const v of versions) {
    const result = await indexBuild(prisma, storage, {
      projectId: v.project.id,
      versionId: v.id,
      buildId: v.publishedBuildId!,
      language: v.project.language,
      htmlPrefix: artifactPrefix(v.project.slug, v.slug, v.publishedBuildId!, 'html'),
    });
    done.push({ project: v.project.slug, version: v.slug, result });
  }
  return done;
}

/** A matching section of a page (a page's `blocks`), its highlights null where that part did not match. */
export interface BlockHit {
  anchor: string;
  /** '' for a section; a domain object's role (`py:function`), whose name is `title`. */
  role: string;
  title: string;
  content: string;
  titleHighlight: string | null;
  contentHighlight: string | null;
}

/** A page with matching sections, as Read the Docs' search API answers: the page, then its best sections. */
export interface PageHit {
  projectId: number;
  versionId: number;
  path: string;
  pageTitle: string;
  /** The page's title highlighted, when it matched. */
  titleHighlight: string | null;
  rank: number;
  blocks: BlockHit[];
}

/** Sections shown per page, best first. */
const BLOCKS_PER_PAGE = 3;

const escaped = (column: Prisma.Sql) => Prisma.sql`replace(replace(replace(${column}, '&', '&amp;'), '<', '&lt;'), '>', '&gt;')`;

/**
 * Pages of the given versions with sections matching `query`, best first (by their best section),
 * with how many pages match, each with its best BLOCKS_PER_PAGE sections and highlights.
 */
export async function searchPages(
  prisma: PrismaClient,
  opts: { query: string; versionIds: number[]; languages: string[]; limit: number; offset: number },
): Promise<{ pages: PageHit[]; total: number }> {
  const tsquery = toPrefixQuery(opts.query);
  if (!tsquery || opts.versionIds.length === 0) return { pages: [], total: 0 };
  const configs = [...new Set(opts.languages.map(searchConfig))];
  const matches = Prisma.join(
    configs.map((c) => Prisma.sql`(s.config = ${c} AND s.document @@ to_tsquery(${c}::regconfig, ${tsquery}))`),
    ' OR ',
  );
  const where = Prisma.sql`s."versionId" = ANY(${opts.versionIds}::int[]) AND (${matches})`;
  const q = Prisma.sql`to_tsquery(s.config::regconfig, ${tsquery})`;
  const rows = await prisma.$queryRaw<(Omit<PageHit, 'blocks'> & { total: number })[]>`
    SELECT p."versionId", p."projectId", p.path, p."pageTitle", p.rank, p.total::int AS total,
      CASE WHEN to_tsvector(p.config::regconfig, p."pageTitle") @@ to_tsquery(p.config::regconfig, ${tsquery})
        THEN ts_headline(p.config::regconfig, ${escaped(Prisma.sql`p."pageTitle"`)}, to_tsquery(p.config::regconfig, ${tsquery}),
          'HighlightAll=true, StartSel=<span>, StopSel=</span>') END AS "titleHighlight"
    FROM (
      SELECT s."versionId", max(s."projectId") AS "projectId", s.path, max(s."pageTitle") AS "pageTitle", max(s.config) AS config,
        max(ts_rank_cd(s.document, ${q}))::float8 AS rank, count(*) OVER () AS total
      FROM "SearchSection" s WHERE ${where}
      GROUP BY s."versionId", s.path
      ORDER BY rank DESC, s.path LIMIT ${opts.limit} OFFSET ${opts.offset}
    ) p ORDER BY p.rank DESC, p.path`;
  if (rows.length === 0) {
    // Past the last page: the total still says how many there are.
    const [count] = await prisma.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM (SELECT 1 FROM "SearchSection" s WHERE ${where} GROUP BY s."versionId", s.path) x`;
    return { pages: [], total: count?.n ?? 0 };
  }
  const keys = rows.map((r) => `${r.versionId}/${r.path}`);
  const blocks = await prisma.$queryRaw<(BlockHit & { key: string })[]>`
    SELECT x.key, x.anchor, x.role, x.title, x.content, x."titleHighlight", x."contentHighlight" FROM (
      SELECT s."versionId"::text || '/' || s.path AS key, s.anchor, s.role, s.title, s.content,
        row_number() OVER (PARTITION BY s."versionId", s.path ORDER BY ts_rank_cd(s.document, ${q}) DESC, s.position) AS n,
        CASE WHEN to_tsvector(s.config::regconfig, s.title) @@ ${q}
          THEN ts_headline(s.config::regconfig, ${escaped(Prisma.sql`s.title`)}, ${q}, 'HighlightAll=true, StartSel=<span>, StopSel=</span>') END AS "titleHighlight",
        CASE WHEN to_tsvector(s.config::regconfig, s.content) @@ ${q}
          THEN ts_headline(s.config::regconfig, ${escaped(Prisma.sql`s.content`)}, ${q}, 'StartSel=<span>, StopSel=</span>, MaxWords=35, MinWords=15, MaxFragments=1') END AS "contentHighlight"
      FROM "SearchSection" s WHERE ${where} AND s."versionId"::text || '/' || s.path = ANY(${keys}::text[])
    ) x WHERE x.n <= ${BLOCKS_PER_PAGE} ORDER BY x.key, x.n`;
  const byKey = new Map<string, BlockHit[]>();
  for (const { key, ...b } of blocks) (byKey.get(key) ?? byKey.set(key, []).get(key)!).push(b);
  return {
    total: rows[0]!.total,
    pages: rows.map(({ total: _total, ...r }) => ({ ...r, blocks: byKey.get(`${r.versionId}/${r.path}`) ?? [] })),
  };
}
