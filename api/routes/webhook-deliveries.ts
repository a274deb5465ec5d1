import type { FilterQuery } from '@mikro-orm/core';
import { WebhookDelivery, WebhookEndpoint } from '../../db/entities/index.js';
import { recordResend } from '../../lib/webhooks/deliveries.js';
import { resourceMissing, upstreamUnavailable } from '../http/errors.js';
import { listQuerySchema, listSchema, type PageQuery, paginate } from '../http/pagination.js';
import { defineRoute, type RouteDefinition } from '../http/route.js';
import { storeAnswerWithWork, withdrawAnswerWithWork } from '../middleware/idempotency.js';
import { presentWebhookDelivery } from '../presenters/webhook-delivery.js';
import { uuidParams } from '../schemas/common.js';
import {
  deliveryFilterProperties,
  type WebhookDeliveryTrigger,
  webhookDeliverySchema,
} from '../schemas/webhook-delivery.js';
import {
  deliveryLinks,
  findEndpointOr404,
  endpointMissing as missing,
  ownerOrAdmin,
  startDelivery,
  type WebhookParams,
  webhookParams,
} from './webhook-route-parts.js';

// An endpoint's delivery log (docs/webhooks.md): one entry per delivery, and resending one.

type DeliveryParams = WebhookParams & { delivery_id: string };
type DeliveriesQuery = PageQuery & { status?: string; event_type?: string; trigger?: WebhookDeliveryTrigger };

const deliveries = defineRoute({
  method: 'GET',
  path: '/webhooks/:webhook_id/deliveries',
  operationId: 'listWebhookDeliveries',
  summary:
    'The delivery log of an endpoint, newest first: one entry per delivery (an event, a test, a resend or a recovered event), updated on every attempt.',
  scope: 'webhooks:read',
  params: webhookParams,
  query: listQuerySchema(deliveryFilterProperties),
  responses: {
    200: { description: 'A page of deliveries.', schema: listSchema(webhookDeliverySchema) },
    404: missing,
  },
  async handler(ctx, { params, query }) {
    const em = ctx.state.em;
    const endpoint = await findEndpointOr404(em, ctx.state.auth.workspaceId, params.webhook_id);
    const where: FilterQuery<WebhookDelivery> = {
      endpoint: endpoint.id,
      ...(query.status ? { status: query.status as WebhookDelivery['status'] } : {}),
      ...(query.event_type ? { eventType: query.event_type } : {}),
      // trigger is derived (deliveryTrigger): retry = a later attempt, else the origin's first.
      ...(query.trigger === 'retry'
        ? { attempts: { $gte: 2 } }
        : query.trigger
          ? { origin: query.trigger, attempts: { $lte: 1 } }
          : {}),
    };
    const page = await paginate(em, WebhookDelivery, where, query, {
      orderBy: 'createdAt',
      present: presentWebhookDelivery,
    });
    return { status: 200, body: page };
  },
});

const resend = defineRoute({
  method: 'POST',
  path: '/webhooks/:webhook_id/deliveries/:delivery_id/resend',
  operationId: 'resendWebhookDelivery',
  summary:
    "Send that delivery's event again (same event id and bytes, signed with the current secret) as a new delivery linked to it by resent_from. Any status; paused and disabled endpoints included.",
  scope: 'webhooks:write',
  roles: ownerOrAdmin,
  params: uuidParams('webhook_id', 'delivery_id'),
  idempotent: true,
  responses: {
    202: {
      description: 'The new delivery, in status pending, trigger resend.',
      schema: webhookDeliverySchema,
      links: deliveryLinks,
    },
    404: {
      description:
        'resource_missing: no such endpoint (param webhook_id) or no such delivery of it (param delivery_id).',
    },
    409: { description: 'idempotency_key_reused or idempotency_request_in_progress.' },
    503: {
      description: 'upstream_unavailable: the delivery could not be started; nothing was recorded or sent.',
    },
  },
  async handler(ctx, { params }) {
    const em = ctx.state.em;
    const endpoint = await findEndpointOr404(em, ctx.state.auth.workspaceId, params.webhook_id);
    const original = await em.findOne(WebhookDelivery, { id: params.delivery_id, endpoint: endpoint.id });
    if (!original) throw resourceMissing('delivery of this webhook endpoint', 'delivery_id');
    // The delivery and the answer under the Idempotency-Key commit together; the start follows.
    const { delivery, answer } = await em.transactional(async (tx) => {
      const delivery = await recordResend(tx, original);
      const answer = { status: 202, body: presentWebhookDelivery(delivery) };
      await storeAnswerWithWork(tx, ctx, answer, { resourceId: delivery.id, confirmed: false });
      return { delivery, answer };
    });
    try {
      await startDelivery(ctx, delivery, endpoint.url);
    } catch (error) {
      ctx.state.logger.error('webhook resend not started', { error, webhook_id: endpoint.id });
      await em.transactional(async (tx) => {
        await tx.nativeDelete(WebhookDelivery, { id: delivery.id });
        await withdrawAnswerWithWork(tx, ctx);
      });
      throw upstreamUnavailable(
        'The event could not be queued again; nothing was recorded or sent. Try again.',
      );
    }
    return answer;
  },
  async resume(ctx, committed) {
    // The first request recorded the delivery and stopped before its workflow was confirmed.
    const delivery = await ctx.state.em.findOneOrFail(WebhookDelivery, { id: committed.resourceId! });
    const endpoint = await ctx.state.em.findOneOrFail(WebhookEndpoint, { id: delivery.endpoint });
    await startDelivery(ctx, delivery, endpoint.url).catch((error) => {
      ctx.state.logger.error('webhook resend not started', { error, delivery_id: committed.resourceId });
      throw upstreamUnavailable('The resend could not be queued yet; retry with the same Idempotency-Key.');
    });
  },
});

export const webhookDeliveryRoutes: RouteDefinition[] = [deliveries, resend];
