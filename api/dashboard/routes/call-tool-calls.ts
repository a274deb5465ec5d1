import { ToolCall } from '../../../db/entities/index.js';
import { defineRoute, type RouteDefinition } from '../../http/route.js';
import { presentToolCall } from '../../presenters/tool-call.js';
import { callParams, findCallOr404 } from '../../routes/call-route-parts.js';

// A call's tool calls for the call page's timeline, oldest first, all at once: a call makes at
// most 50 (agent-tools spec section 3), so the page needs no cursor. /v1 has the paged list.

const MAX_TOOL_CALLS_SHOWN = 100;

const list = defineRoute({
  method: 'GET',
  path: '/calls/:call_id/tool-calls',
  operationId: 'listDashboardCallToolCalls',
  summary: "The call's tool calls, oldest first.",
  scope: 'calls:read',
  params: callParams,
  responses: { 200: { description: 'Tool calls, oldest first.' } },
  async handler(ctx, { params }) {
    const { em, auth } = ctx.state;
    const call = await findCallOr404(em, auth.workspaceId, params.call_id);
    const rows = await em.find(
      ToolCall,
      { call: call.id },
      { orderBy: { createdAt: 'asc', id: 'asc' }, limit: MAX_TOOL_CALLS_SHOWN },
    );
    return {
      status: 200,
      body: { object: 'list', data: rows.map(presentToolCall), has_more: false, next_cursor: null },
    };
  },
});

export const dashboardCallToolCallRoutes: RouteDefinition[] = [list];
