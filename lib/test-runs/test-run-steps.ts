import { randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Agent, Call, type TestResultStatus, TestRun, TestRunResult } from '../../db/entities/index.js';
import { admitToWorkspace } from '../calls/admit-to-workspace.js';
import { agentSnapshotOf } from '../calls/agent-snapshot.js';
import { callWorkflowInputOf } from '../calls/start-call-workflow.js';
import type { Settings } from '../settings.js';
import type { TestResultProgress } from '../temporal/test-run-messages.js';
import type { CallWorkflowInput, TestCallerResult } from '../temporal/workflow-contracts.js';
import { MAX_RUNNING_TEST_RUNS } from './test-run-resource.js';

// A test run's steps that touch the database (activities/test-runs.ts runs them for the workflow,
// workflows/test-run-workflow.ts). Each is safe to retry: a run is claimed, a result's call made
// and a result judged at most once, by conditional updates under row locks.

/** Every result of the run, as its progress query shows them. */
export async function loadTestRunProgress(
  em: EntityManager,
  testRunId: string,
): Promise<TestResultProgress[]> {
  const run = await em.findOneOrFail(TestRun, { id: testRunId });
  const rows = await em.find(TestRunResult, { testRun: testRunId }, { orderBy: { position: 'asc' } });
  return rows.map((row) => progressOf(run, row));
}

function progressOf(run: TestRun, row: TestRunResult): TestResultProgress {
  return {
    position: row.position,
    scenario: run.scenarios[row.scenarioIndex]?.name ?? '',
    run: row.run,
    call_id: row.callId ?? null,
    status: row.status,
    reason: row.reason ?? null,
  };
}

/**
 * `running` when the run may go (fewer than 3 of the workspace's runs run), `full` when it must
 * wait, `canceled` when it was canceled before it started. A lock per workspace makes two runs
 * claiming at once count each other.
 */
export async function claimTestRunSlot(
  em: EntityManager,
  input: { testRunId: string; workspaceId: string },
): Promise<'running' | 'full' | 'canceled'> {
  return em.transactional(async (tx) => {
    await tx
      .getConnection()
      .execute(
        "select pg_advisory_xact_lock(hashtextextended('test-runs:' || ?, 0))",
        [input.workspaceId],
        'all',
        tx.getTransactionContext(),
      );
    const run = await tx.findOneOrFail(TestRun, { id: input.testRunId });
    if (run.status === 'running') return 'running';
    if (run.status !== 'queued') return 'canceled';
    const running = await tx.count(TestRun, { workspace: input.workspaceId, status: 'running' });
    if (running >= MAX_RUNNING_TEST_RUNS) return 'full';
    run.status = 'running';
    await tx.flush();
    return 'running';
  });
}

export type TestCallStart =
  | { started: true; callId: string; input: CallWorkflowInput }
  /** The workspace's trial line is busy: try again shortly. */
  | { started: false; wait: true }
  /** It cannot be made: the result is `errored` with this reason. */
  | { started: false; wait: false; reason: string }
  /** The run was canceled (the API wrote it; the workflow may not have heard): start nothing more. */
  | { started: false; wait: false; canceled: true };

/**
 * Makes the result's call: a `web` call of the agent (as it is now, draft or not) whose far end
 * is the scenario's caller, judged by the scenario's success criteria with the agent's data schema.
 * A retry finds the call already made.
 */
export async function startTestCall(
  em: EntityManager,
  settings: Pick<Settings, 'taskQueuePrefix'>,
  input: { testRunId: string; position: number },
): Promise<TestCallStart> {
  return em.transactional(async (tx) => {
    const result = await tx.findOneOrFail(
      TestRunResult,
      { testRun: input.testRunId, position: input.position },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    if (result.callId) {
      const call = await tx.findOneOrFail(Call, { id: result.callId });
      return {
        started: true,
        callId: call.id,
        input: callWorkflowInputOf(call, settings, { answered: true }),
      };
    }
    const run = await tx.findOneOrFail(TestRun, { id: input.testRunId });
    if (run.status === 'canceled') return { started: false, wait: false, canceled: true };
    const agent = await tx.findOne(Agent, { id: run.agent, deletedAt: null });
    if (!agent)
      return { started: false, wait: false, reason: 'The agent was deleted before this call started.' };
    const now = new Date();
    const refusal = await admitToWorkspace(tx, run.workspace, 'inbound', now);
    if (refusal?.code === 'trial_line_busy') return { started: false, wait: true };
    if (refusal) {
      return { started: false, wait: false, reason: `The workspace took no more calls (${refusal.code}).` };
    }
    const scenario = run.scenarios[result.scenarioIndex]!;
    const call = tx.create(Call, {
      id: randomUUID(),
      workspace: run.workspace,
      agent: agent.id,
      direction: 'inbound',
      channel: 'web',
      // It rings at our side until the workflow picks it up, moments later.
      status: 'ringing',
      fromNumber: null,
      toNumber: null,
      startedAt: now,
      ringTimeoutSeconds: null,
      firstMessage: null,
      metadata: { test_run_id: run.id, scenario: scenario.name, run: String(result.run) },
      fromLabel: `Test: ${scenario.name}`.slice(0, 200),
      // The verdict is the scenario's: its criteria, with the agent's own data schema.
      agentSnapshot: {
        ...agentSnapshotOf(agent),
        analysisPlan: {
          dataSchema: agent.analysisPlan?.dataSchema ?? null,
          successCriteria: scenario.successCriteria,
        },
      },
      testCaller: { testRunId: run.id, prompt: scenario.callerPrompt, maxTurns: scenario.maxTurns },
      mediaGateway: null,
    });
    result.callId = call.id;
    await tx.flush();
    return { started: true, callId: call.id, input: callWorkflowInputOf(call, settings, { answered: true }) };
  });
}

/** The verdict of a result whose call is over (or could not be made), written once. */
export async function judgeTestCall(
  em: EntityManager,
  input: {
    testRunId: string;
    position: number;
    /** Why it errored without a call, or the run's cancel during the call. */
    erroredBecause?: string;
    caller?: TestCallerResult | null;
  },
): Promise<TestResultProgress> {
  return em.transactional(async (tx) => {
    const run = await tx.findOneOrFail(TestRun, { id: input.testRunId });
    const result = await tx.findOneOrFail(
      TestRunResult,
      { testRun: input.testRunId, position: input.position },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    if (result.status === 'pending') {
      const call = result.callId ? await tx.findOne(Call, { id: result.callId }) : null;
      const verdict = verdictOf(call, input);
      result.status = verdict.status;
      result.reason = verdict.reason;
      await tx.flush();
    }
    return progressOf(run, result);
  });
}

function verdictOf(
  call: Call | null,
  input: { erroredBecause?: string; caller?: TestCallerResult | null },
): { status: TestResultStatus; reason: string } {
  if (input.erroredBecause) return { status: 'errored', reason: input.erroredBecause };
  if (!call) return { status: 'errored', reason: 'The call was not made.' };
  if (call.status !== 'completed') return { status: 'errored', reason: `The call ended ${call.status}.` };
  if (call.endReason === 'agent_error') {
    return { status: 'errored', reason: 'The agent could not go on with the call (agent_error).' };
  }
  if (input.caller?.failure) return { status: 'errored', reason: `${input.caller.failure}.` };
  const success = call.analysis?.success ?? null;
  if (success === null) {
    return {
      status: 'errored',
      reason: 'No verdict: the language model gave none for the success criteria.',
    };
  }
  const because = call.analysis?.success_reason ?? null;
  return { status: success ? 'passed' : 'failed', reason: because ?? (success ? 'Passed.' : 'Failed.') };
}

/**
 * The run is over: completed, or canceled (then every result still pending is `errored`, its
 * call never made). A run canceled by the API keeps its cancel's time.
 */
export async function finishTestRun(
  em: EntityManager,
  input: { testRunId: string; canceled: boolean },
): Promise<void> {
  await em.transactional(async (tx) => {
    const run = await tx.findOneOrFail(
      TestRun,
      { id: input.testRunId },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    if (input.canceled) {
      await tx.nativeUpdate(
        TestRunResult,
        { testRun: run.id, status: 'pending' },
        { status: 'errored', reason: 'The run was canceled before this call started.' },
      );
    }
    if (run.status === 'queued' || run.status === 'running') {
      run.status = input.canceled ? 'canceled' : 'completed';
      run.completedAt = new Date();
    }
    await tx.flush();
  });
}
