import { Worker } from '@temporalio/worker';
import { createWebhookActivities } from '../activities/webhooks.js';
import { taskQueues } from '../lib/temporal/task-queues.js';
import { workerTracingOptions } from '../lib/tracing/tracing.js';
import { EndpointLimiter } from '../lib/webhooks/endpoint-limiter.js';
import type { WorkerNeeds } from './worker-deps.js';
import { callWorkflowsPath } from './workflow-code.js';

/** What the webhooks worker takes of WorkerDeps. */
export type WebhooksWorkerDeps = WorkerNeeds<
  'connection' | 'orm' | 'workflowBundle',
  'temporalNamespace' | 'taskQueuePrefix' | 'webhooksAllowPrivateTargets'
>;

/** The worker of the `webhooks` task queue: event fan-out, webhook delivery and recovery. */
export function createWebhooksWorker(deps: WebhooksWorkerDeps): Promise<Worker> {
  return Worker.create({
    // Activity spans and the workflow spans' exporter when tracing is on (lib/tracing/tracing.ts).
    ...workerTracingOptions(),
    connection: deps.connection,
    namespace: deps.settings.temporalNamespace,
    taskQueue: taskQueues(deps.settings).webhooks,
    ...(deps.workflowBundle ? { workflowBundle: deps.workflowBundle } : { workflowsPath: callWorkflowsPath }),
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
