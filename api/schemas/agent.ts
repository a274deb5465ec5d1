import { toolSchema, toolsRequestSchema } from './agent-tool.js';
import { analysisPlanRequestSchema, analysisPlanSchema } from './analysis-plan.js';
import { BCP47_PATTERN } from './bcp47.js';
import { dateTimeSchema, uuidSchema } from './common.js';
import { transferDestinationSchema, transferDestinationsRequestSchema } from './transfer-destination.js';
import { keypadRequestSchema, keypadSchema, voicemailRequestSchema, voicemailSchema } from './voicemail.js';

// Bounds from the spec's Limits; characters are Unicode code points.

const nullable = <const S extends { type: string }>(schema: S) =>
  ({ ...schema, type: [schema.type, 'null'] }) as Omit<S, 'type'> & {
    readonly type: readonly [S['type'], 'null'];
  };

const fields = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  description: { type: 'string', maxLength: 1000 },
  language: {
    type: 'string',
    maxLength: 20,
    pattern: BCP47_PATTERN,
    description: 'A well-formed BCP 47 language tag (RFC 5646), such as nb-NO; default nb-NO.',
  },
  system_prompt: { type: 'string', maxLength: 50_000 },
  first_message: { type: 'string', maxLength: 500 },
  outbound_first_message: { type: 'string', maxLength: 500 },
  voice_id: { type: 'string', minLength: 1, maxLength: 200 },
  tools: toolsRequestSchema,
  transfer_destinations: transferDestinationsRequestSchema,
  analysis_plan: analysisPlanRequestSchema,
  voicemail: voicemailRequestSchema,
  keypad: keypadRequestSchema,
} as const;

export const agentCreateSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: fields,
  examples: [
    {
      name: 'Support',
      system_prompt: 'You help customers of Acme with their orders.',
      first_message: 'Hi, this is Acme support.',
      language: 'en-US',
    },
  ],
} as const;

export const agentUpdateSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    ...fields,
    description: nullable(fields.description),
    first_message: nullable(fields.first_message),
    outbound_first_message: nullable(fields.outbound_first_message),
  },
} as const;
const nullableString = { type: ['string', 'null'] };

export const agentSchema = {
  type: 'object',
  required: [
    'object',
    'id',
    'name',
    'description',
    'status',
    'language',
    'system_prompt',
    'first_message',
    'outbound_first_message',
    'voice',
    'llm',
    'tools',
    'transfer_destinations',
    'analysis_plan',
    'voicemail',
    'keypad',
    'created_at',
    'updated_at',
  ],
  additionalProperties: false,
  properties: {
    object: { const: 'agent' },
    id: uuidSchema,
    name: { type: 'string' },
    description: nullableString,
    status: { enum: ['draft', 'published', 'unpublished', 'archived'] },
    language: nullableString,
    system_prompt: nullableString,
    first_message: nullableString,
    outbound_first_message: nullableString,
    voice: {
      type: 'object',
      required: ['provider', 'voice_id'],
      additionalProperties: false,
      properties: { provider: nullableString, voice_id: nullableString },
    },
    llm: {
      type: 'object',
      required: ['provider', 'model'],
      additionalProperties: false,
      properties: { provider: nullableString, model: nullableString },
    },
    tools: { type: 'array', items: toolSchema },
    transfer_destinations: { type: 'array', items: transferDestinationSchema },
    analysis_plan: analysisPlanSchema,
    voicemail: voicemailSchema,
    keypad: keypadSchema,
    created_at: dateTimeSchema,
    updated_at: dateTimeSchema,
  },
};
