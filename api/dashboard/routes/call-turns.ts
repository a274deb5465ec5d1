import { Call } from '../../../db/entities/index.js';
import { type AgentTurnLatency, callProgressQuery } from '../../../lib/temporal/call-messages.js';
import { callWorkflowId } from '../../../lib/temporal/workflow-contracts.js';
import { resourceMissing } from '../../http/errors.js';
import { defineRoute, type RouteDefinition } from '../../http/route.js';
import { askTemporal } from '../../http/temporal-request.js';
import { uuidParams } from '../../schemas/common.js';

// Each agent turn's latency, for the call page: what the call workflow's `callProgress` query
// holds (the last 50 turns). For a call with audio each turn also has `fromSpeechEnd`: from the end
// of the caller's speech to their transcript line, the answer's first token and the first agent
// audio. A call whose workflow Temporal no longer keeps (past its retention) has none.

const list = defineRoute({
  method: 'GET',
  path: '/calls/:call_id/turns',
  operationId: 'listCallTurns',
  summary: "Each agent turn's latency, as the call workflow measured it.",
  scope: 'calls:read',
  params: uuidParams('call_id'),
  responses: { 200: { description: 'Turns, oldest first.' } },
  async handler(ctx, { params }) {
    const { em, auth, deps } = ctx.state;
    const call = await em.findOne(
      Call,
      { id: params.call_id, workspace: auth.workspaceId },
      { fields: ['id'] },
    );
    if (!call) throw resourceMissing('call', 'call_id');
    let turns: AgentTurnLatency[] = [];
    try {
      const progress = await askTemporal(deps, (client) =>
        client.workflow.getHandle(callWorkflowId(call.id)).query(callProgressQuery),
      );
      turns = progress.agentTurns;
    } catch (error) {
      if (!(error instanceof Error && error.name === 'WorkflowNotFoundError')) throw error;
    }
    return { status: 200, body: { object: 'list', data: turns, has_more: false, next_cursor: null } };
  },
});

export const callTurnRoutes: RouteDefinition[] = [list];
