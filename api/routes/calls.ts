import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { type Agent, Call, PhoneNumber, TranscriptEntry, Workspace } from '../../db/entities/index.js';
import { agentSnapshotOf } from '../../lib/calls/agent-snapshot.js';
import { checkCallLimits, hasCallOnTheLine, lockWorkspaceCalls } from '../../lib/calls/call-limits.js';
import { presentCall } from '../../lib/calls/call-resource.js';
import { isEmergencyNumber } from '../../lib/calls/emergency-numbers.js';
import { startCallWorkflow } from '../../lib/calls/start-call-workflow.js';
import {
  agentHasNoNumber,
  agentNotPublished,
  callDailyLimit,
  callOutcomeUnknown,
  callRateLimited,
  callRejected,
  emergencyNumber,
  fromNumberNotAssigned,
  fromNumberRequired,
  quotaExceeded,
  resourceMissing,
} from '../errors.js';
import { storeAnswerWithWork } from '../middleware/idempotency.js';
import { listQuerySchema, listSchema, type PageQuery, paginate } from '../pagination.js';
import { type ApiContext, defineRoute, type RouteDefinition } from '../route.js';
import {
  type CallCreate,
  type CallListFilters,
  callCreateSchema,
  callListFilters,
  callSchema,
  transcriptSchema,
} from '../schemas/call.js';
import { uuidParams } from '../schemas/common.js';
import { withTimeout } from '../with-timeout.js';
import { findAgentOr404 } from '../workspace-resources.js';

// POST /calls runs its checks in this order (docs/calls.md), all before anything is dialed:
//   1. body schema (router)            400
//   2. agent exists in the workspace   404 resource_missing (agent_id)
//   3. agent published                 422 agent_not_published
//   4. number to call from             422 agent_has_no_number, from_number_not_assigned, from_number_required
//   5. emergency number                422 emergency_number (to)
//   6. workspace limits                429 call_rate_limited, call_daily_limit, quota_exceeded (Retry-After)
//   7. trial plan: one call at a time  422 call_rejected (not stored under the Idempotency-Key)
// Steps 2 to 7 and the insert run in one transaction under a per-workspace advisory lock, so
// several API processes never admit more calls than the limits allow. The answer under the
// Idempotency-Key is written in the same transaction (docs/api-platform.md, Idempotency).

/** How long POST /calls waits for Temporal to confirm the start before answering 503 call_outcome_unknown. */
const WORKFLOW_START_TIMEOUT_MS = 10_000;

type CallParams = { call_id: string };
const callParams = uuidParams('call_id');
const missing = { description: 'resource_missing: no such call in the workspace.' };

const create = defineRoute<Record<string, never>, Record<string, never>, CallCreate>({
  method: 'POST',
  path: '/calls',
  operationId: 'createCall',
  summary: 'Start an outbound call; answers 202 in status queued without waiting for an answer.',
  scope: 'calls:write',
  body: callCreateSchema,
  idempotent: true,
  responses: {
    202: { description: 'The call, in status queued.', schema: callSchema },
    404: { description: 'resource_missing: no such agent.' },
    422: {
      description:
        'agent_not_published, agent_has_no_number, from_number_required, from_number_not_assigned, emergency_number, call_rejected.',
    },
    429: { description: 'call_rate_limited, call_daily_limit, quota_exceeded; with Retry-After.' },
    503: { description: 'call_outcome_unknown: the start could not be confirmed; the call may be ringing.' },
  },
  async handler(ctx, { body }) {
    const { workspaceId } = ctx.state.auth;
    // The call and the answer under the Idempotency-Key commit together: once the call row
    // exists, no retry with the same key can admit a second call, whatever fails next.
    const { call, answer } = await ctx.state.em.transactional(async (em) => {
      const call = await admitCall(em, workspaceId, body);
      const answer = { status: 202, body: presentCall(call) };
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
    const client = await ctx.state.deps.temporal();
    await withTimeout(startCallWorkflow(client, ctx.state.deps.settings, call), WORKFLOW_START_TIMEOUT_MS);
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return;
    ctx.state.logger.error('call workflow start not confirmed', { error, call_id: call.id });
    throw callOutcomeUnknown();
  }
}

/** The checks of steps 2 to 7 and the insert of the queued call, inside the caller's transaction. */
async function admitCall(em: EntityManager, workspaceId: string, body: CallCreate): Promise<Call> {
  await lockWorkspaceCalls(em, workspaceId);
  const agent = await findAgentOr404(em, workspaceId, body.agent_id);
  if (agent.status !== 'published') throw agentNotPublished();
  const from = await numberToCallFrom(em, agent, body.from);
  if (isEmergencyNumber(body.to)) throw emergencyNumber();

  const now = new Date();
  const workspace = await em.findOneOrFail(Workspace, { id: workspaceId });
  const refusal = await checkCallLimits(em, workspace, now);
  if (refusal?.code === 'call_rate_limited') throw callRateLimited(refusal.retryAfterSeconds);
  if (refusal?.code === 'call_daily_limit') throw callDailyLimit(refusal.retryAfterSeconds);
  if (refusal?.code === 'quota_exceeded') throw quotaExceeded(refusal.retryAfterSeconds);
  if (workspace.plan === 'trial' && (await hasCallOnTheLine(em, workspaceId, now))) {
    throw callRejected('The free trial allows one call at a time; retry when the current call has ended.');
  }

  const call = em.create(Call, {
    id: randomUUID(),
    workspace: workspaceId,
    agent: agent.id,
    direction: 'outbound',
    channel: 'phone',
    status: 'queued',
    fromNumber: from,
    toNumber: body.to,
    startedAt: now,
    metadata: body.metadata ?? {},
    hasRecording: false,
    ringTimeoutSeconds: body.ring_timeout_seconds ?? 30,
    firstMessage: body.first_message ?? null,
    // The agent as it is now: a PATCH during the call applies from the next one.
    agentSnapshot: agentSnapshotOf(agent),
  });
  await em.flush();
  return call;
}

/**
 * The caller id: `from` when it is one of the agent's numbers, else the agent's only number.
 * An agent without numbers cannot call at all, whatever `from` says.
 */
async function numberToCallFrom(em: EntityManager, agent: Agent, from: string | undefined): Promise<string> {
  const numbers = await em.find(
    PhoneNumber,
    { workspace: agent.workspace, agent: agent.id, status: 'active' },
    { orderBy: { createdAt: 'asc' } },
  );
  if (numbers.length === 0) throw agentHasNoNumber();
  if (from !== undefined) {
    if (!numbers.some((number) => number.number === from)) throw fromNumberNotAssigned();
    return from;
  }
  if (numbers.length > 1) throw fromNumberRequired();
  return numbers[0].number;
}

const list = defineRoute<Record<string, never>, PageQuery & CallListFilters>({
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

async function findCallOr404(em: EntityManager, workspaceId: string, callId: string): Promise<Call> {
  const call = await em.findOne(Call, { id: callId, workspace: workspaceId });
  if (!call) throw resourceMissing('call', 'call_id');
  return call;
}

const get = defineRoute<CallParams>({
  method: 'GET',
  path: '/calls/:call_id',
  operationId: 'getCall',
  summary: 'Get a call, with its analysis once ready.',
  scope: 'calls:read',
  params: callParams,
  responses: { 200: { description: 'Call', schema: callSchema }, 404: missing },
  async handler(ctx, { params }) {
    const call = await findCallOr404(ctx.state.em, ctx.state.auth.workspaceId, params.call_id);
    return { status: 200, body: presentCall(call) };
  },
});

const transcript = defineRoute<CallParams>({
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
