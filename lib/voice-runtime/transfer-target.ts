import { isE164 } from '../e164.js';
import type { ConversationContext } from './voice-runtime.js';

// Where a transfer may go (telephony spec section 1): the agent's `transfer_destinations`; with
// none, the call's `metadata.transfer_to` (E.164, the integrator's choice at POST /calls), else the
// deployment's `TRANSFER_NUMBER` (a front desk). The model is offered exactly these; a number the
// caller says or the model makes up is never dialled. Without a target the agent says it cannot
// transfer and the conversation goes on. Every target is checked again when the transfer is made
// (activities/calls.ts, transferCall).

/**
 * The call simulator's front desk: `TRANSFER_NUMBER`'s default while the simulator is the carrier,
 * so its "asks for a human" scenario (operations contract, 2002) transfers as the contract says.
 */
export const SIMULATED_FRONT_DESK = '+4722000100';

/** A number the call may be transferred to; `description` says what it is for (null: the call's only one). */
export interface TransferTarget {
  number: string;
  description: string | null;
}

/** The numbers this call may be transferred to, in the agent's order; empty: none. */
export function transferTargets(
  context: ConversationContext,
  transferNumber: string | null,
): TransferTarget[] {
  const destinations = context.agent.transferDestinations ?? [];
  if (destinations.length > 0) {
    return destinations.map(({ number, description }) => ({ number, description }));
  }
  const configured = configuredTransferTarget(context, transferNumber);
  return configured ? [{ number: configured, description: null }] : [];
}

/** The call's configured transfer target (`transferNumber` is TRANSFER_NUMBER), or null when it has none. */
export function configuredTransferTarget(
  context: ConversationContext,
  transferNumber: string | null,
): string | null {
  const requested = context.metadata.transfer_to;
  if (requested && isE164(requested)) return requested;
  return transferNumber;
}
