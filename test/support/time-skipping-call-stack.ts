import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { HistoryAndWorkflowId, WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import { SimulatedCarrier } from '../../lib/carrier/simulated-carrier.js';
import { createLogger, type Logger } from '../../lib/logger.js';
import { loadSettings, type Settings } from '../../lib/settings.js';
import { taskQueues } from '../../lib/temporal/task-queues.js';
import {
  callWorkflowId,
  EVENT_FAN_OUT_WORKFLOW,
  eventFanOutWorkflowId,
  farEndWorkflowId,
} from '../../lib/temporal/workflow-contracts.js';
import { createCallsWorker } from '../../workers/calls-worker.js';
import { createCarrierSimulatorWorker } from '../../workers/carrier-simulator-worker.js';
import { createToolsWorker } from '../../workers/tools-worker.js';
import type { WorkerDeps, WorkerPorts } from '../../workers/worker-deps.js';
import { storedCall } from './call-fixtures.js';
import { freshDatabase, type TestDatabase } from './database.js';
import { installQuietRuntime, type QuietLevel } from './quiet-logger.js';
import { registerSearchAttributes } from './register-search-attributes.js';
import { createTimeSkippingEnvironment } from './temporal.js';
import { bundleCallTestWorkflows } from './workflow-bundles.js';

// The call workflows on the SDK's time-skipping test server, for the workflow tests of calls
// (test/call-workflow*.test.ts, test/inbound-call-workflow.test.ts): a fresh database, the
// bundles, settings with task queues of the file's own, and per test environment the calls and
// carrier-simulator workers with the event sink (test/support/event-sink-workflows.ts) on the
// webhooks queue. The end-to-end twin on the dev server, with the API, is test/support/call-stack.ts.

export interface TimeSkippingCallStackOptions {
  /** Start of the task queue prefix, e.g. 'cwf'; a random part keeps parallel runs apart. */
  prefix: string;
  /** Temporal's runtime logs (default WARN); a file whose calls fail on purpose may want ERROR. */
  logLevel?: QuietLevel;
}

/** What a test may change about the workers of one environment. */
export interface CallWorkerOptions {
  /** The calls worker's ports instead of the defaults (simulated carrier, scripted agent, analyzer). */
  ports?: WorkerPorts;
  /** Every worker's workflow cache; 0 turns sticky execution off (every task replays). */
  maxCachedWorkflows?: number;
  /** The calls worker's service log (default: warnings and errors on stdout). */
  logger?: Logger;
  /** No tools worker: the test runs its own (a process it kills). */
  withoutTools?: boolean;
}

/** A workflow's history kept for replay, and which workflow of the call it is. */
export interface CallHistory {
  kind: 'call' | 'far-end';
  workflowId: string;
  history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;
}

export interface TimeSkippingCallStack {
  db: TestDatabase;
  /** The file's task queues, and the simulator on workflow time (SIM_TIME_SCALE=1), which the server skips. */
  settings: Settings;
  /** The real call workflows, and the event sink standing in for the webhooks queue. */
  bundles: { calls: WorkflowBundle; eventSink: WorkflowBundle };
  /**
   * A new time-skipping server with the search attributes. One per call: once an abandoned child
   * workflow (the event fan-out) has outlived its parent, the server stops skipping time for good
   * (temporalio/sdk-typescript#1101). Starting one takes well under a second. Tear it down.
   */
  newEnvironment(): Promise<TestWorkflowEnvironment>;
  /** Runs `fn` in a new environment, torn down afterwards. */
  withEnvironment<T>(fn: (env: TestWorkflowEnvironment) => Promise<T>): Promise<T>;
  /** The calls and carrier-simulator workers and the event sink on `env`; run them with runWorkers(). */
  workers(env: TestWorkflowEnvironment, options?: CallWorkerOptions): Promise<Worker[]>;
  /** The simulated carrier as the calls worker builds it by default, to wrap in a test's own port. */
  simulatedCarrier(env: TestWorkflowEnvironment): SimulatedCarrier;
  /**
   * Waits for the call's far end to finish, and checks that every event of the call was handed to
   * delivery: a fan-out workflow `event-fanout-<eventId>` on the webhooks queue.
   */
  settle(env: TestWorkflowEnvironment, callId: string): Promise<void>;
  /** The histories of the call's workflow and its far end. */
  callHistories(env: TestWorkflowEnvironment, callId: string): Promise<CallHistory[]>;
  /** Replays `histories` with the call workflows' bundle and fails on any nondeterminism. */
  assertReplays(replayName: string, histories: readonly HistoryAndWorkflowId[]): Promise<void>;
  close(): Promise<void>;
}

/** For a test file's before(); close() in its after(). */
export async function startTimeSkippingCallStack(
  options: TimeSkippingCallStackOptions,
): Promise<TimeSkippingCallStack> {
  // Before anything connects: the runtime is one per process.
  installQuietRuntime(options.logLevel);
  const settings: Settings = {
    ...loadSettings({}),
    taskQueuePrefix: `${options.prefix}-${randomBytes(4).toString('hex')}-`,
    simTimeScale: 1,
  };
  const queues = taskQueues(settings);
  const [db, bundles] = await Promise.all([freshDatabase(), bundleCallTestWorkflows()]);

  const stack: TimeSkippingCallStack = {
    db,
    settings,
    bundles,
    async newEnvironment() {
      const env = await createTimeSkippingEnvironment();
      try {
        await registerSearchAttributes(env);
      } catch (error) {
        await env.teardown();
        throw error;
      }
      return env;
    },
    async withEnvironment(fn) {
      const env = await stack.newEnvironment();
      try {
        return await fn(env);
      } finally {
        await env.teardown();
      }
    },
    workers(env, { ports, maxCachedWorkflows, logger, withoutTools } = {}) {
      const deps: WorkerDeps = {
        connection: env.nativeConnection,
        client: env.client,
        settings,
        orm: db.orm,
        workflowBundle: bundles.calls,
        ports,
        maxCachedWorkflows,
        logger: logger ?? createLogger('warn'),
      };
      return Promise.all([
        createCallsWorker(deps),
        createCarrierSimulatorWorker(deps),
        ...(withoutTools ? [] : [createToolsWorker(deps)]),
        Worker.create({
          connection: env.nativeConnection,
          taskQueue: queues.webhooks,
          workflowBundle: bundles.eventSink,
          maxCachedWorkflows,
        }),
      ]);
    },
    simulatedCarrier(env) {
      return new SimulatedCarrier(env.client, {
        taskQueue: queues.simulator,
        timeScale: settings.simTimeScale,
      });
    },
    async settle(env, callId) {
      await env.client.workflow.getHandle(farEndWorkflowId(callId)).result();
      const { events } = await storedCall(db.orm, callId);
      for (const event of events) {
        const fanOut = await env.client.workflow.getHandle(eventFanOutWorkflowId(event.id)).describe();
        assert.equal(fanOut.type, EVENT_FAN_OUT_WORKFLOW, 'every event is handed to delivery');
        assert.equal(fanOut.taskQueue, queues.webhooks);
      }
    },
    async callHistories(env, callId) {
      const histories: CallHistory[] = [];
      for (const [kind, workflowId] of [
        ['call', callWorkflowId(callId)],
        ['far-end', farEndWorkflowId(callId)],
      ] as const) {
        histories.push({
          kind,
          workflowId,
          history: await env.client.workflow.getHandle(workflowId).fetchHistory(),
        });
      }
      return histories;
    },
    async assertReplays(replayName, histories) {
      let replayed = 0;
      for await (const result of Worker.runReplayHistories(
        { workflowBundle: bundles.calls, replayName },
        histories,
      )) {
        assert.equal(result.error, undefined, `${result.workflowId}: ${result.error}`);
        replayed++;
      }
      assert.equal(replayed, histories.length);
    },
    close: () => db.close(),
  };
  return stack;
}

/** Runs `fn` while every worker of `workers` polls, then shuts them all down. */
export async function runWorkers<T>(workers: readonly Worker[], fn: () => Promise<T>): Promise<T> {
  const [first, ...rest] = workers;
  return first ? first.runUntil(() => runWorkers(rest, fn)) : fn();
}
