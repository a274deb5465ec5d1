import type { CallChannel, CallDirection, CallStatus } from '../../db/entities/index.js';
import type { TranscriptLine } from '../calls/transcript.js';
import type { CallMedia } from '../carrier/carrier.js';
import type { CallerSpeech, CallProgress, CarrierCallback, GatewayTurn } from './call-messages.js';
import type { CallRuntime } from './call-runtime.js';

// Every workflow's contract in one place: its type name, its id, what it takes and what it
// returns. The API, the workers, the carrier adapter and the bench start workflows through these
// types (`client.workflow.start<CallWorkflow>(CALL_WORKFLOW, …)`, `startChild<…>`), and each
// workflow in workflows/ takes its signature from here, so arguments are checked by the compiler
// on both sides. Ids are fixed by docs/development.md: operators find workflows by them.

// ── Calls (task queue `calls`) ───────────────────────────────────────────────────────────────

export const CALL_WORKFLOW = 'callWorkflow';

export interface CallWorkflowInput {
  callId: string;
  workspaceId: string;
  agentId: string | null;
  direction: CallDirection;
  channel: CallChannel;
  from: string | null;
  to: string | null;
  ringTimeoutSeconds: number;
  /** True for a call that reaches us already answered: there is nothing to dial. */
  answered: boolean;
  /**
   * The call waited `queued` past its admission deadline without a workflow (lib/calls/
   * expire-queued-calls.ts): end it failed/not_connected without dialing.
   */
  expired?: boolean;
  /** Task queue of event delivery (`taskQueues().webhooks`). */
  eventsTaskQueue: string;
  /** Task queue of the agent's tool requests (`taskQueues().tools`); absent on calls started before tools. */
  toolsTaskQueue?: string;
  /** A campaign's call: the campaign workflow to signal `callEnded` when the call is final. */
  campaignWorkflowId?: string;
  /**
   * An outbound phone call whose agent detects answering machines (telephony spec section 6): what
   * it does on one. Absent: no detection (inbound and web calls, `voicemail.detect` false, calls
   * started before detection).
   */
  voicemail?: { action: 'hang_up' | 'leave_message' };
  /**
   * A long conversation goes on in a new run (continue-as-new) with what its last run knew, so no
   * history grows past CONVERSATION_HISTORY_EVENTS (workflows/call/converse.ts).
   */
  resume?: ConversationResume;
}

/** The call's state carried into the next run of a long conversation (workflows/call/call-state.ts). */
export interface ConversationResume {
  /** Runs of this call before the new one. */
  runs: number;
  runtime: CallRuntime | null;
  media: CallMedia | null;
  lastAgentLine: TranscriptLine | null;
  nextIndex: number;
  heardUntil: number;
  /** What the person said that the agent has not answered yet, and the callbacks not yet handled. */
  heard: CallerSpeech[];
  callbacks: CarrierCallback[];
  hungUp: { atSeconds: number } | null;
  speechFailed: boolean;
  /** Calls of the agent's own tools so far (absent before agents had tools: none). */
  toolCalls?: number;
  /** The media gateway takes the turns, or never will; the turns it reported not yet handled (absent before: none). */
  turnsInGateway?: boolean;
  turnsStayHere?: boolean;
  gatewayTurns?: GatewayTurn[];
  /** The person's utterance numbers seen lately: a retried delivery is still recognised. */
  utterancesSeen: number[];
  progress: CallProgress;
}

export interface CallWorkflowResult {
  status: CallStatus;
  endReason: string;
  durationSeconds: number | null;
}

export type CallWorkflow = (input: CallWorkflowInput) => Promise<CallWorkflowResult>;

/** One workflow per call, so the same call can never be dialed twice. */
export function callWorkflowId(callId: string): string {
  return `call-${callId}`;
}

// ── Campaigns (task queue `calls`) ───────────────────────────────────────────────────────────

export const CAMPAIGN_WORKFLOW = 'campaignWorkflow';

export interface CampaignWorkflowInput {
  campaignId: string;
  workspaceId: string;
  /** Task queue of event delivery (`taskQueues().webhooks`), for campaign.completed. */
  eventsTaskQueue: string;
  /** Runs so far (each continues as new after stepsPerRun steps); 0 for the first. */
  run?: number;
  /** Steps per run before continuing as new; default CAMPAIGN_STEPS_PER_RUN (tests set it lower). */
  stepsPerRun?: number;
}

export interface CampaignWorkflowResult {
  status: 'completed' | 'canceled';
}

export type CampaignWorkflow = (input: CampaignWorkflowInput) => Promise<CampaignWorkflowResult>;

/** One workflow per campaign; its calls signal it by this id. */
export function campaignWorkflowId(campaignId: string): string {
  return `campaign-${campaignId}`;
}

// ── The simulated far end (task queue `carrier-simulator`) ───────────────────────────────────

export const SIMULATED_CALLEE_WORKFLOW = 'simulatedCalleeWorkflow';

export const CONSULTATION_LEG_WORKFLOW = 'consultationLegWorkflow';

/** A warm transfer's consultation leg (workflows/consultation-leg-workflow.ts), a child of the call's workflow. */
export interface ConsultationLegInput {
  callId: string;
  /** The leg's own id, as the carrier knows it (a far end of its own). */
  legId: string;
  to: string;
  /** The number the person sees: the call's own number. */
  from: string | null;
  /** False: a cold transfer bridged in the gateway, the person is not briefed (default true). */
  brief?: boolean;
}

/** Whether the person was reached and briefed, or why not. */
export type ConsultationOutcome =
  /** `briefing`: what the person heard; null when not briefed (a cold transfer bridged in the gateway). */
  { reached: true; briefing: string | null } | { reached: false; failure: 'busy' | 'no_answer' | 'refused' };

export type ConsultationLegWorkflow = (input: ConsultationLegInput) => Promise<ConsultationOutcome>;

export interface SimulatedCalleeInput {
  /** The call workflow that gets the callbacks. */
  callWorkflowId: string;
  /** Picks the scenario by its last four digits (the `to` of an outbound call, the caller of an inbound one). */
  scenarioNumber: string;
  /** SIM_TIME_SCALE: wall-clock seconds per simulated second. */
  timeScale: number;
  /** The call is already connected (it came in answered): no ringing. */
  connected: boolean;
  /**
   * The far end speaks (docs/voice.md, "The simulator speaks"): on answering it connects to this
   * media gateway as a Media Streams client for call `callId`, and says its lines as audio there.
   * Absent (every far end before it): its lines are signalled as text.
   */
  audio?: FarEndAudio;
}

/**
 * Where a speaking far end's audio goes: the Media Streams endpoint of the gateway holding call
 * `callId`, opened with the call's own stream token (it expires with the ring: a far end that
 * answers later than that cannot attach).
 */
export interface FarEndAudio {
  streamsUrl: string;
  token: string;
  callId: string;
}

/** What a simulated far end kept: an answering machine's recording (scenario 3001), the lines it heard after its beep. */
export interface SimulatedCalleeResult {
  recorded: string[];
}

export type SimulatedCalleeWorkflow = (
  input: SimulatedCalleeInput,
) => Promise<SimulatedCalleeResult | undefined>;

/**
 * The far end of a dashboard test-panel call: the person in the browser. Same workflow id as the
 * simulator's far end (`farEndWorkflowId`), same carrier signals in; the person's lines and hang-up
 * come from the dashboard (browserCallerSaysSignal, browserCallerHangUpSignal).
 */
export const BROWSER_CALLER_WORKFLOW = 'browserCallerWorkflow';

export interface BrowserCallerInput {
  /** The call workflow that gets the callbacks. */
  callWorkflowId: string;
  /** The far end hangs up by itself after this long without a line from the person (a closed tab). */
  abandonAfterSeconds: number;
}

export type BrowserCallerWorkflow = (input: BrowserCallerInput) => Promise<void>;

export function farEndWorkflowId(callId: string): string {
  return `carrier-sim-${callId}`;
}

/**
 * The far end of a test run's call: a caller the language model plays from the scenario's
 * `caller_prompt` (workflows/test-caller-workflow.ts). Same workflow id and carrier signals as the
 * simulator's far end; its lines come from the model, text only, at most `maxTurns` of them.
 */
export const TEST_CALLER_WORKFLOW = 'testCallerWorkflow';

export interface TestCallerInput {
  callWorkflowId: string;
  callerPrompt: string;
  maxTurns: number;
  /** Task queue of the caller's model step (`testCallerLine`): the carrier simulator's. */
  modelTaskQueue: string;
}

export interface TestCallerResult {
  /** Lines the caller said. */
  lines: number;
  /** Who ended it: the caller (goodbye, `max_turns`, or the run's cancel), or the agent. */
  endedBy: 'caller' | 'agent';
  /** Why the caller could not go on (its model failed), or null. */
  failure: string | null;
}

export type TestCallerWorkflow = (input: TestCallerInput) => Promise<TestCallerResult>;

// ── Test runs (task queue `calls`) ───────────────────────────────────────────────────────────

export const TEST_RUN_WORKFLOW = 'testRunWorkflow';

export interface TestRunWorkflowInput {
  testRunId: string;
  workspaceId: string;
  /** Task queue of the calls it starts as children (`taskQueues().calls`). */
  callsTaskQueue: string;
}

export interface TestRunWorkflowResult {
  status: 'completed' | 'canceled';
  passed: number;
  failed: number;
  errored: number;
}

export type TestRunWorkflow = (input: TestRunWorkflowInput) => Promise<TestRunWorkflowResult>;

export function testRunWorkflowId(testRunId: string): string {
  return `test-run-${testRunId}`;
}

// ── Recording retention (task queue `calls`) ────────────────────────────────────────────────

/** One pass of recording retention, started by the schedule `recording-retention` every hour. */
export const RECORDING_RETENTION_WORKFLOW = 'recordingRetentionWorkflow';

export interface RecordingRetentionResult {
  checked: number;
  deleted: number;
}

export type RecordingRetentionWorkflow = () => Promise<RecordingRetentionResult>;

/** The schedule's id (with the deployment's task queue prefix, so test runs keep apart). */
export function recordingRetentionScheduleId(taskQueuePrefix: string): string {
  return `${taskQueuePrefix}recording-retention`;
}

// ── Webhooks (task queue `webhooks`) ─────────────────────────────────────────────────────────

export const EVENT_FAN_OUT_WORKFLOW = 'eventFanOutWorkflow';

export interface EventFanOutInput {
  eventId: string;
}

export type EventFanOutWorkflow = (input: EventFanOutInput) => Promise<{ deliveries: number }>;

export function eventFanOutWorkflowId(eventId: string): string {
  return `event-fanout-${eventId}`;
}

export const WEBHOOK_DELIVERY_WORKFLOW = 'webhookDeliveryWorkflow';

export interface WebhookDeliveryInput {
  deliveryId: string;
}

export interface WebhookDeliveryResult {
  /** `stopped`: the endpoint was deleted, paused or disabled, so nothing more was sent. */
  outcome: 'delivered' | 'failed' | 'stopped';
  attempts: number;
}

export type WebhookDeliveryWorkflow = (input: WebhookDeliveryInput) => Promise<WebhookDeliveryResult>;

export function webhookDeliveryWorkflowId(deliveryId: string): string {
  return `webhook-delivery-${deliveryId}`;
}

export const WEBHOOK_RECOVERY_WORKFLOW = 'webhookRecoveryWorkflow';

export interface WebhookRecoveryInput {
  recoveryId: string;
  /** Position of the last event already sent again (a run that continued as new); 0 at the start. */
  position?: number;
  /** Batches per run before continuing as new; default RECOVERY_BATCHES_PER_RUN (tests set it lower). */
  batchesPerRun?: number;
}

export interface WebhookRecoveryResult {
  /** `stopped`: the endpoint was paused, disabled or deleted before every event was sent again. */
  status: 'completed' | 'stopped';
  /** Events sent again by this run of the workflow. */
  eventsSent: number;
}

export type WebhookRecoveryWorkflow = (input: WebhookRecoveryInput) => Promise<WebhookRecoveryResult>;

/** One workflow per recovery (POST /webhooks/{id}/recover). */
export function webhookRecoveryWorkflowId(recoveryId: string): string {
  return `webhook-recovery-${recoveryId}`;
}
