import pgClient from 'pg';
import { startLocalPostgres } from '../db/embedded-postgres.js';
import { freePort } from '../scripts/processes.js';

// A bench's own PostgreSQL: the local cluster under .data/bench-postgres on a free port, with a
// database for this run only.

export interface BenchPostgres {
  url: string;
  /** Drops the run's database and stops the server. */
  stop(): Promise<void>;
}

/** `name` starts the database's name, e.g. `bench_calls`. */
export async function startBenchPostgres(name: string): Promise<BenchPostgres> {
  const pg = await startLocalPostgres({
    dataDir: '.data/bench-postgres',
    port: await freePort(),
    database: `${name}_${Date.now().toString(36)}`,
    ephemeral: true,
  });
  return {
    url: pg.url,
    async stop() {
      await dropBenchDatabase(pg.url).catch((error: unknown) => console.error(error));
      await pg.stop();
    },
  };
}

/** The bench's database is for this run only: dropped when the bench ends. */
export async function dropBenchDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  const admin = new pgClient.Client({ connectionString: url.replace(/\/[^/]+$/, '/postgres') });
  await admin.connect();
  await admin.query(`drop database if exists "${name}"`);
  await admin.end();
}
