// Calls that come in, as a carrier delivers them: its incoming-call webhook names the number that
// was dialled and who is calling, and the service answers at once whether it takes the call.
// The simulator (`simulate inbound`, operations contract section 5) delivers them the same way.
// A taken call is then picked up by its call workflow through the carrier port (`Carrier.answer`).

/** What the carrier's incoming-call webhook carries. */
export interface IncomingPhoneCall {
  /** The workspace number that was dialled, E.164. */
  to: string;
  /** The caller's number, E.164. */
  from: string;
}

/**
 * Why a call is not taken; the carrier then rejects it (the caller hears the network's
 * "the number you have called is not available" announcement) and no Call is recorded.
 * - `unknown_number`: the number is not one of any workspace's (active) numbers;
 * - `no_agent`: the number has no agent assigned;
 * - `agent_not_published`: its agent is a draft, unpublished or archived.
 */
export type NotAnsweredReason = 'unknown_number' | 'no_agent' | 'agent_not_published';

export type IncomingCallAnswer =
  | { answered: true; callId: string }
  | { answered: false; reason: NotAnsweredReason };
