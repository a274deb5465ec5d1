import { defineEntity, p } from '@mikro-orm/core';

/**
 * Request counts per API key and one-second window, shared by every API process.
 * Rows older than a minute are deleted by the limiter itself.
 */
const RateLimitWindowSchema = defineEntity({
  name: 'RateLimitWindow',
  tableName: 'rate_limit_windows',
  properties: {
    bucket: p.string().length(80).primary(),
    windowStart: p.bigint('number').primary(),
    count: p.integer().default(0),
  },
});

export class RateLimitWindow extends RateLimitWindowSchema.class {}
RateLimitWindowSchema.setClass(RateLimitWindow);

export { RateLimitWindowSchema };
