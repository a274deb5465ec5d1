import type pg from 'pg';
import { CAMPAIGN_STATUSES } from '../../db/entities/campaign.js';
import { RECIPIENT_STATUSES } from '../../db/entities/campaign-recipient.js';
import type { Orm } from '../../db/orm.js';
import { scrapedGauge } from './service-metrics.js';

// Gauges read from the database when scraped: the connection pools' use and waits of this process,
// whether PostgreSQL answers, and the calls live now (a count over the partial index `calls_live_index`, the same in every API
// process: take its max across them, not its sum).

const pools = new Map<string, Set<() => pg.Pool | undefined>>();

/** Counts `pool` under `name` in db_pool_connections and db_pool_waiting_clients. */
export function watchPool(name: 'orm' | 'reads', pool: () => pg.Pool | undefined): () => void {
  const set = pools.get(name) ?? new Set();
  pools.set(name, set);
  set.add(pool);
  return () => set.delete(pool);
}

/** The ORM's own `pg` pool, once it exists. */
export function ormPool(orm: Orm): () => pg.Pool | undefined {
  let pool: pg.Pool | undefined;
  void (orm.em.getConnection() as unknown as { getNativeClient(): Promise<pg.Pool> })
    .getNativeClient()
    .then((native) => (pool = native))
    .catch(() => undefined);
  return () => pool;
}

scrapedGauge({
  name: 'db_pool_connections',
  help: "PostgreSQL connections of this process's pools, by pool and state (idle, in_use).",
  labelNames: ['pool', 'state'] as const,
  collect(set) {
    for (const [name, each] of pools) {
      let idle = 0;
      let total = 0;
      for (const pool of each) {
        idle += pool()?.idleCount ?? 0;
        total += pool()?.totalCount ?? 0;
      }
      set(idle, { pool: name, state: 'idle' });
      set(total - idle, { pool: name, state: 'in_use' });
    }
  },
});

scrapedGauge({
  name: 'db_pool_waiting_clients',
  help: 'Queries of this process waiting for a free PostgreSQL connection, by pool.',
  labelNames: ['pool'] as const,
  collect(set) {
    for (const [name, each] of pools) {
      let waiting = 0;
      for (const pool of each) waiting += pool()?.waitingCount ?? 0;
      set(waiting, { pool: name });
    }
  },
});

let database: Orm | undefined;

/**
 * database_up (PostgreSQL answers `select 1` within a second) and calls_live{direction} (calls
 * queued, ringing or in progress now), read from `orm`'s database at each scrape (the API's).
 */
export function watchDatabase(orm: Orm): void {
  database = orm;
}

scrapedGauge({
  name: 'database_up',
  help: 'Whether PostgreSQL answered select 1 within a second at this scrape (1) or not (0).',
  async collect(set) {
    if (!database) return;
    const answered = await withinASecond(
      database.em
        .getConnection()
        .execute('select 1')
        .then(() => true),
      false,
    );
    set(answered ? 1 : 0);
  },
});

scrapedGauge({
  name: 'calls_live',
  help: 'Calls queued, ringing or in progress now, by direction (from the database: the same in every API process).',
  labelNames: ['direction'] as const,
  async collect(set) {
    if (!database) return;
    const rows = await withinASecond(
      database.em.getConnection().execute<{ direction: string; live: string }[]>(
        `select direction, count(*) as live from calls
          where status in ('queued', 'ringing', 'in_progress') group by direction`,
      ),
      [], // the database does not answer: database_up says so
    );
    set(0, { direction: 'outbound' });
    set(0, { direction: 'inbound' });
    for (const row of rows) set(Number(row.live), { direction: row.direction });
  },
});

scrapedGauge({
  name: 'campaigns',
  help: 'Campaigns by status (from the database: the same in every API process).',
  labelNames: ['status'] as const,
  async collect(set) {
    if (!database) return;
    const rows = await withinASecond(
      database.em
        .getConnection()
        .execute<{ status: string; n: string }[]>(
          'select status, count(*) as n from campaigns group by status',
        ),
      [],
    );
    for (const status of CAMPAIGN_STATUSES) set(0, { status });
    for (const row of rows) set(Number(row.n), { status: row.status });
  },
});

scrapedGauge({
  name: 'campaign_recipients',
  help: 'Recipients of the campaigns not yet over (scheduled, running, paused), by status: their progress.',
  labelNames: ['status'] as const,
  async collect(set) {
    if (!database) return;
    const rows = await withinASecond(
      database.em.getConnection().execute<{ status: string; n: string }[]>(
        `select r.status, count(*) as n from campaign_recipients r
           join campaigns c on c.id = r.campaign_id
          where c.status in ('scheduled', 'running', 'paused') group by r.status`,
      ),
      [],
    );
    for (const status of RECIPIENT_STATUSES) set(0, { status });
    for (const row of rows) set(Number(row.n), { status: row.status });
  },
});

/** A scrape never waits for a database that does not answer: `fallback` after a second or a failure. */
function withinASecond<T>(work: Promise<T>, fallback: T): Promise<T> {
  return Promise.race([
    work.catch(() => fallback),
    new Promise<T>((resolve) => setTimeout(() => resolve(fallback), 1000).unref()),
  ]);
}
