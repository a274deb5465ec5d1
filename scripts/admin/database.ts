import { startLocalPostgres } from '../../db/embedded-postgres.js';
import { migrate, type Orm, openOrm } from '../../db/orm.js';
import type { Settings } from '../../lib/settings.js';

// The database `npm start` uses, with the same settings: DATABASE_URL when set, else the
// embedded PostgreSQL under .data/ (joined when it runs, else started here and stopped again on
// close). Pending migrations run first, so the CLI works on a fresh clone before any start.

export interface OperatorDatabase {
  orm: Orm;
  close(): Promise<void>;
}

export async function openOperatorDatabase(
  settings: Pick<Settings, 'databaseUrl'>,
  log: (line: string) => void,
): Promise<OperatorDatabase> {
  const local = settings.databaseUrl ? undefined : await startLocalPostgres({ log });
  try {
    const orm = await openOrm(settings.databaseUrl ?? local!.url, { poolMax: 2 });
    try {
      await migrate(orm);
    } catch (error) {
      await orm.close(true);
      throw error;
    }
    return {
      orm,
      async close() {
        await orm.close(true);
        await local?.stop();
      },
    };
  } catch (error) {
    await local?.stop();
    throw error;
  }
}
