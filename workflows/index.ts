import type {
  BrowserCallerWorkflow,
  CallWorkflow,
  CampaignWorkflow,
  ConsultationLegWorkflow,
  EventFanOutWorkflow,
  RecordingRetentionWorkflow,
  SimulatedCalleeWorkflow,
  TestCallerWorkflow,
  TestRunWorkflow,
  WebhookDeliveryWorkflow,
  WebhookRecoveryWorkflow,
} from '../lib/temporal/workflow-contracts.js';
import { browserCallerWorkflow } from './browser-caller-workflow.js';
import { callWorkflow } from './call-workflow.js';
import { campaignWorkflow } from './campaign-workflow.js';
import { consultationLegWorkflow } from './consultation-leg-workflow.js';
import { eventFanOutWorkflow } from './event-fan-out.js';
import { recordingRetentionWorkflow } from './recording-retention-workflow.js';
import { simulatedCalleeWorkflow } from './simulated-callee-workflow.js';
import { testCallerWorkflow } from './test-caller-workflow.js';
import { testRunWorkflow } from './test-run-workflow.js';
import { webhookDeliveryWorkflow } from './webhook-delivery.js';
import { webhookRecoveryWorkflow } from './webhook-recovery.js';

// Every workflow the workers run (the bundle's entry point).
export {
  browserCallerWorkflow,
  callWorkflow,
  campaignWorkflow,
  consultationLegWorkflow,
  eventFanOutWorkflow,
  recordingRetentionWorkflow,
  simulatedCalleeWorkflow,
  testCallerWorkflow,
  testRunWorkflow,
  webhookDeliveryWorkflow,
  webhookRecoveryWorkflow,
};

/** Compiles only while each workflow has the signature its contract declares (lib/temporal/workflow-contracts.ts). */
type Implements<Contract, Workflow extends Contract> = Workflow;
export type WorkflowContractsHold = [
  Implements<BrowserCallerWorkflow, typeof browserCallerWorkflow>,
  Implements<CallWorkflow, typeof callWorkflow>,
  Implements<CampaignWorkflow, typeof campaignWorkflow>,
  Implements<ConsultationLegWorkflow, typeof consultationLegWorkflow>,
  Implements<EventFanOutWorkflow, typeof eventFanOutWorkflow>,
  Implements<RecordingRetentionWorkflow, typeof recordingRetentionWorkflow>,
  Implements<SimulatedCalleeWorkflow, typeof simulatedCalleeWorkflow>,
  Implements<TestCallerWorkflow, typeof testCallerWorkflow>,
  Implements<TestRunWorkflow, typeof testRunWorkflow>,
  Implements<WebhookDeliveryWorkflow, typeof webhookDeliveryWorkflow>,
  Implements<WebhookRecoveryWorkflow, typeof webhookRecoveryWorkflow>,
];
