// An agent's answering-machine and keypad settings (telephony spec sections 6 and 7). That
// `leave_message` comes with a `message` is one field against another: checked by
// api/routes/voicemail.ts in the handler (400 parameter_missing at voicemail.message).

export const VOICEMAIL_MESSAGE_MAX_LENGTH = 1000;

/** `voicemail` of POST and PATCH /agents: the whole setting; a key left out takes its default. */
export const voicemailRequestSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    detect: {
      type: 'boolean',
      default: true,
      description: 'Whether the first seconds after an outbound phone call is answered decide who answered.',
    },
    action: {
      enum: ['hang_up', 'leave_message'],
      default: 'hang_up',
      description:
        'What the agent does when a machine answered: hang up at once, or leave `message` after the beep.',
    },
    message: {
      type: ['string', 'null'],
      minLength: 1,
      maxLength: VOICEMAIL_MESSAGE_MAX_LENGTH,
      description: 'What the agent says to the machine, {{variables}} filled; required for leave_message.',
    },
  },
  description:
    'Answering-machine detection for outbound phone calls; the call says who answered (answered_by).',
} as const;

export const voicemailSchema = {
  type: 'object',
  required: ['detect', 'action', 'message'],
  additionalProperties: false,
  properties: {
    detect: { type: 'boolean' },
    action: { enum: ['hang_up', 'leave_message'] },
    message: { type: ['string', 'null'] },
  },
} as const;

/** `keypad` of POST and PATCH /agents. */
export const keypadRequestSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    send: {
      type: 'boolean',
      default: false,
      description: 'Whether the model is offered send_digits, to press keys on the call (a phone menu).',
    },
  },
  description: 'The telephone keypad: whether the agent may press keys.',
} as const;

export const keypadSchema = {
  type: 'object',
  required: ['send'],
  additionalProperties: false,
  properties: { send: { type: 'boolean' } },
} as const;
