import { spawn } from 'node:child_process';
import { createApp } from '../api/app.js';
import { allRoutes } from '../api/routes/index.js';
import { listen } from '../api/server.js';
import { lazyTemporalClient } from '../api/temporal-client.js';
import { migrate, openOrm } from '../db/orm.js';
import { setLimits } from '../lib/accounts.js';
import { createLogger } from '../lib/logger.js';
import { loadSettings } from '../lib/settings.js';
import { callWorkflowId, farEndWorkflowId } from '../lib/temporal/workflow-contracts.js';
import { stopChild } from '../scripts/processes.js';
import { resolveTemporalCli } from '../scripts/temporal-binaries.js';
import { startPrivateTemporalDevServer } from '../scripts/temporal-dev-server.js';
import { createFixture } from '../test/support/api.js';
import { createAgentFixture } from '../test/support/call-fixtures.js';
import { benchServer, startBenchCluster } from './bench-cluster.js';
import { startBenchPostgres } from './bench-database.js';
import { historyTimeline } from './history-timeline.js';
import { closingLine, runReference } from './reference/reference.js';

// Outbound calls end to end: BENCH_CALLS (500) calls placed at once through POST /v1/calls,
// each a simulated default-scenario conversation with SIM_TIME_SCALE=0.01, on a Temporal dev
// server of its own, a worker process (workers/main.ts) and its own throw-away PostgreSQL.
// Figures: calls placed per second (POST answers), POST latency, and the time from POST to
// status completed (analysis stored), p50 and p99.
//
// Before the burst, BENCH_SINGLE_CALLS (5) calls one at a time on the idle server: POST → completed
// beside the call's simulated length. Before those, the one-activity reference workflow
// (bench/reference/) on the same server; the closing JSON line sets calls completed per second
// (burst: calls / time to the last completed) against it.
//
//   npm run bench -- calls     BENCH_CALLS=500 BENCH_SIM_TIME_SCALE=0.01 BENCH_SINGLE_CALLS=5
//                              BENCH_TRACE=1 (timeline of the first single call)
//   BENCH_SERVER=cluster [BENCH_WORKER_PROCESSES=calls=2,webhooks=1,carrier-simulator=1] npm run bench -- calls
//     the same on `npm run start:cluster` (bench/bench-cluster.ts): its API processes, workers and
//     Temporal server on PostgreSQL instead of the bench's own API, one worker process and dev server

const CALLS = Number(process.env.BENCH_CALLS || 500);
const SCALE = Number(process.env.BENCH_SIM_TIME_SCALE || 0.01);
const SINGLE_CALLS = Number(process.env.BENCH_SINGLE_CALLS ?? 5);
/** BENCH_TRACE=1: the first single call's history events on one clock (bench/history-timeline.ts). */
const TRACE = process.env.BENCH_TRACE === '1';
const DEADLINE_MS = 10 * 60_000;
/** Simulated seconds before the conversation: the far end's connect (0.5 s) and ring (1 to 3 s, 2 on average). */
const SIMULATED_DIAL_SECONDS = 2.5;

const SERVER = benchServer();
/** What the finally block stops, last started first. */
const cleanups: (() => Promise<unknown>)[] = [];
let databaseUrl: string;
let temporalAddress: string;
let temporalNamespace: string;
let apiOrigin: string;
if (SERVER === 'cluster') {
  const cluster = await startBenchCluster({ simTimeScale: SCALE });
  cleanups.push(() => cluster.close());
  ({ databaseUrl, temporalAddress, namespace: temporalNamespace, apiOrigin } = cluster);
} else {
  const pg = await startBenchPostgres('bench_calls');
  cleanups.push(() => pg.stop());
  databaseUrl = pg.url;
  const temporal = await startPrivateTemporalDevServer({
    cliPath: process.env.TEMPORAL_CLI_PATH || (await resolveTemporalCli()),
  });
  cleanups.push(() => temporal.stop());
  ({ address: temporalAddress, namespace: temporalNamespace } = temporal);
  const prefix = `bench-${Date.now().toString(36)}-`;
  const migrating = await openOrm(databaseUrl, { poolMax: 2 });
  await migrate(migrating);
  await migrating.close(true);
  const worker = spawn(process.execPath, ['--import', 'tsx', 'workers/main.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporalAddress,
      TEMPORAL_NAMESPACE: temporalNamespace,
      TASK_QUEUE_PREFIX: prefix,
      SIM_TIME_SCALE: String(SCALE),
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  cleanups.push(() => stopChild(worker, { signal: 'SIGTERM', graceMs: 30_000 }));
  const settings = {
    ...loadSettings(),
    host: '127.0.0.1',
    port: 0,
    logLevel: 'warn' as const,
    taskQueuePrefix: prefix,
    temporalAddress,
    temporalNamespace,
    simTimeScale: SCALE,
  };
  const apiTemporal = lazyTemporalClient({ address: temporalAddress, namespace: temporalNamespace });
  const apiOrm = await openOrm(databaseUrl, { poolMax: 20 });
  const app = createApp(
    { settings, orm: apiOrm, temporal: () => apiTemporal.get(), logger: createLogger('warn') },
    { routes: allRoutes },
  );
  const api = await listen(app, { host: '127.0.0.1', port: 0 });
  cleanups.push(
    () => apiOrm.close(true),
    () => apiTemporal.close(),
    () => api.close(),
  );
  apiOrigin = api.url;
}
const orm = await openOrm(databaseUrl, { poolMax: 5 });
cleanups.push(() => orm.close(true));
const temporalClient = lazyTemporalClient({ address: temporalAddress, namespace: temporalNamespace });
cleanups.push(() => temporalClient.close());

try {
  const fixture = await createFixture(orm, { requestsPerSecond: 1_000_000 });
  await setLimits(orm.em.fork(), {
    workspaceId: fixture.workspaceId,
    callsPerMinute: 1_000_000,
    callsPerDay: 1_000_000,
  });
  const agent = await createAgentFixture(orm, { workspaceId: fixture.workspaceId, name: 'Bench' });
  const headers = { authorization: `Bearer ${fixture.secret}`, 'content-type': 'application/json' };
  // Warm up: the worker's bundle and the connections are ready before the clock starts.
  await placeCall(0);
  await waitUntil(async () => (await endedCount(fixture.workspaceId)) >= 1);

  const reference = await runReference({
    client: await temporalClient.get(),
    address: temporalAddress,
    namespace: temporalNamespace,
  });
  console.log(
    `reference: ${reference.workflows} one-activity workflows in ${reference.seconds.toFixed(1)} s = ${reference.perSecond.toFixed(1)}/s`,
  );

  // One call at a time on the idle server: what a call costs beyond its simulated length.
  const overheads: number[] = [];
  const singles: number[] = [];
  for (let i = 0; i < SINGLE_CALLS; i++) {
    const sentAtEpoch = Date.now();
    const placed = await placeCall(900_000 + i);
    await waitUntil(() => isOver(placed.id));
    // From the row's last update (the status change), not from when the poll saw it.
    const [row] = await orm.em
      .fork()
      .getConnection()
      .execute<{ duration_seconds: number; done_ms: number }[]>(
        `select duration_seconds, (extract(epoch from updated_at) * 1000)::float8 as done_ms from calls where id = ?`,
        [placed.id],
      );
    const wallMs = row!.done_ms - sentAtEpoch;
    const simulatedMs = (SIMULATED_DIAL_SECONDS + Number(row!.duration_seconds ?? 0)) * SCALE * 1000;
    singles.push(wallMs);
    overheads.push(wallMs - simulatedMs);
    if (TRACE && i === 0) {
      console.log(
        `single call ${placed.id}: POST → completed ${Math.round(wallMs)} ms, simulated ${simulatedMs} ms`,
      );
      console.log(
        await historyTimeline(await temporalClient.get(), {
          call: callWorkflowId(placed.id),
          'far end': farEndWorkflowId(placed.id),
        }),
      );
    }
  }
  if (SINGLE_CALLS > 0) {
    console.log(
      `single calls (${SINGLE_CALLS}, one at a time): POST → completed p50 ${pct(singles, 50)} ms, beyond the simulated time p50 ${pct(overheads, 50)} ms`,
    );
  }
  const doneBefore = await endedCount(fixture.workspaceId);

  const sent = new Map<string, number>();
  const postLatencies: number[] = [];
  const start = performance.now();
  const results = await Promise.all(Array.from({ length: CALLS }, (_, i) => placeCall(i + 1)));
  const placedMs = performance.now() - start;
  const failedPosts = results.filter((result) => !result.ok).length;
  for (const result of results) {
    postLatencies.push(result.latencyMs);
    if (result.ok) sent.set(result.id, result.sentAt);
  }
  await waitUntil(async () => (await endedCount(fixture.workspaceId)) >= sent.size + doneBefore);
  const rows = await orm.em
    .fork()
    .getConnection()
    .execute<{ id: string; done_ms: number }[]>(
      `select id, (extract(epoch from updated_at) * 1000)::float8 as done_ms from calls where status = 'completed'`,
    );
  const epochStart = Date.now() - performance.now();
  const toCompleted = rows
    .filter((row) => sent.has(row.id))
    .map((row) => row.done_ms - (epochStart + sent.get(row.id)!));

  console.log(
    `calls placed: ${sent.size} of ${CALLS} (${failedPosts} POSTs failed), SIM_TIME_SCALE=${SCALE}`,
  );
  console.log(`calls completed: ${toCompleted.length}; failed: ${sent.size - toCompleted.length}`);
  console.log('| figure | value |');
  console.log('|---|---:|');
  console.log(
    `| calls placed per second (POST /v1/calls, ${CALLS} at once) | ${((CALLS / placedMs) * 1000).toFixed(0)} |`,
  );
  console.log(
    `| POST /v1/calls latency p50 / p99 ms | ${pct(postLatencies, 50)} / ${pct(postLatencies, 99)} |`,
  );
  console.log(
    `| POST → completed p50 / p99 s | ${(pct(toCompleted, 50) / 1000).toFixed(1)} / ${(pct(toCompleted, 99) / 1000).toFixed(1)} |`,
  );
  console.log(`| all ${CALLS} completed after s | ${(Math.max(...toCompleted) / 1000).toFixed(1)} |`);
  const lastCompletedS =
    Math.max(...rows.filter((row) => sent.has(row.id)).map((row) => row.done_ms - epochStart - start)) / 1000;
  console.log(closingLine('calls', toCompleted.length / lastCompletedS, reference));

  async function placeCall(n: number) {
    const sentAt = performance.now();
    const response = await fetch(`${apiOrigin}/v1/calls`, {
      method: 'POST',
      headers,
      // A generous ring timeout: the bench measures throughput; an overloaded machine answers late.
      body: JSON.stringify({
        agent_id: agent.agentId,
        to: `+4791${String(n).padStart(6, '0')}`,
        ring_timeout_seconds: 120,
      }),
    });
    const body = (await response.json()) as { id: string };
    return { ok: response.status === 202, id: body.id, sentAt, latencyMs: performance.now() - sentAt };
  }
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup().catch((error: unknown) => console.error(error));
}

/** The call is over: completed or failed. */
async function isOver(callId: string): Promise<boolean> {
  const [row] = await orm.em
    .fork()
    .getConnection()
    .execute<{ status: string }[]>(`select status from calls where id = ?`, [callId]);
  return row?.status === 'completed' || row?.status === 'failed';
}

/** Calls of the workspace that are over: completed or failed. */
async function endedCount(workspaceId: string): Promise<number> {
  const [row] = await orm.em
    .fork()
    .getConnection()
    .execute<{ n: string }[]>(
      `select count(*) as n from calls where workspace_id = ? and status in ('completed', 'failed')`,
      [workspaceId],
    );
  return Number(row.n);
}

async function waitUntil(done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + DEADLINE_MS;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('calls did not complete in time');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0);
}
