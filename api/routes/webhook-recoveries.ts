import { WebhookEndpoint, WebhookRecovery } from '../../db/entities/index.js';
import {
  admitRecovery,
  type RecoveryRefusal,
  recoveryPeriodRefusal,
} from '../../lib/webhooks/admit-recovery.js';
import { RECOVERY_WINDOW_DAYS, startWebhookRecovery } from '../../lib/webhooks/recovery.js';
import { RECOVERY_EVENTS_PER_SECOND } from '../../lib/webhooks/retry-schedule.js';
import {
  ApiError,
  parameterInvalid,
  resourceMissing,
  unprocessable,
  upstreamUnavailable,
} from '../http/errors.js';
import { linksTakingId } from '../http/links.js';
import { type ApiContext, defineRoute, type RouteDefinition } from '../http/route.js';
import { startWorkflowInRequest } from '../http/temporal-request.js';
import { storeAnswerWithWork, withdrawAnswerWithWork } from '../middleware/idempotency.js';
import { presentWebhookRecovery } from '../presenters/webhook-recovery.js';
import { uuidParams } from '../schemas/common.js';
import { webhookRecoverSchema, webhookRecoverySchema } from '../schemas/webhook-recovery.js';
import {
  findEndpointOr404,
  endpointMissing as missing,
  ownerOrAdmin,
  type WebhookParams,
  webhookParams,
} from './webhook-route-parts.js';

// Recoveries of an endpoint's failed deliveries (docs/webhooks.md). Whether one may start is
// lib/webhooks/admit-recovery.ts; this maps its refusals to the spec's errors.

type RecoveryParams = WebhookParams & { recovery_id: string };

/** The spec's error for each refusal of a recovery. */
function recoveryRefusalError(refusal: RecoveryRefusal): ApiError {
  switch (refusal.code) {
    case 'since_too_old':
      return parameterInvalid('since', `since must be at most ${RECOVERY_WINDOW_DAYS} days back.`);
    case 'since_in_future':
      return parameterInvalid('since', 'since must not be in the future.');
    case 'until_before_since':
      return parameterInvalid('until', 'until must not be before since.');
    case 'endpoint_not_active':
      return unprocessable(
        'endpoint_not_active',
        `The endpoint is ${refusal.status}; set its status to active to recover its deliveries.`,
        { param: 'webhook_id', storable: false },
      );
    case 'recovery_in_progress':
      // A refusal whose reason passes: not stored under the Idempotency-Key.
      return new ApiError(
        409,
        'idempotency_error',
        'recovery_in_progress',
        'A recovery of this endpoint is running; follow it with GET /webhooks/{webhook_id}/recoveries/{recovery_id} and try again when it has ended.',
        { param: 'webhook_id', storable: false },
      );
  }
}

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
    const request = {
      since: instant('since', body.since),
      until: body.until === undefined ? null : instant('until', body.until),
      now: new Date(),
    };
    const periodRefusal = recoveryPeriodRefusal(request);
    if (periodRefusal) throw recoveryRefusalError(periodRefusal);
    const endpoint = await findEndpointOr404(em, ctx.state.auth.workspaceId, params.webhook_id);
    const admission = await admitRecovery(
      em,
      endpoint,
      request,
      () => ctx.state.deps.temporal().catch(() => null),
      async (tx, recovery) => {
        const answer = { status: 202, body: presentWebhookRecovery(recovery) };
        await storeAnswerWithWork(tx, ctx, answer, { resourceId: recovery.id, confirmed: false });
        return answer;
      },
    );
    if (!admission.admitted) throw recoveryRefusalError(admission.refusal);
    const { recovery, alongside: answer } = admission;
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
  const about = {
    endpointUrl,
    eventsTotal: recovery.eventsTotal,
    since: recovery.since,
    until: recovery.until ?? null,
  };
  await startWorkflowInRequest(ctx.state.deps, (client, settings) =>
    startWebhookRecovery(client, settings, recovery.id, about),
  );
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

export const webhookRecoveryRoutes: RouteDefinition[] = [recover, getRecovery];
