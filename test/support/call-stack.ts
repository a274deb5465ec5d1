import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { createLogger, type Logger } from '../../lib/logger.js';
import { loadSettings, type Settings } from '../../lib/settings.js';
import { clientTracingInterceptors } from '../../lib/tracing/tracing.js';
import { createCallsWorker } from '../../workers/calls-worker.js';
import { createCarrierSimulatorWorker } from '../../workers/carrier-simulator-worker.js';
import { createToolsWorker } from '../../workers/tools-worker.js';
import { createWebhooksWorker } from '../../workers/webhooks-worker.js';
import type { WorkerDeps } from '../../workers/worker-deps.js';
import { type ApiClient, startApi, type TestApi } from './api.js';
import { freshDatabase, type TestDatabase } from './database.js';
import { installQuietRuntime } from './quiet-logger.js';
import { type SharedDevServer, sharedDevServer } from './temporal.js';
import { bundleWorkflows } from './workflow-bundles.js';

// The whole call stack for end-to-end tests: a fresh database, the shared Temporal dev server, the
// call and carrier-simulator workers (and optionally the webhooks worker) on task queues of their
// own, and the API on a random port, all pointed at the same settings.

// Worker logs at WARN keep test output readable; the runtime can be installed once per process.
installQuietRuntime();

export interface CallStackOptions {
  /** Start of the task queue prefix, e.g. 'api-calls'; a random part keeps parallel runs apart. */
  prefix: string;
  /** The simulator's clock; default 1/100 (SIM_TIME_SCALE=0.01). */
  simTimeScale?: number;
  /** Also run the webhooks worker. */
  webhooks?: boolean;
  /** Overrides on top of the stack's settings. */
  settings?: Partial<Settings>;
  /** The workers' service log (default: warnings and errors on stdout). */
  logger?: Logger;
}

export interface CallStack {
  db: TestDatabase;
  temporal: SharedDevServer;
  settings: Settings;
  /** The client the API and the workers use. */
  client: Client;
  /** The workers' connection. */
  connection: NativeConnection;
  workers: Worker[];
  api: TestApi;
  /** Stops the API, then the workers, then closes Temporal and the database. */
  close(): Promise<void>;
}

export async function startCallStack(options: CallStackOptions): Promise<CallStack> {
  // Everything opened so far, closed in reverse if a later step fails or at close().
  const closers: (() => Promise<unknown>)[] = [];
  const close = async () => {
    for (const closer of closers.splice(0).reverse()) await closer();
  };
  try {
    const [db, temporal] = await Promise.all([freshDatabase(), sharedDevServer()]);
    closers.push(
      () => db.close(),
      () => temporal.close(),
    );
    const settings: Settings = {
      ...loadSettings({}),
      temporalAddress: temporal.address,
      temporalNamespace: temporal.namespace,
      taskQueuePrefix: `${options.prefix}-${randomBytes(4).toString('hex')}-`,
      simTimeScale: options.simTimeScale ?? 0.01,
      ...options.settings,
    };
    const connection = await NativeConnection.connect({ address: temporal.address });
    closers.push(() => connection.close());
    const client = new Client({
      connection: await Connection.connect({ address: temporal.address }),
      namespace: temporal.namespace,
      interceptors: clientTracingInterceptors(),
    });
    closers.push(() => client.connection.close());
    const deps: WorkerDeps = {
      connection,
      client,
      settings,
      orm: db.orm,
      workflowBundle: await bundleWorkflows(),
      logger: options.logger ?? createLogger('warn'),
    };
    const workers = await Promise.all([
      createCallsWorker(deps),
      createCarrierSimulatorWorker(deps),
      createToolsWorker(deps),
      ...(options.webhooks ? [createWebhooksWorker(deps)] : []),
    ]);
    const running = Promise.all(workers.map((worker) => worker.run()));
    closers.push(async () => {
      // A worker the test already stopped is left as it is; shutdown() throws on a second call.
      for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    });
    const api = await startApi({ orm: db.orm, settings, temporal: async () => client });
    closers.push(() => api.close());
    return { db, temporal, settings, client, connection, workers, api, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Polls GET /calls/{callId} until the call is completed or failed (30 s at most) and returns it. */
export async function waitForCallEnd(client: ApiClient, callId: string, limitMs = 30_000) {
  for (let i = 0; i < limitMs / 100; i++) {
    const res = await client.get(`/calls/${callId}`);
    if (['completed', 'failed'].includes(res.body.status)) return res.body;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`call ${callId} did not end`);
}
