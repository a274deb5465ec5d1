import type { WebhookRecovery } from '../../db/entities/index.js';

/** A recovery of an endpoint's failed deliveries (POST /webhooks/{id}/recover). */
export function presentWebhookRecovery(recovery: WebhookRecovery) {
  return {
    object: 'webhook_recovery',
    id: recovery.id,
    webhook_id: recovery.endpoint,
    status: recovery.status,
    stop_reason: recovery.stopReason ?? null,
    since: recovery.since.toISOString(),
    until: recovery.until?.toISOString() ?? null,
    events_total: recovery.eventsTotal,
    events_sent: recovery.eventsSent,
    created_at: recovery.createdAt.toISOString(),
    completed_at: recovery.completedAt?.toISOString() ?? null,
  };
}
