import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import type { HistoryAndWorkflowId } from '@temporalio/client';
import proto from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { AgentSnapshot } from '../db/entities/index.js';
import { startCallWorkflow } from '../lib/calls/start-call-workflow.js';
import type { Settings } from '../lib/settings.js';
import {
  type CallWorkflowResult,
  type ConsultationOutcome,
  callWorkflowId,
} from '../lib/temporal/workflow-contracts.js';
import { notReachedLine } from '../lib/voice-runtime/warm-transfer-lines.js';
import {
  type AgentFixture,
  createAgentFixture,
  createQueuedCall,
  storedCall,
} from './support/call-fixtures.js';
import type { TestDatabase } from './support/database.js';
import { keepHistory } from './support/kept-histories.js';
import {
  runWorkers,
  startTimeSkippingCallStack,
  type TimeSkippingCallStack,
} from './support/time-skipping-call-stack.js';

// Warm transfers (telephony spec section 8) on the time-skipping server: the simulator's 2002
// person asks for a human, the scripted agent transfers to a warm destination, the person there
// (a simulated far end picked by the destination's last four digits) is rung on a consultation
// leg and briefed; then the caller is handed over, or the agent takes the call back.

const EventType = proto.temporal.api.enums.v1.EventType;

let stack: TimeSkippingCallStack;
let db: TestDatabase;
let settings: Settings;
let env: TestWorkflowEnvironment;
let fixture: AgentFixture;
const recorded: HistoryAndWorkflowId[] = [];

before(async () => {
  stack = await startTimeSkippingCallStack({ prefix: 'warm' });
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

const warmTo = (number: string, message: string | null = null): Partial<AgentSnapshot> => ({
  transferDestinations: [{ number, description: 'the front desk', mode: 'warm', message }],
});

/** The call to the 2002 person, who asks for a human; its consultation leg's id and outcome. */
async function transferCall(snapshot: Partial<AgentSnapshot>, label?: string) {
  const call = await createQueuedCall(db.orm, fixture, { to: '+4791232002', snapshot });
  const result = await runWorkers(await stack.workers(env), async () => {
    await startCallWorkflow(env.client, settings, call);
    const outcome = (await env.client.workflow
      .getHandle(callWorkflowId(call.id))
      .result()) as CallWorkflowResult;
    await stack.settle(env, call.id);
    return outcome;
  });
  const histories = await stack.callHistories(env, call.id);
  const callHistory = histories[0].history;
  let leg: { workflowId: string; outcome: ConsultationOutcome } | null = null;
  for (const event of callHistory.events ?? []) {
    if (event.eventType !== EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED) continue;
    const done = event.childWorkflowExecutionCompletedEventAttributes!;
    const data = done.result?.payloads?.[0]?.data;
    leg = {
      workflowId: done.workflowExecution!.workflowId!,
      outcome: JSON.parse(Buffer.from(data as Uint8Array).toString()),
    };
  }
  for (const { kind, workflowId, history } of histories) {
    recorded.push({ workflowId, history });
    if (label) keepHistory(`${label}-${kind}`, history);
  }
  if (leg) {
    const history = await env.client.workflow.getHandle(leg.workflowId).fetchHistory();
    recorded.push({ workflowId: leg.workflowId, history });
    if (label) keepHistory(`${label}-consultation-leg`, history);
  }
  return { result, leg, ...(await storedCall(db.orm, call.id)) };
}

describe('warm transfers', { timeout: 180_000 }, () => {
  test('the person answers and is briefed from the transcript; then the caller is handed over: transferred, connected, call.transferred', async () => {
    const { result, call, transcript, events, leg } = await transferCall(
      warmTo('+4722990000'),
      'warm-transfer',
    );
    assert.equal(result.endReason, 'transferred');
    assert.equal(call.endReason, 'transferred');
    assert.equal(call.transferredTo, '+4722990000');
    assert.deepEqual(
      { ...call.transfer, started_at: undefined, connected_at: undefined },
      {
        to: '+4722990000',
        mode: 'warm',
        status: 'connected',
        failure: null,
        started_at: undefined,
        connected_at: undefined,
      },
    );
    assert.ok(call.transfer?.connected_at);
    assert.deepEqual(
      events.map((event) => event.type),
      ['call.started', 'call.transferred', 'call.completed'],
    );
    assert.equal(events[1].body.data.transferred_to, '+4722990000');
    // The briefing went to the person, made from what the caller said; it is not the caller's transcript.
    assert.equal(leg?.outcome.reached, true);
    const briefing = leg?.outcome.reached ? (leg.outcome.briefing ?? '') : '';
    assert.match(briefing, /this is Ada/);
    assert.match(briefing, /real person/);
    assert.ok(!transcript.some((line) => line.text === briefing));
    // The agent's own words told the caller they were being put through: no second line.
    assert.match(transcript.at(-1)!.text, /transferring you/);
  });

  test('a destination message is what the caller hears while the person is rung', async () => {
    const message = 'Please hold, I am getting Kari from the front desk for you.';
    const { call, transcript } = await transferCall(warmTo('+4722990001', message));
    // Seen once in about twenty fresh-clone runs: `caller_hangup` (2026-12-01). What the caller
    // heard and the transfer's record tell which wait ran out, should it come again.
    const heard = { transfer: call.transfer, transcript: transcript.map((line) => line.text) };
    assert.equal(call.endReason, 'transferred', JSON.stringify(heard));
    assert.equal(transcript.at(-1)!.text, message);
  });

  for (const [ending, failure, what] of [
    ['1001', 'busy', 'busy'],
    ['1002', 'no_answer', 'does not answer within 30 s'],
    ['2004', 'refused', 'hangs up during the briefing'],
  ] as const) {
    test(`the person ${what}: the transfer fails (${failure}), the agent tells the caller and the call goes on`, async () => {
      const { call, transcript, events, leg } = await transferCall(warmTo(`+472299${ending}`));
      assert.deepEqual(leg?.outcome, { reached: false, failure });
      assert.equal(call.transfer?.status, 'failed');
      assert.equal(call.transfer?.failure, failure);
      assert.equal(call.transfer?.mode, 'warm');
      assert.equal(call.transferredTo, null);
      assert.ok(!events.some((event) => event.type === 'call.transferred'));
      const told = transcript.findIndex((line) => line.text === notReachedLine('en-US'));
      assert.ok(told > 0, 'the agent told the caller');
      // The caller heard it and, out of replies, held on a minute and hung up: the call went on.
      assert.equal(call.endReason, 'caller_hangup');
      assert.notEqual(call.analysis?.outcome, 'transferred');
    });
  }
});

test('every history here replays with the current workflow code', async () => {
  await stack.assertReplays('warm-transfers', recorded);
});
