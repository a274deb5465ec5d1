import { Worker } from '@temporalio/worker';
import { createCallActivities } from '../activities/calls.js';
import { analyzerFromSettings } from '../lib/analysis/index.js';
import { SimulatedCarrier } from '../lib/carrier/simulated-carrier.js';
import { taskQueues } from '../lib/temporal/task-queues.js';
import { ScriptedAgent } from '../lib/voice-runtime/scripted-agent.js';
import type { WorkerNeeds } from './worker-deps.js';
import { callWorkflowsPath } from './workflow-code.js';

/** What the calls worker takes of WorkerDeps. */
export type CallsWorkerDeps = WorkerNeeds<
  'connection' | 'client' | 'orm' | 'ports' | 'workflowBundle' | 'maxCachedWorkflows',
  'temporalNamespace' | 'taskQueuePrefix' | 'simTimeScale' | 'analysisLlm'
>;

/** The worker of the `calls` task queue: call workflows and their activities. */
export function createCallsWorker(deps: CallsWorkerDeps): Promise<Worker> {
  const queues = taskQueues(deps.settings);
  const carrier =
    deps.ports?.carrier ??
    new SimulatedCarrier(deps.client, { taskQueue: queues.simulator, timeScale: deps.settings.simTimeScale });
  return Worker.create({
    connection: deps.connection,
    namespace: deps.settings.temporalNamespace,
    taskQueue: queues.calls,
    ...(deps.workflowBundle ? { workflowBundle: deps.workflowBundle } : { workflowsPath: callWorkflowsPath }),
    activities: createCallActivities({
      orm: deps.orm,
      carrier,
      voiceRuntime: deps.ports?.voiceRuntime ?? new ScriptedAgent(),
      analyzer: deps.ports?.analyzer ?? analyzerFromSettings(deps.settings),
    }),
    // Calls spend most of their life waiting on callbacks, so many fit in one worker.
    maxConcurrentWorkflowTaskExecutions: 100,
    maxConcurrentActivityTaskExecutions: 200,
    maxCachedWorkflows: deps.maxCachedWorkflows ?? 2000,
  });
}
