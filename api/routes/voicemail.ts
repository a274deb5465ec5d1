import type { KeypadSettings, VoicemailSettings } from '../../db/entities/index.js';
import { parameterMissing } from '../http/errors.js';

// An agent's answering-machine and keypad settings, ready to store. `leave_message` without a
// message is refused before anything is written (400 parameter_missing at voicemail.message).

/** The setting of a request body, as the schema passed it. */
export interface VoicemailInput {
  detect?: boolean;
  action?: 'hang_up' | 'leave_message';
  message?: string | null;
}

export function voicemailToStore(input: VoicemailInput): VoicemailSettings {
  const action = input.action ?? 'hang_up';
  const message = input.message ?? null;
  if (action === 'leave_message' && message === null) {
    throw parameterMissing(
      'voicemail.message',
      'voicemail.message is required when voicemail.action is leave_message.',
    );
  }
  return { detect: input.detect ?? true, action, message };
}

export function keypadToStore(input: { send?: boolean }): KeypadSettings {
  return { send: input.send ?? false };
}
