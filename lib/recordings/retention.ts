import type { EntityManager } from '@mikro-orm/postgresql';
import { FINAL_CALL_STATUSES } from '../../db/entities/index.js';
import type { RecordingStore } from './recording-store.js';

// Recording retention (telephony spec section 4): per workspace, `recording_retention_days`
// (`admin limits set --recording-retention-days N`). 0 keeps no recording once the call is final
// (the call's last step deletes it, dropRecordingIfNotKept); N ≥ 1 deletes a recording N days after its
// call ended, by the hourly schedule (retention-schedule.ts) that runs expireRecordings. Null keeps
// them until deleted. The recordings in the store (RECORDINGS_DIR, or the S3 bucket) are the list to go through: what is there is exactly
// what may need to go, whatever runs were missed.

/** Calls looked up per query while the recordings are gone through. */
const BATCH = 500;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * At a call's end: deletes its recording when its workspace keeps none (retention 0), before the
 * call's last event says whether it has one. True when one was deleted.
 */
export async function dropRecordingIfNotKept(
  em: EntityManager,
  recordings: Pick<RecordingStore, 'delete'>,
  callId: string,
): Promise<boolean> {
  return (await retentionOf(em, callId))?.days === 0 ? recordings.delete(callId) : false;
}

/** The call's status and its workspace's retention in days (null: kept until deleted); null for no such call. */
async function retentionOf(
  em: EntityManager,
  callId: string,
): Promise<{ days: number | null; status: string } | null> {
  const [row]: { days: number | null; status: string }[] = await em.getConnection().execute(
    `select w.recording_retention_days as days, c.status
         from calls c join workspaces w on w.id = c.workspace_id
        where c.id = ?`,
    [callId],
  );
  return row ?? null;
}

/**
 * Whether the call is final and its workspace keeps no recording (retention 0): a recording that
 * reaches the store only after the call's last step (a store that was down, a slow upload) must not
 * stay there, nor be uploaded at all.
 */
export async function keepsNoRecording(em: EntityManager, callId: string): Promise<boolean> {
  const row = await retentionOf(em, callId);
  return row?.days === 0 && FINAL_CALL_STATUSES.includes(row.status as never);
}

export interface RetentionSweep {
  /** Recordings looked at. */
  checked: number;
  /** Recordings deleted because their workspace's retention had passed. */
  deleted: number;
}

/**
 * Deletes every recording in the store whose call is final and ended at least its workspace's
 * retention before `now`. A recording of a call still going, of a workspace without retention, or
 * of no known call is left alone.
 */
export async function expireRecordings(
  em: EntityManager,
  recordings: Pick<RecordingStore, 'callIds' | 'delete'>,
  now: Date,
): Promise<RetentionSweep> {
  const callIds = await recordings.callIds();
  let deleted = 0;
  for (let start = 0; start < callIds.length; start += BATCH) {
    const batch = callIds.slice(start, start + BATCH);
    const rows: { id: string; ended_at: Date | null; status: string; days: number | null }[] = await em
      .getConnection()
      .execute(
        `select c.id, c.ended_at, c.status, w.recording_retention_days as days
           from calls c join workspaces w on w.id = c.workspace_id
          where c.id in (?) and w.recording_retention_days is not null`,
        [batch],
      );
    for (const row of rows) {
      if (!FINAL_CALL_STATUSES.includes(row.status as never) || row.days === null) continue;
      const ended = row.ended_at ? new Date(row.ended_at).getTime() : 0;
      if (ended + row.days * DAY_MS > now.getTime()) continue;
      if (await recordings.delete(row.id)) deleted++;
    }
  }
  return { checked: callIds.length, deleted };
}
