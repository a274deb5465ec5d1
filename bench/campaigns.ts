import { spawn } from 'node:child_process';
import { createApp } from '../api/app.js';
import { allRoutes } from '../api/routes/index.js';
import { listen } from '../api/server.js';
import { lazyTemporalClient } from '../api/temporal-client.js';
import { startLocalPostgres } from '../db/embedded-postgres.js';
import { migrate, openOrm } from '../db/orm.js';
import { setLimits } from '../lib/accounts.js';
import { createLogger } from '../lib/logger.js';
import { loadSettings } from '../lib/settings.js';
import { freePort, stopChild } from '../scripts/processes.js';
import { resolveTemporalCli } from '../scripts/temporal-binaries.js';
import { startPrivateTemporalDevServer } from '../scripts/temporal-dev-server.js';
import { createFixture } from '../test/support/api.js';
import { createAgentFixture } from '../test/support/call-fixtures.js';
import { dropBenchDatabase } from './bench-database.js';
import { closingLine, runReference } from './reference/reference.js';

// One campaign of BENCH_CAMPAIGN_RECIPIENTS (10,000) recipients end to end, through the API, on a
// Temporal dev server of its own, a worker process (workers/main.ts) and its own throw-away
// PostgreSQL, with the simulator at BENCH_SIM_TIME_SCALE (0.01). The campaign is created with the
// first 1,000, paused, given the rest 1,000 a request, then resumed; the clock runs from the
// resume until every recipient is final. Figures: recipients final per second, the most calls of
// the campaign live at once (measured from the calls' start and end times, and sampled from GET
// /campaigns/{id}) against max_concurrent_calls (BENCH_CAMPAIGN_CONCURRENCY, 50), and the closing
// JSON line against the one-activity reference workflow on the same server.
//
//   npm run bench -- campaigns     BENCH_CAMPAIGN_RECIPIENTS=10000 BENCH_CAMPAIGN_CONCURRENCY=50

const RECIPIENTS = Number(process.env.BENCH_CAMPAIGN_RECIPIENTS || 10_000);
const CONCURRENCY = Number(process.env.BENCH_CAMPAIGN_CONCURRENCY || 50);
const SCALE = Number(process.env.BENCH_SIM_TIME_SCALE || 0.01);
const DEADLINE_MS = Number(process.env.BENCH_CAMPAIGN_DEADLINE_MINUTES || 120) * 60_000;
const BATCH = 1000;

const pg = await startLocalPostgres({
  dataDir: '.data/bench-postgres',
  port: await freePort(),
  database: `bench_campaigns_${Date.now().toString(36)}`,
  ephemeral: true,
});
const orm = await openOrm(pg.url, { poolMax: 20 });
await migrate(orm);
const temporal = await startPrivateTemporalDevServer({
  cliPath: process.env.TEMPORAL_CLI_PATH || (await resolveTemporalCli()),
});
const prefix = `bench-${Date.now().toString(36)}-`;
const worker = spawn(process.execPath, ['--import', 'tsx', 'workers/main.ts'], {
  env: {
    ...process.env,
    DATABASE_URL: pg.url,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: temporal.namespace,
    TASK_QUEUE_PREFIX: prefix,
    SIM_TIME_SCALE: String(SCALE),
    LOG_LEVEL: 'warn',
  },
  stdio: ['ignore', 'inherit', 'inherit'],
});
const settings = {
  ...loadSettings(),
  host: '127.0.0.1',
  port: 0,
  logLevel: 'warn' as const,
  taskQueuePrefix: prefix,
  temporalAddress: temporal.address,
  temporalNamespace: temporal.namespace,
  simTimeScale: SCALE,
};
const temporalClient = lazyTemporalClient({ address: temporal.address, namespace: temporal.namespace });
const app = createApp(
  { settings, orm, temporal: () => temporalClient.get(), logger: createLogger('warn') },
  { routes: allRoutes },
);
const api = await listen(app, { host: '127.0.0.1', port: 0 });

try {
  const fixture = await createFixture(orm, { requestsPerSecond: 1_000_000 });
  await setLimits(orm.em.fork(), {
    workspaceId: fixture.workspaceId,
    callsPerMinute: 1_000_000,
    callsPerDay: 1_000_000,
    minutesQuota: 1_000_000,
  });
  const agent = await createAgentFixture(orm, { workspaceId: fixture.workspaceId, name: 'Bench' });
  const headers = { authorization: `Bearer ${fixture.secret}`, 'content-type': 'application/json' };
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${api.url}/v1${path}`, {
      method,
      headers,
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const json = (await response.json()) as any;
    if (response.status >= 300)
      throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
    return json;
  };

  const reference = await runReference({
    client: await temporalClient.get(),
    address: temporal.address,
    namespace: temporal.namespace,
  });
  console.log(
    `reference: ${reference.workflows} one-activity workflows in ${reference.seconds.toFixed(1)} s = ${reference.perSecond.toFixed(1)}/s`,
  );

  // Default-scenario numbers: a short friendly conversation each.
  const recipients = Array.from({ length: RECIPIENTS }, (_, i) => ({
    to: `+4791${String(i).padStart(6, '0')}`,
  }));
  const created = await call('POST', '/campaigns', {
    name: 'Bench',
    agent_id: agent.agentId,
    recipients: recipients.slice(0, BATCH),
    max_concurrent_calls: CONCURRENCY,
    retry: { max_attempts: 1 },
  });
  await call('POST', `/campaigns/${created.id}/pause`);
  for (let start = BATCH; start < RECIPIENTS; start += BATCH) {
    await call('POST', `/campaigns/${created.id}/recipients`, {
      recipients: recipients.slice(start, start + BATCH),
    });
  }
  const startedAt = Date.now();
  await call('POST', `/campaigns/${created.id}/resume`);

  let sampledMax = 0;
  let campaign = created;
  let lastReport = Date.now();
  while (campaign.status !== 'completed') {
    if (Date.now() - startedAt > DEADLINE_MS)
      throw new Error(`not completed in time: ${JSON.stringify(campaign.counts)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
    campaign = await call('GET', `/campaigns/${created.id}`);
    sampledMax = Math.max(sampledMax, campaign.counts.in_progress);
    if (Date.now() - lastReport > 15_000) {
      lastReport = Date.now();
      console.log(`  ${Math.round((Date.now() - startedAt) / 1000)} s: ${JSON.stringify(campaign.counts)}`);
    }
  }
  const seconds = (Date.parse(campaign.ended_at) - startedAt) / 1000;
  const [{ max_live: measuredMax }] = await orm.em
    .fork()
    .getConnection()
    .execute<{ max_live: number }[]>(
      `select coalesce(max(live), 0)::int as max_live from (
         select sum(delta) over (order by at, delta) as live from (
           select started_at as at, 1 as delta from calls where campaign_id = ?
           union all select ended_at as at, -1 as delta from calls where campaign_id = ? and ended_at is not null
         ) edges
       ) running`,
      [created.id, created.id],
    );
  const final = campaign.counts.completed + campaign.counts.failed + campaign.counts.canceled;
  console.log(`recipients: ${RECIPIENTS}, SIM_TIME_SCALE=${SCALE}, max_concurrent_calls=${CONCURRENCY}`);
  console.log('| figure | value |');
  console.log('|---|---:|');
  console.log(
    `| recipients final | ${final} of ${campaign.counts.total} (${campaign.counts.completed} completed, ${campaign.counts.failed} failed) |`,
  );
  console.log(`| resume → completed s | ${seconds.toFixed(1)} |`);
  console.log(`| recipients final per second | ${(final / seconds).toFixed(1)} |`);
  console.log(
    `| most calls live at once, measured from the calls / sampled from GET | ${measuredMax} / ${sampledMax} (limit ${CONCURRENCY}) |`,
  );
  if (final !== RECIPIENTS) throw new Error('not every recipient is final');
  if (measuredMax > CONCURRENCY || sampledMax > CONCURRENCY)
    throw new Error('the concurrency limit was passed');
  console.log(closingLine('campaigns', final / seconds, reference));
} finally {
  await api.close();
  await temporalClient.close();
  await stopChild(worker, { signal: 'SIGTERM', graceMs: 30_000 });
  await temporal.stop();
  await orm.close(true);
  await dropBenchDatabase(pg.url);
  await pg.stop();
}
