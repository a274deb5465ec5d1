import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import type { CallEventType } from '../../db/entities/index.js';
import type { RecordingStore } from '../recordings/recording-store.js';
import { startOnce } from '../temporal/start-once.js';
import {
  EVENT_FAN_OUT_WORKFLOW,
  type EventFanOutWorkflow,
  eventFanOutWorkflowId,
} from '../temporal/workflow-contracts.js';
import { eventFanOutMetadata } from '../temporal/workflow-metadata.js';
import { type CallEventExtra, writeCallEventOnce } from './call-events.js';

/** The event a status change writes in the same step. */
export interface CallEventToWrite {
  type: CallEventType;
  occurredAt: string;
  extra?: CallEventExtra;
  /** The fan-out workflow `event-fanout-<eventId>` is started on this task queue. */
  fanOutTaskQueue: string;
}

/**
 * Writes the call's event once (with the call as it is now, `has_recording` from the recordings' store) and hands it to delivery: its fan-out
 * workflow, started once (delivery never holds up the call). Returns the event's id.
 */
export async function emitCallEvent(
  em: EntityManager,
  client: Client,
  callId: string,
  event: CallEventToWrite,
  recordings: Pick<RecordingStore, 'has'>,
): Promise<string> {
  const { fanOutTaskQueue, ...row } = event;
  const eventId = await writeCallEventOnce(
    em,
    { callId, ...row, occurredAt: new Date(row.occurredAt) },
    recordings,
  );
  await startOnce(
    client.workflow.start<EventFanOutWorkflow>(EVENT_FAN_OUT_WORKFLOW, {
      args: [{ eventId }],
      workflowId: eventFanOutWorkflowId(eventId),
      taskQueue: fanOutTaskQueue,
      ...eventFanOutMetadata({ eventId, type: event.type, callId }),
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    }),
  );
  return eventId;
}
