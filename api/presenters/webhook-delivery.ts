import type { WebhookDelivery } from '../../db/entities/index.js';

/** The spec's WebhookDelivery object: one event to one endpoint, with its latest attempt. */
export function presentWebhookDelivery(delivery: WebhookDelivery) {
  return {
    object: 'webhook_delivery',
    id: delivery.id,
    event_type: delivery.eventType,
    status: delivery.status,
    response_status: delivery.responseStatus ?? null,
    attempts: delivery.attempts,
    error: delivery.error ?? null,
    created_at: delivery.createdAt.toISOString(),
    delivered_at: delivery.deliveredAt?.toISOString() ?? null,
  };
}
