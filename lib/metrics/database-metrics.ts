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
 * The database the gauges below read at each scrape (the API's): database_up, calls_live,
 * campaigns and campaign_recipients. The same in every API process: take their max, not their sum.
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

/**
 * A gauge of counts by one label, from `sql` (rows of `label` and `n`); every value of `values`
 * is present, 0 when no row has it. A database that does not answer leaves them 0: database_up
 * says why.
 */
function countsGauge(options: {
  name: string;
  help: string;
  label: string;
  values: readonly string[];
  sql: string;
}) {
  scrapedGauge({
    name: options.name,
    help: options.help,
    labelNames: [options.label],
    async collect(set) {
      if (!database) return;
      const rows = await withinASecond(
        database.em.getConnection().execute<{ label: string; n: string }[]>(options.sql),
        [],
      );
      for (const value of options.values) set(0, { [options.label]: value });
      for (const row of rows) set(Number(row.n), { [options.label]: row.label });
    },
  });
}

countsGauge({
  name: 'calls_live',
  help: 'Calls queued, ringing or in progress now, by direction (from the database: the same in every API process).',
  label: 'direction',
  values: ['outbound', 'inbound'],
  // Over the partial index calls_live_index: only the live calls are read.
  sql: `select direction as label, count(*) as n from calls
         where status in ('queued', 'ringing', 'in_progress') group by direction`,
});

countsGauge({
  name: 'campaigns',
  help: 'Campaigns by status (from the database: the same in every API process).',
  label: 'status',
  values: CAMPAIGN_STATUSES,
  sql: 'select status as label, count(*) as n from campaigns group by status',
});

countsGauge({
  name: 'campaign_recipients',
  help: 'Recipients of the campaigns not yet over (scheduled, running, paused), by status: their progress.',
  label: 'status',
  values: RECIPIENT_STATUSES,
  sql: `select r.status as label, count(*) as n from campaign_recipients r
          join campaigns c on c.id = r.campaign_id
         where c.status in ('scheduled', 'running', 'paused') group by r.status`,
});

/** A scrape never waits for a database that does not answer: `fallback` after a second or a failure. */
function withinASecond<T>(work: Promise<T>, fallback: T): Promise<T> {
  return Promise.race([
    work.catch(() => fallback),
    new Promise<T>((resolve) => setTimeout(() => resolve(fallback), 1000).unref()),
  ]);
}
