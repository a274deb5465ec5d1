import { ContinueAsNew, getExternalWorkflowHandle, isCancellation, log } from '@temporalio/workflow';
import { callEndedSignal } from '../lib/temporal/campaign-messages.js';
import type { CallWorkflowInput, CallWorkflowResult } from '../lib/temporal/workflow-contracts.js';
import { openCall } from './call/call-state.js';
import { connect } from './call/connect.js';
import { converse } from './call/converse.js';
import { complete, fail, finishAfterFailure } from './call/finish.js';

// One workflow per call, both directions: workflow id `call-<callId>`, task queue `calls`.
//
//   connect                        converse                                   finish
//   dial ─ ringing ─┬─ answered ─ agent joins ─ conversation ─ hang-up ─ analysis ─ completed
//                   └─ busy / declined / not connected / ring timeout ──────────────── failed
//
// Calls that come in (inbound phone, web) have nothing to dial: they are picked up
// (`answerIncoming`), then continue at "agent joins".
//
// A call is never left unfinished: a live step that fails past its retry budget ends an answered
// call `agent_error` (still analysed and completed), and a last-resort handler around the whole
// call finishes it whatever else fails (docs/calls.md, "Retry budgets").
//
// The phases live in workflows/call/: connect.ts, converse.ts, finish.ts (with the last resort),
// the call's state and its signals in call-state.ts, the activity proxies and their retry budgets
// in activity-proxies.ts. Every change there must keep the committed histories replaying
// (test/fixtures/workflow-histories/, docs/development.md "Changing a workflow"): same activities,
// timers, children, signals and upserts in the same order, or a new path behind `patched()`.

export async function callWorkflow(input: CallWorkflowInput): Promise<CallWorkflowResult> {
  const result = await runCall(input);
  // A campaign's call signals `callEnded` to its campaign when it is final.
  if (input.campaignWorkflowId) {
    await tellCampaign(input.campaignWorkflowId, input.callId);
  }
  return result;
}

/** The campaign takes its next step now; one that has ended (or never ran) needs nothing. */
async function tellCampaign(campaignWorkflowId: string, callId: string): Promise<void> {
  try {
    await getExternalWorkflowHandle(campaignWorkflowId).signal(callEndedSignal, { callId });
  } catch (error) {
    log.warn('campaign not told of the call end', { callId, campaignWorkflowId, error: `${error}` });
  }
}

async function runCall(input: CallWorkflowInput): Promise<CallWorkflowResult> {
  const call = openCall(input);
  try {
    // Queued too long without its workflow (lib/calls/expire-queued-calls.ts): never dialed.
    if (input.expired) return await fail(call, 'not_connected');
    // A long conversation's next run goes on talking (converse.ts).
    if (!input.resume) {
      const connection = await connect(call);
      if (connection !== 'connected') return await fail(call, connection);
    }
    const ending = await converse(call);
    return await complete(call, ending);
  } catch (error) {
    // Cancelling the workflow (an operator's decision) is not a failure of the call, and a long
    // conversation going on in a new run is not either.
    if (isCancellation(error) || error instanceof ContinueAsNew) throw error;
    return finishAfterFailure(call, error);
  }
}
