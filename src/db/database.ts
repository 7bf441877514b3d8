// One code path, two databases: an embedded PostgreSQL (PGlite) in the data dir when nothing is
// configured, a PostgreSQL server when DATABASE_URL is set. Both are opened here, migrated, and
// handed out as one Prisma client.
// @see ../shared/spec/decisions.md §3
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaClient } from '../generated/prisma/client.ts';
import { lockDataDir } from './lock.ts';
import { migrate, pendingMigrations, type SqlRunner } from './migrate.ts';

export { PrismaClient };

export interface Database {
  kind: 'embedded' | 'postgres';
  prisma: PrismaClient;
  /** Migrations this open applied (empty when it did not migrate, or nothing was pending). */
  applied: string[];
  /** Migration names not yet applied; empty when the schema is current. */
  pending(): Promise<string[]>;
  close(): Promise<void>;
}

export interface OpenOptions {
  dataDir: string;
  databaseUrl?: string;
  /** Apply pending migrations before returning (default true). */
  migrate?: boolean;
  /** Called with every SQL statement sent, for tests that count queries. */
  onQuery?: (sql: string) => void;
}

/** Wraps a driver adapter factory so every statement is reported before it runs. */
function observe(factory: SqlDriverAdapterFactory, onQuery: (sql: string) => void): SqlDriverAdapterFactory {
  const wrapQueryable = <T extends object>(q: T): T =>
    new Proxy(q, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        if (prop === 'queryRaw' || prop === 'executeRaw') {
          return (query: { sql: string }) => {
            onQuery(query.sql);
            return value.call(target, query);
          };
        }
        if (prop === 'startTransaction') {
          return async (...args: unknown[]) => wrapQueryable(await value.apply(target, args));
        }
        return value.bind(target);
      },
    });
  return new Proxy(factory, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop === 'connect') return async () => wrapQueryable(await value.call(target));
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

function pgliteRunner(db: PGlite): SqlRunner {
  return {
    exec: async (sql) => {
      await db.exec(sql);
    },
    query: async <T>(sql: string) => (await db.query<T>(sql)).rows,
  };
}

function pgRunner(client: pg.Client): SqlRunner {
  return {
    exec: async (sql) => {
      await client.query(sql);
    },
    query: async <T>(sql: string) => (await client.query(sql)).rows as T[],
  };
}

export async function openDatabase(opts: OpenOptions): Promise<Database> {
  const shouldMigrate = opts.migrate ?? true;
  if (opts.databaseUrl) {
    const url = opts.databaseUrl;
    const withClient = async <T>(fn: (r: SqlRunner) => Promise<T>): Promise<T> => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return await fn(pgRunner(client));
      } finally {
        await client.end();
      }
    };
    const applied = shouldMigrate ? await withClient((r) => migrate(r)) : [];
    let adapter: SqlDriverAdapterFactory = new PrismaPg({ connectionString: url });
    if (opts.onQuery) adapter = observe(adapter, opts.onQuery);
    const prisma = new PrismaClient({ adapter });
    return {
      kind: 'postgres',
      prisma,
      applied,
      pending: () => withClient((r) => pendingMigrations(r)),
      close: () => prisma.$disconnect(),
    };
  }

  const release = lockDataDir(opts.dataDir);
  let opened: PGlite | undefined;
  try {
    const dir = path.join(opts.dataDir, 'db');
    mkdirSync(dir, { recursive: true });
    const db = (opened = await PGlite.create(dir));
    const runner = pgliteRunner(db);
    const applied = shouldMigrate ? await migrate(runner) : [];
    let adapter: SqlDriverAdapterFactory = new PrismaPGlite(db) as unknown as SqlDriverAdapterFactory;
    if (opts.onQuery) adapter = observe(adapter, opts.onQuery);
    const prisma = new PrismaClient({ adapter });
    return {
      kind: 'embedded',
      prisma,
      applied,
      pending: () => pendingMigrations(runner),
      close: async () => {
        await prisma.$disconnect();
        await db.close();
        release();
      },
    };
  } catch (e) {
    // Close before releasing: the lock must not be free while this PGlite still has the files open.
    await opened?.close().catch(() => {});
    release();
    throw e;
  }
}
