import { WebhookDelivery, WebhookDeliveryAttempt } from '../../../db/entities/index.js';
import { resourceMissing } from '../../http/errors.js';
import { defineRoute, type RouteDefinition } from '../../http/route.js';
import { uuidParams } from '../../schemas/common.js';

// Every attempt of one delivery (status code, duration, what went wrong), for the delivery log.
// /v1 shows a delivery's latest attempt only.

const list = defineRoute({
  method: 'GET',
  path: '/webhooks/:webhook_id/deliveries/:delivery_id/attempts',
  operationId: 'listDeliveryAttempts',
  summary: "A delivery's attempts, first first.",
  scope: 'webhooks:read',
  params: uuidParams('webhook_id', 'delivery_id'),
  responses: { 200: { description: 'Attempts.' } },
  async handler(ctx, { params }) {
    const { em, auth } = ctx.state;
    const delivery = await em.findOne(
      WebhookDelivery,
      { id: params.delivery_id, endpoint: params.webhook_id, workspace: auth.workspaceId },
      { fields: ['id'] },
    );
    if (!delivery) throw resourceMissing('webhook delivery', 'delivery_id');
    const attempts = await em.find(
      WebhookDeliveryAttempt,
      { delivery: delivery.id },
      { orderBy: { attempt: 'asc' } },
    );
    return {
      status: 200,
      body: {
        object: 'list',
        data: attempts.map((a) => ({
          object: 'webhook_delivery_attempt',
          attempt: a.attempt,
          attempted_at: a.attemptedAt.toISOString(),
          duration_ms: a.durationMs,
          response_status: a.responseStatus,
          error: a.error,
          response_excerpt: a.responseExcerpt,
          trigger: a.trigger,
        })),
      },
    };
  },
});

export const deliveryAttemptRoutes: RouteDefinition[] = [list];
