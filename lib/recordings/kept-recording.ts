import { setTimeout as sleep } from 'node:timers/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { RecordingStore } from './recording-store.js';

// A recording is complete when its call is final (spec voice-media-v1 section 5). With
// RECORDINGS_STORE=s3 the gateway uploads it as the call's audio ends, which runs beside the
// call's last steps (the analysis): the step that makes the call final first gives the upload a
// moment to land, so `call.completed` says `has_recording` true for it. A store that is down does
// not hold the call up: after KEPT_WAIT_MS the call is final all the same and `has_recording`
// turns true once the gateway's retries get it there.

/** Within a call's last local activity (10 s a try), beside its database writes. */
const KEPT_WAIT_MS = 6_000;
const LOOK_EVERY_MS = 200;

/** Waits (S3 only, calls with audio only) until the store holds the call's recording, or the wait is over. */
export async function untilRecordingKept(
  em: EntityManager,
  store: Pick<RecordingStore, 'kind' | 'has'>,
  callId: string,
  limitMs = KEPT_WAIT_MS,
): Promise<boolean> {
  if (store.kind === 'file') return true;
  const [row]: { media_gateway: string | null }[] = await em
    .getConnection()
    .execute('select media_gateway from calls where id = ?', [callId]);
  if (!row?.media_gateway) return false; // a text-only call: nothing was recorded
  const deadline = Date.now() + limitMs;
  for (;;) {
    if (await store.has(callId)) return true;
    if (Date.now() + LOOK_EVERY_MS > deadline) return false;
    await sleep(LOOK_EVERY_MS);
  }
}
