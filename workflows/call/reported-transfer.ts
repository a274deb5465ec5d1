import { condition } from '@temporalio/workflow';
import type { TransferReport } from '../../lib/temporal/call-messages.js';
import { live } from './activity-proxies.js';
import type { CallState, Ending } from './call-state.js';
import { eventWith } from './steps.js';

// A cold transfer whose outcome the far end's side reports (telephony spec section 1; the SIP
// side REFERs, or dials the target itself, and reports `transfer_connected` or `transfer_failed`).
// Until the report the caller is still on the call: only a target that answered makes the call
// `transferred` and writes call.transferred; one that did not hands the turns back to the agent,
// which tells the caller and goes on.

/**
 * Longest the report is waited for: the SIP side's own longest attempt (the REFER's answer, 10 s,
 * then its outcome's NOTIFY, 45 s; or a refused REFER, then 30 s of the target ringing), the
 * callback's retries, and room to spare. No report by then: not answered.
 */
export const TRANSFER_REPORT_WAIT_MS = 75_000;

/** The transfer's ending (`transferred`), or null when the conversation goes on. */
export async function reportedTransfer(
  call: CallState,
  to: string,
  spokenUntil: number,
  say: (text: string) => Promise<void>,
): Promise<Ending | null> {
  const callerGone = () => call.hungUp !== null || call.mediaEnded || call.mediaLost;
  await condition(() => call.transferReport !== null || callerGone(), TRANSFER_REPORT_WAIT_MS);
  // A caller who hung up before the target answered was not handed over: the call ends as their hang-up.
  const report: TransferReport = call.transferReport ?? {
    connected: false,
    failure: callerGone() ? 'refused' : 'no_answer',
  };
  call.transferReport = null;
  const settled = await live.settleReportedTransfer({
    callId: call.callId,
    to,
    report,
    ...(report.connected ? eventWith(call, 'call.transferred', { transferred_to: to }) : {}),
  });
  if (report.connected) return { endReason: 'transferred', durationSeconds: spokenUntil };
  if (settled && !callerGone()) await say(settled.say);
  return null;
}
