import { type NativeConnection, Worker, type WorkflowBundle } from '@temporalio/worker';
import type { Settings } from '../lib/settings.js';
import { taskQueues } from '../lib/temporal/task-queues.js';
import { callWorkflowsPath } from './workflow-code.js';

export interface CarrierSimulatorWorkerDeps {
  connection: NativeConnection;
  settings: Pick<Settings, 'temporalNamespace' | 'taskQueuePrefix'>;
  workflowBundle?: WorkflowBundle;
  /** Workflows kept in memory between tasks; 0 turns sticky execution off (every task replays). */
  maxCachedWorkflows?: number;
}

/** The worker of the `carrier-simulator` task queue: the simulated far ends (no activities). */
export function createCarrierSimulatorWorker(deps: CarrierSimulatorWorkerDeps): Promise<Worker> {
  return Worker.create({
    connection: deps.connection,
    namespace: deps.settings.temporalNamespace,
    taskQueue: taskQueues(deps.settings).simulator,
    ...(deps.workflowBundle ? { workflowBundle: deps.workflowBundle } : { workflowsPath: callWorkflowsPath }),
    maxConcurrentWorkflowTaskExecutions: 100,
    maxCachedWorkflows: deps.maxCachedWorkflows ?? 2000,
  });
}
