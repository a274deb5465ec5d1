import { Worker } from '@temporalio/worker';
import { createCarrierSimulatorActivities } from '../activities/carrier-simulator.js';
import { SpeakingFarEnds } from '../activities/speaking-far-end.js';
import { createTestCallerActivities } from '../activities/test-caller.js';
import { createLogger } from '../lib/logger.js';
import { speechFromSettings } from '../lib/speech/from-settings.js';
import { farEndReleasedSignal } from '../lib/temporal/call-messages.js';
import { taskQueues } from '../lib/temporal/task-queues.js';
import { farEndWorkflowId } from '../lib/temporal/workflow-contracts.js';
import { callerModelFromSettings } from '../lib/test-runs/caller-model.js';
import { workerTracingOptions } from '../lib/tracing/tracing.js';
import type { WorkerNeeds } from './worker-deps.js';
import { callWorkflowsPath } from './workflow-code.js';

/** What the carrier-simulator worker takes of WorkerDeps: no database; the client tells a far end our side hung up on it. */
export type CarrierSimulatorWorkerDeps = WorkerNeeds<
  'connection' | 'client' | 'workflowBundle' | 'maxCachedWorkflows' | 'logger',
  'temporalNamespace' | 'taskQueuePrefix' | 'speech' | 'media' | 'logLevel' | 'voiceLlm' | 'analysisLlm'
>;

/**
 * The far ends that speak (docs/voice.md, "The simulator speaks"): with text-to-speech. Each call's
 * far end is told its stream and the call's own token by the dial (lib/carrier/simulated-carrier.ts).
 */
function speakingFarEnds(deps: CarrierSimulatorWorkerDeps): SpeakingFarEnds | undefined {
  const { tts } = speechFromSettings(deps.settings);
  if (!tts) return undefined;
  const logger =
    deps.logger ?? createLogger(deps.settings.logLevel, { fields: { worker: 'carrier-simulator' } });
  // A far end whose stream our side closed is released, as the call workflow's own release would.
  const hungUpOn = (callId: string) =>
    void deps.client.workflow
      .getHandle(farEndWorkflowId(callId))
      .signal(farEndReleasedSignal, { reason: 'hang_up' })
      .catch(() => undefined); // its workflow is over already
  return new SpeakingFarEnds({ tts, logger, hungUpOn });
}

/** The worker of the `carrier-simulator` task queue: the simulated far ends and their callbacks (local activities). */
export function createCarrierSimulatorWorker(deps: CarrierSimulatorWorkerDeps): Promise<Worker> {
  return Worker.create({
    // Activity spans and the workflow spans' exporter when tracing is on (lib/tracing/tracing.ts).
    ...workerTracingOptions(),
    connection: deps.connection,
    namespace: deps.settings.temporalNamespace,
    taskQueue: taskQueues(deps.settings).simulator,
    ...(deps.workflowBundle ? { workflowBundle: deps.workflowBundle } : { workflowsPath: callWorkflowsPath }),
    activities: {
      ...createCarrierSimulatorActivities({ speaking: speakingFarEnds(deps) }),
      // The test runs' callers, played by the language model (VOICE_LLM, else ANALYSIS_LLM).
      ...createTestCallerActivities({ callerModel: callerModelFromSettings(deps.settings) }),
    },
    maxConcurrentWorkflowTaskExecutions: 100,
    maxCachedWorkflows: deps.maxCachedWorkflows ?? 2000,
  });
}
