import { Client, Connection } from '@temporalio/client';
import {
  bundleWorkflowCode,
  DefaultLogger,
  NativeConnection,
  Runtime,
  type Worker,
} from '@temporalio/worker';
import { createLogger } from '../api/logger.js';
import { startLocalPostgres } from '../db/embedded-postgres.js';
import { openOrm } from '../db/orm.js';
import { loadSettings } from '../lib/settings.js';
import { createCallsWorker } from './calls-worker.js';
import { createCarrierSimulatorWorker } from './carrier-simulator-worker.js';
import { createWebhooksWorker } from './webhooks-worker.js';
import { callWorkflowsPath } from './workflow-code.js';

// The worker process: one Worker per task queue, each concern scaling on its own. With no
// arguments it runs them all; `node --import tsx workers/main.ts calls` runs only the named ones,
// so more processes can be added for the busy queues.

const settings = loadSettings();
const logger = createLogger(settings.logLevel, { fields: { service: 'worker' } });
Runtime.install({ logger: new DefaultLogger(settings.logLevel === 'debug' ? 'DEBUG' : 'WARN') });

type WorkerDeps = Parameters<typeof createCallsWorker>[0];
/** Every concern's worker, by task queue; one line each. */
const WORKERS: Record<string, (deps: WorkerDeps) => Promise<Worker>> = {
  calls: createCallsWorker,
  'carrier-simulator': createCarrierSimulatorWorker,
  webhooks: (deps) => createWebhooksWorker({ ...deps, settings }),
};

const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !(name in WORKERS));
if (unknown.length) {
  logger.error('unknown worker', { unknown, known: Object.keys(WORKERS) });
  process.exit(2);
}
const names = wanted.length ? wanted : Object.keys(WORKERS);

const databaseUrl = settings.databaseUrl ?? (await startLocalPostgres()).url;
const orm = await openOrm(databaseUrl);
const connection = await NativeConnection.connect({ address: settings.temporalAddress });
const client = new Client({
  connection: await Connection.connect({ address: settings.temporalAddress }),
  namespace: settings.temporalNamespace,
});
// One bundle of the workflow code, shared by every worker of this process.
const workflowBundle = await bundleWorkflowCode({
  workflowsPath: callWorkflowsPath,
  logger: new DefaultLogger('WARN'),
});
const deps: WorkerDeps = { connection, client, settings, orm, workflowBundle };
const workers = await Promise.all(names.map((name) => WORKERS[name](deps)));
logger.info('workers running', { task_queues: workers.map((worker) => worker.options.taskQueue) });

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
  await client.connection.close();
  await connection.close();
  await orm.close(true);
}
