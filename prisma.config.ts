// Prisma 7 reads this before the CLI looks for its native schema engine. `prisma generate` never
// runs that engine, but refuses to start without one; it cannot be downloaded here, so point it at
// any existing file. Migrations do not use the CLI at all (src/db/migrate.ts).
// @see docs/design/toolchain.md "Prisma offline"
import { defineConfig } from 'prisma/config';

process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= process.execPath;

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
});
