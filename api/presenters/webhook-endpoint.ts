import type { WebhookEndpoint } from '../../db/entities/index.js';

/** The spec's WebhookEndpoint object, without the secret (reads and lists). */
export function presentWebhookEndpoint(endpoint: WebhookEndpoint) {
  return {
    object: 'webhook_endpoint',
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.events,
    status: endpoint.status,
    description: endpoint.description ?? null,
    created_at: endpoint.createdAt.toISOString(),
    updated_at: endpoint.updatedAt.toISOString(),
  };
}

/** The create and rotate-secret answers: the one time the secret is shown. */
export function presentWebhookEndpointWithSecret(endpoint: WebhookEndpoint, secret: string | null) {
  return { ...presentWebhookEndpoint(endpoint), secret };
}
