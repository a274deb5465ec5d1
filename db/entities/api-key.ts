import { defineEntity, p } from '@mikro-orm/core';
import { User } from './user.js';
import { Workspace } from './workspace.js';

/** Only the SHA-256 of the secret is stored; the secret itself is shown once by `admin key create`. */
const ApiKeySchema = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    id: p.uuid().primary(),
    workspace: () => p.manyToOne(Workspace).mapToPk().deleteRule('cascade'),
    createdBy: () => p.manyToOne(User).mapToPk().deleteRule('cascade'),
    name: p.string().length(200),
    secretHash: p.string().length(64).unique(),
    scopes: p.array().$type<string[]>(),
    expiresAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export class ApiKey extends ApiKeySchema.class {}
ApiKeySchema.setClass(ApiKey);

export { ApiKeySchema };
