import { MikroORM } from '@mikro-orm/postgresql';
import { ormConfig } from './orm-config.js';

export type Orm = MikroORM;

export async function openOrm(
  databaseUrl: string,
  options: { poolMax?: number; withoutMigrations?: boolean } = {},
): Promise<Orm> {
  const config = ormConfig(databaseUrl, options);
  // The migration generator starts from nothing when it rewrites the initial migration.
  if (options.withoutMigrations) config.migrations = { ...config.migrations, migrationsList: [] };
  return MikroORM.init(config);
}

/** Applies every committed migration that has not run yet. Safe to call at every start. */
export async function migrate(orm: Orm): Promise<string[]> {
  const applied = await orm.migrator.up();
  return applied.map((m) => m.name);
}
