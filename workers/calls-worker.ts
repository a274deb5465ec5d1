import type { Client } from '@temporalio/client';
import { type NativeConnection, Worker, type WorkflowBundle } from '@temporalio/worker';
import { createCallActivities } from '../activities/calls.js';
import type { Orm } from '../db/orm.js';
import type { CallAnalyzer } from '../lib/analysis/analyzer.js';
import { analyzerFromSettings } from '../lib/analysis/index.js';
import type { Carrier } from '../lib/carrier/carrier.js';
import { SimulatedCarrier } from '../lib/carrier/simulated-carrier.js';
import type { Settings } from '../lib/settings.js';
import { taskQueues } from '../lib/temporal/task-queues.js';
import { ScriptedAgent } from '../lib/voice-runtime/scripted-agent.js';
import type { VoiceRuntime } from '../lib/voice-runtime/voice-runtime.js';
import { callWorkflowsPath } from './workflow-code.js';

export interface CallsWorkerDeps {
  connection: NativeConnection;
  /** The simulated carrier starts and signals its far-end workflows through it. */
  client: Client;
  settings: Pick<Settings, 'temporalNamespace' | 'taskQueuePrefix' | 'simTimeScale' | 'analysisLlm'>;
  orm: Orm;
  /** Ports other than the defaults (tests hand in fakes here). */
  ports?: { carrier?: Carrier; voiceRuntime?: VoiceRuntime; analyzer?: CallAnalyzer };
  /** A prebuilt bundle of workflows/index.ts (tests share one); built from source when absent. */
  workflowBundle?: WorkflowBundle;
  /** Workflows kept in memory between tasks; 0 turns sticky execution off (every task replays). */
  maxCachedWorkflows?: number;
}

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
