import { isCancellation, patched, proxyActivities } from '@temporalio/workflow';
import type { MediaSessionActivities } from '../../lib/media/media-session.js';
import { CALL_MEDIA_SESSION } from '../activity-options.js';
import type { CallState } from './call-state.js';

/** Calls that began before keep waiting for the hang-up (or the silence timeout) when their media session ends. */
const MEDIA_ENDED_ENDS_CALL = 'media-ended-ends-call';

/**
 * Watches the media session of a call with audio, from the answer on: when the gateway holding
 * the call's audio dies, `mediaLost` is set; when the session ends (its stream closed) and no
 * hang-up came, `mediaEnded` is; either way the conversation ends the call (converse.ts) rather
 * than wait out the silence timeout. Not awaited: it runs beside the conversation. A text-only
 * call has none.
 */
export function watchMedia(call: CallState): void {
  if (!call.media) return;
  const { holdMedia } = proxyActivities<MediaSessionActivities>({
    ...CALL_MEDIA_SESSION,
    taskQueue: call.media.taskQueue,
  });
  holdMedia({ callId: call.callId }).then(
    () => {
      if (patched(MEDIA_ENDED_ENDS_CALL)) call.mediaEnded = true;
    },
    (error: unknown) => {
      if (!isCancellation(error)) call.mediaLost = true;
    },
  );
}
