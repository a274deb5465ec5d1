import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import type { HistoryAndWorkflowId } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { add, costOf } from '../bench/history-cost.js';
import { AnalysisRejectedError, type CallAnalyzer } from '../lib/analysis/analyzer.js';
import { TranscriptAnalyzer } from '../lib/analysis/transcript-analyzer.js';
import { startCallWorkflow } from '../lib/calls/start-call-workflow.js';
import type { Settings } from '../lib/settings.js';
import { callProgressQuery, farEndReleasedSignal } from '../lib/temporal/call-messages.js';
import {
  AgentIdKey,
  CallDirectionKey,
  CallStatusKey,
  WorkspaceIdKey,
} from '../lib/temporal/search-attributes.js';
import { taskQueues } from '../lib/temporal/task-queues.js';
import {
  type CallWorkflowResult,
  callWorkflowId,
  SIMULATED_CALLEE_WORKFLOW,
  type SimulatedCalleeWorkflow,
} from '../lib/temporal/workflow-contracts.js';
import { ScriptedAgent, TRANSFER_UNAVAILABLE_LINE } from '../lib/voice-runtime/scripted-agent.js';
import { SIMULATED_FRONT_DESK } from '../lib/voice-runtime/transfer-target.js';
import {
  type AgentFixture,
  createAgentFixture,
  createQueuedCall,
  storedCall,
} from './support/call-fixtures.js';
import type { TestDatabase } from './support/database.js';
import { type callbackSinkWorkflow, stopSinkSignal } from './support/event-sink-workflows.js';
import { keepHistory } from './support/kept-histories.js';
import {
  type CallWorkerOptions,
  runWorkers,
  startTimeSkippingCallStack,
  type TimeSkippingCallStack,
} from './support/time-skipping-call-stack.js';

// The call workflow and the simulated far end in the time-skipping environment: every scenario
// of the operations contract (section 4), ring timeouts, analysis retries, a worker restart in
// the middle of a call, and replay of the recorded histories.

let stack: TimeSkippingCallStack;
let db: TestDatabase;
let settings: Settings;
/** The environment of the running test: one per test (see stack.newEnvironment()). */
let env: TestWorkflowEnvironment;
let fixture: AgentFixture;
/** The history of every workflow run here, replayed at the end to prove the code is deterministic. */
const recorded: HistoryAndWorkflowId[] = [];

before(async () => {
  stack = await startTimeSkippingCallStack({ prefix: 'cwf' });
  ({ db, settings } = stack);
  fixture = await createAgentFixture(db.orm, { name: 'Ada' });
});
after(async () => {
  await stack?.close();
});

beforeEach(async () => {
  env = await stack.newEnvironment();
});
afterEach(async () => {
  await env.teardown();
});

/**
 * Keeps the histories of a finished call's workflows for the replay test; with a label, also as the
 * committed histories `outbound-<label>-call` and `-far-end` (test/support/kept-histories.ts).
 */
async function record(callId: string, label?: string): Promise<void> {
  for (const { kind, workflowId, history } of await stack.callHistories(env, callId)) {
    recorded.push({ workflowId, history });
    if (label) keepHistory(`outbound-${label}-${kind}`, history);
  }
}

/** The workers of the running test's environment. */
const workers = (options?: CallWorkerOptions) => stack.workers(env, options);

async function runCall(
  to: string,
  options: {
    firstMessage?: string | null;
    ringTimeoutSeconds?: number;
    analyzer?: CallAnalyzer;
    /** TRANSFER_NUMBER of the scripted agent; unset: the settings' default (the simulator's desk). */
    transferNumber?: string | null;
    metadata?: Record<string, string>;
    /** Names the committed histories of the call (test/support/kept-histories.ts). */
    label?: string;
  } = {},
) {
  const { analyzer, transferNumber, ...callOptions } = options;
  const call = await createQueuedCall(db.orm, fixture, { to, ...callOptions });
  // Wall-clock time of the call itself, from its start to its result: worker start-up excluded.
  let wallMs = 0;
  const ports = {
    ...(analyzer ? { analyzer } : {}),
    ...(transferNumber !== undefined ? { voiceRuntime: new ScriptedAgent({ transferNumber }) } : {}),
  };
  const result = await runWorkers(await workers({ ports }), async () => {
    const startedAt = Date.now();
    await startCallWorkflow(env.client, settings, call);
    const outcome = (await env.client.workflow
      .getHandle(callWorkflowId(call.id))
      .result()) as CallWorkflowResult;
    wallMs = Date.now() - startedAt;
    await stack.settle(env, call.id);
    return outcome;
  });
  await record(call.id, options.label);
  return { result, wallMs, ...(await storedCall(db.orm, call.id)) };
}

/** Where the 2002 scenario's calls are transferred (their `metadata.transfer_to`). */
const TRANSFER_DESK = '+4722998877';

type Expected = {
  status: string;
  endReason: string;
  events: string[];
  reason?: string;
  outcome?: string | null;
  sentiment?: string | null;
};

const SCENARIOS: [string, string, Expected][] = [
  ['1001', 'line busy', { status: 'failed', endReason: 'busy', events: ['call.failed'], reason: 'busy' }],
  [
    '1002',
    'never answered',
    { status: 'failed', endReason: 'no_answer', events: ['call.failed'], reason: 'no_answer' },
  ],
  [
    '1003',
    'declined',
    { status: 'failed', endReason: 'no_answer', events: ['call.failed'], reason: 'no_answer' },
  ],
  [
    '1004',
    'refused by the network',
    { status: 'failed', endReason: 'not_connected', events: ['call.failed'], reason: 'not_connected' },
  ],
  [
    '2002',
    'asks for a human and is transferred',
    {
      status: 'completed',
      endReason: 'transferred',
      events: ['call.started', 'call.transferred', 'call.completed'],
      outcome: 'transferred',
    },
  ],
  [
    '2003',
    'unhappy, wants a manager',
    {
      status: 'completed',
      endReason: 'caller_hangup',
      events: ['call.started', 'call.completed'],
      outcome: 'escalated',
      sentiment: 'negative',
    },
  ],
  [
    '2004',
    'hangs up after the greeting',
    {
      status: 'completed',
      endReason: 'caller_hangup',
      events: ['call.started', 'call.completed'],
      outcome: 'abandoned',
    },
  ],
  [
    '5678',
    'default: a friendly conversation',
    {
      status: 'completed',
      endReason: 'agent_hangup',
      events: ['call.started', 'call.completed'],
      outcome: 'resolved',
      sentiment: 'positive',
    },
  ],
];

describe('simulator scenarios (operations contract, section 4)', { timeout: 300_000 }, () => {
  for (const [ending, what, expected] of SCENARIOS) {
    test(`to ending ${ending}: ${what}`, async () => {
      const { result, call, transcript, events } = await runCall(`+47912${ending}`, {
        ringTimeoutSeconds: 30,
        label: ending,
        // A transfer needs a target (lib/voice-runtime/transfer-target.ts).
        ...(ending === '2002' ? { metadata: { transfer_to: TRANSFER_DESK } } : {}),
      });
      assert.equal(result.status, expected.status);
      assert.equal(call.status, expected.status);
      assert.equal(call.endReason, expected.endReason);
      assert.ok(call.endedAt, 'ended_at is recorded');
      assert.deepEqual(
        events.map((event) => event.type),
        expected.events,
      );
      for (const event of events) {
        assert.match(event.id, /^evt_[0-9a-f]{32}$/);
        assert.equal(event.body.id, event.id);
        assert.equal(event.body.object, 'event');
        assert.equal(event.body.api_version, 'v1');
        assert.equal(event.body.data.object.id, call.id);
      }
      if (expected.status === 'failed') {
        const failed = events[0].body;
        assert.equal(failed.data.reason, expected.reason);
        assert.equal(failed.data.object.status, 'failed');
        assert.equal(failed.data.object.end_reason, expected.reason);
        assert.equal(call.durationSeconds, null);
        assert.equal(call.answeredAt, null);
        assert.equal(transcript.length, 0);
        assert.equal(call.analysis, null);
        return;
      }
      const started = events[0].body.data.object;
      assert.equal(started.status, 'in_progress');
      assert.equal(started.analysis, null);
      const completed = events.at(-1)!.body.data.object;
      assert.equal(completed.status, 'completed');
      assert.deepEqual(completed.analysis, call.analysis);
      assert.ok(call.answeredAt);
      assert.ok((call.durationSeconds ?? 0) >= 1, 'an answered call lasts simulated seconds');
      assert.equal(call.analysis?.outcome, expected.outcome);
      if (expected.sentiment !== undefined) assert.equal(call.analysis?.sentiment, expected.sentiment);
      assert.ok(call.analysis?.summary);
      assert.deepEqual(
        transcript.map((line) => line.index),
        transcript.map((_, i) => i),
        'transcript indexes are 0..n-1 in order',
      );
      // No opening line is configured: the agent says who it is and why it is calling.
      assert.equal(transcript[0].role, 'agent');
      assert.match(transcript[0].text, /this is Ada.*I'm calling/);
      if (ending === '2002') {
        const transferred = events[1].body;
        assert.equal(transferred.data.transferred_to, TRANSFER_DESK);
        assert.equal(call.transferredTo, TRANSFER_DESK);
      }
      if (ending === '2004')
        assert.deepEqual(
          transcript.map((line) => line.role),
          ['agent'],
        );
      if (ending === '5678') {
        assert.ok(transcript.some((line) => line.role === 'caller'));
        assert.ok(call.analysis?.action_items.some((item) => /confirmation by email/.test(item)));
      }
    });
  }
});

describe('transfers', { timeout: 120_000 }, () => {
  test("without metadata.transfer_to an outbound call goes to TRANSFER_NUMBER (default: the simulator's front desk), never its own caller ID", async () => {
    // Before, the call was transferred to its own caller ID, which rings this agent again.
    const { call, events } = await runCall('+4791242002');
    assert.equal(call.status, 'completed');
    assert.equal(call.endReason, 'transferred');
    assert.equal(call.transferredTo, SIMULATED_FRONT_DESK);
    assert.notEqual(call.transferredTo, call.fromNumber);
    assert.equal(
      events.find((e) => e.type === 'call.transferred')?.body.data.transferred_to,
      SIMULATED_FRONT_DESK,
    );
  });

  test('with TRANSFER_NUMBER=none and no transfer_to: the agent says it cannot transfer, the call goes on', async () => {
    const { call, events, transcript } = await runCall('+4791232002', { transferNumber: null });
    assert.equal(call.status, 'completed');
    assert.equal(call.transferredTo, null);
    assert.deepEqual(
      events.map((event) => event.type),
      ['call.started', 'call.completed'],
    );
    assert.match(transcript.at(-2)?.text ?? '', /put me through/);
    assert.equal(transcript.at(-1)?.text, TRANSFER_UNAVAILABLE_LINE);
    // The person heard it out and hung up.
    assert.equal(call.endReason, 'caller_hangup');
  });
});

describe('ring timeout', { timeout: 180_000 }, () => {
  for (const seconds of [10, 120]) {
    test(`${seconds} s of ringing costs no wall-clock time`, async () => {
      const before = await env.currentTimeMs();
      const { call, wallMs } = await runCall('+4791231002', { ringTimeoutSeconds: seconds });
      const skippedMs = (await env.currentTimeMs()) - before;
      assert.equal(call.status, 'failed');
      assert.equal(call.endReason, 'no_answer');
      assert.ok(skippedMs >= seconds * 1000, `workflow time passed ${skippedMs} ms`);
      // Without time skipping the call could not end before its ring timeout had passed for real.
      assert.ok(wallMs < seconds * 1000, `took ${wallMs} ms of wall-clock time`);
    });
  }

  test('a decline before the timeout ends the call as no_answer at once', async () => {
    const { call } = await runCall('+4791231003', { ringTimeoutSeconds: 120 });
    assert.equal(call.endReason, 'no_answer');
    const ringingMs = call.endedAt!.getTime() - call.startedAt.getTime();
    assert.ok(ringingMs < 120_000, 'ended by the decline, not by the timer');
  });
});

describe('opening line', { timeout: 180_000 }, () => {
  test("the call's first_message is the agent's first line", async () => {
    const { transcript } = await runCall('+4791235555', { firstMessage: 'Hello from the call request!' });
    assert.deepEqual(transcript[0], { role: 'agent', text: 'Hello from the call request!', index: 0 });
  });

  test('an empty first_message lets the person speak first; the agent then introduces itself', async () => {
    const { transcript, call } = await runCall('+4791235556', {
      firstMessage: '',
      label: '5556-caller-first',
    });
    assert.equal(transcript[0].role, 'caller');
    assert.equal(transcript[1].role, 'agent');
    assert.match(transcript[1].text, /this is Ada.*I'm calling/);
    assert.equal(call.status, 'completed');
  });
});

/** Fails `failures` times with an error retrying can fix, then analyses for real. */
class FlakyAnalyzer implements CallAnalyzer {
  attempts = 0;
  constructor(
    private readonly failures: number,
    private readonly error: () => Error = () => new Error('analysis service unavailable'),
  ) {}
  async analyze(...[transcript, ending]: Parameters<CallAnalyzer['analyze']>) {
    this.attempts++;
    if (this.attempts <= this.failures) throw this.error();
    return {
      ...(await new TranscriptAnalyzer().analyze(transcript, ending)),
      summary: 'from the flaky analyzer',
    };
  }
}

describe('analysis', { timeout: 180_000 }, () => {
  test('is retried after transient failures, then stored', async () => {
    const analyzer = new FlakyAnalyzer(3);
    const { call, events } = await runCall('+4791236666', { analyzer });
    assert.equal(analyzer.attempts, 4);
    assert.equal(call.status, 'completed');
    assert.equal(call.analysis?.summary, 'from the flaky analyzer');
    assert.equal(events.at(-1)!.body.data.object.analysis.summary, 'from the flaky analyzer');
  });

  test('a refusal is not retried; the transcript rules answer instead', async () => {
    const analyzer = new FlakyAnalyzer(100, () => new AnalysisRejectedError('model not found'));
    const { call } = await runCall('+4791236667', { analyzer });
    assert.equal(analyzer.attempts, 1);
    assert.equal(call.status, 'completed');
    assert.equal(call.analysis?.outcome, 'resolved');
  });
});

describe('cost in Temporal (docs/performance.md)', { timeout: 180_000 }, () => {
  test('an answered call on the scripted agent: at most half the workflow tasks and events of the first shape', async () => {
    const { call } = await runCall('+4791235678');
    const [callCost, farEndCost] = (await stack.callHistories(env, call.id)).map(({ history }) =>
      costOf(history),
    );
    const now = add(callCost!, farEndCost!);
    // The same call in the first shape of the workflows (every step an activity, a signal per
    // callback; docs/performance.md): 43 workflow tasks, 233 history events.
    const before = { workflowTasks: 43, events: 233 };
    assert.equal(now.activities, 0, 'every step of a call on the scripted agent is a local activity');
    assert.ok(now.workflowTasks * 2 <= before.workflowTasks, `${now.workflowTasks} workflow tasks`);
    assert.ok(now.events * 2 <= before.events, `${now.events} history events`);
  });

  for (const released of [false, true]) {
    test(`the far end's wait too short for a timer is slept locally${released ? '; a release during it is seen right after, and the far end stops' : ', then it calls back'}`, async () => {
      const queues = taskQueues(settings);
      const id = randomUUID();
      const received = await runWorkers(await workers(), async () => {
        const sink = await env.client.workflow.start<typeof callbackSinkWorkflow>('callbackSinkWorkflow', {
          taskQueue: queues.webhooks,
          workflowId: `sink-${id}`,
        });
        // 0.5 s before the first callback (busy, or ringing of a call that would be answered): at
        // SIM_TIME_SCALE=1 a wait under LOCAL_WAIT_MS.
        const farEnd = await env.client.workflow.start<SimulatedCalleeWorkflow>(SIMULATED_CALLEE_WORKFLOW, {
          taskQueue: queues.simulator,
          workflowId: `far-end-${id}`,
          args: [
            {
              callWorkflowId: sink.workflowId,
              scenarioNumber: released ? '+4791235678' : '+4791231001',
              timeScale: 1,
              connected: false,
            },
          ],
        });
        if (released) {
          // Once its first workflow task is running, the local activity is sleeping.
          for (let i = 0; ; i++) {
            const { events } = await farEnd.fetchHistory();
            if (events?.some((event) => event.workflowTaskStartedEventAttributes)) break;
            assert.ok(i < 200, 'the far end never started');
            await new Promise((resolve) => setTimeout(resolve, 10));
          }
          await farEnd.signal(farEndReleasedSignal, { reason: 'cancel' });
        }
        // Not farEnd.result(): awaiting a result lets the test server skip time, and with nothing
        // on a timer it would skip the waiting sink to its end.
        for (let i = 0; (await farEnd.describe()).status.name === 'RUNNING'; i++) {
          assert.ok(i < 500, 'the far end never ended');
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        const events = (await farEnd.fetchHistory()).events ?? [];
        const markers = events.filter(
          (event) => event.markerRecordedEventAttributes?.markerName === 'core_local_activity',
        );
        assert.equal(markers.length, 1, 'one local activity: the wait and the callback');
        if (released) {
          // The release came while the first workflow task, and the wait in its local activity, ran.
          const firstTask = events.findIndex((event) => event.workflowTaskStartedEventAttributes);
          const release = events.findIndex((event) => event.workflowExecutionSignaledEventAttributes);
          assert.ok(firstTask >= 0 && release > firstTask, 'released during the first workflow task');
        } else {
          assert.equal(events.filter((event) => event.timerStartedEventAttributes).length, 0, 'no timer');
        }
        await sink.signal(stopSinkSignal);
        return sink.result();
      });
      // Released: the ringing it was sleeping toward, and nothing after (no answer).
      assert.deepEqual(received, released ? [{ type: 'ringing' }] : [{ type: 'busy' }]);
    });
  }
});

describe('durability', { timeout: 180_000 }, () => {
  test('a worker restart in the middle of a call: the call completes, no event twice', async () => {
    const call = await createQueuedCall(db.orm, fixture, { to: '+4791237777' });
    const handle = env.client.workflow.getHandle(callWorkflowId(call.id));
    // Without a workflow cache: the test server never moves tasks off a stopped worker's sticky
    // queue (a real server does after 5 s), and every task of the first worker is a replay.
    await runWorkers(await workers({ maxCachedWorkflows: 0 }), async () => {
      await startCallWorkflow(env.client, settings, call);
      for (let i = 0; i < 200; i++) {
        const progress = await handle.query(callProgressQuery);
        if (progress.step === 'in_conversation' && progress.transcriptLines >= 3) return;
        await env.sleep(500);
      }
      assert.fail('the call never got into its conversation');
    });
    assert.equal((await storedCall(db.orm, call.id)).call.status, 'in_progress');
    const result = (await runWorkers(await workers(), async () => {
      const outcome = await handle.result();
      await stack.settle(env, call.id);
      return outcome;
    })) as CallWorkflowResult;
    assert.equal(result.status, 'completed');
    await record(call.id);
    const { events, transcript } = await storedCall(db.orm, call.id);
    assert.deepEqual(
      events.map((event) => event.type),
      ['call.started', 'call.completed'],
    );
    assert.deepEqual(
      transcript.map((line) => line.index),
      transcript.map((_, i) => i),
    );
    assert.equal(transcript.at(-1)?.text, 'Thank you for your time. Goodbye!');
  });

  test('search attributes and the progress query help find a call', async () => {
    const { call } = await runCall('+4791238888');
    const description = await env.client.workflow.getHandle(callWorkflowId(call.id)).describe();
    assert.equal(description.typedSearchAttributes.get(WorkspaceIdKey), fixture.workspaceId);
    assert.equal(description.typedSearchAttributes.get(AgentIdKey), fixture.agentId);
    assert.equal(description.typedSearchAttributes.get(CallStatusKey), 'completed');
    assert.equal(description.typedSearchAttributes.get(CallDirectionKey), 'outbound');
    assert.equal(description.type, 'callWorkflow');
  });

  test("this file's histories replay without nondeterminism", async () => {
    assert.ok(recorded.length > 10);
    await stack.assertReplays('call-workflows', recorded);
  });
});
