import { condition } from '@temporalio/workflow';
import type { CarrierCallback } from '../../lib/temporal/call-messages.js';
import { carrier, live, records } from './activity-proxies.js';
import type { CallState, FailReason } from './call-state.js';
import { Deadline, settleExpiry } from './deadline.js';
import { failedForGood, release } from './steps.js';

/**
 * Connect: dial and wait for the answer (outbound), or pick up a call that came in. Returns
 * `connected`, or why the call fails (a far end that did not answer has already been released).
 */
export async function connect(call: CallState): Promise<'connected' | FailReason> {
  const outcome = call.input.answered ? await answerIncoming(call) : await dial(call);
  if (outcome === 'connected') call.connected = true;
  return outcome;
}

/** Dials and waits for the carrier's callbacks; the ring timeout is a durable timer. */
async function dial(call: CallState): Promise<'connected' | FailReason> {
  const { callId, input } = call;
  try {
    // A call with audio (a speaking far end) says where its media session is held; before
    // MEDIA_GATEWAY_URL every dial answered nothing.
    call.media =
      (await carrier.dial({
        callId,
        to: input.to!,
        from: input.from,
        ringTimeoutSeconds: input.ringTimeoutSeconds,
      })) ?? null;
  } catch (error) {
    if (!failedForGood(error)) throw error;
    return 'not_connected';
  }
  call.farEndReached = true;
  const answer = await firstAnswer(call, input.ringTimeoutSeconds * 1000);
  if (answer === 'ring_timeout' || answer === 'declined') {
    await release(call, 'cancel');
    return 'no_answer';
  }
  if (answer === 'busy') return 'busy';
  if (answer !== 'answered') return 'not_connected';
  return 'connected';
}

/** The first callback other than `ringing` (the first `ringing` marks the call ringing), or the ring timeout (one timer). */
async function firstAnswer(
  call: CallState,
  ringTimeoutMs: number,
): Promise<CarrierCallback['type'] | 'ring_timeout'> {
  const ringTimeout = new Deadline(ringTimeoutMs);
  ringTimeout.restart();
  try {
    let ringing = false;
    for (;;) {
      await condition(() => call.callbacks.length > 0 || ringTimeout.expired);
      const callback = call.callbacks.shift();
      if (!callback) {
        await settleExpiry();
        return 'ring_timeout';
      }
      if (callback.type !== 'ringing') return callback.type;
      if (!ringing) {
        ringing = true;
        call.step('ringing');
        await records.markRinging({ callId: call.callId });
        call.setStatus('ringing');
      }
    }
  } finally {
    ringTimeout.stop();
  }
}

/** A call that came in (inbound phone or web): pick it up, the carrier connects the caller. */
async function answerIncoming(call: CallState): Promise<'connected' | FailReason> {
  try {
    // A call with audio says where its media session is held (workflows/call/media-session.ts).
    call.media = (await live.answerIncoming({ callId: call.callId })) ?? null;
  } catch (error) {
    if (!failedForGood(error)) throw error;
    return 'not_connected';
  }
  call.farEndReached = true;
  return 'connected';
}
