import { defineEntity, p } from '@mikro-orm/core';
import { Workspace } from './workspace.js';

export const WEBHOOK_ENDPOINT_STATUSES = ['active', 'paused', 'disabled'] as const;
export type WebhookEndpointStatus = (typeof WEBHOOK_ENDPOINT_STATUSES)[number];

const WebhookEndpointSchema = defineEntity({
  name: 'WebhookEndpoint',
  tableName: 'webhook_endpoints',
  indexes: [{ properties: ['workspace', 'createdAt', 'id'] }],
  properties: {
    id: p.uuid().primary(),
    workspace: () => p.manyToOne(Workspace).mapToPk().deleteRule('cascade'),
    url: p.text(),
    events: p.array().$type<string[]>(),
    status: p.string().length(20).$type<WebhookEndpointStatus>(),
    description: p.string().length(500).nullable(),
    /** Kept so the service can sign; returned only by create and rotate-secret. */
    secret: p.string().length(70).hidden(),
    /** Start of the current run of consecutive failed deliveries; null after any success. */
    failingSince: p.datetime().nullable(),
    disabledAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});

export class WebhookEndpoint extends WebhookEndpointSchema.class {}
WebhookEndpointSchema.setClass(WebhookEndpoint);

export { WebhookEndpointSchema };
