// Calls that come in, as a carrier delivers them: its incoming-call webhook names the number that
// was dialled and who is calling, and the service answers at once whether it takes the call.
// The simulator (`simulate inbound`, operations contract section 5) delivers them the same way.
// A taken call is then picked up by its call workflow through the carrier port (`Carrier.answer`).

/** What the carrier's incoming-call webhook carries. */
export interface IncomingPhoneCall {
  /** The workspace number that was dialled, E.164. */
  to: string;
  /** The caller's number, E.164; null when the network does not say (a withheld number). */
  from: string | null;
}

/**
 * Why a call is not taken; the carrier then rejects it and no Call is recorded. The caller hears
 * the network's "the number you have called is not available" announcement, or for
 * `trial_line_busy` the busy tone.
 * - `unknown_number`: the number is not one of any workspace's (active) numbers;
 * - `no_agent`: the number has no agent assigned;
 * - `agent_not_published`: its agent is a draft, unpublished or archived;
 * - `quota_exceeded`: the workspace used its call minutes of the month (lib/calls/admit-to-workspace.ts);
 * - `trial_line_busy`: a trial workspace already has a call on its one line.
 * (`call_rate_limited` and `call_daily_limit` pace dialing out; they never refuse a call that comes in.)
 */
export type NotAnsweredReason =
  | 'unknown_number'
  | 'no_agent'
  | 'agent_not_published'
  | 'quota_exceeded'
  | 'trial_line_busy'
  | 'call_rate_limited'
  | 'call_daily_limit';

export type IncomingCallAnswer =
  | { answered: true; callId: string }
  | { answered: false; reason: NotAnsweredReason };
