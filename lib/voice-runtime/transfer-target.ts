import { isE164 } from '../e164.js';
import type { ConversationContext } from './voice-runtime.js';

// Where a transfer goes when the agent has no number of its own choosing. A transfer needs a real
// target: the call's `metadata.transfer_to` (E.164), or on a call that came in the number the
// caller dialled (a hunt group behind it, docs/calls.md). An outbound call has no such number: its
// caller ID is this service's own, and a transfer there would ring the agent again. Without a
// target the agent says it cannot transfer and the conversation goes on.

/** The call's configured transfer target, or null when it has none. */
export function configuredTransferTarget(context: ConversationContext): string | null {
  const requested = context.metadata.transfer_to;
  if (requested && isE164(requested)) return requested;
  return context.direction === 'inbound' ? context.ownNumber : null;
}
