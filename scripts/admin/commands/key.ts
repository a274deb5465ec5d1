import { createApiKey, revokeApiKey } from '../../../lib/accounts.js';
import { SCOPES } from '../../../lib/scopes.js';
import { defineCommand } from '../command.js';

export const keyCreate = defineCommand({
  name: 'key create',
  summary: 'Create an API key for an owner or admin; its secret is printed once, only its hash is kept.',
  flags: {
    workspace: { type: 'string', required: true, value: 'ID', help: 'workspace id' },
    user: { type: 'string', required: true, value: 'ID', help: 'the owner or admin the key acts as' },
    name: { type: 'string', required: true, value: 'NAME', help: 'label, at most 200 characters' },
    scopes: {
      type: 'list',
      required: true,
      value: 'a:read,b:write,...',
      help: `comma-separated, from ${SCOPES.join(' ')}`,
    },
    expiresAt: {
      type: 'date',
      value: 'ISO8601',
      help: 'expiry, e.g. 2030-01-31 (UTC midnight) or 2030-01-31T12:00:00Z; default never',
    },
  },
  async run({ workspace, user, name, scopes, expiresAt }, context) {
    const { key, secret } = await createApiKey(await context.em(), {
      workspaceId: workspace,
      userId: user,
      name,
      scopes,
      expiresAt: expiresAt ?? null,
    });
    return {
      json: { id: key.id, secret },
      text: [
        `Created key ${key.id} "${key.name}" with scopes ${key.scopes.join(',')}`,
        `Secret (shown only now, store it safely): ${secret}`,
      ].join('\n'),
    };
  },
});

export const keyRevoke = defineCommand({
  name: 'key revoke',
  summary: 'Revoke an API key (takes effect within 60 seconds; revoking twice is harmless).',
  flags: {
    id: { type: 'string', required: true, value: 'ID', help: 'key id' },
  },
  async run({ id }, context) {
    const key = await revokeApiKey(await context.em(), { keyId: id });
    return {
      json: { id: key.id, revoked: true },
      text: `Revoked key ${key.id} "${key.name}" at ${key.revokedAt?.toISOString()}`,
    };
  },
});
