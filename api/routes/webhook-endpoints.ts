import { randomUUID } from 'node:crypto';
import { Event, WebhookDelivery, WebhookEndpoint } from '../../db/entities/index.js';
import { generateWebhookSecret } from '../../lib/webhooks/secret.js';
import { DEFAULT_TEST_MESSAGE, recordTestEvent } from '../../lib/webhooks/test-event.js';
import { webhookUrlProblem } from '../../lib/webhooks/url-rules.js';
import { parameterInvalid, upstreamUnavailable } from '../http/errors.js';
import { linksTakingId } from '../http/links.js';
import { listQuerySchema, listSchema, paginate } from '../http/pagination.js';
import { type ApiContext, defineRoute, type RouteDefinition } from '../http/route.js';
import { storeAnswerWithWork } from '../middleware/idempotency.js';
import { presentWebhookDelivery } from '../presenters/webhook-delivery.js';
import { presentWebhookEndpoint, presentWebhookEndpointWithSecret } from '../presenters/webhook-endpoint.js';
import { deletedSchema } from '../schemas/common.js';
import {
  webhookCreateSchema,
  webhookEndpointSchema,
  webhookEndpointWithSecretSchema,
  webhookTestSchema,
  webhookUpdateSchema,
} from '../schemas/webhook.js';
import { webhookDeliverySchema } from '../schemas/webhook-delivery.js';
import {
  deliveryLinks,
  findEndpointOr404,
  endpointMissing as missing,
  ownerOrAdmin,
  startDelivery,
  webhookParams,
} from './webhook-route-parts.js';

// Webhook endpoints (docs/webhooks.md): registering, changing, removing one, rotating its secret
// and sending it a test event. Their delivery log is webhook-deliveries.ts, recoveries
// webhook-recoveries.ts.

const endpointResponse = {
  description: 'WebhookEndpoint, without the secret.',
  schema: webhookEndpointSchema,
};

async function requireAllowedUrl(ctx: ApiContext, url: string) {
  const problem = await webhookUrlProblem(url, {
    allowPrivate: ctx.state.deps.settings.webhooksAllowPrivateTargets,
  });
  if (problem) throw parameterInvalid('url', problem);
}

const list = defineRoute({
  method: 'GET',
  path: '/webhooks',
  operationId: 'listWebhooks',
  summary: 'List webhook endpoints, newest first (never with the secret).',
  scope: 'webhooks:read',
  query: listQuerySchema(),
  responses: { 200: { description: 'A page of endpoints.', schema: listSchema(webhookEndpointSchema) } },
  async handler(ctx, { query }) {
    const page = await paginate(
      ctx.state.em,
      WebhookEndpoint,
      { workspace: ctx.state.auth.workspaceId },
      query,
      {
        orderBy: 'createdAt',
        present: presentWebhookEndpoint,
      },
    );
    return { status: 200, body: page };
  },
});

const create = defineRoute({
  method: 'POST',
  path: '/webhooks',
  operationId: 'createWebhook',
  summary: 'Register an endpoint (status active). The answer holds the signing secret, shown only here.',
  scope: 'webhooks:write',
  roles: ownerOrAdmin,
  body: webhookCreateSchema,
  idempotent: true,
  responses: {
    201: {
      description: 'The endpoint with its secret (null when replayed).',
      schema: webhookEndpointWithSecretSchema,
      links: linksTakingId('webhook_id', [
        'getWebhook',
        'updateWebhook',
        'deleteWebhook',
        'rotateWebhookSecret',
        'testWebhook',
        'listWebhookDeliveries',
        'recoverWebhookDeliveries',
      ]),
    },
    400: { description: 'parameter_invalid (param url) for a URL that is not public https.' },
    409: { description: 'idempotency_key_reused or idempotency_request_in_progress.' },
  },
  async handler(ctx, { body }) {
    await requireAllowedUrl(ctx, body.url);
    const secret = generateWebhookSecret();
    // The endpoint and the answer under the Idempotency-Key commit together.
    return ctx.state.em.transactional(async (em) => {
      const endpoint = em.create(WebhookEndpoint, {
        id: randomUUID(),
        workspace: ctx.state.auth.workspaceId,
        url: body.url,
        events: body.events,
        status: 'active',
        description: body.description ?? null,
        secret,
        failingSince: null,
        disabledAt: null,
      });
      await em.flush();
      const result = {
        status: 201,
        body: presentWebhookEndpointWithSecret(endpoint, secret),
        // The secret never enters the idempotency store; a replay answers secret null.
        storedBody: presentWebhookEndpointWithSecret(endpoint, null),
      };
      await storeAnswerWithWork(em, ctx, result);
      return result;
    });
  },
});

const get = defineRoute({
  method: 'GET',
  path: '/webhooks/:webhook_id',
  operationId: 'getWebhook',
  summary: 'Get an endpoint (never with the secret).',
  scope: 'webhooks:read',
  params: webhookParams,
  responses: { 200: endpointResponse, 404: missing },
  async handler(ctx, { params }) {
    const endpoint = await findEndpointOr404(ctx.state.em, ctx.state.auth.workspaceId, params.webhook_id);
    return { status: 200, body: presentWebhookEndpoint(endpoint) };
  },
});

const update = defineRoute({
  method: 'PATCH',
  path: '/webhooks/:webhook_id',
  operationId: 'updateWebhook',
  summary:
    'Change url, events, description or status; only the fields sent change. status paused stops deliveries; active resumes, and re-enables a disabled endpoint.',
  scope: 'webhooks:write',
  roles: ownerOrAdmin,
  params: webhookParams,
  body: webhookUpdateSchema,
  responses: { 200: endpointResponse, 400: { description: 'parameter_invalid (param url).' }, 404: missing },
  async handler(ctx, { params, body }) {
    const em = ctx.state.em;
    const endpoint = await findEndpointOr404(em, ctx.state.auth.workspaceId, params.webhook_id);
    if (body.url !== undefined) {
      await requireAllowedUrl(ctx, body.url);
      endpoint.url = body.url;
    }
    if (body.events !== undefined) endpoint.events = body.events;
    if (body.description !== undefined) endpoint.description = body.description;
    if (body.status !== undefined && body.status !== endpoint.status) {
      // Leaving disabled (to active or paused) starts the failure count afresh.
      endpoint.status = body.status;
      endpoint.failingSince = null;
      endpoint.disabledAt = null;
    }
    endpoint.updatedAt = new Date();
    await em.flush();
    return { status: 200, body: presentWebhookEndpoint(endpoint) };
  },
});

const remove = defineRoute({
  method: 'DELETE',
  path: '/webhooks/:webhook_id',
  operationId: 'deleteWebhook',
  summary: 'Delete an endpoint, its secret and its delivery log; deliveries under way stop.',
  scope: 'webhooks:write',
  roles: ownerOrAdmin,
  params: webhookParams,
  responses: { 200: { description: 'Deleted', schema: deletedSchema }, 404: missing },
  async handler(ctx, { params }) {
    const em = ctx.state.em;
    const endpoint = await findEndpointOr404(em, ctx.state.auth.workspaceId, params.webhook_id);
    const id = endpoint.id;
    await em.nativeDelete(WebhookEndpoint, { id });
    return { status: 200, body: { object: 'webhook_endpoint', id, deleted: true } };
  },
});

const rotateSecret = defineRoute({
  method: 'POST',
  path: '/webhooks/:webhook_id/rotate-secret',
  operationId: 'rotateWebhookSecret',
  summary: 'Replace the signing secret at once; the next delivery attempt is signed with the new one.',
  scope: 'webhooks:write',
  roles: ownerOrAdmin,
  params: webhookParams,
  responses: {
    200: { description: 'The endpoint with its new secret.', schema: webhookEndpointWithSecretSchema },
    404: missing,
  },
  async handler(ctx, { params }) {
    const em = ctx.state.em;
    const endpoint = await findEndpointOr404(em, ctx.state.auth.workspaceId, params.webhook_id);
    endpoint.secret = generateWebhookSecret();
    endpoint.updatedAt = new Date();
    await em.flush();
    return { status: 200, body: presentWebhookEndpointWithSecret(endpoint, endpoint.secret) };
  },
});

const sendTest = defineRoute({
  method: 'POST',
  path: '/webhooks/:webhook_id/test',
  operationId: 'testWebhook',
  summary:
    'Send one signed webhook.test event to this endpoint (no subscription needed), paused and disabled ones included. Answers 202 with its delivery, pending.',
  scope: 'webhooks:write',
  roles: ownerOrAdmin,
  params: webhookParams,
  body: webhookTestSchema,
  responses: {
    202: {
      description: 'The delivery of the test event, in status pending.',
      schema: webhookDeliverySchema,
      links: deliveryLinks,
    },
    404: missing,
    503: { description: 'upstream_unavailable: the delivery could not be started; nothing was sent.' },
  },
  async handler(ctx, { params, body }) {
    const em = ctx.state.em;
    // An explicit request: paused and disabled endpoints get it too (a developer checking a receiver).
    const endpoint = await findEndpointOr404(em, ctx.state.auth.workspaceId, params.webhook_id);
    const { event, deliveryId } = await recordTestEvent(em, endpoint, body.message ?? DEFAULT_TEST_MESSAGE);
    // Read before the workflow starts, so the answer is always the pending delivery.
    const delivery = await em.findOneOrFail(WebhookDelivery, { id: deliveryId });
    try {
      await startDelivery(ctx, delivery, endpoint.url);
    } catch (error) {
      ctx.state.logger.error('webhook test delivery not started', { error, webhook_id: endpoint.id });
      await em.nativeDelete(Event, { id: event.id }); // its delivery row goes with it
      throw upstreamUnavailable('The test event could not be queued; nothing was sent. Try again.');
    }
    return { status: 202, body: presentWebhookDelivery(delivery) };
  },
});

export const webhookEndpointRoutes: RouteDefinition[] = [
  list,
  create,
  get,
  update,
  remove,
  rotateSecret,
  sendTest,
];
