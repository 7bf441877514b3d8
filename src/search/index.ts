// Full-text search over published docs, in the database Lectern already has (PostgreSQL's text
// search, the same on PGlite). A published build's pages are read back from storage (what is
// served is what is indexed), cut into sections (./sections.ts) and stored as weighted tsvectors
// in the project's language's configuration, a batch at a time; searches read the build the version
// names as indexed, switched once the new build's sections are all in, so a search sees the old
// build's sections or the new one's, never a mix or none.
// Indexing never fails a build: a page that cannot be read or parsed is skipped and counted.

import type { PrismaClient } from '../db/database.ts';
import { Prisma } from '../generated/prisma/client.ts';
import { artifactPrefix } from '../storage/artifacts.ts';
import type { Storage } from '../storage/index.ts';
import { readObject } from '../storage/storage.ts';
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
  const bytes = await readObject(storage, key, MAX_PAGE_BYTES);
  if (bytes === 'too large') throw new Error(`larger than ${MAX_PAGE_BYTES} bytes`);
  return bytes;
}

interface SectionRow {
  path: string;
  pageTitle: string;
  position: number;
  role: string;
  title: string;
  anchor: string;
  content: string;
}

/** Sections stored per statement, and so the most held in memory at once. */
const BATCH = 1000;

async function insertSections(prisma: PrismaClient, input: IndexInput, config: string, part: SectionRow[]): Promise<void> {
  await prisma.$executeRaw`
    INSERT INTO "SearchSection" ("projectId", "versionId", "buildId", path, "pageTitle", title, anchor, content, position, role, config, document)
    SELECT ${input.projectId}, ${input.versionId}, ${input.buildId}, s.path, s.page_title, s.title, s.anchor, s.content, s.position, s.role, ${config},
      -- A dotted name's parts are words too (json.dumps: json, dumps), as a query's are read.
      setweight(to_tsvector(${config}::regconfig, s.title || ' ' || translate(s.title, '.', ' ')), 'A') || setweight(to_tsvector(${config}::regconfig, s.page_title), 'B')
        || setweight(to_tsvector(${config}::regconfig, s.content), 'C')
    FROM unnest(${part.map((r) => r.path)}::text[], ${part.map((r) => r.pageTitle)}::text[], ${part.map((r) => r.title)}::text[],
      ${part.map((r) => r.anchor)}::text[], ${part.map((r) => r.content)}::text[], ${part.map((r) => r.position)}::int[], ${part.map((r) => r.role)}::text[])
      AS s(path, page_title, title, anchor, content, position, role)`;
}

/**
 * Replaces the version's sections with those of the build whose HTML is at `htmlPrefix`. Pages are
 * read and their sections stored a thousand at a time, under the build's id, while searches go on
 * reading the sections of the build the version names as indexed (Version.indexedBuildId); one
 * short transaction then names this build and removes the others' sections. So memory holds one
 * batch whatever the site's size, no transaction stays open while pages are read, and a search
 * sees the old build's sections or all of the new one's, never a mix or none.
 */
export async function indexBuild(prisma: PrismaClient, storage: Storage, input: IndexInput): Promise<IndexResult> {
  const base = `${input.htmlPrefix}/`;
  const keys = (await storage.list(base)).filter((k) => k.endsWith('.html'));
  const config = searchConfig(input.language);
  const skipped: IndexResult['skipped'] = [];
  const titles = new Map<string, string>();
  let pages = 0;
  let sections = 0;
  let batch: SectionRow[] = [];
  const flush = async (force = false) => {
    if (batch.length === 0 || (!force && batch.length < BATCH)) return;
    const part = batch;
    batch = [];
    await insertSections(prisma, input, config, part);
    sections += part.length;
  };
  // What an earlier, interrupted run of this same build left.
  await prisma.searchSection.deleteMany({ where: { versionId: input.versionId, buildId: input.buildId } });
  for (const key of keys) {
    const path = key.slice(base.length);
    if (IGNORED_PAGES.test(path) || IGNORED_DIRS.test(path)) continue;
    let page: IndexedPage;
    try {
      const html = await readText(storage, key);
      if (html === null) continue;
      page = pageSections(html);
    } catch (e) {
      skipped.push({ path, why: (e as Error).message });
      continue;
    }
    pages++;
    titles.set(path, page.title);
    for (const [position, s] of page.sections.entries()) batch.push({ path, pageTitle: page.title, position, role: '', ...s });
    await flush();
  }
  // Sphinx's domain objects, each found by its name at the place that documents it.
  try {
    const inventory = await readBytes(storage, `${base}objects.inv`);
    if (inventory) {
      let i = 0;
      for (const o of parseInventory(inventory)) {
        const described = o.display !== o.name ? ` ${o.display}` : '';
        batch.push({
          path: o.path,
          pageTitle: titles.get(o.path) ?? '',
          position: 100_000 + i++,
          role: o.role,
          title: o.name,
          anchor: o.anchor,
          content: `${roleName(o.role)}${described}`,
        });
        await flush();
      }
    }
  } catch (e) {
    skipped.push({ path: 'objects.inv', why: (e as Error).message });
  }
  await flush(true);
  // The switch: searches read this build's sections from now on (unless a newer build's are
  // already named), and the others' go.
  await prisma.$transaction(async (tx) => {
    await tx.version.updateMany({
      where: { id: input.versionId, OR: [{ indexedBuildId: null }, { indexedBuildId: { lte: input.buildId } }] },
      data: { indexedBuildId: input.buildId },
    });
    const now = await tx.version.findUnique({ where: { id: input.versionId }, select: { indexedBuildId: true } });
    await tx.searchSection.deleteMany({ where: { versionId: input.versionId, buildId: { not: now?.indexedBuildId ?? input.buildId } } });
  });
  // After a large build the planner's statistics follow the new rows at once (autovacuum would, a
  // minute later): without them it reads every section of the version instead of asking the text
  // index. A small build changes too little to matter.
  if (sections >= 1000) await prisma.$executeRaw`ANALYZE "SearchSection"`;
  return { pages, sections, skipped };
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
/**
 * What a query matches, as SQL on a SearchSection `s`: `where` (the versions, and the words as
 * prefixes in each configuration the versions' projects were indexed with, so the index serves
 * each one), `q` (the prefix query in the row's configuration), and `rank`: the prefix match's
 * cover density, plus twice that of the words as typed (a whole word beats a longer one it
 * begins), plus 3 when the section is what the query names: the object (`re.sub`; `Session.mount`
 * for `requests.Session.mount`) or the heading (`handling exceptions` for "8.3. Handling
 * Exceptions"). Null when there is nothing to look for.
 */
function matching(opts: { query: string; versionIds: number[]; languages: string[] }) {
  const tsquery = toPrefixQuery(opts.query);
  if (!tsquery || opts.versionIds.length === 0) return null;
  const configs = [...new Set(opts.languages.map(searchConfig))];
  const words = tsquery.replace(/:\*/g, '').replace(/ & /g, ' ');
  const named = opts.query.trim().toLowerCase().slice(0, 200);
  // The queries are constants of each configuration (made once when the statement is planned,
  // not once per row), and each section is read with those of its own configuration; the GIN
  // index finds the sections that match one of them.
  const perConfig = (f: (c: string) => Prisma.Sql) =>
    configs.length === 1
      ? f(configs[0]!)
      : Prisma.sql`(CASE s.config ${Prisma.join(
          configs.map((c) => Prisma.sql`WHEN ${c} THEN ${f(c)}`),
          ' ',
        )} END)`;
  const q = perConfig((c) => Prisma.sql`to_tsquery(${c}::regconfig, ${tsquery})`);
  const w = perConfig((c) => Prisma.sql`plainto_tsquery(${c}::regconfig, ${words})`);
  const n = perConfig((c) => Prisma.sql`strip(to_tsvector(${c}::regconfig, ${named}))`);
  // Only the sections of the build each version names as indexed (indexBuild's switch).
  const from = Prisma.sql`"SearchSection" s JOIN "Version" iv ON iv."id" = s."versionId" AND iv."indexedBuildId" = s."buildId"`;
  const matches = Prisma.join(
    configs.map((c) => Prisma.sql`(s.config = ${c} AND s.document @@ to_tsquery(${c}::regconfig, ${tsquery}))`),
    ' OR ',
  );
  const where = Prisma.sql`s."versionId" = ANY(${opts.versionIds}::int[]) AND (${matches})`;
  // Cover densities normalized to [0, 1) (flag 32), so the bonus for naming the section outright
  // (its object's name, or its heading's words as typed, numbering aside) outweighs a page that
  // merely repeats the words.
  const rank = Prisma.sql`(ts_rank_cd(s.document, ${q}, 32) + 2 * ts_rank_cd(s.document, ${w}, 32)
    + CASE WHEN lower(s.title) = ${named} OR right(lower(s.title), ${named.length + 1}) = ${`.${named}`}
      OR strip(to_tsvector(s.config::regconfig, regexp_replace(s.title, '^[0-9.]+\\s*', ''))) = ${n} THEN 3 ELSE 0 END)`;
  return { tsquery, from, where, q, rank };
}

export async function searchSections(
  prisma: PrismaClient,
  opts: { query: string; versionIds: number[]; languages: string[]; limit: number; offset: number },
): Promise<{ hits: SectionHit[]; total: number }> {
  const m = matching(opts);
  if (!m) return { hits: [], total: 0 };
  const { from, where, q, rank } = m;
  const [hits, count] = await Promise.all([
    prisma.$queryRaw<SectionHit[]>`
      SELECT s."projectId", s."versionId", s.path, s."pageTitle", s.title, s.anchor, s.role,
        ${rank}::float8 AS rank,
        ts_headline(s.config::regconfig, ${escaped(around(Prisma.sql`s.content`, opts.query))}, ${q},
          'StartSel=<span>, StopSel=</span>, MaxWords=35, MinWords=15, MaxFragments=1') AS highlight
      FROM ${from} WHERE ${where}
      ORDER BY rank DESC, s.path, s.position LIMIT ${opts.limit} OFFSET ${opts.offset}`,
    prisma.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM ${from} WHERE ${where}`,
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

/**
 * The part of a section's text a snippet is made from: 1,200 characters from a little before the
 * query's first word (ts_headline reads all it is given, and sections run to 20,000 characters).
 */
function around(column: Prisma.Sql, query: string): Prisma.Sql {
  const first = query.toLowerCase().match(/[\p{L}\p{N}_]+/u)?.[0] ?? '';
  return Prisma.sql`substr(${column}, greatest(1, strpos(lower(${column}), ${first}) - 200), 1200)`;
}

const escaped = (column: Prisma.Sql) => Prisma.sql`replace(replace(replace(${column}, '&', '&amp;'), '<', '&lt;'), '>', '&gt;')`;

/**
 * Pages of the given versions with sections matching `query`, best first (by their best section),
 * with how many pages match, each with its best BLOCKS_PER_PAGE sections and highlights.
 */
export async function searchPages(
  prisma: PrismaClient,
  opts: { query: string; versionIds: number[]; languages: string[]; limit: number; offset: number },
): Promise<{ pages: PageHit[]; total: number }> {
  const m = matching(opts);
  if (!m) return { pages: [], total: 0 };
  const { tsquery, from, where, rank } = m;
  const rows = await prisma.$queryRaw<(Omit<PageHit, 'blocks'> & { total: number })[]>`
    SELECT p."versionId", p."projectId", p.path, p."pageTitle", p.rank, p.total::int AS total,
      CASE WHEN to_tsvector(p.config::regconfig, p."pageTitle") @@ to_tsquery(p.config::regconfig, ${tsquery})
        THEN ts_headline(p.config::regconfig, ${escaped(Prisma.sql`p."pageTitle"`)}, to_tsquery(p.config::regconfig, ${tsquery}),
          'HighlightAll=true, StartSel=<span>, StopSel=</span>') END AS "titleHighlight"
    FROM (
      SELECT s."versionId", max(s."projectId") AS "projectId", s.path, max(s."pageTitle") AS "pageTitle", max(s.config) AS config,
        max(${rank})::float8 AS rank, count(*) OVER () AS total
      FROM ${from} WHERE ${where}
      GROUP BY s."versionId", s.path
      ORDER BY rank DESC, s.path LIMIT ${opts.limit} OFFSET ${opts.offset}
    ) p ORDER BY p.rank DESC, p.path`;
  if (rows.length === 0) {
    // Past the last page: the total still says how many there are.
    const [count] = await prisma.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM (SELECT 1 FROM ${from} WHERE ${where} GROUP BY s."versionId", s.path) x`;
    return { pages: [], total: count?.n ?? 0 };
  }
  const keys = rows.map((r) => `${r.versionId}/${r.path}`);
  // Highlights are made for the sections shown only (ts_headline reads the whole text).
  const xq = Prisma.sql`to_tsquery(x.config::regconfig, ${tsquery})`;
  const blocks = await prisma.$queryRaw<(BlockHit & { key: string })[]>`
    SELECT x.key, x.anchor, x.role, x.title, x.content,
      CASE WHEN to_tsvector(x.config::regconfig, x.title) @@ ${xq}
        THEN ts_headline(x.config::regconfig, ${escaped(Prisma.sql`x.title`)}, ${xq}, 'HighlightAll=true, StartSel=<span>, StopSel=</span>') END AS "titleHighlight",
      -- Null when the words are not in the text (the heading matched): the snippet then marks nothing.
      nullif(ts_headline(x.config::regconfig, ${escaped(around(Prisma.sql`x.content`, opts.query))}, ${xq}, 'StartSel=<span>, StopSel=</span>, MaxWords=35, MinWords=15, MaxFragments=1'),
        '') AS "contentHighlight"
    FROM (
      SELECT s."versionId"::text || '/' || s.path AS key, s.anchor, s.role, s.title, s.content, s.config,
        row_number() OVER (PARTITION BY s."versionId", s.path ORDER BY ${rank} DESC, s.position) AS n
      FROM ${from} WHERE ${where} AND s."versionId"::text || '/' || s.path = ANY(${keys}::text[])
    ) x WHERE x.n <= ${BLOCKS_PER_PAGE} ORDER BY x.key, x.n`;
  for (const b of blocks) if (b.contentHighlight && !b.contentHighlight.includes('<span>')) b.contentHighlight = null;
  const byKey = new Map<string, BlockHit[]>();
  for (const { key, ...b } of blocks) (byKey.get(key) ?? byKey.set(key, []).get(key)!).push(b);
  return {
    total: rows[0]!.total,
    pages: rows.map(({ total: _total, ...r }) => ({ ...r, blocks: byKey.get(`${r.versionId}/${r.path}`) ?? [] })),
  };
}
