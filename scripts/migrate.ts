import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate, openOrm } from '../db/orm.js';

// Applies the committed migrations that have not run yet. `npm start` calls it before the worker and
// the API start; docker-compose runs it as a one-shot service (`node --import tsx scripts/migrate.ts`
// with DATABASE_URL set).

export async function runMigrations(databaseUrl: string): Promise<string[]> {
  const orm = await openOrm(databaseUrl, { poolMax: 2 });
  try {
    return await migrate(orm);
  } finally {
    await orm.close(true);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    process.stderr.write('DATABASE_URL must name the database to migrate\n');
    process.exit(2);
  }
  const applied = await runMigrations(databaseUrl);
  process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'schema is up to date\n');
}
