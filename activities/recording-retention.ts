import type { Orm } from '../db/orm.js';
import type { RecordingStore } from '../lib/recordings/recording-store.js';
import { expireRecordings, type RetentionSweep } from '../lib/recordings/retention.js';

// The recording retention's one step (workflows/recording-retention-workflow.ts), on the calls
// queue, whose workers see the recordings' store (RECORDINGS_DIR, or RECORDINGS_STORE=s3).

export function createRecordingRetentionActivities(deps: { orm: Orm; recordings: RecordingStore }) {
  return {
    async expireRecordings(): Promise<RetentionSweep> {
      return expireRecordings(deps.orm.em.fork(), deps.recordings, new Date());
    },
  };
}

export type RecordingRetentionActivities = ReturnType<typeof createRecordingRetentionActivities>;
