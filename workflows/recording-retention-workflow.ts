import { proxyActivities } from '@temporalio/workflow';
import type { RecordingRetentionActivities } from '../activities/recording-retention.js';
import type { RecordingRetentionResult } from '../lib/temporal/workflow-contracts.js';
import { RECORDING_RETENTION_STEP } from './activity-options.js';

// One pass of recording retention (telephony spec section 4), started every hour by the schedule
// `recording-retention` (lib/recordings/retention-schedule.ts): the recordings whose workspace's
// retention has passed are deleted.

const { expireRecordings } = proxyActivities<RecordingRetentionActivities>(RECORDING_RETENTION_STEP);

export async function recordingRetentionWorkflow(): Promise<RecordingRetentionResult> {
  return expireRecordings();
}
