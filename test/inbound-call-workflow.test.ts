import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { HistoryAndWorkflowId } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Agent, Call, PhoneNumber } from '../db/entities/index.js';
import { OperatorError } from '../lib/accounts.js';
import { answerIncomingPhoneCall, startWebCall } from '../lib/calls/incoming-calls.js';
import type { IncomingCallAnswer } from '../lib/carrier/incoming-call.js';
import type { Settings } from '../lib/settings.js';
import { AgentIdKey, CallDirectionKey, CallStatusKey } from '../lib/temporal/search-attributes.js';
import type { CallWorkflowResult } from '../lib/temporal/workflow-contracts.js';
import { callWorkflowId } from '../lib/temporal/workflow-contracts.js';
import { SIMULATED_FRONT_DESK } from '../lib/voice-runtime/transfer-target.js';
import { type AgentFixture, createAgentFixture, storedCall } from './support/call-fixtures.js';
import type { TestDatabase } from './support/database.js';
import { keepHistory } from './support/kept-histories.js';
import {
  runWorkers,
  startTimeSkippingCallStack,
  type TimeSkippingCallStack,
} from './support/time-skipping-call-stack.js';

// Calls that come in (operations contract, section 5) on the time-skipping test server: the
// number's agent looked up when the call arrives, calls not taken, every caller scenario, the
// agent's settings kept for a call already taken, web calls, and replay of the histories.

let stack: TimeSkippingCallStack;
let db: TestDatabase;
let settings: Settings;
const recorded: HistoryAndWorkflowId[] = [];

before(async () => {
  stack = await startTimeSkippingCallStack({ prefix: 'inwf' });
  ({ db, settings } = stack);
});
after(async () => {
  await stack?.close();
});

/** Runs `fn` while the call's workers poll on `env`. */
const withWorkers = async <T>(env: TestWorkflowEnvironment, fn: () => Promise<T>) =>
  runWorkers(await stack.workers(env), fn);

const deps = (env: TestWorkflowEnvironment) => ({
  em: db.orm.em.fork() as EntityManager,
  temporal: env.client,
  settings,
});

/**
 * Waits until the call's workflow and its far end have finished; keeps both histories for replay,
 * and with `keep` as the committed histories `<keep>-call` and `-far-end` (test/support/kept-histories.ts).
 */
async function finish(env: TestWorkflowEnvironment, callId: string, keep?: string) {
  const result = (await env.client.workflow.getHandle(callWorkflowId(callId)).result()) as CallWorkflowResult;
  await stack.settle(env, callId);
  const histories = await stack.callHistories(env, callId);
  recorded.push(...histories);
  for (const { kind, history } of histories) if (keep) keepHistory(`${keep}-${kind}`, history);
  return { result, ...(await storedCall(db.orm, callId)) };
}

/** A person calls `to` from `from`; the call is taken and runs to its end. */
async function callIn(to: string, from: string, beforeWorkersRun?: () => Promise<void>, keep?: string) {
  return stack.withEnvironment(async (env) => {
    const answer = await answerIncomingPhoneCall(deps(env), { to, from });
    await beforeWorkersRun?.();
    assert.ok(answer.answered, `the call is taken, not ${JSON.stringify(answer)}`);
    const finished = await withWorkers(env, () => finish(env, answer.callId, keep));
    const description = await env.client.workflow.getHandle(callWorkflowId(answer.callId)).describe();
    return { answer, ...finished, searchAttributes: description.typedSearchAttributes };
  });
}

let callerSeq = 0;
/** A caller number whose last four digits pick the scenario. */
const caller = (ending = '5678') =>
  `+4741${String(process.pid % 1000).padStart(3, '0')}${++callerSeq}${ending}`;

async function setNumberAgent(number: string, agentId: string | null) {
  const em = db.orm.em.fork();
  const phone = await em.findOneOrFail(PhoneNumber, { number });
  phone.agent = agentId;
  await em.flush();
}

async function callsOf(workspaceId: string) {
  return db.orm.em.fork().find(Call, { workspace: workspaceId });
}

describe('inbound phone calls that are taken', { timeout: 180_000 }, () => {
  let ada: AgentFixture;
  before(async () => {
    ada = await createAgentFixture(db.orm, {
      name: 'Ada',
      firstMessage: 'Thank you for calling Acme, this is Ada. How can I help?',
      outboundFirstMessage: 'Hi, Ada from Acme calling!',
    });
  });

  test('answered: in_progress with call.started, every line, hang-up, analysis, completed', async () => {
    const from = caller('5678');
    const { answer, result, call, transcript, events, searchAttributes } = await callIn(
      ada.number,
      from,
      undefined,
      'inbound-phone',
    );
    assert.equal(answer.answered, true);
    assert.equal(result.status, 'completed');
    assert.equal(call.direction, 'inbound');
    assert.equal(call.channel, 'phone');
    assert.equal(call.agent, ada.agentId);
    assert.equal(call.fromNumber, from);
    assert.equal(call.toNumber, ada.number);
    assert.equal(call.status, 'completed');
    assert.equal(call.endReason, 'agent_hangup');
    assert.ok(call.answeredAt && call.endedAt);
    assert.ok((call.durationSeconds ?? 0) > 10);
    assert.equal(call.analysis?.outcome, 'resolved');
    assert.equal(call.analysis?.sentiment, 'positive');
    assert.ok(call.analysis?.action_items.some((item) => /confirmation by email/.test(item)));

    // The agent greets with first_message (outbound_first_message is for calls it makes).
    assert.deepEqual(transcript[0], {
      role: 'agent',
      index: 0,
      text: 'Thank you for calling Acme, this is Ada. How can I help?',
    });
    assert.equal(transcript[1].role, 'caller');
    assert.match(transcript[1].text, /book an appointment/);
    assert.deepEqual(
      transcript.map((line) => line.index),
      transcript.map((_, i) => i),
    );
    assert.equal(transcript.at(-1)!.text, 'Thank you for your time. Goodbye!');

    assert.deepEqual(
      events.map((event) => event.type),
      ['call.started', 'call.completed'],
    );
    const started = events[0].body.data.object;
    assert.equal(started.status, 'in_progress');
    assert.equal(started.direction, 'inbound');
    assert.equal(started.channel, 'phone');
    assert.equal(started.from, from);
    assert.equal(started.to, ada.number);
    assert.equal(started.analysis, null);
    const completed = events[1].body.data.object;
    assert.equal(completed.status, 'completed');
    assert.equal(completed.has_recording, false, 'a text-only call has no recording');
    assert.deepEqual(completed.analysis, call.analysis);

    assert.equal(searchAttributes.get(CallDirectionKey), 'inbound');
    assert.equal(searchAttributes.get(AgentIdKey), ada.agentId);
    assert.equal(searchAttributes.get(CallStatusKey), 'completed');
  });

  test('an agent without first_message waits for the caller to speak', async () => {
    const quiet = await createAgentFixture(db.orm, { name: 'Quinn', firstMessage: null });
    const { call, transcript } = await callIn(quiet.number, caller('5678'));
    assert.equal(call.status, 'completed');
    assert.deepEqual(transcript.slice(0, 2), [
      { role: 'caller', index: 0, text: 'Hello?' },
      { role: 'agent', index: 1, text: 'Hello, this is Quinn. How can I help you today?' },
    ]);
  });

  const SCENARIOS: [
    string,
    string,
    { endReason: string; events: string[]; outcome: string; sentiment?: string },
  ][] = [
    [
      '2002',
      'asks for a human and is transferred',
      {
        endReason: 'transferred',
        events: ['call.started', 'call.transferred', 'call.completed'],
        outcome: 'transferred',
      },
    ],
    [
      '2003',
      'unhappy, wants a manager',
      {
        endReason: 'caller_hangup',
        events: ['call.started', 'call.completed'],
        outcome: 'escalated',
        sentiment: 'negative',
      },
    ],
    [
      '2004',
      'hangs up after the greeting',
      { endReason: 'caller_hangup', events: ['call.started', 'call.completed'], outcome: 'abandoned' },
    ],
    [
      '1001',
      'a 100x ending does not apply: the default conversation',
      {
        endReason: 'agent_hangup',
        events: ['call.started', 'call.completed'],
        outcome: 'resolved',
        sentiment: 'positive',
      },
    ],
  ];
  for (const [ending, what, expected] of SCENARIOS) {
    test(`caller ending ${ending}: ${what}`, async () => {
      const { call, events, transcript } = await callIn(ada.number, caller(ending));
      assert.equal(call.status, 'completed');
      assert.equal(call.endReason, expected.endReason);
      assert.equal(call.analysis?.outcome, expected.outcome);
      if (expected.sentiment) assert.equal(call.analysis?.sentiment, expected.sentiment);
      assert.deepEqual(
        events.map((event) => event.type),
        expected.events,
      );
      assert.equal(transcript[0].text, 'Thank you for calling Acme, this is Ada. How can I help?');
      if (ending === '2002') {
        // Transferred to TRANSFER_NUMBER (the simulator's front desk by default), never the number
        // the person dialled: that reaches this same agent and would ring it again.
        assert.equal(events[1].body.data.transferred_to, SIMULATED_FRONT_DESK);
        assert.equal(events[1].body.data.object.direction, 'inbound');
        assert.equal(call.transferredTo, SIMULATED_FRONT_DESK);
        assert.notEqual(call.transferredTo, ada.number);
      }
      if (ending === '2004')
        assert.deepEqual(
          transcript.map((line) => line.role),
          ['agent'],
        );
    });
  }
});

describe('inbound phone calls that are not taken: no Call is recorded', { timeout: 60_000 }, () => {
  const notTaken = async (to: string): Promise<IncomingCallAnswer> =>
    stack.withEnvironment(async (env) => answerIncomingPhoneCall(deps(env), { to, from: caller() }));

  test('a number without an agent: no_agent', async () => {
    const fixture = await createAgentFixture(db.orm);
    await setNumberAgent(fixture.number, null);
    assert.deepEqual(await notTaken(fixture.number), { answered: false, reason: 'no_agent' });
    assert.equal((await callsOf(fixture.workspaceId)).length, 0);
  });

  for (const status of ['draft', 'unpublished', 'archived'] as const) {
    test(`a number whose agent is ${status}: agent_not_published`, async () => {
      const fixture = await createAgentFixture(db.orm, { status });
      assert.deepEqual(await notTaken(fixture.number), { answered: false, reason: 'agent_not_published' });
      assert.equal((await callsOf(fixture.workspaceId)).length, 0);
    });
  }

  test('a number no workspace has: unknown_number', async () => {
    assert.deepEqual(await notTaken('+4759999999'), { answered: false, reason: 'unknown_number' });
  });
});

describe("the number's agent is looked up when the call comes in", { timeout: 180_000 }, () => {
  test('a number reassigned between two calls: the second call reaches the new agent', async () => {
    const first = await createAgentFixture(db.orm, { name: 'First', firstMessage: 'First agent speaking.' });
    const second = await createAgentFixture(db.orm, {
      workspaceId: first.workspaceId,
      name: 'Second',
      firstMessage: 'Second agent speaking.',
      numbers: 0,
    });
    const one = await callIn(first.number, caller());
    assert.equal(one.call.agent, first.agentId);
    assert.equal(one.transcript[0].text, 'First agent speaking.');

    await setNumberAgent(first.number, second.agentId);
    const two = await callIn(first.number, caller());
    assert.equal(two.call.agent, second.agentId);
    assert.equal(two.call.status, 'completed');
    assert.equal(two.transcript[0].text, 'Second agent speaking.');
    assert.equal(two.searchAttributes.get(AgentIdKey), second.agentId);
  });

  test('an agent changed, unpublished and deleted after the call came in does not cut it', async () => {
    const fixture = await createAgentFixture(db.orm, { name: 'Ada', firstMessage: null });
    const { call, transcript, events } = await callIn(fixture.number, caller(), async () => {
      // The call is taken; before its workflow gets going the agent changes in every way.
      const em = db.orm.em.fork();
      const agent = await em.findOneOrFail(Agent, { id: fixture.agentId });
      agent.name = 'Renamed';
      agent.firstMessage = 'A greeting set too late.';
      agent.status = 'unpublished';
      agent.deletedAt = new Date();
      await em.flush();
      await setNumberAgent(fixture.number, null);
    });
    assert.equal(call.status, 'completed');
    assert.equal(call.agent, fixture.agentId, 'the call keeps its agent_id');
    assert.equal(call.agentSnapshot.name, 'Ada');
    // Settings as they were when the call came in: no first_message, so the caller spoke first.
    assert.deepEqual(transcript.slice(0, 2), [
      { role: 'caller', index: 0, text: 'Hello?' },
      { role: 'agent', index: 1, text: 'Hello, this is Ada. How can I help you today?' },
    ]);
    assert.deepEqual(
      events.map((event) => event.type),
      ['call.started', 'call.completed'],
    );
  });
});

describe('web calls', { timeout: 180_000 }, () => {
  test('a draft agent takes a web call from the test panel', async () => {
    const draft = await createAgentFixture(db.orm, {
      name: 'Dana',
      status: 'draft',
      firstMessage: 'Hi, Dana here. What can I do for you?',
      numbers: 0,
    });
    const { call, transcript, events } = await stack.withEnvironment(async (env) => {
      const web = await startWebCall(deps(env), { agentId: draft.agentId, fromLabel: 'Test panel' });
      assert.ok(web.started);
      const { callId } = web;
      return withWorkers(env, () => finish(env, callId, 'inbound-web'));
    });
    assert.equal(call.direction, 'inbound');
    assert.equal(call.channel, 'web');
    assert.equal(call.fromNumber, null);
    assert.equal(call.toNumber, null);
    assert.deepEqual(call.metadata, { from_label: 'Test panel' });
    assert.equal(call.status, 'completed');
    assert.equal(call.analysis?.outcome, 'resolved');
    assert.equal(transcript[0].text, 'Hi, Dana here. What can I do for you?');
    assert.deepEqual(
      events.map((event) => event.type),
      ['call.started', 'call.completed'],
    );
    assert.equal(events[0].body.data.object.channel, 'web');
  });

  test('a label ending in 2004 plays that scenario', async () => {
    const agent = await createAgentFixture(db.orm, { numbers: 0, firstMessage: 'Hello!' });
    const { call } = await stack.withEnvironment(async (env) => {
      const web = await startWebCall(deps(env), { agentId: agent.agentId, fromLabel: 'widget 2004' });
      assert.ok(web.started);
      const { callId } = web;
      return withWorkers(env, () => finish(env, callId));
    });
    assert.equal(call.endReason, 'caller_hangup');
    assert.equal(call.analysis?.outcome, 'abandoned');
  });

  test('refused for an unpublished, archived, deleted or unknown agent; nothing is recorded', async () => {
    const unpublished = await createAgentFixture(db.orm, { status: 'unpublished', numbers: 0 });
    const archived = await createAgentFixture(db.orm, { status: 'archived', numbers: 0 });
    const deleted = await createAgentFixture(db.orm, { numbers: 0 });
    const em = db.orm.em.fork();
    (await em.findOneOrFail(Agent, { id: deleted.agentId })).deletedAt = new Date();
    await em.flush();
    const published = await createAgentFixture(db.orm, { numbers: 0 });
    await stack.withEnvironment(async (env) => {
      const refused = async (agentId: string, message: RegExp, fromLabel?: string) => {
        await assert.rejects(startWebCall(deps(env), { agentId, fromLabel }), (error: Error) => {
          assert.ok(error instanceof OperatorError);
          assert.match(error.message, message);
          return true;
        });
      };
      await refused(unpublished.agentId, /is unpublished; web calls need a draft or published agent/);
      await refused(archived.agentId, /is archived/);
      await refused(deleted.agentId, /no agent with id/);
      await refused(crypto.randomUUID(), /no agent with id/);
      await refused('not-a-uuid', /no agent with id not-a-uuid/);
      await refused(published.agentId, /from label is at most 200 characters/, 'x'.repeat(201));
    });
    for (const fixture of [unpublished, archived, deleted, published])
      assert.equal((await callsOf(fixture.workspaceId)).length, 0);
  });
});

test('recorded histories replay without nondeterminism', async () => {
  assert.ok(recorded.length >= 16, `recorded ${recorded.length}`);
  await stack.assertReplays('inbound-calls', recorded);
});
