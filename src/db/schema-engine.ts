// Prisma's schema engine compiled to WebAssembly, used only at development and test time: to
// write a new SQL migration from schema.prisma, and to prove that the committed migrations
// produce exactly schema.prisma. The CLI's native engine cannot be downloaded on these machines.
// The shadow database is an in-memory PGlite, so nothing here touches a real database.
// @see docs/design/toolchain.md "Migrations without the native engine"
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';
import { PrismaPGlite } from 'pglite-prisma-adapter';

const require = createRequire(import.meta.url);
const root = path.resolve(import.meta.dirname, '../..');
export const schemaPath = path.join(root, 'prisma/schema.prisma');
export const migrationsDir = path.join(root, 'prisma/migrations');

type Engine = import('@prisma/schema-engine-wasm').SchemaEngine;

// The wasm-bindgen glue module keeps views of the instance's memory in module-level caches, so it
// must be bound to one instance for the life of the process: instantiating the module a second time
// leaves those views pointing at the old memory (garbage strings, then a hang). Instantiate once.
let glue: Promise<{ SchemaEngine: { new: (...a: unknown[]) => Promise<Engine> } }> | undefined;

function loadGlue() {
  glue ??= (async () => {
    // The package entry imports a .wasm file, which Node 20 cannot import: instantiate it by hand.
    const pkgDir = path.dirname(require.resolve('@prisma/schema-engine-wasm/schema_engine_bg'));
    const bg = await import(path.join(pkgDir, 'schema_engine_bg.js'));
    const bytes = await readFile(path.join(pkgDir, 'schema_engine_bg.wasm'));
    // (WebAssembly is a Node global; this project's TypeScript lib has no DOM types that declare it.)
    const wasm = (globalThis as unknown as { WebAssembly: { instantiate(b: Buffer, i: object): Promise<{ instance: { exports: object } }> } }).WebAssembly;
    const { instance } = await wasm.instantiate(bytes, { './schema_engine_bg.js': bg });
    bg.__wbg_set_wasm(instance.exports);
    (instance.exports as { __wbindgen_start?: () => void }).__wbindgen_start?.();
    return bg;
  })();
  glue.catch(() => {
    glue = undefined;
  });
  return glue;
}

async function loadEngine(): Promise<{ engine: Engine; close: () => Promise<void> }> {
  const bg = await loadGlue();
  (globalThis as Record<string, unknown>).PRISMA_WASM_PANIC_REGISTRY ??= {
    set_message(message: string) {
      throw new Error(`schema engine panicked: ${message}`);
    },
  };
  const db = new PGlite('memory://');
  const adapter = bindMigrationAwareSqlAdapterFactory(new PrismaPGlite(db));
  const engine: Engine = await bg.SchemaEngine.new({ datamodels: undefined }, () => {}, adapter);
  return {
    engine,
    close: async () => {
      engine.free();
      await db.close();
    },
  };
}

async function migrationList() {
  const dirs = (await readdir(migrationsDir, { withFileTypes: true }).catch(() => []))
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  return {
    baseDir: migrationsDir,
    lockfile: { path: 'migration_lock.toml', content: 'provider = "postgresql"\n' },
    shadowDbInitScript: '',
    migrationDirectories: await Promise.all(
      dirs.map(async (name) => ({
        path: name,
        migrationFile: {
          path: 'migration.sql',
          content: { tag: 'ok' as const, value: await readFile(path.join(migrationsDir, name, 'migration.sql'), 'utf8') },
        },
      })),
    ),
  };
}

/** SQL that takes a database migrated with the committed migrations to schema.prisma; '' when none is needed. */
export async function pendingSchemaChange(): Promise<string> {
  const { engine, close } = await loadEngine();
  try {
    const schema = await readFile(schemaPath, 'utf8');
    const result = await engine.diff({
      from: { tag: 'migrations', ...(await migrationList()) },
      to: { tag: 'schemaDatamodel', files: [{ path: schemaPath, content: schema }] },
      script: true,
      exitCode: true,
      filters: { externalTables: [], externalEnums: [] },
    });
    const sql = (result as { stdout?: string }).stdout ?? '';
    return result.exitCode === 2 ? sql : '';
  } finally {
    await close();
  }
}

/** Writes the SQL for the difference between the migrations and schema.prisma as a new migration. */
export async function createMigration(name: string): Promise<string | null> {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`migration name must be lowercase words joined by _, got "${name}"`);
  const sql = await pendingSchemaChange();
  if (!sql.trim()) return null;
  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
  const dir = path.join(migrationsDir, `${stamp}_${name}`);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'migration.sql'), sql);
  return dir;
}
