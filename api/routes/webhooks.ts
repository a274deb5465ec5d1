import { randomUUID } from 'node:crypto';
import { type FilterQuery, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { Event, WebhookDelivery, WebhookEndpoint, WebhookRecovery } from '../../db/entities/index.js';
import { recordResend } from '../../lib/webhooks/deliveries.js';
import {
  createRecovery,
  endUnstartedRecovery,
  RECOVERY_WINDOW_DAYS,
  RECOVERY_WINDOW_MS,
  startWebhookRecovery,
} from '../../lib/webhooks/recovery.js';
import { RECOVERY_EVENTS_PER_SECOND } from '../../lib/webhooks/retry-schedule.js';
import { generateWebhookSecret } from '../../lib/webhooks/secret.js';
import {
  DEFAULT_TEST_MESSAGE,
  recordTestEvent,
  startWebhookDelivery,
} from '../../lib/webhooks/test-event.js';
import { webhookUrlProblem } from '../../lib/webhooks/url-rules.js';
import {
  ApiError,
  parameterInvalid,
  resourceMissing,
  unprocessable,
  upstreamUnavailable,
} from '../http/errors.js';
import { linksTakingId } from '../http/links.js';
import { listQuerySchema, listSchema, paginate } from '../http/pagination.js';
import { type ApiContext, defineRoute, type RouteDefinition } from '../http/route.js';
import { withTimeout } from '../http/with-timeout.js';
import { storeAnswerWithWork, withdrawAnswerWithWork } from '../middleware/idempotency.js';
import { presentWebhookDelivery } from '../presenters/webhook-delivery.js';
import { presentWebhookEndpoint, presentWebhookEndpointWithSecret } from '../presenters/webhook-endpoint.js';
import { presentWebhookRecovery } from '../presenters/webhook-recovery.js';
import { deletedSchema, uuidParams } from '../schemas/common.js';
import {
  webhookCreateSchema,
  webhookEndpointSchema,
  webhookEndpointWithSecretSchema,
  webhookTestSchema,
  webhookUpdateSchema,
} from '../schemas/webhook.js';
import { deliveryFilterProperties, webhookDeliverySchema } from '../schemas/webhook-delivery.js';
import { webhookRecoverSchema, webhookRecoverySchema } from '../schemas/webhook-recovery.js';

// Webhook endpoints and their delivery log (docs/webhooks.md). Adding, changing, testing,
// removing, rotating, resending and recovering need a key made by an owner or admin.

const webhookParams = uuidParams('webhook_id');
const ownerOrAdmin: ('owner' | 'admin')[] = ['owner', 'admin'];
const missing = { description: 'resource_missing: no such webhook endpoint in the workspace.' };
const endpointResponse = {
  description: 'WebhookEndpoint, without the secret.',
  schema: webhookEndpointSchema,
};
const WORKFLOW_START_TIMEOUT_MS = 5_000;
/** A delivery the answer returns can be resent (a delivery has no webhook_id of its own). */
const deliveryLinks = linksTakingId('delivery_id', ['resendWebhookDelivery'], {
  webhook_id: '$request.path.webhook_id',
});

async function findEndpointOr404(em: EntityManager, workspaceId: string, id: string) {
  const endpoint = await em.findOne(WebhookEndpoint, { id, workspace: workspaceId });
  if (!endpoint) throw resourceMissing('webhook endpoint', 'webhook_id');
  return endpoint;
}

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
      const client = await ctx.state.deps.temporal();
      await withTimeout(
        startWebhookDelivery(client, ctx.state.deps.settings, deliveryId, {
          eventId: event.id,
          endpointUrl: endpoint.url,
        }),
        WORKFLOW_START_TIMEOUT_MS,
      );
    } catch (error) {
      ctx.state.logger.error('webhook test delivery not started', { error, webhook_id: endpoint.id });
      await em.nativeDelete(Event, { id: event.id }); // its delivery row goes with it
      throw upstreamUnavailable('The test event could not be queued; nothing was sent. Try again.');
    }
    return { status: 202, body: presentWebhookDelivery(delivery) };
  },
});

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

/** Starts a delivery's workflow, or finds it started (its id is the delivery's). */
async function startDelivery(ctx: ApiContext, delivery: WebhookDelivery, endpointUrl: string): Promise<void> {
  try {
    const client = await ctx.state.deps.temporal();
    const about = { eventId: delivery.event, eventType: delivery.eventType, endpointUrl };
    await withTimeout(
      startWebhookDelivery(client, ctx.state.deps.settings, delivery.id, about),
      WORKFLOW_START_TIMEOUT_MS,
    );
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}

/** 409 recovery_in_progress: the endpoint has a recovery running (a refusal whose reason passes). */
const recoveryInProgress = () =>
  new ApiError(
    409,
    'idempotency_error',
    'recovery_in_progress',
    'A recovery of this endpoint is running; follow it with GET /webhooks/{webhook_id}/recoveries/{recovery_id} and try again when it has ended.',
    { param: 'webhook_id', storable: false },
  );

const recover = defineRoute({
  method: 'POST',
  path: '/webhooks/:webhook_id/recover',
  operationId: 'recoverWebhookDeliveries',
  summary: `Send again, oldest first and at most ${RECOVERY_EVENTS_PER_SECOND} per second, every event of [since, until] whose last delivery to this endpoint failed. since is at most ${RECOVERY_WINDOW_DAYS} days back. Answers 202 with the recovery to follow.`,
  scope: 'webhooks:write',
  roles: ownerOrAdmin,
  params: webhookParams,
  body: webhookRecoverSchema,
  idempotent: true,
  responses: {
    202: {
      description: 'The recovery, in status running.',
      schema: webhookRecoverySchema,
      links: linksTakingId('recovery_id', ['getWebhookRecovery'], {
        webhook_id: '$response.body#/webhook_id',
      }),
    },
    400: {
      description: `parameter_invalid: since more than ${RECOVERY_WINDOW_DAYS} days back or in the future (param since), until before since (param until).`,
    },
    404: missing,
    409: {
      description:
        'recovery_in_progress: a recovery of this endpoint is running; idempotency_key_reused or idempotency_request_in_progress.',
    },
    422: { description: 'endpoint_not_active: the endpoint is paused or disabled; set it active first.' },
    503: {
      description: 'upstream_unavailable: the recovery could not be started; nothing was recorded or sent.',
    },
  },
  async handler(ctx, { params, body }) {
    const em = ctx.state.em;
    const now = new Date();
    const since = instant('since', body.since);
    const until = body.until === undefined ? null : instant('until', body.until);
    if (since.getTime() < now.getTime() - RECOVERY_WINDOW_MS) {
      throw parameterInvalid('since', `since must be at most ${RECOVERY_WINDOW_DAYS} days back.`);
    }
    if (since > now) throw parameterInvalid('since', 'since must not be in the future.');
    if (until && until < since) throw parameterInvalid('until', 'until must not be before since.');
    const endpoint = await findEndpointOr404(em, ctx.state.auth.workspaceId, params.webhook_id);
    if (endpoint.status !== 'active') {
      throw unprocessable(
        'endpoint_not_active',
        `The endpoint is ${endpoint.status}; set its status to active to recover its deliveries.`,
        { param: 'webhook_id', storable: false },
      );
    }
    const record = () =>
      em.transactional(async (tx) => {
        const recovery = await createRecovery(tx, { endpoint, since, until, now });
        const answer = { status: 202, body: presentWebhookRecovery(recovery) };
        await storeAnswerWithWork(tx, ctx, answer, { resourceId: recovery.id, confirmed: false });
        return { recovery, answer };
      });
    let created: Awaited<ReturnType<typeof record>>;
    try {
      created = await record();
    } catch (error) {
      if (!(error instanceof UniqueConstraintViolationException)) throw error;
      // Another recovery runs, unless it is one whose API process stopped before starting it.
      const client = await ctx.state.deps.temporal().catch(() => null);
      if (!client || !(await endUnstartedRecovery(em, client, endpoint.id, new Date()))) {
        throw recoveryInProgress();
      }
      try {
        created = await record();
      } catch (again) {
        if (again instanceof UniqueConstraintViolationException) throw recoveryInProgress();
        throw again;
      }
    }
    const { recovery, answer } = created;
    try {
      await startRecovery(ctx, recovery, endpoint.url);
    } catch (error) {
      ctx.state.logger.error('webhook recovery not started', { error, webhook_id: endpoint.id });
      await em.transactional(async (tx) => {
        await tx.nativeDelete(WebhookRecovery, { id: recovery.id }); // its items go with it
        await withdrawAnswerWithWork(tx, ctx);
      });
      throw upstreamUnavailable(
        'The recovery could not be started; nothing was recorded or sent. Try again.',
      );
    }
    return answer;
  },
  async resume(ctx, committed) {
    // The first request recorded the recovery and stopped before its workflow was confirmed.
    const recovery = await ctx.state.em.findOneOrFail(WebhookRecovery, { id: committed.resourceId! });
    const endpoint = await ctx.state.em.findOneOrFail(WebhookEndpoint, { id: recovery.endpoint });
    await startRecovery(ctx, recovery, endpoint.url).catch((error) => {
      ctx.state.logger.error('webhook recovery not started', { error, recovery_id: committed.resourceId });
      throw upstreamUnavailable(
        'The recovery could not be started yet; retry with the same Idempotency-Key.',
      );
    });
  },
});

/** A date-time the schema accepted, as a Date (a spelling JavaScript cannot read is refused). */
function instant(param: string, value: string): Date {
  const date = new Date(value.toUpperCase());
  if (Number.isNaN(date.getTime())) throw parameterInvalid(param, `${param} must be a date-time (RFC 3339).`);
  return date;
}

/** Starts a recovery's workflow, or finds it started (its id is the recovery's). */
async function startRecovery(ctx: ApiContext, recovery: WebhookRecovery, endpointUrl: string): Promise<void> {
  try {
    const client = await ctx.state.deps.temporal();
    const about = {
      endpointUrl,
      eventsTotal: recovery.eventsTotal,
      since: recovery.since,
      until: recovery.until ?? null,
    };
    await withTimeout(
      startWebhookRecovery(client, ctx.state.deps.settings, recovery.id, about),
      WORKFLOW_START_TIMEOUT_MS,
    );
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}

const getRecovery = defineRoute({
  method: 'GET',
  path: '/webhooks/:webhook_id/recoveries/:recovery_id',
  operationId: 'getWebhookRecovery',
  summary: 'Follow a recovery: its status and how many of its events were sent again.',
  scope: 'webhooks:read',
  params: uuidParams('webhook_id', 'recovery_id'),
  responses: {
    200: { description: 'The recovery.', schema: webhookRecoverySchema },
    404: {
      description:
        'resource_missing: no such endpoint (param webhook_id) or no such recovery of it (param recovery_id).',
    },
  },
  async handler(ctx, { params }) {
    const em = ctx.state.em;
    const endpoint = await findEndpointOr404(em, ctx.state.auth.workspaceId, params.webhook_id);
    const recovery = await em.findOne(WebhookRecovery, { id: params.recovery_id, endpoint: endpoint.id });
    if (!recovery) throw resourceMissing('recovery of this webhook endpoint', 'recovery_id');
    return { status: 200, body: presentWebhookRecovery(recovery) };
  },
});

export const webhookRoutes: RouteDefinition[] = [
  list,
  create,
  get,
  update,
  remove,
  rotateSecret,
  sendTest,
  deliveries,
  resend,
  recover,
  getRecovery,
];
