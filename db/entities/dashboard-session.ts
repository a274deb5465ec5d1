import { defineEntity, p } from '@mikro-orm/core';
import { User } from './user.js';

/**
 * A signed-in dashboard session. The cookie carries a random token of which only the SHA-256 is
 * stored. `user` is the workspace membership picked (null until a person with several picks one);
 * the session acts with that user's current role. Ends at `expiresAt` (absolute), after idle time
 * since `lastSeenAt`, or at sign-out (`endedAt`).
 */
const DashboardSessionSchema = defineEntity({
  name: 'DashboardSession',
  tableName: 'dashboard_sessions',
  properties: {
    id: p.uuid().primary(),
    tokenHash: p.string().length(64).unique(),
    email: p.string().length(320),
    user: () => p.manyToOne(User).mapToPk().nullable().deleteRule('cascade'),
    /** Sent back in X-CSRF-Token on every state-changing request. */
    csrfToken: p.string().length(64),
    createdAt: p.datetime().onCreate(() => new Date()),
    lastSeenAt: p.datetime(),
    expiresAt: p.datetime(),
    endedAt: p.datetime().nullable(),
  },
});

export class DashboardSession extends DashboardSessionSchema.class {}
DashboardSessionSchema.setClass(DashboardSession);

export { DashboardSessionSchema };
