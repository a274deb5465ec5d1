import { defineEntity, p } from '@mikro-orm/core';
import { User } from './user.js';

/**
 * A one-time link (`admin user invite`) where a person sets their password. Only the SHA-256 of
 * the link's token is stored; `usedAt` makes it one-time.
 */
const DashboardInviteSchema = defineEntity({
  name: 'DashboardInvite',
  tableName: 'dashboard_invites',
  properties: {
    id: p.uuid().primary(),
    user: () => p.manyToOne(User).mapToPk().deleteRule('cascade'),
    tokenHash: p.string().length(64).unique(),
    expiresAt: p.datetime(),
    usedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export class DashboardInvite extends DashboardInviteSchema.class {}
DashboardInviteSchema.setClass(DashboardInvite);

export { DashboardInviteSchema };
