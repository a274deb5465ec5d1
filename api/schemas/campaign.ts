import { CAMPAIGN_STATUSES, RECIPIENT_STATUSES } from '../../db/entities/index.js';
import { HH_MM_PATTERN, TIMEZONES } from '../../lib/campaigns/calling-windows.js';
import { E164_PATTERN } from '../../lib/e164.js';
import type { BodyOf } from '../http/route.js';
import { METADATA_LIMITS } from './call.js';
import { DATE_TIME_MAX_LENGTH, dateTimeSchema, E164_MAX_LENGTH, uuidSchema } from './common.js';

// Campaign and Recipient (spec campaigns-v1). What a schema cannot say (a known IANA timezone, a
// window's start before its end, `to` unique within the campaign, the merged metadata's 20 keys)
// the route checks next, with the same 400 parameter_invalid and `param`.

export const CAMPAIGN_DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export const RETRYABLE_END_REASONS = ['no_answer', 'busy', 'not_connected'] as const;
/** Recipients per request (create and add) and per campaign. */
export const RECIPIENTS_PER_REQUEST = 1000;
export const RECIPIENTS_PER_CAMPAIGN = 100_000;

export const CAMPAIGN_DEFAULTS = {
  timezone: 'UTC',
  maxConcurrentCalls: 5,
  retry: {
    max_attempts: 2,
    delay_minutes: 60,
    on: ['no_answer', 'busy'] as ('no_answer' | 'busy' | 'not_connected')[],
  },
};

const e164 = { type: 'string', pattern: E164_PATTERN, maxLength: E164_MAX_LENGTH } as const;
const hhmm = {
  type: 'string',
  pattern: HH_MM_PATTERN,
  maxLength: 5,
  description: '`HH:MM`, 24-hour.',
} as const;

const metadataSchema = {
  type: 'object',
  maxProperties: METADATA_LIMITS.maxKeys,
  propertyNames: { minLength: 1, maxLength: METADATA_LIMITS.maxKeyLength },
  additionalProperties: { type: 'string', maxLength: METADATA_LIMITS.maxValueLength },
} as const;

const windowSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['days', 'start', 'end'],
  properties: {
    days: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: [...CAMPAIGN_DAYS] } },
    start: hhmm,
    end: { ...hhmm, description: '`HH:MM`, after `start`.' },
  },
} as const;

const scheduleSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    start_at: {
      type: ['string', 'null'],
      format: 'date-time',
      maxLength: DATE_TIME_MAX_LENGTH,
      description: 'null: now.',
    },
    timezone: {
      type: 'string',
      enum: [...TIMEZONES],
      description: 'A canonical IANA name (or UTC); default UTC.',
    },
    windows: { type: 'array', maxItems: 50, items: windowSchema, description: 'Empty: any time.' },
  },
} as const;

const retrySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    max_attempts: { type: 'integer', minimum: 1, maximum: 5 },
    delay_minutes: { type: 'integer', minimum: 1, maximum: 1440 },
    on: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: [...RETRYABLE_END_REASONS] } },
  },
} as const;

export const recipientInputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['to'],
  properties: {
    to: { ...e164, description: 'E.164; unique within the campaign.' },
    metadata: metadataSchema,
  },
} as const;

const recipientsSchema = {
  type: 'array',
  minItems: 1,
  maxItems: RECIPIENTS_PER_REQUEST,
  items: recipientInputSchema,
} as const;

export const campaignCreateSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'agent_id', 'recipients'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    agent_id: uuidSchema,
    recipients: recipientsSchema,
    from: { type: ['string', 'null'], pattern: E164_PATTERN, maxLength: E164_MAX_LENGTH },
    schedule: scheduleSchema,
    max_concurrent_calls: { type: 'integer', minimum: 1, maximum: 50 },
    retry: retrySchema,
    first_message: { type: ['string', 'null'], maxLength: 500 },
    metadata: metadataSchema,
  },
} as const;

export type RecipientInput = BodyOf<typeof recipientInputSchema>;
export type CampaignCreate = BodyOf<typeof campaignCreateSchema>;

export const recipientsAddSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['recipients'],
  properties: { recipients: recipientsSchema },
} as const;

export const campaignListFilters = { status: { enum: [...CAMPAIGN_STATUSES] } } as const;
export const recipientListFilters = { status: { enum: [...RECIPIENT_STATUSES] } } as const;

const countsSchema = {
  type: 'object',
  required: ['total', 'pending', 'in_progress', 'completed', 'failed', 'canceled'],
  properties: Object.fromEntries(
    ['total', 'pending', 'in_progress', 'completed', 'failed', 'canceled'].map((k) => [
      k,
      { type: 'integer', minimum: 0 },
    ]),
  ),
};

const nullableDateTime = { type: ['string', 'null'], format: 'date-time' };

export const campaignSchema = {
  type: 'object',
  required: [
    'object',
    'id',
    'name',
    'agent_id',
    'from',
    'status',
    'paused_reason',
    'schedule',
    'max_concurrent_calls',
    'retry',
    'first_message',
    'metadata',
    'counts',
    'created_at',
    'started_at',
    'ended_at',
  ],
  properties: {
    object: { const: 'campaign' },
    id: uuidSchema,
    name: { type: 'string' },
    agent_id: uuidSchema,
    from: { type: ['string', 'null'] },
    status: { enum: [...CAMPAIGN_STATUSES] },
    paused_reason: { enum: ['requested', 'quota_exceeded', 'agent_unavailable', null] },
    schedule: {
      type: 'object',
      required: ['start_at', 'timezone', 'windows'],
      properties: {
        start_at: nullableDateTime,
        timezone: { type: 'string' },
        windows: { type: 'array', items: windowSchema },
      },
    },
    max_concurrent_calls: { type: 'integer' },
    retry: { ...retrySchema, required: ['max_attempts', 'delay_minutes', 'on'] },
    first_message: { type: ['string', 'null'] },
    metadata: { type: 'object', additionalProperties: { type: 'string' } },
    counts: countsSchema,
    created_at: dateTimeSchema,
    started_at: nullableDateTime,
    ended_at: nullableDateTime,
  },
};

export const recipientSchema = {
  type: 'object',
  required: [
    'object',
    'id',
    'to',
    'metadata',
    'status',
    'attempts',
    'call_ids',
    'last_end_reason',
    'next_attempt_at',
  ],
  properties: {
    object: { const: 'campaign_recipient' },
    id: uuidSchema,
    to: { type: 'string' },
    metadata: { type: 'object', additionalProperties: { type: 'string' } },
    status: { enum: [...RECIPIENT_STATUSES] },
    attempts: { type: 'integer', minimum: 0 },
    call_ids: { type: 'array', items: uuidSchema },
    last_end_reason: { type: ['string', 'null'] },
    next_attempt_at: nullableDateTime,
  },
};
