import { isE164 } from '../e164.js';
import type { ConversationContext } from './voice-runtime.js';

// Where a transfer goes when the agent has no number of its own choosing. A transfer needs a real
// target: the call's `metadata.transfer_to` (E.164), else the deployment's `TRANSFER_NUMBER` (a
// front desk). Never one of the call's own numbers: an outbound call's caller ID and an inbound
// call's dialled number both reach this agent, so a transfer there would ring it again. Without a
// target the agent says it cannot transfer and the conversation goes on.

/**
 * The call simulator's front desk: `TRANSFER_NUMBER`'s default while the simulator is the carrier,
 * so its "asks for a human" scenario (operations contract, 2002) transfers as the contract says.
 */
export const SIMULATED_FRONT_DESK = '+4722000100';

/** The call's configured transfer target (`transferNumber` is TRANSFER_NUMBER), or null when it has none. */
export function configuredTransferTarget(
  context: ConversationContext,
  transferNumber: string | null,
): string | null {
  const requested = context.metadata.transfer_to;
  if (requested && isE164(requested)) return requested;
  return transferNumber;
}
