import { Worker } from '@temporalio/worker';
import { createAnsweringMachineActivities } from '../activities/answering-machines.js';
import { createCallRuntimeActivities } from '../activities/call-runtime.js';
import { createCallActivities } from '../activities/calls.js';
import { createCampaignActivities } from '../activities/campaigns.js';
import { createRecordingRetentionActivities } from '../activities/recording-retention.js';
import { createTestRunActivities } from '../activities/test-runs.js';
import { createWarmTransferActivities } from '../activities/warm-transfer.js';
import { Call } from '../db/entities/index.js';
import { analyzerFromSettings } from '../lib/analysis/index.js';
import { planAnswererFromSettings } from '../lib/analysis/plan-answerer.js';
import { CallRoutingCarrier } from '../lib/carrier/call-routing-carrier.js';
import type { Carrier } from '../lib/carrier/carrier.js';
import { MediaGatewayCarrier } from '../lib/carrier/media-gateway-carrier.js';
import { SimulatedCarrier } from '../lib/carrier/simulated-carrier.js';
import { SipCarrier } from '../lib/carrier/sip-carrier.js';
import { createLogger } from '../lib/logger.js';
import { GatewayPlacement, mediaGateways } from '../lib/media/gateway-placement.js';
import { streamTokenFor } from '../lib/media/stream-token.js';
import { recordingStoreFor } from '../lib/recordings/recording-store-from-settings.js';
import { taskQueues } from '../lib/temporal/task-queues.js';
import { workerTracingOptions } from '../lib/tracing/tracing.js';
import { voiceRuntimeFromSettings } from '../lib/voice-runtime/from-settings.js';
import type { WorkerNeeds } from './worker-deps.js';
import { callWorkflowsPath } from './workflow-code.js';

/** What the calls worker takes of WorkerDeps. */
export type CallsWorkerDeps = WorkerNeeds<
  'connection' | 'client' | 'orm' | 'ports' | 'workflowBundle' | 'maxCachedWorkflows' | 'logger',
  | 'temporalNamespace'
  | 'taskQueuePrefix'
  | 'simTimeScale'
  | 'analysisLlm'
  | 'voiceLlm'
  | 'transferNumber'
  | 'dialingCountries'
  | 'logLevel'
  | 'media'
  | 'recordingsDir'
  | 'recordingsStore'
>;

/**
 * The simulated carrier; with a media gateway about (MEDIA_CONTROL_TOKEN set), calls whose audio
 * a gateway holds go there, and with MEDIA_GATEWAY_URL the calls placed here carry audio too
 * (lib/carrier/call-routing-carrier.ts), through the SIP trunk with CARRIER=sip.
 */
function carrierFromSettings(deps: CallsWorkerDeps): Carrier {
  const queues = taskQueues(deps.settings);
  const simulator = new SimulatedCarrier(deps.client, {
    taskQueue: queues.simulator,
    timeScale: deps.settings.simTimeScale,
  });
  const token = deps.settings.media.controlToken;
  if (!token) return simulator;
  const media = new MediaGatewayCarrier({ token, taskQueuePrefix: deps.settings.taskQueuePrefix });
  const gateways = mediaGateways(deps.settings.media);
  const placement = gateways.length > 0 ? new GatewayPlacement(gateways) : null;
  // CARRIER=sip: the calls placed here go through the trunk (lib/carrier/sip-carrier.ts).
  const { carrier, sip } = deps.settings.media;
  const text =
    carrier === 'sip'
      ? new SipCarrier({ controlUrl: sip.controlUrl, token: sipControlToken(sip) }, simulator)
      : simulator;
  return new CallRoutingCarrier(text, media, {
    lookUpCall: async (callId) => {
      const call = await deps.orm.em
        .fork()
        .findOne(Call, { id: callId }, { fields: ['mediaGateway', 'direction'] });
      return call && { mediaGateway: call.mediaGateway ?? null, direction: call.direction };
    },
    ...(placement
      ? {
          dialGateway: {
            pick: async () => (await placement.pick()).controlUrl,
            // Each call's far end attaches with the call's own token, made as it is dialled.
            streamFor: (gateway: string, callId: string, ringTimeoutSeconds: number) => ({
              url: placement.streamsUrlOf(gateway),
              token: streamTokenFor(token, callId, ringTimeoutSeconds),
            }),
          },
        }
      : {}),
    pinToGateway: async (callId, gateway) => {
      await deps.orm.em.fork().nativeUpdate(Call, { id: callId }, { mediaGateway: gateway });
    },
    dialsThroughTrunk: carrier === 'sip',
  });
}

/** The worker of the `calls` task queue: call and campaign workflows and their activities. */
export function createCallsWorker(deps: CallsWorkerDeps): Promise<Worker> {
  const queues = taskQueues(deps.settings);
  // The language model when VOICE_LLM_URL is set, else the scripted agent; every call (outbound,
  // inbound phone, web) runs its turns through this one runtime.
  const voiceRuntime = deps.ports?.voiceRuntime ?? voiceRuntimeFromSettings(deps.settings);
  const analyzer = deps.ports?.analyzer ?? analyzerFromSettings(deps.settings);
  const carrier = deps.ports?.carrier ?? carrierFromSettings(deps);
  const logger = deps.logger ?? createLogger(deps.settings.logLevel, { fields: { worker: 'calls' } });
  const planAnswerer =
    deps.ports?.planAnswerer !== undefined
      ? deps.ports.planAnswerer
      : planAnswererFromSettings(deps.settings, logger);
  return Worker.create({
    // Activity spans and the workflow spans' exporter when tracing is on (lib/tracing/tracing.ts).
    ...workerTracingOptions(),
    connection: deps.connection,
    namespace: deps.settings.temporalNamespace,
    taskQueue: queues.calls,
    ...(deps.workflowBundle ? { workflowBundle: deps.workflowBundle } : { workflowsPath: callWorkflowsPath }),
    activities: {
      ...createCallActivities({
        orm: deps.orm,
        carrier,
        voiceRuntime,
        analyzer,
        planAnswerer,
        recordings: recordingStoreFor(deps.settings),
        dialingCountries: deps.settings.dialingCountries,
        logger,
      }),
      ...createCallRuntimeActivities({ voiceRuntime, analyzer, planAnswerer }),
      // Who answered an outbound call, and the message left on a machine (workflows/call/screen.ts).
      ...createAnsweringMachineActivities({ orm: deps.orm, carrier }),
      // A warm transfer's briefing and hand-over (workflows/call/warm-transfer.ts).
      ...createWarmTransferActivities({
        orm: deps.orm,
        carrier,
        voiceRuntime,
        recordings: recordingStoreFor(deps.settings),
        logger,
      }),
      // Campaigns run on the calls queue: their steps start calls exactly as POST /calls does.
      ...createCampaignActivities({ orm: deps.orm, settings: deps.settings }),
      // Test runs too: their calls are children of the run's workflow.
      ...createTestRunActivities({ orm: deps.orm, settings: deps.settings }),
      // Recording retention: this queue's workers see the recordings' store.
      ...createRecordingRetentionActivities({ orm: deps.orm, recordings: recordingStoreFor(deps.settings) }),
    },
    // Calls spend most of their life waiting on callbacks, so many fit in one worker.
    maxConcurrentWorkflowTaskExecutions: 100,
    maxConcurrentActivityTaskExecutions: 200,
    maxCachedWorkflows: deps.maxCachedWorkflows ?? 2000,
  });
}

/** CARRIER=sip needs the SIP side's own control secret; the Media Streams token does not open it. */
function sipControlToken(sip: { controlToken: string | undefined }): string {
  if (!sip.controlToken) {
    throw new Error(
      'CARRIER=sip: SIP_CONTROL_TOKEN is not set (npm start and start:cluster generate and keep it)',
    );
  }
  return sip.controlToken;
}
