import type { TransferFailure } from '../temporal/call-messages.js';
import { messageOfType, typedMessageReader } from './typed-messages.js';

// The SIP side's callbacks to the gateway's control port (sip/callbacks.go →
// media/carrier-callbacks.ts) as JSON Schema: a callback the gateway acts on is one of these, whole
// (lib/media/typed-messages.ts); anything else is a 400.

/** A bridged transfer leg lasts at most TRANSFER_MAX_MINUTES (at most a day). */
export const MAX_TRANSFER_SECONDS = 24 * 60 * 60;

export type SipCallback =
  | { type: 'ringing' | 'busy' | 'declined' | 'not_connected' | 'transfer_connected' }
  /** `speaking`: whether the far end spoke as it answered, when the carrier can tell. */
  | { type: 'answered'; speaking?: boolean }
  /** How long the SIP side bridged the call to its transfer target. */
  | { type: 'transfer_ended'; seconds: number }
  | { type: 'transfer_failed'; failure: TransferFailure };

const read = typedMessageReader<SipCallback>([
  messageOfType('ringing'),
  messageOfType('answered', { speaking: { type: 'boolean' } }, ['speaking']),
  messageOfType('busy'),
  messageOfType('declined'),
  messageOfType('not_connected'),
  messageOfType('transfer_ended', { seconds: { type: 'number', minimum: 0, maximum: MAX_TRANSFER_SECONDS } }),
  messageOfType('transfer_connected'),
  messageOfType('transfer_failed', { failure: { enum: ['busy', 'no_answer', 'refused'] } }),
]);

/** The callback, when the body is one; else why not (`field: what`). */
export function readSipCallback(body: unknown): { callback: SipCallback } | { error: string } {
  const checked = read(body);
  return 'message' in checked ? { callback: checked.message } : checked;
}
