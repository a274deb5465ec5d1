import { defineEntity, p } from '@mikro-orm/core';

/**
 * Dashboard sign-in attempts per account or address and window (api/dashboard/sign-in-limiter.ts),
 * shared by every API process. Windows are minutes long, so they live apart from the per-second
 * request windows.
 */
const SignInAttemptWindowSchema = defineEntity({
  name: 'SignInAttemptWindow',
  tableName: 'sign_in_attempt_windows',
  properties: {
    bucket: p.string().length(120).primary(),
    windowStart: p.bigint('number').primary(),
    count: p.integer().default(0),
  },
});

export class SignInAttemptWindow extends SignInAttemptWindowSchema.class {}
SignInAttemptWindowSchema.setClass(SignInAttemptWindow);

export { SignInAttemptWindowSchema };
