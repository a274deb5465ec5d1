import { WorkflowNotFoundError } from '@temporalio/client';
import { Call, User } from '../../../db/entities/index.js';
import { OperatorError } from '../../../lib/accounts.js';
import { startWebCall } from '../../../lib/calls/incoming-calls.js';
import { browserCallerHangUpSignal, browserCallerSaysSignal } from '../../../lib/temporal/call-messages.js';
import { farEndWorkflowId } from '../../../lib/temporal/workflow-contracts.js';
import { findAgentOr404 } from '../../auth/workspace-resources.js';
import { workspaceRefusalError } from '../../http/admission-errors.js';
import { resourceMissing, unprocessable } from '../../http/errors.js';
import { type ApiContext, defineRoute, type RouteDefinition } from '../../http/route.js';
import { callCreateSchema } from '../../schemas/call.js';
import { uuidParams, uuidSchema } from '../../schemas/common.js';
import { talkGateway } from '../talk-gateway.js';
import { hangUpTalkCall } from '../talk-hang-up.js';

// The test panel: a `web` call to a draft or published agent through the same call workflow as
// every call, with the person in the browser as its far end (workflows/browser-caller-workflow.ts),
// and the metadata the person entered (the values of the agent's `{{variables}}`).
// Starting one is placing a call, so it needs what POST /calls needs (calls:write; not a viewer).
// The agent's lines reach the browser through GET /dashboard/api/calls/{call_id}/live (api/dashboard/call-events.ts).
// With `talk` the person speaks instead of typing: the call is pinned to the media gateway, and the
// page streams the microphone on GET …/{call_id}/talk (api/dashboard/talk-socket.ts); the gateway
// is then its far end, as for a phone call that came in with a stream.

const callParams = uuidParams('call_id');

async function findTestCallOr404(ctx: ApiContext, callId: string): Promise<Call> {
  const call = await ctx.state.em.findOne(Call, {
    id: callId,
    workspace: ctx.state.auth.workspaceId,
    browserFarEnd: true,
  });
  if (!call) throw resourceMissing('test call', 'call_id');
  return call;
}

const start = defineRoute({
  method: 'POST',
  path: '/test-calls',
  operationId: 'startTestCall',
  summary: 'Start a test-panel call to an agent; the signed-in person is the caller.',
  scope: 'calls:write',
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['agent_id'],
    properties: {
      agent_id: uuidSchema,
      // The call's variables (`{{name}}` in the agent's greeting and prompt), as POST /calls takes them.
      metadata: callCreateSchema.properties.metadata,
      // Talk: the microphone instead of typing (a call with audio, recorded).
      talk: { type: 'boolean' },
    },
  },
  responses: {
    201: { description: 'The call id.' },
    422: {
      description:
        'agent_not_ready; call_rejected (trial plan: one call at a time); talk_unavailable (no speech configured).',
    },
    429: { description: 'quota_exceeded: the call minutes of the month are used; with Retry-After.' },
  },
  async handler(ctx, { body }) {
    const { em, auth, deps } = ctx.state;
    const agent = await findAgentOr404(em, auth.workspaceId, body.agent_id);
    const person = await em.findOneOrFail(User, { id: auth.userId });
    const gateway = talkGateway(deps.settings);
    if (body.talk && !gateway.available) {
      throw unprocessable('talk_unavailable', gateway.reason, { param: 'talk', storable: false });
    }
    try {
      const web = await startWebCall(
        { em, temporal: await deps.temporal(), settings: deps.settings },
        {
          agentId: agent.id,
          fromLabel: `Test panel (${person.email})`.slice(0, 200),
          metadata: body.metadata,
          browserFarEnd: true,
          ...(body.talk && gateway.available ? { mediaGateway: await gateway.pick() } : {}),
        },
      );
      // A test call is a call: the workspace's minutes quota and trial line apply, as POST /calls says them.
      if (!web.started) throw workspaceRefusalError(web.refusal);
      return { status: 201, body: { object: 'test_call', call_id: web.callId } };
    } catch (error) {
      if (error instanceof OperatorError)
        throw unprocessable('agent_not_ready', error.message, { param: 'agent_id' });
      throw error;
    }
  },
});

const say = defineRoute({
  method: 'POST',
  path: '/test-calls/:call_id/say',
  operationId: 'sayInTestCall',
  summary: "The caller's next line.",
  scope: 'calls:write',
  params: callParams,
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['line', 'text'],
    properties: {
      line: { type: 'integer', minimum: 0, maximum: 10_000 },
      text: { type: 'string', minLength: 1, maxLength: 2000, pattern: '\\S' },
    },
  },
  responses: { 202: { description: 'Passed on to the call.' } },
  async handler(ctx, { params, body }) {
    const call = await findTestCallOr404(ctx, params.call_id);
    if (call.endedAt) throw callEnded();
    try {
      await (await ctx.state.deps.temporal()).workflow
        .getHandle(farEndWorkflowId(call.id))
        .signal(browserCallerSaysSignal, { line: body.line, text: body.text.trim() });
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) throw callEnded();
      throw error;
    }
    return { status: 202, body: { object: 'test_call', call_id: call.id } };
  },
});

const hangUp = defineRoute({
  method: 'POST',
  path: '/test-calls/:call_id/hang-up',
  operationId: 'hangUpTestCall',
  summary: 'The caller hangs up (harmless when the call already ended).',
  scope: 'calls:write',
  params: callParams,
  responses: { 202: { description: 'Passed on to the call.' } },
  async handler(ctx, { params }) {
    const call = await findTestCallOr404(ctx, params.call_id);
    const temporal = await ctx.state.deps.temporal();
    // A Talk call: its socket failed before the microphone reached the gateway (talk-hang-up.ts).
    if (call.mediaGateway) {
      await hangUpTalkCall(temporal, call);
      return { status: 202, body: { object: 'test_call', call_id: call.id } };
    }
    try {
      await temporal.workflow.getHandle(farEndWorkflowId(call.id)).signal(browserCallerHangUpSignal);
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
    }
    return { status: 202, body: { object: 'test_call', call_id: call.id } };
  },
});

const callEnded = () =>
  unprocessable('call_ended', 'The call has ended.', { param: 'call_id', storable: false });

export const testCallRoutes: RouteDefinition[] = [start, say, hangUp];
