import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  ActivityFailure,
  isCancellation,
  ParentClosePolicy,
  startChild,
  WorkflowIdReusePolicy,
} from '@temporalio/workflow';
import type { CallEventType } from '../../db/entities/index.js';
import type { CallEventExtra } from '../../lib/calls/call-events.js';
import {
  EVENT_FAN_OUT_WORKFLOW,
  type EventFanOutWorkflow,
  eventFanOutWorkflowId,
} from '../../lib/temporal/workflow-contracts.js';
import { eventFanOutMetadata } from '../../lib/temporal/workflow-metadata.js';
import { carrier, carrierLocal, records, recordsLocal } from './activity-proxies.js';
import type { CallState } from './call-state.js';

// Steps more than one phase of the call takes.

/** A step failed for good (its retries ran out or it cannot be retried); not a cancellation. */
export function failedForGood(error: unknown): error is ActivityFailure {
  return error instanceof ActivityFailure && !isCancellation(error);
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
    if (!failedForGood(error)) throw error;
  }
}
