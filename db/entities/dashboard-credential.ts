import { defineEntity, p } from '@mikro-orm/core';

/**
 * A person's dashboard password, by email: one person may hold roles in several workspaces (a
 * User row each, same email) and signs in once, then picks the workspace. Only the argon2id hash
 * is stored.
 */
const DashboardCredentialSchema = defineEntity({
  name: 'DashboardCredential',
  tableName: 'dashboard_credentials',
  properties: {
    email: p.string().length(320).primary(),
    passwordHash: p.text(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});

export class DashboardCredential extends DashboardCredentialSchema.class {}
DashboardCredentialSchema.setClass(DashboardCredential);

export { DashboardCredentialSchema };
