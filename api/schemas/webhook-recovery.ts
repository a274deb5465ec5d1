import { WEBHOOK_RECOVERY_STATUSES, WEBHOOK_RECOVERY_STOP_REASONS } from '../../db/entities/index.js';
import { RECOVERY_WINDOW_DAYS } from '../../lib/webhooks/recovery.js';
import { DATE_TIME_MAX_LENGTH, dateTimeSchema, uuidSchema } from './common.js';

// POST /webhooks/{webhook_id}/recover and the WebhookRecovery it answers (docs/webhooks.md).

export const webhookRecoverSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['since'],
  properties: {
    since: {
      type: 'string',
      format: 'date-time',
      maxLength: DATE_TIME_MAX_LENGTH,
      description: `Start of the period (event time): at most ${RECOVERY_WINDOW_DAYS} days back, not in the future.`,
    },
    until: {
      type: 'string',
      format: 'date-time',
      maxLength: DATE_TIME_MAX_LENGTH,
      description: 'End of the period, not before since (default: the time of the request).',
    },
  },
} as const;

export const webhookRecoverySchema = {
  type: 'object',
  required: [
    'object',
    'id',
    'webhook_id',
    'status',
    'stop_reason',
    'since',
    'until',
    'events_total',
    'events_sent',
    'created_at',
    'completed_at',
  ],
  additionalProperties: false,
  properties: {
    object: { const: 'webhook_recovery' },
    id: uuidSchema,
    webhook_id: uuidSchema,
    status: {
      enum: [...WEBHOOK_RECOVERY_STATUSES],
      description:
        'running; completed when every event was sent again; stopped when the endpoint stopped it.',
    },
    stop_reason: {
      enum: [...WEBHOOK_RECOVERY_STOP_REASONS, null],
      description: 'Why a stopped recovery stopped; null otherwise.',
    },
    since: dateTimeSchema,
    until: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'As requested; null: up to the request.',
    },
    events_total: {
      type: 'integer',
      description: 'Events to send again, fixed when the recovery was requested.',
    },
    events_sent: { type: 'integer', description: 'Events sent again so far (each has a new delivery).' },
    created_at: dateTimeSchema,
    completed_at: { type: ['string', 'null'], format: 'date-time' },
  },
};
