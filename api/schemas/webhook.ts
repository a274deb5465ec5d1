import { SUBSCRIBABLE_EVENT_TYPES } from '../../db/entities/index.js';
import { WEBHOOK_URL_MAX_LENGTH } from '../../lib/webhooks/url-rules.js';
import { dateTimeSchema, uuidSchema } from './common.js';

// WebhookEndpoint: bounds from the spec's Limits. The URL rules beyond its form (public https,
// no private addresses) are checked by lib/webhooks/url-rules.ts in the handler.

const fields = {
  url: {
    type: 'string',
    format: 'uri',
    minLength: 1,
    maxLength: WEBHOOK_URL_MAX_LENGTH,
    description: 'Public https URL; private and internal addresses are refused.',
  },
  events: {
    type: 'array',
    minItems: 1,
    uniqueItems: true,
    items: { enum: [...SUBSCRIBABLE_EVENT_TYPES] },
    description: 'Event types to receive (webhook.test needs no subscription).',
  },
  description: { type: 'string', maxLength: 500 },
} as const;

export const webhookCreateSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['url', 'events'],
  properties: fields,
  examples: [{ url: 'https://example.com/voice-agent/webhooks', events: ['call.completed', 'call.failed'] }],
} as const;

export const webhookUpdateSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    ...fields,
    description: { type: ['string', 'null'], maxLength: 500 },
    status: {
      enum: ['active', 'paused'],
      description:
        'paused: nothing is sent until set back to active. active also re-enables a disabled endpoint.',
    },
  },
} as const;

export const webhookTestSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    message: { type: 'string', minLength: 1, maxLength: 500, description: 'data.message of the test event.' },
  },
} as const;

const endpointProperties = {
  object: { const: 'webhook_endpoint' },
  id: uuidSchema,
  url: { type: 'string' },
  events: { type: 'array', items: { type: 'string' } },
  status: { enum: ['active', 'paused', 'disabled'] },
  description: { type: ['string', 'null'] },
  created_at: dateTimeSchema,
  updated_at: dateTimeSchema,
};
const endpointRequired = [
  'object',
  'id',
  'url',
  'events',
  'status',
  'description',
  'created_at',
  'updated_at',
];

/** As read and listed: never the secret. */
export const webhookEndpointSchema = {
  type: 'object',
  required: endpointRequired,
  additionalProperties: false,
  properties: endpointProperties,
};

/** As created and rotated: with `secret` (null in a replayed create). */
export const webhookEndpointWithSecretSchema = {
  type: 'object',
  required: [...endpointRequired, 'secret'],
  additionalProperties: false,
  properties: {
    ...endpointProperties,
    secret: { type: ['string', 'null'], pattern: '^whsec_[0-9a-f]{64}$' },
  },
};
