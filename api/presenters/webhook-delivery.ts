import type { WebhookDelivery } from '../../db/entities/index.js';
import type { WebhookDeliveryTrigger } from '../schemas/webhook-delivery.js';

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
    trigger: deliveryTrigger(delivery),
    resent_from: delivery.resentFrom ?? null,
    recovery_id: delivery.recovery ?? null,
    created_at: delivery.createdAt.toISOString(),
    delivered_at: delivery.deliveredAt?.toISOString() ?? null,
  };
}

/** What made the latest attempt: the delivery's origin for the first, `retry` for later ones. */
export function deliveryTrigger(
  delivery: Pick<WebhookDelivery, 'attempts' | 'origin'>,
): WebhookDeliveryTrigger {
  return delivery.attempts >= 2 ? 'retry' : delivery.origin;
}
