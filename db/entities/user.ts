import { defineEntity, p } from '@mikro-orm/core';
import { Workspace } from './workspace.js';

export const USER_ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type UserRole = (typeof USER_ROLES)[number];

/** A person in a workspace. API keys act with their creator's current role. */
const UserSchema = defineEntity({
  name: 'User',
  tableName: 'users',
  uniques: [{ properties: ['workspace', 'email'] }],
  properties: {
    id: p.uuid().primary(),
    workspace: () => p.manyToOne(Workspace).mapToPk().deleteRule('cascade'),
    email: p.string().length(320),
    role: p.string().length(20).$type<UserRole>(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});

export class User extends UserSchema.class {}
UserSchema.setClass(User);

export { UserSchema };
