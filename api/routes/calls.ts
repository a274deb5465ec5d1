import { Call, TranscriptEntry } from '../../db/entities/index.js';
import { admitOutboundCall } from '../../lib/calls/admit-outbound-call.js';
import { presentCall } from '../../lib/calls/call-resource.js';
import { startCallWorkflow } from '../../lib/calls/start-call-workflow.js';
import { isE164 } from '../../lib/e164.js';
import { hasRecordingIfKnown } from '../../lib/recordings/recording-store.js';
import { recordingStoreFor } from '../../lib/recordings/recording-store-from-settings.js';
import { admissionRefusalError } from '../http/admission-errors.js';
import { callOutcomeUnknown, parameterInvalid } from '../http/errors.js';
import { linksTakingId } from '../http/links.js';
import { listQuerySchema, listSchema, paginate } from '../http/pagination.js';
import { type ApiContext, defineRoute, type RouteDefinition } from '../http/route.js';
import { startWorkflowInRequest } from '../http/temporal-request.js';
import { storeAnswerWithWork } from '../middleware/idempotency.js';
import { callCreateSchema, callListFilters, callSchema, transcriptSchema } from '../schemas/call.js';
import { callParams, findCallOr404 } from './call-route-parts.js';

// POST /calls: the body schema (400) is checked by the router; then admitOutboundCall
// (lib/calls/admit-outbound-call.ts) runs every other check in its documented order inside one
// transaction, and this route maps its refusals to the spec's errors:
//   agent_missing 404 resource_missing (agent_id); agent_not_published, agent_has_no_number,
//   from_number_not_assigned, from_number_required, emergency_number 422; call_rate_limited,
//   call_daily_limit, quota_exceeded 429 with Retry-After; trial_line_busy 422 call_rejected (not
//   stored under the Idempotency-Key). The answer under the key is written in the same
//   transaction (docs/api-platform.md, Idempotency).

const missing = { description: 'resource_missing: no such call in the workspace.' };

const create = defineRoute({
  method: 'POST',
  path: '/calls',
  operationId: 'createCall',
  summary: 'Start an outbound call; answers 202 in status queued without waiting for an answer.',
  scope: 'calls:write',
  body: callCreateSchema,
  idempotent: true,
  responses: {
    202: {
      description: 'The call, in status queued.',
      schema: callSchema,
      links: linksTakingId('call_id', [
        'getCall',
        'getCallTranscript',
        'getCallRecording',
        'deleteCallRecording',
        'listCallToolCalls',
      ]),
    },
    404: { description: 'resource_missing: no such agent.' },
    422: {
      description:
        "agent_not_published, agent_has_no_number, from_number_required, from_number_not_assigned, emergency_number, destination_not_allowed (param to: a high-cost number, a country outside the workspace's dialing countries, or the call's own number), call_rejected.",
    },
    429: { description: 'call_rate_limited, call_daily_limit, quota_exceeded; with Retry-After.' },
    503: { description: 'call_outcome_unknown: the start could not be confirmed; the call may be ringing.' },
  },
  async handler(ctx, { body }) {
    const { workspaceId } = ctx.state.auth;
    // A transfer target the integrator sets is a number the call may dial: E.164 like `to`.
    const transferTo = body.metadata?.transfer_to;
    if (transferTo !== undefined && !isE164(transferTo)) {
      throw parameterInvalid(
        'metadata.transfer_to',
        'metadata.transfer_to is a transfer target: an E.164 number such as +4722334455.',
      );
    }
    // The call and the answer under the Idempotency-Key commit together: once the call row
    // exists, no retry with the same key can admit a second call, whatever fails next.
    const { call, answer } = await ctx.state.em.transactional(async (em) => {
      const admission = await admitOutboundCall(
        em,
        workspaceId,
        {
          agentId: body.agent_id,
          to: body.to,
          from: body.from,
          metadata: body.metadata,
          ringTimeoutSeconds: body.ring_timeout_seconds,
          firstMessage: body.first_message,
        },
        ctx.state.deps.settings,
      );
      if (!admission.admitted) throw admissionRefusalError(admission.refusal);
      const { call } = admission;
      const answer = { status: 202, body: presentCall(call, { hasRecording: false }) };
      await storeAnswerWithWork(em, ctx, answer, { resourceId: call.id, confirmed: false });
      return { call, answer };
    });
    await confirmCallStart(ctx, call);
    return answer;
  },
  async resume(ctx, committed) {
    // The first request committed the call and stopped before Temporal confirmed its workflow.
    const call = await ctx.state.em.findOneOrFail(Call, { id: committed.resourceId! });
    await confirmCallStart(ctx, call);
  },
});

/**
 * Starts the call's workflow, or finds it started: the workflow id is the call's, so however
 * often this runs the number is dialed once. Unconfirmed, the answer is 503 call_outcome_unknown,
 * which is stored under the key, so the same key never dials again.
 */
async function confirmCallStart(ctx: ApiContext, call: Call): Promise<void> {
  try {
    await startWorkflowInRequest(ctx.state.deps, (client, settings) =>
      startCallWorkflow(client, settings, call),
    );
  } catch (error) {
    ctx.state.logger.error('call workflow start not confirmed', { error, call_id: call.id });
    throw callOutcomeUnknown();
  }
}

const list = defineRoute({
  method: 'GET',
  path: '/calls',
  operationId: 'listCalls',
  summary: 'List calls, newest first (analysis and has_recording are null in lists).',
  scope: 'calls:read',
  query: listQuerySchema(callListFilters),
  responses: { 200: { description: 'A page of calls.', schema: listSchema(callSchema) } },
  async handler(ctx, { query }) {
    const startedAt: Record<string, Date> = {};
    if (query.created_after) startedAt.$gte = new Date(query.created_after);
    if (query.created_before) startedAt.$lt = new Date(query.created_before);
    const where = {
      workspace: ctx.state.auth.workspaceId,
      ...(query.agent_id ? { agent: query.agent_id } : {}),
      ...(query.direction ? { direction: query.direction } : {}),
      ...(Object.keys(startedAt).length ? { startedAt } : {}),
    };
    const page = await paginate(ctx.state.em, Call, where, query, {
      orderBy: 'startedAt',
      present: (call) => presentCall(call, { inList: true }),
    });
    return { status: 200, body: page };
  },
});

const get = defineRoute({
  method: 'GET',
  path: '/calls/:call_id',
  operationId: 'getCall',
  summary: 'Get a call, with its analysis once ready.',
  scope: 'calls:read',
  params: callParams,
  responses: { 200: { description: 'Call', schema: callSchema }, 404: missing },
  async handler(ctx, { params }) {
    const call = await findCallOr404(ctx.state.em, ctx.state.auth.workspaceId, params.call_id);
    const recorded = await hasRecordingIfKnown(recordingStoreFor(ctx.state.deps.settings), call.id);
    return { status: 200, body: presentCall(call, { hasRecording: recorded }) };
  },
});

const transcript = defineRoute({
  method: 'GET',
  path: '/calls/:call_id/transcript',
  operationId: 'getCallTranscript',
  summary: 'Every line spoken on the call, in order.',
  scope: 'calls:read',
  params: callParams,
  responses: { 200: { description: 'Transcript', schema: transcriptSchema }, 404: missing },
  async handler(ctx, { params }) {
    const em = ctx.state.em;
    const call = await findCallOr404(em, ctx.state.auth.workspaceId, params.call_id);
    const lines = await em.find(TranscriptEntry, { call: call.id }, { orderBy: { index: 'asc' } });
    return {
      status: 200,
      body: {
        object: 'transcript',
        call_id: call.id,
        data: lines.map((line) => ({ index: line.index, role: line.role, text: line.text })),
      },
    };
  },
});

export const callRoutes: RouteDefinition[] = [list, create, get, transcript];
