import type { EntityManager } from '@mikro-orm/postgresql';
import { type WebhookDelivery, WebhookEndpoint } from '../../db/entities/index.js';
import { startWebhookDelivery } from '../../lib/webhooks/test-event.js';
import { resourceMissing } from '../http/errors.js';
import { linksTakingId } from '../http/links.js';
import type { ApiContext } from '../http/route.js';
import { startWorkflowInRequest } from '../http/temporal-request.js';
import { uuidParams } from '../schemas/common.js';

// What the webhook routes share (webhook-endpoints.ts, webhook-deliveries.ts,
// webhook-recoveries.ts): every one of them is about one endpoint of the workspace.

export type WebhookParams = { webhook_id: string };
export const webhookParams = uuidParams('webhook_id');
/** Adding, changing, testing, removing, rotating, resending and recovering. */
export const ownerOrAdmin: ('owner' | 'admin')[] = ['owner', 'admin'];
export const endpointMissing = {
  description: 'resource_missing: no such webhook endpoint in the workspace.',
};
/** A delivery the answer returns can be resent (a delivery has no webhook_id of its own). */
export const deliveryLinks = linksTakingId('delivery_id', ['resendWebhookDelivery'], {
  webhook_id: '$request.path.webhook_id',
});

export async function findEndpointOr404(em: EntityManager, workspaceId: string, id: string) {
  const endpoint = await em.findOne(WebhookEndpoint, { id, workspace: workspaceId });
  if (!endpoint) throw resourceMissing('webhook endpoint', 'webhook_id');
  return endpoint;
}

/** Starts a delivery's workflow, or finds it started (its id is the delivery's). */
export async function startDelivery(
  ctx: ApiContext,
  delivery: Pick<WebhookDelivery, 'id' | 'event' | 'eventType'>,
  endpointUrl: string,
): Promise<void> {
  const about = { eventId: delivery.event, eventType: delivery.eventType, endpointUrl };
  await startWorkflowInRequest(ctx.state.deps, (client, settings) =>
    startWebhookDelivery(client, settings, delivery.id, about),
  );
}
