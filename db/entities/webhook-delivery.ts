import { defineEntity, p } from '@mikro-orm/core';
import { Event } from './event.js';
import { WebhookEndpoint } from './webhook-endpoint.js';
import { WebhookRecovery } from './webhook-recovery.js';
import { Workspace } from './workspace.js';

export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/**
 * What made a delivery: the event happening (`event`), POST …/test (`test`), POST …/resend
 * (`resend`) or a recovery (`recover`). Test and resend deliveries are explicit requests and go to
 * paused and disabled endpoints too; event and recover deliveries stop there.
 */
export const WEBHOOK_DELIVERY_ORIGINS = ['event', 'test', 'resend', 'recover'] as const;
export type WebhookDeliveryOrigin = (typeof WEBHOOK_DELIVERY_ORIGINS)[number];

/**
 * One event on its way to one endpoint; updated on every attempt. An event has at most one
 * delivery per endpoint of its own (`resentFrom` null: made by the fan-out or POST …/test), and
 * any number of resends (made by POST …/resend or a recovery, each linked to the delivery it
 * sent again).
 */
const WebhookDeliverySchema = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  uniques: [
    {
      name: 'webhook_deliveries_event_id_endpoint_id_unique',
      properties: ['event', 'endpoint'],
      where: 'resent_from_id is null',
    },
  ],
  indexes: [{ properties: ['endpoint', 'createdAt', 'id'] }, { properties: ['event', 'endpoint'] }],
  properties: {
    id: p.uuid().primary(),
    workspace: () => p.manyToOne(Workspace).mapToPk().deleteRule('cascade'),
    endpoint: () => p.manyToOne(WebhookEndpoint).mapToPk().deleteRule('cascade'),
    event: () => p.manyToOne(Event).mapToPk().deleteRule('cascade'),
    eventType: p.string().length(40),
    status: p.string().length(20).$type<WebhookDeliveryStatus>(),
    origin: p.string().length(20).$type<WebhookDeliveryOrigin>().default('event'),
    /** The delivery whose event this one sends again (resend and recover), else null. */
    resentFrom: () => p.manyToOne(WebhookDelivery).mapToPk().nullable().deleteRule('set null'),
    /** The recovery that made this delivery (origin `recover`), else null. */
    recovery: () => p.manyToOne(WebhookRecovery).mapToPk().nullable().deleteRule('set null'),
    responseStatus: p.integer().nullable(),
    attempts: p.integer().default(0),
    error: p.text().nullable(),
    nextAttemptAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
    deliveredAt: p.datetime().nullable(),
  },
});

export class WebhookDelivery extends WebhookDeliverySchema.class {}
WebhookDeliverySchema.setClass(WebhookDelivery);

export { WebhookDeliverySchema };
