import {
  executeChild,
  ParentClosePolicy,
  proxyLocalActivities,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { WarmTransferActivities } from '../../activities/warm-transfer.js';
import {
  CONSULTATION_LEG_WORKFLOW,
  type ConsultationLegWorkflow,
  type ConsultationOutcome,
  callWorkflowId,
} from '../../lib/temporal/workflow-contracts.js';
import { CALL_LIVE_STEPS } from '../activity-options.js';
import { carrier } from './activity-proxies.js';
import type { CallState, Ending } from './call-state.js';
import { eventWith, failedForGood } from './steps.js';

// A warm transfer (telephony spec section 8): the caller hears that they are being connected, the
// person is rung on a consultation leg (a child workflow, workflows/consultation-leg-workflow.ts)
// and briefed by the agent; then the caller is handed over to them and the agent leaves. When the
// person is busy, does not answer within 30 s or hangs up before the hand-over, the transfer is
// `failed`, the agent tells the caller and the conversation goes on.

const steps =
  proxyLocalActivities<Pick<WarmTransferActivities, 'connectWarmTransfer' | 'failWarmTransfer'>>(
    CALL_LIVE_STEPS,
  );

/** The transfer's ending (`transferred`), or null when the conversation goes on. */
export async function warmTransfer(
  call: CallState,
  to: string,
  holdLine: string | null,
  say: (text: string) => Promise<void>,
): Promise<Ending | null> {
  if (holdLine) await say(holdLine);
  const legId = uuid4();
  const own = call.input.direction === 'outbound' ? call.input.from : call.input.to;
  let outcome: ConsultationOutcome;
  try {
    outcome = await executeChild<ConsultationLegWorkflow>(CONSULTATION_LEG_WORKFLOW, {
      // From the call's id, not this run's workflow id: a replayed history names the same child.
      workflowId: `${callWorkflowId(call.callId)}-consult-${legId}`,
      args: [{ callId: call.callId, legId, to, from: own }],
      // The call ending ends its consultation leg too.
      parentClosePolicy: ParentClosePolicy.TERMINATE,
    });
  } catch (error) {
    if (!failedForGood(error)) throw error;
    outcome = { reached: false, failure: 'refused' };
  }
  const callerGone = call.hungUp !== null || call.mediaEnded || call.mediaLost;
  if (outcome.reached && callerGone) {
    // Nobody left to hand over: the person briefed is let go, the call ends as the caller's hang-up does.
    await carrier.releaseCall({ callId: legId, reason: 'hang_up' }).catch(() => undefined);
    await steps.failWarmTransfer({ callId: call.callId, to, failure: 'refused' });
    return null;
  }
  if (!outcome.reached) {
    const line = await steps.failWarmTransfer({ callId: call.callId, to, failure: outcome.failure });
    if (!callerGone) await say(line);
    return null;
  }
  await steps.connectWarmTransfer({
    callId: call.callId,
    legId,
    to,
    ...eventWith(call, 'call.transferred', { transferred_to: to }),
  });
  return { endReason: 'transferred', durationSeconds: call.spokenSoFar() };
}
