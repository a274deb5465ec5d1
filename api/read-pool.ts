import pg from 'pg';
import type { Orm } from '../db/orm.js';
import type { Logger } from '../lib/logger.js';

/**
 * A small pool of plain `pg` connections beside the ORM's, for the hottest reads (GET
 * /agents/{agent_id}): named prepared statements, no query builder, no hydration. bench/api.ts
 * measured it at more than twice the requests per second of the same query through the ORM
 * (docs/performance.md). Writes and everything else go through the ORM.
 */
export type ReadPool = pg.Pool;

export function createReadPool(orm: Orm, logger: Logger): ReadPool {
  const pool = new pg.Pool({
    connectionString: orm.config.get('clientUrl'),
    max: 10,
    idleTimeoutMillis: 10_000,
  });
  // An idle connection the server dropped: the pool replaces it; without a listener it would crash.
  pool.on('error', (error) => logger.warn('read pool connection lost', { error }));
  return pool;
}
