import {
  executeChild,
  ParentClosePolicy,
  proxyActivities,
  proxyLocalActivities,
  uuid4,
} from '@temporalio/workflow';
import type { WarmTransferActivities } from '../../activities/warm-transfer.js';
import {
  CONSULTATION_LEG_WORKFLOW,
  type ConsultationLegWorkflow,
  type ConsultationOutcome,
  callWorkflowId,
} from '../../lib/temporal/workflow-contracts.js';
import { CALL_LIVE_STEPS, CALL_LIVE_STEPS_RECORDED } from '../activity-options.js';
import { carrier } from './activity-proxies.js';
import type { CallState, Ending } from './call-state.js';
import { eventWith, failedForGood } from './steps.js';

// A warm transfer (telephony spec section 8): the caller hears that they are being connected, the
// person is rung on a consultation leg (a child workflow, workflows/consultation-leg-workflow.ts)
// and briefed by the agent; then the caller is handed over to them and the agent leaves. When the
// person is busy, does not answer within 30 s or hangs up before the hand-over, the transfer is
// `failed`, the agent tells the caller and the conversation goes on.
// A call whose audio a media gateway holds is joined to the person there (`bridged`), and a cold
// transfer of such a call takes the same steps without the briefing: the transfer is `connected`
// only once the person answered (telephony spec section 1).

const steps =
  proxyLocalActivities<Pick<WarmTransferActivities, 'connectWarmTransfer' | 'failWarmTransfer'>>(
    CALL_LIVE_STEPS,
  );
/** Joining in the gateway is recorded before it runs: its effect outlives a workflow task that fails. */
const recordedSteps =
  proxyActivities<Pick<WarmTransferActivities, 'connectWarmTransfer'>>(CALL_LIVE_STEPS_RECORDED);

/** The transfer's ending (`transferred`), or null when the conversation goes on. */
export async function warmTransfer(
  call: CallState,
  to: string,
  holdLine: string | null,
  say: (text: string) => Promise<void>,
  how: { mode: 'cold' | 'warm'; bridged: boolean } = { mode: 'warm', bridged: false },
): Promise<Ending | null> {
  const { mode, bridged } = how;
  if (holdLine) await say(holdLine);
  const legId = uuid4();
  const own = call.input.direction === 'outbound' ? call.input.from : call.input.to;
  let outcome: ConsultationOutcome;
  try {
    outcome = await executeChild<ConsultationLegWorkflow>(CONSULTATION_LEG_WORKFLOW, {
      // From the call's id, not this run's workflow id: a replayed history names the same child.
      workflowId: `${callWorkflowId(call.callId)}-consult-${legId}`,
      args: [{ callId: call.callId, legId, to, from: own, ...(mode === 'cold' ? { brief: false } : {}) }],
      // The call ending ends its consultation leg too.
      parentClosePolicy: ParentClosePolicy.TERMINATE,
    });
  } catch (error) {
    if (!failedForGood(error)) throw error;
    outcome = { reached: false, failure: 'refused' };
  }
  const callerGone = isCallerGone(call);
  if (outcome.reached && callerGone) {
    // Nobody left to hand over: the person briefed is let go, the call ends as the caller's hang-up does.
    await carrier
      .releaseCall({ callId: legId, reason: 'hang_up', legOf: call.callId })
      .catch(() => undefined);
    await steps.failWarmTransfer({ callId: call.callId, to, failure: 'refused', ...modeOf(how) });
    return null;
  }
  if (!outcome.reached) {
    const failure = outcome.failure;
    const line = await steps.failWarmTransfer({ callId: call.callId, to, failure, ...modeOf(how) });
    if (!callerGone) await say(line);
    return null;
  }
  const connected = await (bridged ? recordedSteps : steps).connectWarmTransfer({
    callId: call.callId,
    legId,
    to,
    ...(bridged ? { bridged, mode } : {}),
    ...eventWith(call, 'call.transferred', { transferred_to: to }),
  });
  // A bridge that found the person (or the caller) gone just now: not connected, the call goes on.
  if (connected === false) {
    await carrier
      .releaseCall({ callId: legId, reason: 'hang_up', legOf: call.callId })
      .catch(() => undefined);
    const line = await steps.failWarmTransfer({
      callId: call.callId,
      to,
      failure: 'refused',
      ...modeOf(how),
    });
    if (!isCallerGone(call)) await say(line);
    return null;
  }
  return { endReason: 'transferred', durationSeconds: call.spokenSoFar() };
}

/** The caller hung up, or their audio is over: nobody left to say anything to or hand over. */
function isCallerGone(call: CallState): boolean {
  return call.hungUp !== null || call.mediaEnded || call.mediaLost;
}

/** The transfer's mode for its record, when not the warm transfer's own (histories before it named none). */
function modeOf(how: { mode: 'cold' | 'warm' }): { mode?: 'cold' } {
  return how.mode === 'cold' ? { mode: 'cold' } : {};
}
