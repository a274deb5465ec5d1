import { DEFAULT_RING_TIMEOUT_SECONDS } from '../../lib/calls/admit-outbound-call.js';
import { E164_PATTERN } from '../../lib/e164.js';
import { dateTimeSchema, E164_MAX_LENGTH, uuidSchema } from './common.js';

// Bounds from the spec's CallCreate and Limits; the order of the checks after the schema is in
// docs/calls.md.

const e164 = { type: 'string', pattern: E164_PATTERN, maxLength: E164_MAX_LENGTH } as const;

/** Metadata keys and values are short strings; at most 20 keys. */
export const METADATA_LIMITS = { maxKeys: 20, maxKeyLength: 40, maxValueLength: 500 } as const;

export const callCreateSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['agent_id', 'to'],
  properties: {
    agent_id: uuidSchema,
    to: { ...e164, description: 'The number to call, E.164.' },
    from: { ...e164, description: "One of the agent's numbers; needed when it has several." },
    metadata: {
      type: 'object',
      maxProperties: METADATA_LIMITS.maxKeys,
      propertyNames: { minLength: 1, maxLength: METADATA_LIMITS.maxKeyLength },
      additionalProperties: { type: 'string', maxLength: METADATA_LIMITS.maxValueLength },
    },
    ring_timeout_seconds: {
      type: 'integer',
      minimum: 10,
      maximum: 120,
      default: DEFAULT_RING_TIMEOUT_SECONDS,
    },
    first_message: {
      type: 'string',
      maxLength: 500,
      description: 'Replaces the greeting for this call; "" lets the other person speak first.',
    },
  },
  examples: [
    {
      agent_id: '6f1c2b1e-8a4d-4c1e-9d3a-2b7e5f0a9c11',
      to: '+4791234567',
      metadata: { customer_id: 'c_1042', name: 'Kari' },
    },
  ],
} as const;

export const callListFilters = {
  agent_id: { ...uuidSchema, description: 'Only calls handled by this agent.' },
  direction: { type: 'string', enum: ['inbound', 'outbound'] },
  created_after: { ...dateTimeSchema, description: 'Calls started at or after this time.' },
  created_before: { ...dateTimeSchema, description: 'Calls started before this time.' },
} as const;

const nullable = (type: string) => ({ type: [type, 'null'] });

export const callAnalysisSchema = {
  type: 'object',
  required: [
    'summary',
    'outcome',
    'sentiment',
    'action_items',
    'data',
    'success',
    'success_reason',
    'created_at',
  ],
  properties: {
    summary: { type: 'string' },
    outcome: nullable('string'),
    sentiment: { enum: ['positive', 'neutral', 'negative', null] },
    action_items: { type: 'array', items: { type: 'string' } },
    data: {
      type: ['object', 'null'],
      additionalProperties: true,
      description:
        "The data the agent's analysis_plan.data_schema asked for; null without a plan, a model or a valid answer.",
    },
    success: {
      type: ['boolean', 'null'],
      description:
        "The verdict on the agent's analysis_plan.success_criteria; null without criteria or a model.",
    },
    success_reason: { type: ['string', 'null'], description: 'Why the verdict is what it is.' },
    created_at: { type: ['string', 'null'], format: 'date-time' },
  },
};

/** The transfer a call tried (telephony spec section 1); `end_reason` is `transferred` only once it connected. */
export const callTransferSchema = {
  type: 'object',
  required: ['to', 'mode', 'status', 'failure', 'started_at', 'connected_at'],
  additionalProperties: false,
  properties: {
    to: { type: 'string', description: 'E.164: where the call was to go.' },
    mode: { enum: ['cold', 'warm'] },
    status: { enum: ['connecting', 'connected', 'failed'] },
    failure: {
      enum: [null, 'busy', 'no_answer', 'refused', 'not_allowed'],
      description: 'Why it failed: not_allowed when its target failed the dialling check as it was used.',
    },
    started_at: dateTimeSchema,
    connected_at: { type: ['string', 'null'], format: 'date-time' },
  },
};

export const callSchema = {
  type: 'object',
  required: [
    'object',
    'id',
    'agent_id',
    'campaign_id',
    'direction',
    'channel',
    'status',
    'from',
    'to',
    'started_at',
    'ended_at',
    'duration_seconds',
    'end_reason',
    'metadata',
    'has_recording',
    'analysis',
    'transfer',
    'answered_by',
  ],
  properties: {
    object: { const: 'call' },
    id: uuidSchema,
    agent_id: { type: ['string', 'null'], format: 'uuid' },
    campaign_id: {
      type: ['string', 'null'],
      format: 'uuid',
      description: 'The campaign that made the call; null for every other call.',
    },
    direction: { enum: ['inbound', 'outbound'] },
    channel: { enum: ['phone', 'web'] },
    status: {
      enum: ['queued', 'ringing', 'in_progress', 'completed', 'failed', 'no_answer', 'busy', 'canceled'],
    },
    from: nullable('string'),
    to: nullable('string'),
    started_at: dateTimeSchema,
    ended_at: { type: ['string', 'null'], format: 'date-time' },
    duration_seconds: nullable('integer'),
    end_reason: nullable('string'),
    metadata: { type: 'object', additionalProperties: { type: 'string' } },
    has_recording: nullable('boolean'),
    analysis: { anyOf: [callAnalysisSchema, { type: 'null' }] },
    transfer: { anyOf: [callTransferSchema, { type: 'null' }] },
    answered_by: {
      enum: ['human', 'machine', 'unknown', null],
      description:
        'Who answered an outbound phone call with voicemail detection; null for inbound and web calls, without detection, and while undecided.',
    },
  },
};

export const transcriptSchema = {
  type: 'object',
  required: ['object', 'call_id', 'data'],
  properties: {
    object: { const: 'transcript' },
    call_id: uuidSchema,
    data: {
      type: 'array',
      items: {
        type: 'object',
        required: ['index', 'role', 'text'],
        properties: {
          index: { type: 'integer' },
          role: { enum: ['agent', 'caller'] },
          text: { type: 'string' },
        },
      },
    },
  },
};
