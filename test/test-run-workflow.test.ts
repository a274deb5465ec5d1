import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Call, TestRun } from '../db/entities/index.js';
import type { TranscriptLine } from '../lib/calls/transcript.js';
import { type TestRunProgress, testRunProgressQuery } from '../lib/temporal/test-run-messages.js';
import {
  callWorkflowId,
  farEndWorkflowId,
  type TestCallerResult,
  type TestRunWorkflowResult,
  testRunWorkflowId,
} from '../lib/temporal/workflow-contracts.js';
import { createTestRun } from '../lib/test-runs/create-test-run.js';
import { cancelTestRunWorkflow, startTestRunWorkflow } from '../lib/test-runs/test-run-workflow-client.js';
import { type VoiceRuntime, VoiceRuntimeError } from '../lib/voice-runtime/voice-runtime.js';
import { type AgentFixture, createAgentFixture } from './support/call-fixtures.js';
import {
  type ChatStandIn,
  type SeenRequest,
  type StandInReply,
  startChatStandIn,
} from './support/chat-completions-stand-in.js';
import { keepHistory } from './support/kept-histories.js';
import {
  runWorkers,
  startTimeSkippingCallStack,
  type TimeSkippingCallStack,
} from './support/time-skipping-call-stack.js';

// The test-run workflow (post-call spec section 2) on the time-skipping server: the real call
// workflows as its children, each call's far end a caller the language model plays (a local
// OpenAI-compatible stand-in over real HTTP), each verdict the analysis plan's. The agent is a
// small runtime of the test's own. Waits for a running slot and the trial line are durable timers,
// skipped.

let stack: TimeSkippingCallStack;
let standIn: ChatStandIn;
let fixture: AgentFixture;

/** The agent: greets, notes each line, says goodbye to a goodbye, and fails on "crash". */
const agent: VoiceRuntime = {
  runsInProcess: true,
  openingLine: async () => 'Hi, Acme Dental.',
  async respond(_context, transcript: TranscriptLine[]) {
    const heard = transcript.at(-1)?.text ?? '';
    if (/crash/i.test(heard)) throw new VoiceRuntimeError('the model refused the request', false);
    if (/\bbye\b/i.test(heard)) return { say: 'Goodbye!', next: { kind: 'hang_up' } };
    return { say: `Noted: ${heard}`, next: { kind: 'continue' } };
  },
};

const isCaller = (request: SeenRequest) =>
  String(request.body.messages[0]?.content).startsWith("You are testing a business's AI voice agent");
/** What the caller says: its part's first word, then goodbye. */
function callerLine(request: SeenRequest): StandInReply {
  const part = String(request.body.messages[0].content).split('Your part: ')[1]!;
  const said = request.body.messages.filter((m: { role: string }) => m.role === 'assistant').length;
  if (/^talker/.test(part)) return { kind: 'json', text: `Line ${said + 1} of a long talk.` };
  if (said === 0) return { kind: 'json', text: `${part.split(' ')[0]} please.` };
  return { kind: 'json', text: 'Thanks, bye!', toolCalls: [{ name: 'end_call', arguments: '{}' }] };
}
/** The verdict: criteria with PASS pass, with FAIL fail; anything else gets no valid verdict. */
function verdict(request: SeenRequest): StandInReply {
  const criteria = String(request.body.messages[0].content);
  if (/PASS/.test(criteria))
    return { kind: 'json', text: JSON.stringify({ success: true, reason: 'It passed.' }) };
  if (/FAIL/.test(criteria))
    return { kind: 'json', text: JSON.stringify({ success: false, reason: 'It failed.' }) };
  return { kind: 'json', text: 'not json' };
}
let hold: Promise<void> | null = null;
async function model(request: SeenRequest): Promise<StandInReply> {
  if (isCaller(request)) {
    await hold;
    return callerLine(request);
  }
  if (request.body.response_format?.json_schema?.name === 'call_verdict') return verdict(request);
  return { kind: 'status', status: 400 };
}

before(async () => {
  [stack, standIn] = await Promise.all([
    startTimeSkippingCallStack({ prefix: 'trwf', logLevel: 'ERROR' }),
    startChatStandIn(model),
  ]);
  // Callers and verdicts by the stand-in; the agent is the test's own (ports.voiceRuntime).
  stack.settings.voiceLlm = { url: standIn.url, apiKey: undefined, model: 'stand-in', timeoutMs: 5_000 };
  fixture = await createAgentFixture(stack.db.orm, { status: 'draft' });
});
after(async () => {
  await stack?.close();
  await standIn?.close();
});

type Scenario = { name: string; callerPrompt: string; successCriteria: string; maxTurns: number };
const scenario = (
  name: string,
  successCriteria: string,
  callerPrompt = 'booking a visit',
  maxTurns = 12,
): Scenario => ({
  name,
  callerPrompt,
  successCriteria,
  maxTurns,
});

async function newRun(scenarios: Scenario[], runsPerScenario = 1, workspaceId = fixture.workspaceId) {
  const em = stack.db.orm.em.fork();
  const agentId =
    workspaceId === fixture.workspaceId
      ? fixture.agentId
      : (await createAgentFixture(stack.db.orm, { workspaceId })).agentId;
  const { run } = await createTestRun(em, { workspaceId, agentId, scenarios, runsPerScenario });
  return run;
}

const resultRows = async (runId: string) =>
  (await stack.db.orm.em
    .fork()
    .getConnection()
    .execute(
      'select position, run, call_id, status, reason from test_run_results where test_run_id = ? order by position',
      [runId],
    )) as { position: number; run: number; call_id: string | null; status: string; reason: string | null }[];

async function inEnvironment<T>(fn: (env: TestWorkflowEnvironment) => Promise<T>): Promise<T> {
  return stack.withEnvironment(async (env) => {
    const workers = await stack.workers(env, { ports: { voiceRuntime: agent } });
    return runWorkers(workers, () => fn(env));
  });
}

test('each scenario’s runs are calls of the agent, children of the run, judged by their criteria: passed, failed, errored', async () => {
  const run = await newRun(
    [
      scenario('Books', 'PASS when booked', 'Cleaning on Tuesday'),
      scenario('Complains', 'FAIL always', 'Complaint about a bill'),
      scenario('No verdict', 'undecidable', 'Question'),
      scenario('Breaks the agent', 'PASS', 'crash the agent now'),
    ],
    2,
  );
  const result = await inEnvironment(async (env) => {
    await startTestRunWorkflow(env.client, stack.settings, run);
    const handle = env.client.workflow.getHandle(testRunWorkflowId(run.id));
    const done = (await handle.result()) as TestRunWorkflowResult;
    const progress = await handle.query(testRunProgressQuery);
    assert.equal(progress.status, 'completed');
    assert.deepEqual(
      progress.results.map((r) => [r.scenario, r.run, r.status]),
      [
        ['Books', 1, 'passed'],
        ['Books', 2, 'passed'],
        ['Complains', 1, 'failed'],
        ['Complains', 2, 'failed'],
        ['No verdict', 1, 'errored'],
        ['No verdict', 2, 'errored'],
        ['Breaks the agent', 1, 'errored'],
        ['Breaks the agent', 2, 'errored'],
      ],
    );
    // Every call is a child of the run.
    for (const { call_id } of progress.results) {
      const call = await env.client.workflow.getHandle(callWorkflowId(call_id!)).describe();
      assert.equal(call.parentExecution?.workflowId, testRunWorkflowId(run.id));
    }
    // Replayed by test/workflow-histories.test.ts: the run, a passed call, its caller.
    const first = progress.results[0]!.call_id!;
    keepHistory('test-run', await handle.fetchHistory());
    keepHistory('test-run-call', await env.client.workflow.getHandle(callWorkflowId(first)).fetchHistory());
    keepHistory(
      'test-run-caller',
      await env.client.workflow.getHandle(farEndWorkflowId(first)).fetchHistory(),
    );
    return done;
  });
  assert.deepEqual(result, { status: 'completed', passed: 2, failed: 2, errored: 4 });

  const rows = await resultRows(run.id);
  assert.deepEqual(
    rows.map((row) => row.reason),
    [
      'It passed.',
      'It passed.',
      'It failed.',
      'It failed.',
      'No verdict: the language model gave none for the success criteria.',
      'No verdict: the language model gave none for the success criteria.',
      'The agent could not go on with the call (agent_error).',
      'The agent could not go on with the call (agent_error).',
    ],
  );
  const stored = await stack.db.orm.em.fork().findOneOrFail(TestRun, { id: run.id });
  assert.equal(stored.status, 'completed');
  assert.ok(stored.completedAt);
  // The calls: web calls of the agent, the caller's lines in the transcript, the scenario's criteria as the plan.
  const call = await stack.db.orm.em.fork().findOneOrFail(Call, { id: rows[0]!.call_id! });
  assert.equal(call.channel, 'web');
  assert.equal(call.status, 'completed');
  assert.equal(call.endReason, 'agent_hangup');
  assert.equal(call.agentSnapshot.analysisPlan?.successCriteria, 'PASS when booked');
  assert.deepEqual(call.metadata, { test_run_id: run.id, scenario: 'Books', run: '1' });
  const transcript = await transcriptOf(call.id);
  assert.deepEqual(
    transcript.map((line) => `${line.role}: ${line.text}`),
    [
      'agent: Hi, Acme Dental.',
      'caller: Cleaning please.',
      'agent: Noted: Cleaning please.',
      'caller: Thanks, bye!',
      'agent: Goodbye!',
    ],
  );
});

test('at most 5 of a run’s calls at once; at most 3 of a workspace’s runs running, the others wait queued', async () => {
  const workspaceId = (await createAgentFixture(stack.db.orm, { status: 'draft' })).workspaceId;
  const runs: TestRun[] = [];
  for (let i = 0; i < 4; i++)
    runs.push(await newRun([scenario('Books', 'PASS', 'Cleaning')], i === 0 ? 7 : 1, workspaceId));
  let release!: () => void;
  hold = new Promise((resolve) => {
    release = resolve;
  });
  try {
    await inEnvironment(async (env) => {
      // The run of seven first: its calls go while the others claim the two slots left.
      await startTestRunWorkflow(env.client, stack.settings, runs[0]!);
      const statuses = async () =>
        Promise.all(
          runs.map(
            async (run) => (await stack.db.orm.em.fork().findOneOrFail(TestRun, { id: run.id })).status,
          ),
        );
      // The callers wait on the stand-in: the runs that got a slot have their calls under way.
      const liveCalls = async () => {
        const [row] = (await stack.db.orm.em
          .fork()
          .getConnection()
          .execute(
            "select count(*)::int as n from calls where metadata->>'test_run_id' = ? and status in ('ringing', 'in_progress')",
            [runs[0]!.id],
          )) as { n: number }[];
        return row!.n;
      };
      const deadline = Date.now() + 30_000;
      while ((await liveCalls()) < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.equal(await liveCalls(), 5);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(await liveCalls(), 5, 'no sixth call while five are under way');
      for (const run of runs.slice(1)) await startTestRunWorkflow(env.client, stack.settings, run);
      const running = async () => (await statuses()).filter((status) => status !== 'queued').length;
      while ((await running()) < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 300));
      const now = await statuses();
      assert.equal(now.filter((status) => status === 'running').length, 3);
      assert.equal(now.filter((status) => status === 'queued').length, 1);
      release();
      for (const run of runs) await env.client.workflow.getHandle(testRunWorkflowId(run.id)).result();
      assert.deepEqual(await statuses(), ['completed', 'completed', 'completed', 'completed']);
    });
  } finally {
    release?.();
    hold = null;
  }
  assert.deepEqual(
    (await resultRows(runs[0]!.id)).map((row) => row.status),
    Array(7).fill('passed'),
  );
});

test('a cancel starts no more calls and hangs up the ones under way; their results are errored', async () => {
  // Callers who talk on (never goodbye) to an agent that never hangs up: only a cancel ends them.
  const run = await newRun([scenario('Talks', 'PASS', 'talker who never stops', 50)], 7);
  await inEnvironment(async (env) => {
    await startTestRunWorkflow(env.client, stack.settings, run);
    const handle = env.client.workflow.getHandle(testRunWorkflowId(run.id));
    const deadline = Date.now() + 30_000;
    const started = async () =>
      (await handle.query(testRunProgressQuery)).results.filter((r) => r.call_id).length;
    while ((await started()) < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    // As the API does: the row first, then the signal.
    await stack.db.orm.em
      .fork()
      .nativeUpdate(TestRun, { id: run.id }, { status: 'canceled', completedAt: new Date() });
    await cancelTestRunWorkflow(env.client, stack.settings, run);
    assert.deepEqual(await handle.result(), { status: 'canceled', passed: 0, failed: 0, errored: 7 });
  });
  const rows = await resultRows(run.id);
  assert.deepEqual(
    rows.map((row) => [row.call_id !== null, row.reason]),
    [
      ...Array(5).fill([true, 'The run was canceled while this call was under way.']),
      ...Array(2).fill([false, 'The run was canceled before this call started.']),
    ],
  );
  for (const row of rows.slice(0, 5)) {
    const call = await stack.db.orm.em.fork().findOneOrFail(Call, { id: row.call_id! });
    assert.equal(call.status, 'completed');
    assert.equal(call.endReason, 'caller_hangup');
  }
});

test('a caller who never ends says max_turns lines, then hangs up; the run answers to test-run-<id> and testRunProgress', async () => {
  // The talker never says goodbye and the agent never hangs up on it: only the cap ends the call.
  const run = await newRun([scenario('Capped', 'PASS', 'talker held to a cap', 3)]);
  const callerAsked = () =>
    standIn.requests.filter(
      (request) =>
        isCaller(request) && /Your part: talker held to a cap$/.test(request.body.messages[0].content),
    ).length;
  const { result, caller } = await inEnvironment(async (env) => {
    await startTestRunWorkflow(env.client, stack.settings, run);
    // Outside checks use exactly these names (post-call spec section 2), written out here.
    const handle = env.client.workflow.getHandle(`test-run-${run.id}`);
    const result = await handle.result();
    const description = await handle.describe();
    assert.equal(description.type, 'testRunWorkflow');
    assert.equal(description.status.name, 'COMPLETED');
    const progress = (await handle.query('testRunProgress')) as TestRunProgress;
    assert.equal(progress.status, 'completed');
    assert.deepEqual(
      progress.results.map((r) => [r.scenario, r.run, r.status, r.reason]),
      [['Capped', 1, 'passed', 'It passed.']],
    );
    const callId = progress.results[0]!.call_id!;
    const caller = await env.client.workflow.getHandle(farEndWorkflowId(callId)).result();
    return { result, caller: { callId, ...(caller as TestCallerResult) } };
  });
  assert.deepEqual(result, { status: 'completed', passed: 1, failed: 0, errored: 0 });
  // Three lines said, then the caller hung up without asking its model for a fourth.
  assert.deepEqual(
    { lines: caller.lines, endedBy: caller.endedBy, failure: caller.failure },
    { lines: 3, endedBy: 'caller', failure: null },
  );
  assert.equal(callerAsked(), 3);
  const call = await stack.db.orm.em.fork().findOneOrFail(Call, { id: caller.callId });
  assert.equal(call.status, 'completed');
  assert.equal(call.endReason, 'caller_hangup');
  const transcript = await transcriptOf(call.id);
  assert.deepEqual(
    transcript.filter((line) => line.role === 'caller').map((line) => line.text),
    ['Line 1 of a long talk.', 'Line 2 of a long talk.', 'Line 3 of a long talk.'],
  );
  // The agent answered the last line; the caller hung up after hearing it.
  assert.deepEqual(transcript.at(-1), { role: 'agent', text: 'Noted: Line 3 of a long talk.' });
});

/** A call's transcript lines, in order. */
async function transcriptOf(callId: string): Promise<{ role: string; text: string }[]> {
  return (await stack.db.orm.em
    .fork()
    .getConnection()
    .execute('select role, text from transcript_entries where call_id = ? order by index', [callId])) as {
    role: string;
    text: string;
  }[];
}
