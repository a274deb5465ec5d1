import { Client, Connection } from '@temporalio/client';
import {
  bundleWorkflowCode,
  DefaultLogger,
  NativeConnection,
  Runtime,
  type Worker,
} from '@temporalio/worker';
import { type Orm, openOrm } from '../db/orm.js';
import { readiness } from '../lib/health/readiness.js';
import { createLogger } from '../lib/logger.js';
import { ormPool, watchPool } from '../lib/metrics/database-metrics.js';
import { serveOperatorPort } from '../lib/metrics/metrics-server.js';
import { sdkMetricsTelemetry } from '../lib/metrics/temporal-sdk-metrics.js';
import { ensureRecordingRetentionSchedule } from '../lib/recordings/retention-schedule.js';
import { loadSettings } from '../lib/settings.js';
import { temporalConnectionOptions } from '../lib/temporal-connection.js';
import {
  clientTracingInterceptors,
  flushTracing,
  startTracing,
  workflowTracingModules,
} from '../lib/tracing/tracing.js';
import { createCallsWorker } from './calls-worker.js';
import { createCarrierSimulatorWorker } from './carrier-simulator-worker.js';
import { startQueuedCallSweeper } from './queued-call-sweeper.js';
import { createToolsWorker } from './tools-worker.js';
import { createWebhooksWorker } from './webhooks-worker.js';
import type { WorkerDeps } from './worker-deps.js';
import { callWorkflowsPath } from './workflow-code.js';

// A worker process: one Worker per task queue, each concern scaling on its own. The arguments name
// the workers to run, by task queue or by one of the named lists below:
//   (none) or `all`      every worker in one process: a one-process development run (the bench)
//   `service`            the service's own queues, calls and webhooks
// A process with the calls worker also runs the tools worker (the agents' tool requests its calls
// schedule, on a queue of their own); `tools` alone runs only that one, to scale it apart.
//   `carrier-simulator`  the simulated far ends of calls, standing in for a telephone carrier
// `npm start` runs `service` and `carrier-simulator` as two processes, so that a carrier does not go
// down with the service's workers; `node --import tsx workers/main.ts calls` adds a process for one
// busy queue. Only a process with a worker that uses the database opens it (the simulator does not).

const settings = loadSettings();

/** The deps of this process's workers; the database is open only when one of them uses it. */
type ProcessDeps = Omit<WorkerDeps, 'orm'> & { orm: Orm | undefined };
interface WorkerKind {
  usesDatabase: boolean;
  /** What the worker polls for: a worker of activities only is ready when it polls those. */
  tasks?: 'workflow' | 'activity';
  create(deps: ProcessDeps): Promise<Worker>;
}
/** Every concern's worker, by task queue; one line each. */
const WORKERS: Record<string, WorkerKind> = {
  calls: { usesDatabase: true, create: (deps) => createCallsWorker({ ...deps, orm: deps.orm! }) },
  'carrier-simulator': { usesDatabase: false, create: createCarrierSimulatorWorker },
  webhooks: { usesDatabase: true, create: (deps) => createWebhooksWorker({ ...deps, orm: deps.orm! }) },
  tools: {
    usesDatabase: true,
    tasks: 'activity',
    create: (deps) => createToolsWorker({ ...deps, orm: deps.orm! }),
  },
};
/** Named lists of workers. */
const LISTS: Record<string, string[]> = {
  all: Object.keys(WORKERS),
  service: ['calls', 'webhooks'],
};

const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !Object.hasOwn(WORKERS, name) && !Object.hasOwn(LISTS, name));
/** Workers that go with another wherever it runs. */
const COMPANIONS: Record<string, string[]> = { calls: ['tools'] };
const names = [
  ...new Set(
    (wanted.length ? wanted : ['all'])
      .flatMap((name) => (Object.hasOwn(LISTS, name) ? LISTS[name] : [name]))
      .flatMap((name) => [name, ...(COMPANIONS[name] ?? [])]),
  ),
];
// The simulator alone logs as itself: it stands in for someone else's system.
const service = names.every((name) => name === 'carrier-simulator') ? 'carrier-simulator' : 'worker';
const logger = createLogger(settings.logLevel, { fields: { service } });
startTracing(service === 'worker' ? 'voice-agent-workers' : 'carrier-simulator');
Runtime.install({
  logger: new DefaultLogger(settings.logLevel === 'debug' ? 'DEBUG' : 'WARN'),
  telemetryOptions: await sdkMetricsTelemetry(),
});
if (unknown.length) {
  logger.error('unknown worker', { unknown, known: Object.keys(WORKERS), lists: LISTS });
  process.exit(2);
}

const usesDatabase = names.some((name) => WORKERS[name].usesDatabase);
// Only `npm start` embeds a PostgreSQL (and passes its URL on): a worker without DATABASE_URL
// would otherwise get an empty database of its own, left running when it is killed.
if (usesDatabase && !settings.databaseUrl) {
  logger.error('DATABASE_URL is not set: these workers need the service database (npm start sets it)', {
    workers: names,
  });
  process.exit(1);
}
const orm = usesDatabase ? await openOrm(settings.databaseUrl!) : undefined;
const connection = await NativeConnection.connect(temporalConnectionOptions(settings));
const client = new Client({
  interceptors: clientTracingInterceptors(),
  connection: await Connection.connect(temporalConnectionOptions(settings)),
  namespace: settings.temporalNamespace,
});
// One bundle of the workflow code, shared by every worker of this process (none for a process of
// activity workers only, such as `tools`).
const workflowBundle = names.some((name) => (WORKERS[name].tasks ?? 'workflow') === 'workflow')
  ? await bundleWorkflowCode({
      workflowsPath: callWorkflowsPath,
      // With tracing on, the workflows' spans (lib/tracing/tracing.ts).
      workflowInterceptorModules: workflowTracingModules(),
      logger: new DefaultLogger('WARN'),
    })
  : undefined;
const deps: ProcessDeps = { connection, client, settings, workflowBundle, orm };
const workers = await Promise.all(names.map((name) => WORKERS[name].create(deps)));
// Calls whose workflow never started (the API died between commit and start) are ended here.
const sweeper = names.includes('calls')
  ? startQueuedCallSweeper({ orm: orm!, client, settings, logger })
  : undefined;
// Recording retention runs hourly by a Temporal schedule, made here once (lib/recordings/).
if (names.includes('calls')) {
  try {
    const schedule = await ensureRecordingRetentionSchedule(client, settings);
    logger.info('recording retention schedule', { schedule });
  } catch (error) {
    logger.error('recording retention schedule not made; it is tried again at the next start', { error });
  }
}
if (orm) watchPool('orm', ormPool(orm));
// Metrics and health for operators on a port of the process's own (METRICS_PORT): ready when
// Temporal answers, every worker of this process polls, and the database (if used) answers.
const metrics = await serveOperatorPort(
  settings,
  () =>
    readiness({
      orm,
      temporal: async () => client,
      namespace: settings.temporalNamespace,
      taskQueues: workers.map((worker, i) => ({
        name: worker.options.taskQueue,
        tasks: WORKERS[names[i]].tasks ?? ('workflow' as const),
      })),
    }),
  logger,
);
logger.info('workers running', {
  task_queues: workers.map((worker) => worker.options.taskQueue),
  metrics: metrics && `${metrics.url}/metrics`,
  pid: process.pid,
});

let stopping = false;
function stop(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info('workers stopping', { signal });
  for (const worker of workers) worker.shutdown();
}
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));

try {
  await Promise.all(workers.map((worker) => worker.run()));
  logger.info('workers stopped');
} catch (error) {
  logger.error('a worker failed', { error });
  process.exitCode = 1;
  for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
} finally {
  await sweeper?.stop();
  await metrics?.close();
  await flushTracing();
  await client.connection.close();
  await connection.close();
  await orm?.close(true);
}
