import type { EntityManager } from '@mikro-orm/postgresql';
import { Workspace } from '../../db/entities/index.js';
import type { Logger } from '../../lib/logger.js';
import { defineRoute } from '../http/route.js';
import { apiKeyInfoSchema } from '../schemas/api-key.js';

export const meRoutes = [
  defineRoute({
    method: 'GET',
    path: '/me',
    operationId: 'getMe',
    summary: 'The API key making the request: its id, workspace and scopes.',
    scope: null,
    responses: { 200: { description: 'ApiKeyInfo', schema: apiKeyInfoSchema } },
    async handler(ctx) {
      const { auth } = ctx.state;
      return {
        status: 200,
        body: {
          object: 'api_key',
          id: auth.keyId,
          workspace_id: auth.workspaceId,
          workspace_name: await workspaceName(ctx.state.em, auth.workspaceId, ctx.state.logger),
          scopes: auth.scopes,
        },
      };
    },
  }),
];

/** Read fresh on every call; null when the database cannot answer right now (the key was cached). */
async function workspaceName(em: EntityManager, workspaceId: string, logger: Logger): Promise<string | null> {
  try {
    const workspace = await em.findOne(Workspace, { id: workspaceId }, { fields: ['name'] });
    return workspace?.name ?? null;
  } catch (error) {
    logger.warn('workspace name could not be read', { error });
    return null;
  }
}
