import { ApiKey, User } from '../../../db/entities/index.js';
import { createApiKey, OperatorError, revokeApiKey } from '../../../lib/accounts.js';
import { SCOPES } from '../../../lib/scopes.js';
import { parameterInvalid, resourceMissing } from '../../http/errors.js';
import { listQuerySchema, listSchema, paginate } from '../../http/pagination.js';
import { defineRoute, type RouteDefinition } from '../../http/route.js';
import { presentKey } from '../../presenters/api-key.js';
import { dateTimeSchema, uuidParams, uuidSchema } from '../../schemas/common.js';

// API keys in the dashboard: /v1 has no key endpoints, so these dashboard-only routes run the
// operator CLI's functions (lib/accounts.ts) for the signed-in person. Everyone in the workspace
// sees which keys exist, never a secret; owners and admins create and revoke (`roles`, checked
// by the router like every route). A new key acts as the person who made it.

const keySchema = {
  type: 'object',
  required: ['object', 'id', 'name', 'scopes', 'created_by', 'created_at', 'expires_at', 'revoked_at'],
  properties: {
    object: { const: 'api_key' },
    id: uuidSchema,
    name: { type: 'string' },
    scopes: { type: 'array', items: { type: 'string' } },
    created_by: { type: ['string', 'null'] },
    created_at: dateTimeSchema,
    expires_at: { anyOf: [dateTimeSchema, { type: 'null' }] },
    revoked_at: { anyOf: [dateTimeSchema, { type: 'null' }] },
  },
};

const list = defineRoute({
  method: 'GET',
  path: '/keys',
  operationId: 'listApiKeys',
  summary: "The workspace's API keys, newest first; never a secret.",
  scope: null,
  query: listQuerySchema(),
  responses: { 200: { description: 'A page of keys.', schema: listSchema(keySchema) } },
  async handler(ctx, { query }) {
    const { em, auth } = ctx.state;
    const users = await em.find(User, { workspace: auth.workspaceId });
    const emails = new Map(users.map((u) => [u.id, u.email]));
    const page = await paginate(em, ApiKey, { workspace: auth.workspaceId }, query, {
      orderBy: 'createdAt',
      present: (key) => presentKey(key, emails),
    });
    return { status: 200, body: page };
  },
});

const create = defineRoute({
  method: 'POST',
  path: '/keys',
  operationId: 'createApiKey',
  summary: 'Create a key acting as the signed-in owner or admin; the secret is in this answer only.',
  scope: null,
  roles: ['owner', 'admin'],
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'scopes'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 200 },
      scopes: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: [...SCOPES] } },
      expires_at: { anyOf: [dateTimeSchema, { type: 'null' }] },
    },
  },
  responses: { 201: { description: 'The key with its secret.' } },
  async handler(ctx, { body }) {
    const { em, auth } = ctx.state;
    const expiresAt = body.expires_at ? new Date(body.expires_at) : null;
    try {
      const { key, secret } = await createApiKey(em, {
        workspaceId: auth.workspaceId,
        userId: auth.userId,
        name: body.name,
        scopes: body.scopes,
        expiresAt,
      });
      const emails = new Map([[auth.userId, (await em.findOneOrFail(User, { id: auth.userId })).email]]);
      return { status: 201, body: { ...presentKey(key, emails), secret } };
    } catch (error) {
      if (!(error instanceof OperatorError)) throw error;
      // The CLI's refusals name a flag; here the one field a person can get wrong past the schema.
      const param = /expires-at/.test(error.message)
        ? 'expires_at'
        : /name/.test(error.message)
          ? 'name'
          : 'scopes';
      throw parameterInvalid(param, error.message.replace('expires-at', 'expires_at'));
    }
  },
});

const revoke = defineRoute({
  method: 'POST',
  path: '/keys/:key_id/revoke',
  operationId: 'revokeApiKey',
  summary: 'Revoke a key of the workspace (applies within 30 seconds; revoking twice is harmless).',
  scope: null,
  roles: ['owner', 'admin'],
  params: uuidParams('key_id'),
  responses: { 200: { description: 'The revoked key.', schema: keySchema } },
  async handler(ctx, { params }) {
    const { em, auth } = ctx.state;
    const existing = await em.findOne(ApiKey, { id: params.key_id, workspace: auth.workspaceId });
    if (!existing) throw resourceMissing('API key', 'key_id');
    const key = await revokeApiKey(em, { keyId: existing.id });
    const users = await em.find(User, { workspace: auth.workspaceId });
    return { status: 200, body: presentKey(key, new Map(users.map((u) => [u.id, u.email]))) };
  },
});

export const apiKeyRoutes: RouteDefinition[] = [list, create, revoke];
