import { defineEntity, p } from '@mikro-orm/core';
import { WebhookDelivery } from './webhook-delivery.js';

/**
 * One attempt of a delivery, for the dashboard's delivery log: when, how long the request took,
 * the answer's status and, for a failure, what went wrong with the start of the answer's body
 * (the sender keeps 200 characters). Written with the delivery's own update, once per attempt.
 */
const WebhookDeliveryAttemptSchema = defineEntity({
  name: 'WebhookDeliveryAttempt',
  tableName: 'webhook_delivery_attempts',
  uniques: [{ properties: ['delivery', 'attempt'] }],
  properties: {
    id: p.uuid().primary(),
    delivery: () => p.manyToOne(WebhookDelivery).mapToPk().deleteRule('cascade'),
    attempt: p.integer(),
    attemptedAt: p.datetime(),
    durationMs: p.integer(),
    responseStatus: p.integer().nullable(),
    /** The failure: `HTTP 500: <start of the body>`, a timeout, a refused connection; null when delivered. */
    error: p.text().nullable(),
    /** The start of the answer's body (200 characters), a success's too; null when there was none. */
    responseExcerpt: p.text().nullable(),
    /** What made it (`event`, `test`, `resend`, `recover` for the first attempt, `retry` after). */
    trigger: p.string().length(20),
  },
});

export class WebhookDeliveryAttempt extends WebhookDeliveryAttemptSchema.class {}
WebhookDeliveryAttemptSchema.setClass(WebhookDeliveryAttempt);

export { WebhookDeliveryAttemptSchema };
