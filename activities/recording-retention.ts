import type { Orm } from '../db/orm.js';
import { expireRecordings, type RetentionSweep } from '../lib/recordings/retention.js';

// The recording retention's one step (workflows/recording-retention-workflow.ts), on the calls
// queue, whose workers see RECORDINGS_DIR.

export function createRecordingRetentionActivities(deps: { orm: Orm; recordingsDir: string }) {
  return {
    async expireRecordings(): Promise<RetentionSweep> {
      return expireRecordings(deps.orm.em.fork(), deps.recordingsDir, new Date());
    },
  };
}

export type RecordingRetentionActivities = ReturnType<typeof createRecordingRetentionActivities>;
