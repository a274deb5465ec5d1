import {
  ApplicationFailure,
  TemporalFailure,
  WorkflowExecutionAlreadyStartedError,
} from '@temporalio/common';
import {
  ActivityFailure,
  isCancellation,
  ParentClosePolicy,
  startChild,
  WorkflowIdReusePolicy,
} from '@temporalio/workflow';
import type { CallActivities, CallEventToWrite } from '../../activities/calls.js';
import type { CallEventType } from '../../db/entities/index.js';
import type { CallEventExtra } from '../../lib/calls/call-events.js';
import { RUNS_AS_ACTIVITY } from '../../lib/temporal/failure-types.js';
import {
  EVENT_FAN_OUT_WORKFLOW,
  type EventFanOutWorkflow,
  eventFanOutWorkflowId,
} from '../../lib/temporal/workflow-contracts.js';
import { eventFanOutMetadata } from '../../lib/temporal/workflow-metadata.js';
import {
  analysis,
  analysisLocal,
  carrier,
  carrierLocal,
  liveLocal,
  liveWithDatabase,
  records,
  recordsLocal,
} from './activity-proxies.js';
import type { CallState } from './call-state.js';

// Steps more than one phase of the call takes.

/**
 * A step of `call` failed for good (its retries ran out or it cannot be retried); not a
 * cancellation. An activity's failure comes as an ActivityFailure, a local activity's as the
 * failure itself (an ApplicationFailure, a TimeoutFailure): calls since patch `lean-call-2` take
 * both, older ones only the first, as they did (their other failures went to the last resort).
 */
export function failedForGood(error: unknown, call: CallState): boolean {
  if (isCancellation(error)) return false;
  if (error instanceof ActivityFailure) return true;
  return call.leaner && error instanceof TemporalFailure;
}

/** Workflow time as an ISO timestamp, for the rows the activities write. */
export function now(): string {
  return new Date().toISOString();
}

/** The database writes of this call: local activities from patch `lean-call-1` on. */
export function db(call: CallState): typeof records {
  return call.lean ? recordsLocal : records;
}

/** The carrier requests of this call: local activities from patch `lean-call-1` on. */
export function carrierOf(call: CallState): typeof carrier {
  return call.lean ? carrierLocal : carrier;
}

/** answerIncoming and transferCall of this call: local activities from patch `lean-call-2` on. */
export function live(call: CallState): Pick<typeof liveWithDatabase, 'answerIncoming' | 'transferCall'> {
  return call.leaner ? liveLocal : liveWithDatabase;
}

/** A local activity refused because its port calls out: it must run as an activity. */
function runsAsActivity(error: unknown): boolean {
  for (let failure = error; failure instanceof Error; failure = failure.cause) {
    if (failure instanceof ApplicationFailure && failure.type === RUNS_AS_ACTIVITY) return true;
  }
  return false;
}

/**
 * Runs an agent step: since patch `lean-call-2` as a local activity first; a voice runtime that
 * calls out refuses that at once, and from then on the call's agent steps are activities.
 */
async function agentStep<T>(
  call: CallState,
  step: (proxy: typeof liveWithDatabase) => Promise<T>,
): Promise<T> {
  if (call.leaner && !call.agentCallsOut) {
    try {
      return await step(liveLocal);
    } catch (error) {
      if (!runsAsActivity(error)) throw error;
      call.agentCallsOut = true;
    }
  }
  return step(liveWithDatabase);
}

/** The agent joins the answered call (with its opening line, or none: it listens first). */
export function connectAgent(call: CallState): ReturnType<CallActivities['connectAgent']> {
  return agentStep(call, (proxy) => proxy.connectAgent({ callId: call.callId }));
}

/** One agent turn; since patch `lean-call-2` the agent's last line carries its hang-up. */
export function agentTurn(
  call: CallState,
  input: Omit<Parameters<CallActivities['agentTurn']>[0], 'callId' | 'hangUpWithLastLine'>,
): ReturnType<CallActivities['agentTurn']> {
  const turn = { callId: call.callId, ...input, ...(call.leaner ? { hangUpWithLastLine: true } : {}) };
  return agentStep(call, (proxy) => proxy.agentTurn(turn));
}

/**
 * The configured analyzer's answer: since patch `lean-call-2` as a local activity first, unless the
 * analyzer calls out (a language model), which refuses that at once and runs as an activity.
 */
export async function analyzeWithAnalyzer(call: CallState): ReturnType<CallActivities['analyzeCall']> {
  if (call.leaner) {
    try {
      return await analysisLocal.analyzeCall({ callId: call.callId });
    } catch (error) {
      if (!runsAsActivity(error)) throw error;
    }
  }
  return analysis.analyzeCall({ callId: call.callId });
}

/**
 * The event a status change writes in the same step, since patch `lean-call-2` (`{ event }` to
 * spread into the step's input; nothing before: the call then writes it with `emit`).
 */
export function eventWith(
  call: CallState,
  type: CallEventType,
  extra?: CallEventExtra,
): { event?: CallEventToWrite } {
  if (!call.leaner) return {};
  return { event: { type, occurredAt: now(), extra, fanOutTaskQueue: call.input.eventsTaskQueue } };
}

/** Writes the event, unless the status change already did (`eventWith`). */
export async function emitUnlessWritten(
  call: CallState,
  type: CallEventType,
  extra?: CallEventExtra,
): Promise<void> {
  if (!call.leaner) await emit(call, type, extra);
}

/**
 * Writes the event (once per call and type), then hands it to its fan-out workflow
 * `event-fanout-<eventId>`: since patch `lean-call-1` the activity starts it (same id, queue and
 * summary), before that the call started it as an abandoned child.
 */
export async function emit(call: CallState, type: CallEventType, extra?: CallEventExtra): Promise<void> {
  if (call.lean) {
    await recordsLocal.emitCallEvent({
      callId: call.callId,
      type,
      occurredAt: now(),
      extra,
      fanOutTaskQueue: call.input.eventsTaskQueue,
    });
    return;
  }
  const { eventId } = await records.emitCallEvent({ callId: call.callId, type, occurredAt: now(), extra });
  try {
    // Delivery runs on its own: the call never waits for webhooks.
    await startChild<EventFanOutWorkflow>(EVENT_FAN_OUT_WORKFLOW, {
      args: [{ eventId }],
      workflowId: eventFanOutWorkflowId(eventId),
      taskQueue: call.input.eventsTaskQueue,
      ...eventFanOutMetadata({ eventId, type, callId: call.callId }),
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}

/** Ends the far end from our side, best effort: a carrier that cannot be reached does not stop the call from ending. */
export async function release(call: CallState, reason: 'hang_up' | 'cancel'): Promise<void> {
  try {
    await carrierOf(call).releaseCall({ callId: call.callId, reason });
  } catch (error) {
    if (!failedForGood(error, call)) throw error;
  }
}
