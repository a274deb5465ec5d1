import {
  DEFAULT_KEYPAD,
  DEFAULT_VOICEMAIL,
  type KeypadSettings,
  type VoicemailSettings,
} from '../../db/entities/index.js';

/** An agent's answering-machine settings as the API shows them (telephony spec section 6); unset: the defaults. */
export function presentVoicemail(settings: VoicemailSettings | null) {
  const voicemail = settings ?? DEFAULT_VOICEMAIL;
  return { detect: voicemail.detect, action: voicemail.action, message: voicemail.message ?? null };
}

/** An agent's keypad settings (telephony spec section 7); unset: `{ send: false }`. */
export function presentKeypad(settings: KeypadSettings | null) {
  return { send: (settings ?? DEFAULT_KEYPAD).send };
}
