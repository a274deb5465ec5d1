import { ApplicationFailure } from '@temporalio/common';
import { CancellationScope, condition, patched } from '@temporalio/workflow';
import type { CallState } from './call-state.js';

// A live step of a call with audio (an agent turn, a line said, a transfer) goes through the media
// gateway holding the call. When that gateway dies, the step's requests to it fail and are retried
// for the step's whole budget (75 s, CALL_LIVE_STEPS), while the media session already told the
// workflow the gateway is gone (`mediaLost`, within its 10 s heartbeat timeout). Telephony spec
// section 5 and issue "media operations" want every call of a killed gateway ended within 15 s:
// so the loss cancels the step, which then fails for good and ends the call `agent_error`.

/** Patch: calls that began before wait out the step. */
export const LIVE_STEPS_END_WITH_MEDIA = 'live-steps-end-with-media';

/** What a step cut short by the loss of its gateway fails with (failedForGood: the call ends). */
export function mediaLostFailure(): ApplicationFailure {
  return ApplicationFailure.nonRetryable('the media gateway holding the call was lost', 'MediaLost');
}

/**
 * Runs `step`; on a call with audio the loss of its gateway cancels it and fails it at once with
 * mediaLostFailure(). A step that finishes first is its own answer.
 */
export async function unlessMediaLost<T>(call: CallState, step: () => Promise<T>): Promise<T> {
  if (!call.media || !patched(LIVE_STEPS_END_WITH_MEDIA)) return step();
  if (call.mediaLost) throw mediaLostFailure();
  const running = new CancellationScope();
  const stepDone = running.run(step);
  // Once the loss won, the cancelled step's own rejection is nobody's.
  stepDone.catch(() => {});
  const watch = new CancellationScope();
  const lost = watch.run(() => condition(() => call.mediaLost)).then(() => 'lost' as const);
  // The watch is cancelled once the step finished first: that rejection is nobody's either.
  lost.catch(() => {});
  try {
    const first = await Promise.race([stepDone.then((value) => ({ value })), lost]);
    if (first === 'lost') {
      running.cancel();
      throw mediaLostFailure();
    }
    return first.value;
  } finally {
    watch.cancel();
  }
}
