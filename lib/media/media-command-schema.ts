import { Ajv, type ErrorObject } from 'ajv';
import { E164_PATTERN } from '../e164.js';
import type { MediaCommand } from './media-control.js';

// The control API's commands (lib/media/media-control.ts) as JSON Schema, checked with ajv as the
// public API's bodies are (api/http/validation.ts): a command the gateway acts on is one of these,
// whole, and nothing else; anything else is refused (400) with what was wrong, never cast.

const index = { type: 'integer', minimum: 0 } as const;
const text = { type: 'string' } as const;

/** One command: its `type`, its fields, nothing more. */
function command(type: MediaCommand['type'], properties: Record<string, object>, optional: string[] = []) {
  return {
    type: 'object',
    properties: { type: { const: type }, ...properties },
    required: ['type', ...Object.keys(properties).filter((name) => !optional.includes(name))],
    additionalProperties: false,
  };
}

const COMMANDS = [
  command('answer', { callWorkflowId: { type: 'string', minLength: 1, maxLength: 200 } }),
  command('connect_agent', {
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
  command('sentence', { index, seq: index, text }),
  command('say', { index, text, hangUp: { type: 'boolean' } }, ['hangUp']),
  command('digits', { index, digits: { type: 'string', pattern: '^[0-9*#w]{1,32}$' } }),
  command('transfer', { to: { type: 'string', pattern: E164_PATTERN } }),
  command('release', { reason: { enum: ['hang_up', 'cancel'] } }),
  command('take_turns', {
    nextIndex: index,
    heardThrough: { type: 'integer', minimum: -1 },
    withStoredToolCalls: { type: 'boolean' },
  }),
];

export const MEDIA_COMMAND_SCHEMA = {
  type: 'object',
  required: ['type'],
  properties: { type: { enum: COMMANDS.map((schema) => schema.properties.type.const) } },
  // The type picks the one schema the rest must match, so a refusal names that command's field.
  allOf: COMMANDS.map((schema) => ({
    if: { properties: { type: { const: schema.properties.type.const } } },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then
    then: schema,
  })),
};

const validate = new Ajv({ allErrors: false, strict: false }).compile<MediaCommand>(MEDIA_COMMAND_SCHEMA);

/** The command, when the body is one; else why not (`field: what`). */
export function readMediaCommand(body: unknown): { command: MediaCommand } | { error: string } {
  if (validate(body)) return { command: body };
  return { error: describe(validate.errors?.[0]) };
}

function describe(error: ErrorObject | undefined): string {
  if (!error) return 'not a command';
  const field = error.instancePath.replace(/^\//, '').replaceAll('/', '.');
  const extra =
    error.keyword === 'additionalProperties'
      ? ` (${(error.params as { additionalProperty: string }).additionalProperty})`
      : '';
  return `${field || 'body'}: ${error.message ?? 'invalid'}${extra}`;
}
