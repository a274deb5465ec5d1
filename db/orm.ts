import { MikroORM } from '@mikro-orm/postgresql';
import { ormConfig } from './orm-config.js';

export type Orm = MikroORM;

export async function openOrm(databaseUrl: string, options: { poolMax?: number } = {}): Promise<Orm> {
  return MikroORM.init(ormConfig(databaseUrl, options));
}

/** Applies every committed migration that has not run yet. Safe to call at every start. */
export async function migrate(orm: Orm): Promise<string[]> {
  const applied = await orm.migrator.up();
  return applied.map((m) => m.name);
}
