import { type Client, ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';
import type { Settings } from '../settings.js';
import { taskQueues } from '../temporal/task-queues.js';
import {
  RECORDING_RETENTION_WORKFLOW,
  recordingRetentionScheduleId,
} from '../temporal/workflow-contracts.js';

// The schedule that applies recording retention (lib/recordings/retention.ts): every hour, one
// run of `recordingRetentionWorkflow` on the calls queue. Made by the calls workers when they
// start (workers/main.ts), once: a schedule that is there already is left as it is. Operators see
// it under Schedules in the Temporal Web UI (and can trigger it there).

export const RETENTION_EVERY = '1 hour';

export async function ensureRecordingRetentionSchedule(
  client: Client,
  settings: Pick<Settings, 'taskQueuePrefix'>,
): Promise<'created' | 'exists'> {
  try {
    await client.schedule.create({
      scheduleId: recordingRetentionScheduleId(settings.taskQueuePrefix),
      spec: { intervals: [{ every: RETENTION_EVERY }] },
      action: {
        type: 'startWorkflow',
        workflowType: RECORDING_RETENTION_WORKFLOW,
        taskQueue: taskQueues(settings).calls,
        args: [],
      },
      // A pass still running when the next is due: the next one is skipped, not piled up.
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: RETENTION_EVERY },
      memo: {
        purpose: 'Deletes recordings whose workspace retention has passed (recording_retention_days).',
      },
    });
    return 'created';
  } catch (error) {
    if (error instanceof ScheduleAlreadyRunning) return 'exists';
    throw error;
  }
}
