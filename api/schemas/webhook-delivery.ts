import { WEBHOOK_DELIVERY_ORIGINS, WEBHOOK_DELIVERY_STATUSES } from '../../db/entities/index.js';
import { dateTimeSchema, uuidSchema } from './common.js';

/**
 * What made a delivery's latest attempt: the event (`event`), POST …/test (`test`), POST …/resend
 * (`resend`) or a recovery (`recover`) for the first attempt, and `retry` for every later attempt
 * of the retry schedule. Before the first attempt it is what made the delivery.
 */
export const WEBHOOK_DELIVERY_TRIGGERS = [...WEBHOOK_DELIVERY_ORIGINS, 'retry'] as const;
export type WebhookDeliveryTrigger = (typeof WEBHOOK_DELIVERY_TRIGGERS)[number];

export const webhookDeliverySchema = {
  type: 'object',
  required: [
    'object',
    'id',
    'event_type',
    'status',
    'response_status',
    'attempts',
    'error',
    'trigger',
    'resent_from',
    'recovery_id',
    'created_at',
    'delivered_at',
  ],
  additionalProperties: false,
  properties: {
    object: { const: 'webhook_delivery' },
    id: uuidSchema,
    event_type: { type: 'string' },
    status: { enum: [...WEBHOOK_DELIVERY_STATUSES] },
    response_status: { type: ['integer', 'null'] },
    attempts: { type: 'integer' },
    error: { type: ['string', 'null'] },
    trigger: {
      enum: [...WEBHOOK_DELIVERY_TRIGGERS],
      description:
        'What made the latest attempt: event, test, resend or recover for the first attempt, retry for later ones.',
    },
    resent_from: {
      type: ['string', 'null'],
      format: 'uuid',
      description: 'For a resend or a recovered event: the delivery whose event this one sent again.',
    },
    recovery_id: {
      type: ['string', 'null'],
      format: 'uuid',
      description: 'The recovery that made this delivery, if any.',
    },
    created_at: dateTimeSchema,
    delivered_at: { type: ['string', 'null'], format: 'date-time' },
  },
};

/** Filters of GET /webhooks/{webhook_id}/deliveries, beside limit and cursor. */
export const deliveryFilterProperties = {
  status: { enum: [...WEBHOOK_DELIVERY_STATUSES], description: 'Only deliveries in this status.' },
  event_type: {
    type: 'string',
    minLength: 1,
    maxLength: 40,
    description: 'Only deliveries of this event type.',
  },
  trigger: {
    enum: [...WEBHOOK_DELIVERY_TRIGGERS],
    description: 'Only deliveries whose latest attempt was made for this reason (see trigger).',
  },
} as const;
