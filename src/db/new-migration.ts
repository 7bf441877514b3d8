// `npm run migration:new -- <name>`: writes prisma/migrations/<stamp>_<name>/migration.sql for what
// changed in schema.prisma since the last migration (Prisma's `migrate dev` needs a native engine
// that cannot be downloaded here).
import { createMigration } from './schema-engine.ts';

const name = process.argv[2];
if (!name) {
  console.error('usage: npm run migration:new -- <name>');
  process.exit(2);
}
const dir = await createMigration(name);
console.log(dir ? `wrote ${dir}/migration.sql` : 'schema.prisma and the migrations agree: nothing to write');
