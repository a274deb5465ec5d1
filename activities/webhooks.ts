import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Context } from '@temporalio/activity';
import {
  Event,
  WebhookDelivery,
  WebhookDeliveryAttempt,
  type WebhookDeliveryOrigin,
  WebhookEndpoint,
} from '../db/entities/index.js';
import type { Orm } from '../db/orm.js';
import {
  webhookAttemptDuration,
  webhookAttempts,
  webhookDeliveries,
  webhookDeliveryLag,
} from '../lib/metrics/service-metrics.js';
import { inClientSpan } from '../lib/tracing/tracing.js';
import { recordPendingDeliveries, subscribedEndpointIds } from '../lib/webhooks/deliveries.js';
import { EndpointLimiter } from '../lib/webhooks/endpoint-limiter.js';
import { completeRecovery, type RecoveryStep, takeNextRecoveryEvents } from '../lib/webhooks/recovery.js';
import { DISABLE_AFTER_FAILING_MS, retryDelayAfter } from '../lib/webhooks/retry-schedule.js';
import { type SendRequest, type SendResult, sendWebhook } from '../lib/webhooks/sender.js';
import { deliveryHeaders } from '../lib/webhooks/sign.js';
import { heartbeating } from './heartbeat.js';

export interface WebhookActivityDeps {
  orm: Orm;
  settings: { webhooksAllowPrivateTargets: boolean };
  /** Defaults to the real HTTP sender. */
  send?: (request: SendRequest) => Promise<SendResult>;
  limiter?: EndpointLimiter;
}

/**
 * What became of one attempt. `retry`: failed, another attempt follows after the schedule's
 * wait. `busy`: not sent because the endpoint has its fill of requests in flight; no attempt
 * was used. `stopped`: the endpoint is gone, paused or disabled, so nothing more is sent.
 */
export type AttemptOutcome = 'delivered' | 'retry' | 'failed' | 'stopped' | 'busy';

export function createWebhookActivities(deps: WebhookActivityDeps) {
  const send = deps.send ?? sendWebhook;
  const limiter = deps.limiter ?? new EndpointLimiter();

  // Every step heartbeats while it runs (activities/heartbeat.ts); the workflows set the timeouts.
  return heartbeating({
    /** Fan-out: a pending delivery per subscribed active endpoint; returns their ids. */
    async recordEventDeliveries(input: {
      eventId: string;
    }): Promise<{ deliveryIds: string[]; eventType?: string }> {
      const em = deps.orm.em.fork() as EntityManager;
      const event = await em.findOne(Event, { id: input.eventId });
      if (!event) return { deliveryIds: [] };
      const endpointIds = await subscribedEndpointIds(em, event);
      // The type names the deliveries in the Temporal Web UI (lib/temporal/workflow-metadata.ts).
      return { deliveryIds: await recordPendingDeliveries(em, event, endpointIds), eventType: event.type };
    },

    /** Attempt number `attempt` of one delivery: send it, and log the result on the delivery. */
    async attemptWebhookDelivery(input: { deliveryId: string; attempt: number }): Promise<{
      outcome: AttemptOutcome;
      /** Where it went, for the delivery workflow's current details in the Web UI. */
      endpointUrl?: string;
    }> {
      const now = serverClock();
      const em = deps.orm.em.fork() as EntityManager;
      const delivery = await em.findOne(WebhookDelivery, { id: input.deliveryId });
      if (!delivery) return { outcome: 'stopped' }; // the endpoint was deleted, and its log with it
      // This activity ran before and logged its attempt, then its result was lost: say it again.
      if (delivery.attempts >= input.attempt || delivery.status !== 'pending') {
        return { outcome: delivery.status === 'pending' ? 'retry' : delivery.status };
      }
      const endpoint = await em.findOne(WebhookEndpoint, { id: delivery.endpoint });
      if (!endpoint) return { outcome: 'stopped' };
      // Test events and resends are explicit requests: they reach paused and disabled endpoints too.
      if (endpoint.status !== 'active' && !MANUAL_ORIGINS.has(delivery.origin)) {
        // Paused or disabled: the rest of this delivery is dropped, not held back.
        delivery.status = 'failed';
        delivery.error = `not sent: endpoint ${endpoint.status}`;
        delivery.nextAttemptAt = null;
        await em.flush();
        webhookDeliveries.inc({ outcome: 'failed' });
        return { outcome: 'stopped' };
      }
      const event = await em.findOneOrFail(Event, { id: delivery.event });

      const release = await limiter.acquire(endpoint.id);
      if (!release) return { outcome: 'busy' };
      let result: SendResult;
      const sentAt = performance.now();
      try {
        const body = Buffer.from(event.body, 'utf8');
        // A client span per attempt when tracing is on: inside the delivery's activity span.
        result = await inClientSpan(
          'webhook delivery',
          {
            'http.request.method': 'POST',
            'server.address': hostnameOf(endpoint.url),
            'event.type': event.type,
          },
          async (span) => {
            const sent = await send({
              url: endpoint.url,
              body,
              // Signed with the secret as it is now, so a rotation applies from the next attempt.
              headers: deliveryHeaders({
                secret: endpoint.secret,
                body,
                eventId: event.id,
                eventType: event.type,
                unixSeconds: Math.floor(Date.now() / 1000),
              }),
              allowPrivate: deps.settings.webhooksAllowPrivateTargets,
            });
            span?.setAttribute('http.response.status_code', sent.responseStatus ?? 0);
            return sent;
          },
        );
      } finally {
        release();
      }

      const attemptedAt = now();
      const durationMs = Math.round(performance.now() - sentAt);
      const retryIn = retryDelayAfter(input.attempt);
      delivery.attempts = input.attempt;
      delivery.responseStatus = result.responseStatus;
      delivery.error = result.error;
      if (result.delivered) {
        delivery.status = 'delivered';
        delivery.deliveredAt = attemptedAt;
        delivery.nextAttemptAt = null;
      } else if (retryIn === null) {
        delivery.status = 'failed';
        delivery.nextAttemptAt = null;
      } else {
        delivery.nextAttemptAt = new Date(attemptedAt.getTime() + retryIn);
      }
      // The attempt's own row, in the same flush: the dashboard's log of every attempt.
      em.create(WebhookDeliveryAttempt, {
        id: randomUUID(),
        delivery: delivery.id,
        attempt: input.attempt,
        attemptedAt,
        durationMs,
        responseStatus: result.responseStatus,
        error: result.error,
        responseExcerpt: result.responseExcerpt,
        trigger: input.attempt >= 2 ? 'retry' : delivery.origin,
      });
      await em.flush();
      await updateEndpointHealth(em, endpoint.id, result.delivered, attemptedAt);
      const outcome = result.delivered ? 'delivered' : retryIn === null ? 'failed' : 'retry';
      countAttempt(
        outcome,
        durationMs,
        result.delivered ? attemptedAt.getTime() - event.createdAt.getTime() : null,
      );
      return {
        outcome,
        endpointUrl: endpoint.url,
      };
    },

    /**
     * Recovery: the next events after `position` get their new delivery (none when the endpoint
     * is no longer active, which stops the recovery); the workflow starts their delivery workflows.
     */
    async takeRecoveryEvents(input: {
      recoveryId: string;
      position: number;
      limit: number;
    }): Promise<RecoveryStep> {
      const em = deps.orm.em.fork() as EntityManager;
      return takeNextRecoveryEvents(em, { ...input, now: new Date() });
    },

    /** Recovery: every event has been handed to delivery. */
    async completeRecovery(input: { recoveryId: string }): Promise<void> {
      await completeRecovery(deps.orm.em.fork() as EntityManager, input.recoveryId, new Date());
    },
  });
}

/** Deliveries made on request, which go to paused and disabled endpoints too. */
const MANUAL_ORIGINS: ReadonlySet<WebhookDeliveryOrigin> = new Set(['test', 'resend']);

/**
 * Any success clears the endpoint's failing run; a failure starts one if none is open, and
 * disables the endpoint once the run is DISABLE_AFTER_FAILING_MS old. Single-statement updates,
 * since many deliveries to the same endpoint finish at once.
 */
async function updateEndpointHealth(em: EntityManager, endpointId: string, delivered: boolean, at: Date) {
  if (delivered) {
    await em.nativeUpdate(
      WebhookEndpoint,
      { id: endpointId, failingSince: { $ne: null } },
      { failingSince: null },
    );
    return;
  }
  await em.nativeUpdate(WebhookEndpoint, { id: endpointId, failingSince: null }, { failingSince: at });
  await em.nativeUpdate(
    WebhookEndpoint,
    {
      id: endpointId,
      status: 'active',
      failingSince: { $lte: new Date(at.getTime() - DISABLE_AFTER_FAILING_MS) },
    },
    { status: 'disabled', disabledAt: at, updatedAt: at },
  );
}

/**
 * The Temporal server's time, advanced by the time this activity has run. In production it is
 * the wall clock; under the time-skipping test server it is the skipped time the workflows see,
 * so the disable rule can be tested over days.
 */
function serverClock(): () => Date {
  const scheduled = Context.current().info.currentAttemptScheduledTimestampMs;
  const started = Date.now();
  return () => new Date(scheduled + (Date.now() - started));
}

/** The attempt in the delivery metrics (lib/metrics/service-metrics.ts): once per attempt logged above. */
function countAttempt(
  outcome: 'delivered' | 'failed' | 'retry',
  durationMs: number,
  lagMs: number | null,
): void {
  webhookAttempts.inc({ result: outcome });
  webhookAttemptDuration.observe(durationMs / 1000);
  if (outcome !== 'retry') webhookDeliveries.inc({ outcome });
  if (lagMs !== null) webhookDeliveryLag.observe(Math.max(0, lagMs) / 1000);
}

function hostnameOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return 'invalid';
  }
}
