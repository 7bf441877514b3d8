// Where each project's docs are served, read for many projects at once: what the URL fields of a
// page of projects and of their versions need (documentationUrl, vcsUrl, downloads), in one
// statement per page rather than a Prisma read of each project with its parent and its main
// language project (four statements, every project column, one copy per version). A query's page
// reads them with its rows (`prime`), so those fields resolve at once: a field that waits makes
// GraphQL complete its whole object, and every object above it, through promises
// (docs/design/graphql-reads.md).
import type { PrismaClient } from '../db/database.ts';
import type { Project } from '../generated/prisma/client.ts';
import type { ServedProject } from '../urls.ts';

/** A project's ServedProject, with the repository fields a version's web URL needs. */
export interface ServedProjectRow extends ServedProject {
  id: number;
  repositoryUrl: string;
  defaultBranch: string | null;
}

interface Row {
  id: number;
  slug: string;
  language: string;
  repositoryUrl: string;
  defaultBranch: string | null;
  mainSlug: string | null;
  mainPrivacy: string | null;
  alias: string | null;
  parentSlug: string | null;
  parentPrivacy: string | null;
}

/** The ServedProjectRow of each of `ids` that exists. */
export async function readServedProjects(prisma: PrismaClient, ids: readonly number[]): Promise<Map<number, ServedProjectRow>> {
  // A project is the subproject of at most one parent (Subproject.childId is unique).
  const rows = await prisma.$queryRaw<Row[]>`
    SELECT p.id, p.slug, p.language, p."repositoryUrl", p."defaultBranch",
      m.slug AS "mainSlug", m."privacyLevel"::text AS "mainPrivacy",
      r.alias, pp.slug AS "parentSlug", pp."privacyLevel"::text AS "parentPrivacy"
    FROM "public"."Project" p
    LEFT JOIN "public"."Project" m ON m.id = p."mainLanguageProjectId"
    LEFT JOIN "public"."ProjectRelationship" r ON r."childId" = p.id
    LEFT JOIN "public"."Project" pp ON pp.id = r."parentId"
    WHERE p.id = ANY(${[...ids]}::int[])`;
  return new Map(
    rows.map((r) => [
      r.id,
      {
        id: r.id,
        slug: r.slug,
        language: r.language,
        repositoryUrl: r.repositoryUrl,
        defaultBranch: r.defaultBranch,
        mainLanguageProject: r.mainSlug === null ? null : { slug: r.mainSlug, privacyLevel: r.mainPrivacy ?? 'private' },
        superprojects: r.parentSlug === null ? [] : [{ alias: r.alias ?? '', parent: { slug: r.parentSlug, privacyLevel: r.parentPrivacy ?? 'private' } }],
      },
    ]),
  );
}

/**
 * A lookup by key that gathers the keys asked for in one turn of the event loop (a page's rows
 * resolve their fields in one synchronous sweep) and reads them with one `load`. Nothing is kept
 * after: every turn reads afresh, so a write earlier in the request is always seen.
 */
export function batchedByTurn<K, V>(load: (keys: readonly K[]) => Promise<Map<K, V>>): (key: K) => Promise<V | null> {
  let pending: Map<K, { resolve: (v: V | null) => void; reject: (e: unknown) => void }[]> | null = null;
  const flush = (batch: NonNullable<typeof pending>) => {
    load([...batch.keys()]).then(
      (found) => {
        for (const [key, waiting] of batch) for (const w of waiting) w.resolve(found.get(key) ?? null);
      },
      (e: unknown) => {
        for (const waiting of batch.values()) for (const w of waiting) w.reject(e);
      },
    );
  };
  return (key) =>
    new Promise<V | null>((resolve, reject) => {
      if (!pending) {
        const batch = new Map<K, { resolve: (v: V | null) => void; reject: (e: unknown) => void }[]>();
        pending = batch;
        process.nextTick(() => {
          pending = null;
          flush(batch);
        });
      }
      const waiting = pending.get(key);
      if (waiting) waiting.push({ resolve, reject });
      else pending.set(key, [{ resolve, reject }]);
    });
}

/** The ServedProjectRows of one request (Context.servedProjects), and the rows of the projects its query's pages read. */
export class ServedProjects {
  readonly #prisma: PrismaClient;
  readonly #primed = new Map<number, ServedProjectRow>();
  readonly #rows = new Map<number, Project>();
  readonly #batched: (id: number) => Promise<ServedProjectRow | null>;

  constructor(prisma: PrismaClient) {
    this.#prisma = prisma;
    this.#batched = batchedByTurn((ids) => readServedProjects(prisma, ids));
  }

  /**
   * Keeps the rows a query's page read, for its versions' and builds' `project`, and with `served`
   * reads where they are served now, for the URL fields below. For a query's pages only: what is
   * primed is kept for the request, and a write later in it would not be seen.
   */
  async prime(rows: readonly Project[], served: boolean): Promise<void> {
    for (const row of rows) this.#rows.set(row.id, row);
    const wanted = served ? rows.map((r) => r.id).filter((id) => !this.#primed.has(id)) : [];
    if (!wanted.length) return;
    for (const [id, row] of await readServedProjects(this.#prisma, wanted)) this.#primed.set(id, row);
  }

  /** The row of a project a query's page read, if one did. */
  row(id: number): Project | undefined {
    return this.#rows.get(id);
  }

  /** The project's row: at once where it was primed, else read with the others asked for in this turn. */
  get(id: number): ServedProjectRow | Promise<ServedProjectRow | null> {
    return this.#primed.get(id) ?? this.#batched(id);
  }
}
