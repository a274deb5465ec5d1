// Writes a migration for the difference between the entities and the committed migrations.
//   npm run db:migration                   a new migration for what changed
//   npm run db:migration -- --reset-initial  rewrites the single initial migration from the entities
//                                          (only while no release has shipped it)
// It works on a scratch database of the local PostgreSQL and updates db/migrations/index.ts.
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { ensureDatabase, startLocalPostgres } from '../db/embedded-postgres.js';
import { migrate, openOrm } from '../db/orm.js';

const resetInitial = process.argv.includes('--reset-initial');
const dir = 'db/migrations';
const migrationFiles = () =>
  readdirSync(dir)
    .filter((f) => /^Migration\w+\.ts$/.test(f))
    .sort();

if (resetInitial) for (const f of migrationFiles()) rmSync(`${dir}/${f}`);
writeIndex();

const pgServer = await startLocalPostgres();
const scratch = `migration_scratch_${process.pid}`;
await ensureDatabase(pgServer.url, scratch);
const orm = await openOrm(pgServer.url.replace(/\/[^/]+$/, `/${scratch}`), {
  withoutMigrations: resetInitial,
});
try {
  if (!resetInitial) await migrate(orm);
  const result = resetInitial ? await orm.migrator.createInitial() : await orm.migrator.create();
  console.log(result.fileName ? `wrote ${dir}/${result.fileName}` : 'entities match the migrations');
} finally {
  await orm.close(true);
  const admin = await openOrm(pgServer.url);
  await admin.em.getConnection().execute(`drop database if exists "${scratch}"`);
  await admin.close(true);
  await pgServer.stop();
  for (const f of readdirSync(dir)) if (f.startsWith('.snapshot')) rmSync(`${dir}/${f}`);
  writeIndex();
}

function writeIndex() {
  const names = migrationFiles().map((f) => f.replace(/\.ts$/, ''));
  writeFileSync(
    `${dir}/index.ts`,
    [
      '// Every migration, in order. The list is explicit so start-up never depends on a directory scan.',
      ...names.map((n) => `import { ${n} } from './${n}.js';`),
      '',
      `export const migrationsList = [${names.map((n) => `{ name: '${n}', class: ${n} }`).join(', ')}];`,
      '',
    ].join('\n'),
  );
}
