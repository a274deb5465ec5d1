import { condition, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { WarmTransferActivities, WarmTransferFailure } from '../activities/warm-transfer.js';
import {
  type CarrierCallback,
  callerSpeechSignal,
  carrierCallbackSignal,
} from '../lib/temporal/call-messages.js';
import type { ConsultationLegInput, ConsultationOutcome } from '../lib/temporal/workflow-contracts.js';
import { CALL_LIVE_STEPS } from './activity-options.js';
import { carrier } from './call/activity-proxies.js';
import { failedForGood } from './call/steps.js';
import { speakingSeconds } from './speech-timing.js';

// A warm transfer's consultation leg (telephony spec section 8), a child of the call's workflow:
// the person the caller goes to is rung through the carrier (this workflow gets that leg's
// callbacks), and once they answer the agent briefs them. Returns whether they were reached and
// heard the briefing; the parent hands the caller over, or takes the turns back. A cold transfer
// bridged in a media gateway takes the same leg without the briefing (`brief: false`): reached once
// the person answers. Every request names the call the leg is of (`legOf`): a leg of a call with
// audio is dialled with audio to that call's gateway (lib/carrier/call-routing-carrier.ts).
//
//   dial ─ ringing ─┬─ answered ─ briefing ─ heard ──────────────── reached
//                   ├─ busy ──────────────────────────────────────── busy
//                   ├─ declined / no answer in 30 s ──────────────── no_answer
//                   └─ not connected, or hung up before the end ─── refused

/** Longest the person is rung (the spec's 30 s). */
const RING_MS = 30_000;
/** After the briefing's own length, a moment for a person who will not take the call to hang up. */
const AFTER_BRIEFING_MS = 1_000;

const steps = proxyLocalActivities<Pick<WarmTransferActivities, 'briefTransferTarget'>>(CALL_LIVE_STEPS);

export async function consultationLegWorkflow(input: ConsultationLegInput): Promise<ConsultationOutcome> {
  const callbacks: CarrierCallback[] = [];
  let hungUp = false;
  setHandler(carrierCallbackSignal, (callback) => {
    if (callback.type === 'hung_up') hungUp = true;
    else callbacks.push(callback);
  });
  // What the person says on this leg is not the caller's conversation: heard, not kept.
  setHandler(callerSpeechSignal, () => {});
  const failed = async (failure: WarmTransferFailure, release: 'cancel' | 'hang_up' | null) => {
    if (release) {
      await carrier
        .releaseCall({ callId: input.legId, reason: release, legOf: input.callId })
        .catch(() => undefined);
    }
    return { reached: false as const, failure };
  };

  try {
    await carrier.dial({
      callId: input.legId,
      to: input.to,
      from: input.from,
      ringTimeoutSeconds: RING_MS / 1000,
      legOf: input.callId,
    });
  } catch (error) {
    if (!failedForGood(error)) throw error;
    return failed('refused', null);
  }
  const giveUpAt = Date.now() + RING_MS;
  for (;;) {
    const left = giveUpAt - Date.now();
    if (left <= 0 || !(await condition(() => callbacks.length > 0 || hungUp, left)))
      return failed('no_answer', 'cancel');
    if (hungUp) return failed('refused', null);
    const callback = callbacks.shift()!;
    if (callback.type === 'ringing') continue;
    if (callback.type === 'answered') break;
    if (callback.type === 'busy') return failed('busy', null);
    if (callback.type === 'declined') return failed('no_answer', null);
    return failed('refused', null);
  }
  if (input.brief === false) return { reached: true, briefing: null };
  let briefing: string;
  try {
    briefing = await steps.briefTransferTarget({ callId: input.callId, legId: input.legId });
  } catch (error) {
    if (!failedForGood(error)) throw error;
    return failed('refused', 'hang_up');
  }
  // The person hears the briefing out; one who hangs up meanwhile does not take the call.
  await condition(() => hungUp, speakingSeconds(briefing) * 1000 + AFTER_BRIEFING_MS);
  if (hungUp) return failed('refused', null);
  return { reached: true, briefing };
}
