import { type NativeConnection, Worker, type WorkflowBundle } from '@temporalio/worker';
import { createWebhookActivities } from '../activities/webhooks.js';
import type { Orm } from '../db/orm.js';
import type { Settings } from '../lib/settings.js';
import { taskQueues } from '../lib/temporal/task-queues.js';
import { EndpointLimiter } from '../lib/webhooks/endpoint-limiter.js';
import { callWorkflowsPath } from './workflow-code.js';

/** The bundle entry (workflows/index.ts), under the name the webhook tests import. */
export const workflowsPath = callWorkflowsPath;

export interface WebhooksWorkerDeps {
  connection: NativeConnection;
  settings: Pick<Settings, 'temporalNamespace' | 'taskQueuePrefix' | 'webhooksAllowPrivateTargets'>;
  orm: Orm;
  /** A prebuilt bundle of workflows/index.ts (tests share one); built from source when absent. */
  workflowBundle?: WorkflowBundle;
}

/** The worker of the `webhooks` task queue: event fan-out and webhook delivery. */
export function createWebhooksWorker(deps: WebhooksWorkerDeps): Promise<Worker> {
  return Worker.create({
    connection: deps.connection,
    namespace: deps.settings.temporalNamespace,
    taskQueue: taskQueues(deps.settings).webhooks,
    ...(deps.workflowBundle ? { workflowBundle: deps.workflowBundle } : { workflowsPath }),
    activities: createWebhookActivities({
      orm: deps.orm,
      settings: deps.settings,
      limiter: new EndpointLimiter(),
    }),
    // Deliveries mostly wait on receivers, so slots are many and cheap; EndpointLimiter caps
    // the requests to each endpoint, and waiting ones give their slot back after 30 s.
    maxConcurrentActivityTaskExecutions: 1000,
    maxConcurrentWorkflowTaskExecutions: 100,
    // Every delivery is a short workflow and activity; more pollers keep both queues drained.
    maxConcurrentWorkflowTaskPolls: 10,
    maxConcurrentActivityTaskPolls: 10,
  });
}
