import { defineEntity, p } from '@mikro-orm/core';
import { Event } from './event.js';
import { WebhookEndpoint } from './webhook-endpoint.js';
import { Workspace } from './workspace.js';

/** `running` until every event is handed to delivery (`completed`) or the endpoint stops it (`stopped`). */
export const WEBHOOK_RECOVERY_STATUSES = ['running', 'completed', 'stopped'] as const;
export type WebhookRecoveryStatus = (typeof WEBHOOK_RECOVERY_STATUSES)[number];

/** Why a recovery stopped before the end. */
export const WEBHOOK_RECOVERY_STOP_REASONS = ['endpoint_paused', 'endpoint_disabled', 'not_started'] as const;
export type WebhookRecoveryStopReason = (typeof WEBHOOK_RECOVERY_STOP_REASONS)[number];

/**
 * POST /webhooks/{id}/recover: the events of a period whose last delivery to the endpoint failed,
 * sent again by one workflow (`webhook-recovery-<id>`). At most one runs per endpoint (the partial
 * unique index), which is what answers a second recover with 409 recovery_in_progress.
 */
const WebhookRecoverySchema = defineEntity({
  name: 'WebhookRecovery',
  tableName: 'webhook_recoveries',
  uniques: [
    {
      name: 'webhook_recoveries_one_running_per_endpoint',
      properties: ['endpoint'],
      where: "status = 'running'",
    },
  ],
  indexes: [{ properties: ['endpoint', 'createdAt'] }],
  properties: {
    id: p.uuid().primary(),
    workspace: () => p.manyToOne(Workspace).mapToPk().deleteRule('cascade'),
    endpoint: () => p.manyToOne(WebhookEndpoint).mapToPk().deleteRule('cascade'),
    status: p.string().length(20).$type<WebhookRecoveryStatus>(),
    stopReason: p.string().length(40).$type<WebhookRecoveryStopReason>().nullable(),
    since: p.datetime(),
    /** As requested; null: up to the time of the request. */
    until: p.datetime().nullable(),
    eventsTotal: p.integer().default(0),
    eventsSent: p.integer().default(0),
    createdAt: p.datetime(),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
    completedAt: p.datetime().nullable(),
  },
});

export class WebhookRecovery extends WebhookRecoverySchema.class {}
WebhookRecoverySchema.setClass(WebhookRecovery);

/**
 * The events a recovery sends, fixed when it is requested, in the order they are sent (`position`
 * 1, 2, …: oldest event first). `delivery` is the new delivery once the event has been sent again.
 */
const WebhookRecoveryItemSchema = defineEntity({
  name: 'WebhookRecoveryItem',
  tableName: 'webhook_recovery_items',
  properties: {
    recovery: () => p.manyToOne(WebhookRecovery).mapToPk().primary().deleteRule('cascade'),
    position: p.integer().primary(),
    event: () => p.manyToOne(Event).mapToPk().deleteRule('cascade'),
    /** The event's last delivery to the endpoint when the recovery was requested (it had failed). */
    failedDelivery: p.uuid(),
    delivery: p.uuid().nullable(),
  },
});

export class WebhookRecoveryItem extends WebhookRecoveryItemSchema.class {}
WebhookRecoveryItemSchema.setClass(WebhookRecoveryItem);

export { WebhookRecoveryItemSchema, WebhookRecoverySchema };
