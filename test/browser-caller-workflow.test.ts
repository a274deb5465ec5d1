import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { HistoryAndWorkflowId } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { TranscriptEntry } from '../db/entities/index.js';
import { startWebCall } from '../lib/calls/incoming-calls.js';
import { browserCallerHangUpSignal, browserCallerSaysSignal } from '../lib/temporal/call-messages.js';
import {
  type CallWorkflowResult,
  callWorkflowId,
  farEndWorkflowId,
} from '../lib/temporal/workflow-contracts.js';
import { type AgentFixture, createAgentFixture, storedCall } from './support/call-fixtures.js';
import { keepHistory } from './support/kept-histories.js';
import {
  runWorkers,
  startTimeSkippingCallStack,
  type TimeSkippingCallStack,
} from './support/time-skipping-call-stack.js';

// The test panel's far end (workflows/browser-caller-workflow.ts) on the time-skipping test
// server with the real call workflow: the person's typed lines reach the call as the carrier's
// speech, a resent line is said once, their hang-up ends the call, and a person who goes quiet is
// met by the call's silence timeout (10 minutes of workflow time, skipped).

let stack: TimeSkippingCallStack;
let agent: AgentFixture;
const recorded: HistoryAndWorkflowId[] = [];

before(async () => {
  stack = await startTimeSkippingCallStack({ prefix: 'bcwf' });
  agent = await createAgentFixture(stack.db.orm, { status: 'draft', firstMessage: 'Hello, Ada here.' });
});
after(async () => {
  await stack?.close();
});

/** Waits (in real time: nothing here waits on a timer) until the call has `count` transcript lines. */
async function transcriptLines(callId: string, count: number) {
  for (let i = 0; i < 300; i++) {
    const lines = await stack.db.orm.em
      .fork()
      .find(TranscriptEntry, { call: callId }, { orderBy: { index: 'asc' } });
    if (lines.length >= count) return lines;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(`call ${callId} did not reach ${count} transcript lines`);
}

/** A test-panel call the person plays through `person`; with `keep`, its histories are committed as `test-panel-call` and `-browser-caller`. */
async function testPanelCall(
  env: TestWorkflowEnvironment,
  person: (callId: string) => Promise<void>,
  keep = false,
) {
  const web = await startWebCall(
    { em: stack.db.orm.em.fork() as EntityManager, temporal: env.client, settings: stack.settings },
    { agentId: agent.agentId, fromLabel: 'Test panel (ada@example.test)', browserFarEnd: true },
  );
  assert.ok(web.started);
  const { callId } = web;
  return runWorkers(await stack.workers(env), async () => {
    await transcriptLines(callId, 1);
    await person(callId);
    const result = (await env.client.workflow
      .getHandle(callWorkflowId(callId))
      .result()) as CallWorkflowResult;
    await stack.settle(env, callId);
    const histories = await stack.callHistories(env, callId);
    recorded.push(...histories);
    for (const { kind, history } of histories) {
      if (keep) keepHistory(kind === 'call' ? 'test-panel-call' : 'test-panel-browser-caller', history);
    }
    return { result, ...(await storedCall(stack.db.orm, callId)) };
  });
}

test("the person's lines reach the call once each, and their hang-up ends it", async () => {
  const { result, call, transcript } = await stack.withEnvironment((env) =>
    testPanelCall(
      env,
      async (callId) => {
        const farEnd = env.client.workflow.getHandle(farEndWorkflowId(callId));
        await farEnd.signal(browserCallerSaysSignal, { line: 0, text: 'I want to move my appointment.' });
        // The browser retried: the same line again is not said twice.
        await farEnd.signal(browserCallerSaysSignal, { line: 0, text: 'I want to move my appointment.' });
        await transcriptLines(callId, 3);
        await farEnd.signal(browserCallerHangUpSignal);
      },
      true,
    ),
  );
  assert.equal(result.status, 'completed');
  assert.equal(call.endReason, 'caller_hangup');
  assert.equal(call.channel, 'web');
  assert.equal(call.browserFarEnd, true);
  assert.deepEqual(
    transcript.slice(0, 2).map((l) => [l.role, l.text]),
    [
      ['agent', 'Hello, Ada here.'],
      ['caller', 'I want to move my appointment.'],
    ],
  );
  assert.equal(transcript.filter((l) => l.role === 'caller').length, 1, 'the resent line was said once');
  assert.equal(transcript[2]!.role, 'agent', 'the agent answered the line');
  assert.ok(call.analysis, 'analysed like every call');
});

test('a person who goes quiet: the call ends on its silence timeout, without the simulator speaking', async () => {
  const { result, call, transcript } = await stack.withEnvironment((env) =>
    testPanelCall(env, async (callId) => {
      await env.client.workflow
        .getHandle(farEndWorkflowId(callId))
        .signal(browserCallerSaysSignal, { line: 0, text: 'Hello?' });
      await transcriptLines(callId, 3);
    }),
  );
  assert.equal(result.status, 'completed');
  assert.equal(call.endReason, 'silence_timeout');
  assert.deepEqual(
    transcript.filter((l) => l.role === 'caller').map((l) => l.text),
    ['Hello?'],
    'only what the person typed',
  );
});

test('the histories replay', async () => {
  assert.ok(recorded.length >= 4, 'call and far-end histories of both calls');
  await stack.assertReplays('browser-caller', recorded);
});
