import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { startLocalPostgres } from '../db/embedded-postgres.js';
import { Event } from '../db/entities/index.js';
import { migrate, openOrm } from '../db/orm.js';
import { createWorkspace } from '../lib/accounts.js';
import { buildEventEnvelope } from '../lib/events/event-envelope.js';
import { loadSettings } from '../lib/settings.js';
import { taskQueues } from '../lib/temporal/task-queues.js';
import {
  EVENT_FAN_OUT_WORKFLOW,
  type EventFanOutWorkflow,
  eventFanOutWorkflowId,
} from '../lib/temporal/workflow-contracts.js';
import { generateWebhookSecret } from '../lib/webhooks/secret.js';
import { freePort } from '../scripts/processes.js';
import { resolveTemporalCli } from '../scripts/temporal-binaries.js';
import { startPrivateTemporalDevServer } from '../scripts/temporal-dev-server.js';
import { createWebhooksWorker } from '../workers/webhooks-worker.js';
import { benchServer, startBenchCluster } from './bench-cluster.js';
import { closingLine, runReference } from './reference/reference.js';

// Webhook delivery end to end: events written as the call workflow writes them, fanned out by
// the webhooks worker on a private Temporal dev server to 5 endpoints on a local receiver, one
// of which answers slowly. Reports deliveries per second and the time from an event's creation
// to its arrival (p50, p99), for the fast endpoints and the slow one apart.
//
// Before the events, the one-activity reference workflow (bench/reference/) on the same server;
// the closing JSON line sets deliveries per second against it.
//
//   npm run bench -- webhooks    BENCH_WEBHOOK_EVENTS=2000 BENCH_SLOW_MS=500 by default
//   BENCH_SERVER=cluster [BENCH_WORKER_PROCESSES=calls=1,webhooks=2,carrier-simulator=1] npm run bench -- webhooks
//     the same on `npm run start:cluster` (bench/bench-cluster.ts): its webhooks worker processes
//     and Temporal server on PostgreSQL instead of an in-process worker and a dev server

const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS || 2000);
const SLOW_MS = Number(process.env.BENCH_SLOW_MS || 500);
const ENDPOINTS = 5;
const START_CONCURRENCY = 50;

Runtime.install({ logger: new DefaultLogger('ERROR') });

const SERVER = benchServer();
/** What the finally block stops, last started first. */
const cleanups: (() => Promise<unknown>)[] = [];
let databaseUrl: string;
let temporalAddress: string;
let temporalNamespace: string;
if (SERVER === 'cluster') {
  // The cluster's webhooks workers deliver (WEBHOOKS_ALLOW_PRIVATE_TARGETS is set by the harness).
  const cluster = await startBenchCluster({ simTimeScale: 1 });
  cleanups.push(() => cluster.close());
  ({ databaseUrl, temporalAddress, namespace: temporalNamespace } = cluster);
} else {
  const pg = await startLocalPostgres({
    dataDir: '.data/bench-webhooks-postgres',
    port: await freePort(),
    database: 'bench',
    ephemeral: true,
  });
  cleanups.push(() => pg.stop());
  databaseUrl = pg.url;
  const temporal = await startPrivateTemporalDevServer({
    cliPath: process.env.TEMPORAL_CLI_PATH || (await resolveTemporalCli()),
  });
  cleanups.push(() => temporal.stop());
  ({ address: temporalAddress, namespace: temporalNamespace } = temporal);
}
const settings = {
  ...loadSettings(),
  // The dev server's worker runs in this process on queues of its own; the cluster's are its workers'.
  taskQueuePrefix: SERVER === 'cluster' ? '' : `bench-${randomBytes(3).toString('hex')}-`,
  webhooksAllowPrivateTargets: true,
  temporalNamespace,
};
const orm = await openOrm(databaseUrl, { poolMax: 30 });
cleanups.push(() => orm.close(true));
if (SERVER === 'dev') await migrate(orm);

const createdAt = new Map<string, number>();
const arrivals: { path: string; latencyMs: number; at: number }[] = [];
const receiver = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const eventId = req.headers['service-event-id'] as string;
    const path = req.url ?? '/';
    const answer = () => {
      arrivals.push({ path, latencyMs: Date.now() - (createdAt.get(eventId) ?? Date.now()), at: Date.now() });
      res.writeHead(200).end();
    };
    if (path === '/slow') setTimeout(answer, SLOW_MS);
    else answer();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

cleanups.push(async () => receiver.close());
if (SERVER === 'dev') {
  const nativeConnection = await NativeConnection.connect({ address: temporalAddress });
  const worker = await createWebhooksWorker({ connection: nativeConnection, settings, orm });
  const workerRun = worker.run();
  cleanups.push(
    () => nativeConnection.close(),
    async () => {
      worker.shutdown();
      await workerRun;
    },
  );
}
const connection = await Connection.connect({ address: temporalAddress });
cleanups.push(() => connection.close());
const client = new Client({ connection, namespace: temporalNamespace });

try {
  const em = orm.em.fork();
  const workspace = await createWorkspace(em, { name: 'bench' });
  const paths = ['/slow', ...Array.from({ length: ENDPOINTS - 1 }, (_, i) => `/fast-${i + 1}`)];
  await em.getConnection().execute(
    `insert into webhook_endpoints (id, workspace_id, url, events, status, description, secret, created_at, updated_at)
       values ${paths.map(() => `(?, ?, ?, '{call.completed}', 'active', null, ?, now(), now())`).join(', ')}`,
    paths.flatMap((path) => [randomUUID(), workspace.id, receiverUrl + path, generateWebhookSecret()]),
  );

  const reference = await runReference({ client, address: temporalAddress, namespace: temporalNamespace });
  console.log(
    `reference: ${reference.workflows} one-activity workflows in ${reference.seconds.toFixed(1)} s = ${reference.perSecond.toFixed(1)}/s`,
  );
  console.log(
    `${EVENTS} events to ${ENDPOINTS} endpoints (${paths.join(', ')}); /slow answers after ${SLOW_MS} ms`,
  );
  const started = Date.now();
  let next = 0;
  const queue = taskQueues(settings).webhooks;
  // Events are written and handed over as the call workflow does: row first, then the fan-out.
  await Promise.all(
    Array.from({ length: START_CONCURRENCY }, async () => {
      while (next < EVENTS) {
        next++;
        const now = new Date();
        const { id, body } = buildEventEnvelope({
          type: 'call.completed',
          occurredAt: now,
          data: { object: { object: 'call', id: randomUUID() } },
        });
        const fork = orm.em.fork();
        fork.create(Event, {
          id,
          workspace: workspace.id,
          type: 'call.completed',
          apiVersion: 'v1',
          call: null,
          body,
          createdAt: now,
        });
        await fork.flush();
        createdAt.set(id, now.getTime());
        await client.workflow.start<EventFanOutWorkflow>(EVENT_FAN_OUT_WORKFLOW, {
          workflowId: eventFanOutWorkflowId(id),
          taskQueue: queue,
          args: [{ eventId: id }],
        });
      }
    }),
  );
  const handedOver = Date.now();
  const expected = EVENTS * ENDPOINTS;
  const deadline = Date.now() + 15 * 60_000;
  while (arrivals.length < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));

  const fast = arrivals.filter((a) => a.path !== '/slow');
  const slow = arrivals.filter((a) => a.path === '/slow');
  const lastFast = Math.max(...fast.map((a) => a.at));
  const lastAll = Math.max(...arrivals.map((a) => a.at));
  console.log(`events written and handed to Temporal in ${((handedOver - started) / 1000).toFixed(1)} s`);
  console.log(`delivered ${arrivals.length}/${expected}`);
  console.log(
    `all deliveries: ${rate(arrivals.length, lastAll - started)} deliveries/s over ${((lastAll - started) / 1000).toFixed(1)} s`,
  );
  console.log(
    `fast endpoints: ${rate(fast.length, lastFast - started)} deliveries/s; creation→arrival p50 ${pct(fast, 50)} ms, p99 ${pct(fast, 99)} ms`,
  );
  console.log(
    `slow endpoint:  ${rate(slow.length, lastAll - started)} deliveries/s; creation→arrival p50 ${pct(slow, 50)} ms, p99 ${pct(slow, 99)} ms`,
  );
  console.log(closingLine('webhooks', arrivals.length / ((lastAll - started) / 1000), reference));
  if (arrivals.length < expected) process.exitCode = 1;
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup().catch((error: unknown) => console.error(error));
}

function pct(rows: { latencyMs: number }[], p: number): number {
  const sorted = rows.map((r) => r.latencyMs).sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

function rate(count: number, ms: number): string {
  return (count / (ms / 1000)).toFixed(0);
}
