import { ToolCall } from '../../db/entities/index.js';
import { listQuerySchema, listSchema, paginate, prefixedHexIds } from '../http/pagination.js';
import { defineRoute, type RouteDefinition } from '../http/route.js';
import { presentToolCall } from '../presenters/tool-call.js';
import { toolCallSchema } from '../schemas/tool-call.js';
import { callParams, findCallOr404 } from './call-route-parts.js';

// GET /calls/{call_id}/tool-calls (agent-tools spec section 4): what the agent's tools were asked
// and answered during a call, oldest first. The call runtime writes the rows.

const list = defineRoute({
  method: 'GET',
  path: '/calls/:call_id/tool-calls',
  operationId: 'listCallToolCalls',
  summary: "The call's tool calls, oldest first.",
  scope: 'calls:read',
  params: callParams,
  query: listQuerySchema(),
  responses: {
    200: { description: 'A page of tool calls.', schema: listSchema(toolCallSchema) },
    404: { description: 'resource_missing: no such call in the workspace.' },
  },
  async handler(ctx, { params, query }) {
    const em = ctx.state.em;
    const call = await findCallOr404(em, ctx.state.auth.workspaceId, params.call_id);
    const page = await paginate(em, ToolCall, { call: call.id }, query, {
      orderBy: 'createdAt',
      present: presentToolCall,
      ids: prefixedHexIds('tc_'),
      oldestFirst: true,
    });
    return { status: 200, body: page };
  },
});

export const callToolCallRoutes: RouteDefinition[] = [list];
