import { WEBHOOK_DELIVERY_STATUSES } from '../../db/entities/index.js';
import { dateTimeSchema, uuidSchema } from './common.js';

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
};
