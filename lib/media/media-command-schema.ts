import { E164_PATTERN } from '../e164.js';
import type { MediaCommand, MediaCommandAnswers } from './media-control.js';
import { messageOfType, schemaReader, typedMessageReader } from './typed-messages.js';

// The control API's commands (lib/media/media-control.ts) as JSON Schema: a command the gateway
// acts on is one of these, whole (lib/media/typed-messages.ts); anything else is a 400.

const index = { type: 'integer', minimum: 0 } as const;
const text = { type: 'string' } as const;
const uuid = { type: 'string', pattern: '^[0-9a-f-]{36}$' } as const;

const COMMANDS = [
  messageOfType('answer', { callWorkflowId: { type: 'string', minLength: 1, maxLength: 200 } }),
  messageOfType('connect_agent', {
    opening: {
      oneOf: [
        { type: 'null' },
        {
          type: 'object',
          properties: { index, text },
          required: ['index', 'text'],
          additionalProperties: false,
        },
      ],
    },
  }),
  messageOfType('sentence', { index, seq: index, text }),
  messageOfType('say', { index, text, hangUp: { type: 'boolean' } }, ['hangUp']),
  messageOfType('digits', { index, digits: { type: 'string', pattern: '^[0-9*#w]{1,32}$' } }),
  messageOfType(
    'transfer',
    {
      to: { type: 'string', pattern: E164_PATTERN },
      mode: { enum: ['cold', 'warm'] },
      bridgeable: { type: 'boolean' },
    },
    ['mode', 'bridgeable'],
  ),
  messageOfType('release', { reason: { enum: ['hang_up', 'cancel'] } }),
  messageOfType('take_turns', {
    nextIndex: index,
    heardThrough: { type: 'integer', minimum: -1 },
    withStoredToolCalls: { type: 'boolean' },
  }),
  messageOfType('expect_leg', {
    legId: uuid,
    legWorkflowId: { type: 'string', minLength: 1, maxLength: 200 },
  }),
  messageOfType('bridge', { legId: uuid }),
];

const read = typedMessageReader<MediaCommand>(COMMANDS);

/** The command, when the body is one; else why not (`field: what`). */
export function readMediaCommand(body: unknown): { command: MediaCommand } | { error: string } {
  const checked = read(body);
  return 'message' in checked ? { command: checked.message } : checked;
}

/** The answers, one schema per command type: exactly these fields, nothing more. */
const answer = (properties: Record<string, object> = {}) => ({
  type: 'object',
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});
const ANSWERS: {
  [T in MediaCommand['type']]: (body: unknown) => { message: MediaCommandAnswers[T] } | { error: string };
} = {
  answer: schemaReader(answer()),
  connect_agent: schemaReader(answer()),
  sentence: schemaReader(answer()),
  say: schemaReader(answer({ firstAudioAt: { type: ['number', 'null'] } })),
  digits: schemaReader(answer()),
  transfer: schemaReader(answer({ transfer: { enum: ['reported', 'handed_over', 'bridge', 'refused'] } })),
  release: schemaReader(answer()),
  take_turns: schemaReader(answer({ turns: { enum: ['taken', 'not_now', 'never'] } })),
  expect_leg: schemaReader(answer()),
  bridge: schemaReader(answer({ bridged: { type: 'boolean' } })),
};

/** The gateway's answer to a command of `type`, when the body is one; else why not. */
export function readMediaCommandAnswer<T extends MediaCommand['type']>(
  type: T,
  body: unknown,
): { answer: MediaCommandAnswers[T] } | { error: string } {
  const checked = ANSWERS[type](body);
  return 'message' in checked ? { answer: checked.message as MediaCommandAnswers[T] } : checked;
}
