import { generateToolsSecret } from '../../lib/agent-tools/tools-secret.js';
import { findAgentOr404 } from '../auth/workspace-resources.js';
import { defineRoute, type RouteDefinition } from '../http/route.js';
import { storeAnswerWithWork } from '../middleware/idempotency.js';
import { toolsSecretSchema } from '../schemas/tools-secret.js';
import { agentMissing, agentParams } from './agent-route-parts.js';

// POST /agents/{agent_id}/tools-secret (agent-tools spec section 2): a new secret signing the
// agent's tool requests, shown this once; the previous one stops signing at once (the call
// runtime reads it at each request). Like the webhook secret, it never enters the idempotency
// store: a replay answers secret null and makes no new one.

const rotate = defineRoute({
  method: 'POST',
  path: '/agents/:agent_id/tools-secret',
  operationId: 'createAgentToolsSecret',
  summary:
    "Make a new secret for the agent's tool requests (Voice-Signature), shown only here; the previous one stops signing at once.",
  scope: 'agents:write',
  params: agentParams,
  idempotent: true,
  responses: {
    200: { description: 'The new secret (null when replayed).', schema: toolsSecretSchema },
    404: agentMissing,
    409: { description: 'idempotency_key_reused or idempotency_request_in_progress.' },
  },
  async handler(ctx, { params }) {
    const secret = generateToolsSecret();
    // The secret and the answer under the Idempotency-Key commit together.
    return ctx.state.em.transactional(async (em) => {
      const agent = await findAgentOr404(em, ctx.state.auth.workspaceId, params.agent_id);
      agent.toolsSecret = secret;
      agent.updatedAt = new Date();
      await em.flush();
      const answer = (shown: string | null) => ({
        object: 'tools_secret',
        agent_id: agent.id,
        secret: shown,
      });
      const result = { status: 200, body: answer(secret), storedBody: answer(null) };
      await storeAnswerWithWork(em, ctx, result);
      return result;
    });
  },
});

export const agentToolsSecretRoutes: RouteDefinition[] = [rotate];
