import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { TestRun } from '../../db/entities/index.js';
import { callerEndpointFromSettings } from '../../lib/test-runs/caller-model.js';
import { createTestRun } from '../../lib/test-runs/create-test-run.js';
import { presentTestRun, resultsOf } from '../../lib/test-runs/test-run-resource.js';
import { cancelTestRunWorkflow, startTestRunWorkflow } from '../../lib/test-runs/test-run-workflow-client.js';
import { findAgentOr404 } from '../auth/workspace-resources.js';
import {
  agentNotReady,
  llmRequired,
  resourceMissing,
  testRunStateInvalid,
  upstreamUnavailable,
} from '../http/errors.js';
import { linksTakingId } from '../http/links.js';
import { listQuerySchema, listSchema, paginate } from '../http/pagination.js';
import { type ApiContext, defineRoute, type RouteDefinition } from '../http/route.js';
import { askTemporal, startWorkflowInRequest } from '../http/temporal-request.js';
import { storeAnswerWithWork } from '../middleware/idempotency.js';
import { uuidParams } from '../schemas/common.js';
import { DEFAULT_MAX_TURNS, testRunCreateSchema, testRunSchema } from '../schemas/test-run.js';
import { agentParams } from './agent-route-parts.js';

// Test runs (post-call spec section 2): POST starts one (202, `queued`) whose workflow
// (`test-run-<id>`) runs the conversations; GET reads it and the agent's runs; cancel ends it.
// The run and its results are in PostgreSQL, written by the workflow as calls start and end.

const testRunParams = uuidParams('test_run_id');
const runMissing = { description: 'resource_missing: no such test run in the workspace.' };

/** The workspace's test run, or 404 at `test_run_id`; `em` and `lockMode` for a change under its row lock. */
async function readRun(
  ctx: ApiContext,
  testRunId: string,
  options: { em?: EntityManager; lockMode?: LockMode } = {},
) {
  const em = options.em ?? ctx.state.em;
  const run = await em.findOne(
    TestRun,
    { id: testRunId, workspace: ctx.state.auth.workspaceId },
    options.lockMode ? { lockMode: options.lockMode } : {},
  );
  if (!run) throw resourceMissing('test run', 'test_run_id');
  return run;
}

async function present(ctx: ApiContext, run: TestRun) {
  return presentTestRun(run, (await resultsOf(ctx.state.em, [run])).get(run.id) ?? []);
}

async function confirmStart(ctx: ApiContext, run: TestRun): Promise<void> {
  try {
    await startWorkflowInRequest(ctx.state.deps, (client, settings) =>
      startTestRunWorkflow(client, settings, run),
    );
  } catch (error) {
    ctx.state.logger.error('test run workflow start not confirmed', { error, test_run_id: run.id });
    throw upstreamUnavailable(
      'The test run was created but its start was not confirmed; retry with the same Idempotency-Key.',
    );
  }
}

const create = defineRoute({
  method: 'POST',
  path: '/agents/:agent_id/test-runs',
  operationId: 'createTestRun',
  summary:
    'Run simulated conversations against an agent (draft or not): a language model plays each scenario’s caller over a web call, and each call is judged by its success criteria.',
  scope: 'calls:write',
  params: agentParams,
  body: testRunCreateSchema,
  idempotent: true,
  responses: {
    202: {
      description: 'The test run, queued: it runs when fewer than 3 of the workspace’s runs are running.',
      schema: testRunSchema,
      links: linksTakingId('test_run_id', ['getTestRun', 'cancelTestRun']),
    },
    404: { description: 'resource_missing: no such agent.' },
    409: { description: 'idempotency_key_reused or idempotency_request_in_progress.' },
    422: {
      description:
        'llm_required: no language model is configured to play the callers; agent_not_ready: the agent is archived.',
    },
    503: { description: 'upstream_unavailable: created, start not confirmed; retry with the same key.' },
  },
  async handler(ctx, { params, body }) {
    const { workspaceId } = ctx.state.auth;
    const { run, answer } = await ctx.state.em.transactional(async (em) => {
      const agent = await findAgentOr404(em, workspaceId, params.agent_id);
      if (!callerEndpointFromSettings(ctx.state.deps.settings)) throw llmRequired();
      if (agent.status === 'archived') throw agentNotReady('An archived agent cannot be tested.', 'agent_id');
      const { run, results } = await createTestRun(em, {
        workspaceId,
        agentId: agent.id,
        scenarios: body.scenarios.map((scenario) => ({
          name: scenario.name,
          callerPrompt: scenario.caller_prompt,
          successCriteria: scenario.success_criteria,
          maxTurns: scenario.max_turns ?? DEFAULT_MAX_TURNS,
        })),
        runsPerScenario: body.runs_per_scenario ?? 1,
      });
      const answer = { status: 202, body: presentTestRun(run, results) };
      await storeAnswerWithWork(em, ctx, answer, { resourceId: run.id, confirmed: false });
      return { run, answer };
    });
    await confirmStart(ctx, run);
    return answer;
  },
  async resume(ctx, committed) {
    await confirmStart(ctx, await ctx.state.em.findOneOrFail(TestRun, { id: committed.resourceId! }));
  },
});

const list = defineRoute({
  method: 'GET',
  path: '/agents/:agent_id/test-runs',
  operationId: 'listTestRuns',
  summary: 'List an agent’s test runs, newest first.',
  scope: 'calls:read',
  params: agentParams,
  query: listQuerySchema(),
  responses: {
    200: { description: 'A page of test runs.', schema: listSchema(testRunSchema) },
    404: { description: 'resource_missing: no such agent.' },
  },
  async handler(ctx, { params, query }) {
    const { workspaceId } = ctx.state.auth;
    const agent = await findAgentOr404(ctx.state.em, workspaceId, params.agent_id);
    const page = await paginate(ctx.state.em, TestRun, { workspace: workspaceId, agent: agent.id }, query, {
      orderBy: 'createdAt',
      present: (run) => run,
    });
    const results = await resultsOf(ctx.state.em, page.data);
    return {
      status: 200,
      body: { ...page, data: page.data.map((run) => presentTestRun(run, results.get(run.id) ?? [])) },
    };
  },
});

const get = defineRoute({
  method: 'GET',
  path: '/test-runs/:test_run_id',
  operationId: 'getTestRun',
  summary: 'Get a test run with its results so far.',
  scope: 'calls:read',
  params: testRunParams,
  responses: { 200: { description: 'TestRun', schema: testRunSchema }, 404: runMissing },
  async handler(ctx, { params }) {
    return { status: 200, body: await present(ctx, await readRun(ctx, params.test_run_id)) };
  },
});

const cancel = defineRoute({
  method: 'POST',
  path: '/test-runs/:test_run_id/cancel',
  operationId: 'cancelTestRun',
  summary: 'Cancel a test run: no more calls start, the calls under way are hung up (their results errored).',
  scope: 'calls:write',
  params: testRunParams,
  responses: {
    200: { description: 'The test run, canceled.', schema: testRunSchema },
    404: runMissing,
    422: { description: 'test_run_state_invalid: the run is already completed or canceled.' },
  },
  async handler(ctx, { params }) {
    const run = await ctx.state.em.transactional(async (em) => {
      const run = await readRun(ctx, params.test_run_id, { em, lockMode: LockMode.PESSIMISTIC_WRITE });
      if (run.status === 'completed' || run.status === 'canceled') {
        throw testRunStateInvalid(`The test run is already ${run.status}.`);
      }
      run.status = 'canceled';
      run.completedAt = new Date();
      await em.flush();
      return run;
    });
    // Best effort: without the signal the workflow finds the cancel before its next call starts.
    try {
      await askTemporal(ctx.state.deps, (client, settings) => cancelTestRunWorkflow(client, settings, run));
    } catch (error) {
      ctx.state.logger.warn('test run workflow not signalled', { error, test_run_id: run.id });
    }
    return { status: 200, body: await present(ctx, run) };
  },
});

export const testRunRoutes: RouteDefinition[] = [create, list, get, cancel];
