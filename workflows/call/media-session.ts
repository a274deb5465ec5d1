import { isCancellation, proxyActivities } from '@temporalio/workflow';
import type { MediaSessionActivities } from '../../lib/media/media-session.js';
import { CALL_MEDIA_SESSION } from '../activity-options.js';
import type { CallState } from './call-state.js';

/**
 * Watches the media session of a call with audio, from the answer on: when the gateway holding
 * the call's audio dies, `mediaLost` is set, and the conversation ends the call (converse.ts).
 * Not awaited: it runs beside the conversation. A text-only call has none.
 */
export function watchMedia(call: CallState): void {
  if (!call.media) return;
  const { holdMedia } = proxyActivities<MediaSessionActivities>({
    ...CALL_MEDIA_SESSION,
    taskQueue: call.media.taskQueue,
  });
  holdMedia({ callId: call.callId }).then(
    () => {},
    (error: unknown) => {
      if (!isCancellation(error)) call.mediaLost = true;
    },
  );
}
