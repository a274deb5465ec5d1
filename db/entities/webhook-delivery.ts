import { defineEntity, p } from '@mikro-orm/core';
import { Event } from './event.js';
import { WebhookEndpoint } from './webhook-endpoint.js';
import { Workspace } from './workspace.js';

export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/** One event on its way to one endpoint; updated on every attempt. */
const WebhookDeliverySchema = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  uniques: [{ properties: ['event', 'endpoint'] }],
  indexes: [{ properties: ['endpoint', 'createdAt', 'id'] }],
  properties: {
    id: p.uuid().primary(),
    workspace: () => p.manyToOne(Workspace).mapToPk().deleteRule('cascade'),
    endpoint: () => p.manyToOne(WebhookEndpoint).mapToPk().deleteRule('cascade'),
    event: () => p.manyToOne(Event).mapToPk().deleteRule('cascade'),
    eventType: p.string().length(40),
    status: p.string().length(20).$type<WebhookDeliveryStatus>(),
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
