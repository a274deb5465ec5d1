// Writes a migration for the difference between the entities and the committed migrations.
// Usage: npm run db:migration [-- --initial]   (uses a scratch database on the local PostgreSQL)
import { rmSync } from 'node:fs';
import { ensureDatabase, startLocalPostgres } from '../db/embedded-postgres.js';
import { migrate, openOrm } from '../db/orm.js';

const initial = process.argv.includes('--initial');
const pgServer = await startLocalPostgres();
const scratch = `migration_scratch_${process.pid}`;
const url = pgServer.url.replace(/\/[^/]+$/, `/${scratch}`);
await ensureDatabase(pgServer.url, scratch);
const orm = await openOrm(url);
try {
  if (!initial) await migrate(orm);
  const result = initial ? await orm.migrator.createInitial() : await orm.migrator.create();
  console.log(result.fileName ? `wrote db/migrations/${result.fileName}` : 'entities match the migrations');
} finally {
  await orm.close(true);
  const admin = await openOrm(pgServer.url);
  await admin.em.getConnection().execute(`drop database if exists "${scratch}"`);
  await admin.close(true);
  await pgServer.stop();
  rmSync('db/migrations/.snapshot-voice_agent.json', { force: true });
}
