import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import type { HistoryAndWorkflowId } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { AgentSnapshot } from '../db/entities/index.js';
import { startCallWorkflow } from '../lib/calls/start-call-workflow.js';
import type { Settings } from '../lib/settings.js';
import {
  type CallWorkflowResult,
  callWorkflowId,
  farEndWorkflowId,
  type SimulatedCalleeResult,
} from '../lib/temporal/workflow-contracts.js';
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

// Answering machines and phone menus (telephony spec sections 6 and 7) on the time-skipping
// server: the simulator's 3001 (a voicemail greeting, a beep, a recording) and 3002 (a phone menu)
// against the scripted agent, with its voicemail and keypad settings.

let stack: TimeSkippingCallStack;
let db: TestDatabase;
let settings: Settings;
let env: TestWorkflowEnvironment;
let fixture: AgentFixture;
const recorded: HistoryAndWorkflowId[] = [];

before(async () => {
  stack = await startTimeSkippingCallStack({ prefix: 'amd' });
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

const DETECT_AND_HANG_UP: Partial<AgentSnapshot> = {
  voicemail: { detect: true, action: 'hang_up', message: null },
};
const LEAVE_MESSAGE: Partial<AgentSnapshot> = {
  voicemail: {
    detect: true,
    action: 'leave_message',
    message: 'Hi {{name}}, this is Ada from Acme about your appointment. Please call us back. Bye!',
  },
};

async function runCall(to: string, snapshot: Partial<AgentSnapshot>, label?: string) {
  const call = await createQueuedCall(db.orm, fixture, { to, snapshot, metadata: { name: 'Kari' } });
  const { result, farEnd } = await runWorkers(await stack.workers(env), async () => {
    await startCallWorkflow(env.client, settings, call);
    const result = (await env.client.workflow
      .getHandle(callWorkflowId(call.id))
      .result()) as CallWorkflowResult;
    const farEnd = (await env.client.workflow.getHandle(farEndWorkflowId(call.id)).result()) as
      | SimulatedCalleeResult
      | undefined;
    await stack.settle(env, call.id);
    return { result, farEnd };
  });
  for (const { kind, workflowId, history } of await stack.callHistories(env, call.id)) {
    recorded.push({ workflowId, history });
    if (label) keepHistory(`outbound-${label}-${kind}`, history);
  }
  return { result, farEnd, ...(await storedCall(db.orm, call.id)) };
}

describe('answering machines (3001)', { timeout: 120_000 }, () => {
  test('hang_up: a greeting still going 4 s after answer is a machine; the agent says nothing and the call ends voicemail', async () => {
    const { result, call, transcript, events, farEnd } = await runCall('+4791233001', DETECT_AND_HANG_UP);
    assert.equal(result.status, 'completed');
    assert.equal(call.endReason, 'voicemail');
    assert.equal(call.answeredBy, 'machine');
    // Still greeting when the decision was due (its 7 s at SIM_TIME_SCALE 1): hung up on.
    assert.deepEqual(transcript, [], 'the machine was not greeted');
    assert.deepEqual(farEnd?.recorded, [], 'nothing was left on the machine');
    assert.equal(call.analysis?.outcome, 'unknown');
    assert.deepEqual(
      events.map((event) => event.type),
      ['call.started', 'call.completed'],
    );
    const completed = events.at(-1)!.body.data.object;
    assert.equal(completed.answered_by, 'machine');
    assert.equal(completed.end_reason, 'voicemail');
  });

  test('leave_message: after the beep the agent says its message ({{variables}} filled) and hangs up; the machine recorded it', async () => {
    const { call, transcript, farEnd } = await runCall('+4791233001', LEAVE_MESSAGE, '3001-leave-message');
    assert.equal(call.endReason, 'voicemail');
    assert.equal(call.answeredBy, 'machine');
    const message = 'Hi Kari, this is Ada from Acme about your appointment. Please call us back. Bye!';
    assert.deepEqual(
      transcript.map(({ role, text }) => [role, text.startsWith('Hi, you have reached') ? 'greeting' : text]),
      [
        ['caller', 'greeting'],
        ['agent', message],
      ],
    );
    assert.deepEqual(farEnd?.recorded, [message], 'the recording holds the message, after the beep');
    assert.equal(call.analysis?.outcome, 'unknown');
  });

  test('detection off: the agent greets the machine as a person (answered_by stays null)', async () => {
    const { call, transcript } = await runCall('+4791233001', {
      voicemail: { detect: false, action: 'hang_up', message: null },
    });
    assert.equal(call.answeredBy, null);
    assert.notEqual(call.endReason, 'voicemail');
    assert.equal(transcript[0].role, 'agent', 'the opening line went to the machine');
  });

  test('a person (the default far end) is answered at once: human, and the conversation as before', async () => {
    const { call, transcript } = await runCall('+4791235678', DETECT_AND_HANG_UP);
    assert.equal(call.answeredBy, 'human');
    assert.equal(call.endReason, 'agent_hangup');
    assert.equal(call.analysis?.outcome, 'resolved');
    assert.equal(transcript[0].role, 'agent');
    assert.match(transcript[0].text, /this is Ada/);
  });
});

describe('phone menus (3002)', { timeout: 120_000 }, () => {
  test('keypad.send: the agent presses 1, then talks with the person the menu put it through to', async () => {
    const { call, transcript } = await runCall(
      '+4791233002',
      { ...DETECT_AND_HANG_UP, keypad: { send: true } },
      '3002-keypad',
    );
    assert.equal(
      call.answeredBy,
      'unknown',
      'a phone menu is no person, and no machine to leave a message on',
    );
    assert.equal(call.endReason, 'agent_hangup');
    assert.equal(call.analysis?.outcome, 'resolved');
    assert.deepEqual(transcript.slice(0, 4), [
      { role: 'caller', text: 'For sales press 1, for support press 2.', index: 0 },
      { role: 'agent', text: '[keypad] 1', index: 1 },
      { role: 'caller', text: 'Hello, this is Anna. How can I help you?', index: 2 },
      { role: 'agent', text: transcript[3].text, index: 3 },
    ]);
    assert.match(transcript[3].text, /this is Ada/, 'the agent says who it is to the person');
  });

  test('without the keypad the menu hears only words, asks again, and hangs up after 10 s', async () => {
    const { call, transcript } = await runCall('+4791233002', DETECT_AND_HANG_UP);
    assert.equal(call.endReason, 'caller_hangup');
    assert.ok(!transcript.some((line) => line.text.startsWith('[keypad]')));
    assert.ok(
      transcript.some((line) => line.role === 'caller' && /^Sorry\. For sales/.test(line.text)),
      'the menu asked again',
    );
  });
});

test('every history here replays with the current workflow code', async () => {
  await stack.assertReplays('answering-machines', recorded);
});
