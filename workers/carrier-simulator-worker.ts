import { Worker } from '@temporalio/worker';
import { createCarrierSimulatorActivities } from '../activities/carrier-simulator.js';
import { taskQueues } from '../lib/temporal/task-queues.js';
import type { WorkerNeeds } from './worker-deps.js';
import { callWorkflowsPath } from './workflow-code.js';

/** What the carrier-simulator worker takes of WorkerDeps: no database, no client (its activity uses the worker's own). */
export type CarrierSimulatorWorkerDeps = WorkerNeeds<
  'connection' | 'workflowBundle' | 'maxCachedWorkflows',
  'temporalNamespace' | 'taskQueuePrefix'
>;

/** The worker of the `carrier-simulator` task queue: the simulated far ends and their callbacks (local activities). */
export function createCarrierSimulatorWorker(deps: CarrierSimulatorWorkerDeps): Promise<Worker> {
  return Worker.create({
    connection: deps.connection,
    namespace: deps.settings.temporalNamespace,
    taskQueue: taskQueues(deps.settings).simulator,
    ...(deps.workflowBundle ? { workflowBundle: deps.workflowBundle } : { workflowsPath: callWorkflowsPath }),
    activities: createCarrierSimulatorActivities(),
    maxConcurrentWorkflowTaskExecutions: 100,
    maxCachedWorkflows: deps.maxCachedWorkflows ?? 2000,
  });
}
