import { Call, Event, WebhookDelivery, WebhookEndpoint } from '../../../db/entities/index.js';
import { resourceMissing } from '../../http/errors.js';
import { defineRoute, type RouteDefinition } from '../../http/route.js';
import { presentWebhookDelivery } from '../../presenters/webhook-delivery.js';
import { uuidParams } from '../../schemas/common.js';

// The events a call produced and each one's deliveries to the workspace's endpoints, for the call
// page. /v1 lists deliveries per endpoint only; this is the same data seen from the call.

const list = defineRoute({
  method: 'GET',
  path: '/calls/:call_id/events',
  operationId: 'listCallEvents',
  summary: "The call's events, each with its webhook deliveries.",
  scope: 'webhooks:read',
  params: uuidParams('call_id'),
  responses: { 200: { description: 'Events, oldest first.' } },
  async handler(ctx, { params }) {
    const { em, auth } = ctx.state;
    const call = await em.findOne(
      Call,
      { id: params.call_id, workspace: auth.workspaceId },
      { fields: ['id'] },
    );
    if (!call) throw resourceMissing('call', 'call_id');
    const events = await em.find(Event, { call: call.id }, { orderBy: { createdAt: 'asc' } });
    const deliveries = events.length
      ? await em.find(
          WebhookDelivery,
          { event: { $in: events.map((e) => e.id) } },
          { orderBy: { createdAt: 'asc', id: 'asc' } },
        )
      : [];
    const endpoints = deliveries.length
      ? await em.find(WebhookEndpoint, { id: { $in: [...new Set(deliveries.map((d) => d.endpoint))] } })
      : [];
    const urlOf = new Map(endpoints.map((e) => [e.id, e.url]));
    return {
      status: 200,
      body: {
        object: 'list',
        data: events.map((event) => ({
          object: 'event',
          id: event.id,
          type: event.type,
          created_at: event.createdAt.toISOString(),
          deliveries: deliveries
            .filter((d) => d.event === event.id)
            .map((d) => ({
              ...presentWebhookDelivery(d),
              webhook_id: d.endpoint,
              url: urlOf.get(d.endpoint) ?? null,
            })),
        })),
      },
    };
  },
});

export const callEventsSentRoutes: RouteDefinition[] = [list];
