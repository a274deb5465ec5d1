import pg from 'pg';
import type { TestDatabase } from './database.js';

// A database outage for one test file's database, on the shared test server: new connections are
// refused and every open one is cut (its backend terminated), as when PostgreSQL restarts.

export interface DatabaseOutage {
  /** Refuses new connections and cuts the open ones. */
  begin(): Promise<void>;
  /** Accepts connections again. */
  end(): Promise<void>;
  /** The backend pids of the database's connections other than the admin one. */
  backends(): Promise<number[]>;
  close(): Promise<void>;
}

export async function databaseOutage(db: TestDatabase): Promise<DatabaseOutage> {
  const name = new URL(db.url).pathname.slice(1);
  const serverUrl = new URL(db.url);
  serverUrl.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: serverUrl.toString() });
  await admin.connect();
  const outage: DatabaseOutage = {
    async begin() {
      await admin.query(`alter database "${name}" allow_connections false`);
      await admin.query(
        'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
        [name],
      );
    },
    async end() {
      await admin.query(`alter database "${name}" allow_connections true`);
    },
    async backends() {
      const { rows } = await admin.query<{ pid: number }>(
        'select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
        [name],
      );
      return rows.map((row) => row.pid);
    },
    async close() {
      await outage.end().catch(() => undefined);
      await admin.end();
    },
  };
  return outage;
}
