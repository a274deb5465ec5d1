import { Worker } from '@temporalio/worker';
import { createToolCallActivities } from '../activities/tool-calls.js';
import { createLogger } from '../lib/logger.js';
import { taskQueues } from '../lib/temporal/task-queues.js';
import { workerTracingOptions } from '../lib/tracing/tracing.js';
import type { WorkerNeeds } from './worker-deps.js';

/** What the tools worker takes of WorkerDeps. */
export type ToolsWorkerDeps = WorkerNeeds<
  'connection' | 'orm' | 'logger',
  'temporalNamespace' | 'taskQueuePrefix' | 'webhooksAllowPrivateTargets' | 'logLevel'
>;

/**
 * The worker of the `tools` task queue: the agents' tool requests, one activity per tool call
 * typed by the tool's name. Activities only: the call workflow that schedules them runs on `calls`.
 */
export function createToolsWorker(deps: ToolsWorkerDeps): Promise<Worker> {
  return Worker.create({
    ...workerTracingOptions(),
    connection: deps.connection,
    namespace: deps.settings.temporalNamespace,
    taskQueue: taskQueues(deps.settings).tools,
    activities: createToolCallActivities({
      orm: deps.orm,
      allowPrivate: deps.settings.webhooksAllowPrivateTargets,
      logger: deps.logger ?? createLogger(deps.settings.logLevel, { fields: { worker: 'tools' } }),
    }),
    // Tool requests mostly wait on the integrator's endpoints: many slots, cheap.
    maxConcurrentActivityTaskExecutions: 500,
  });
}
