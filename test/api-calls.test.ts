import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@temporalio/client';
import { lazyTemporalClient } from '../api/temporal-client.js';
import { Call, Workspace } from '../db/entities/index.js';
import { setLimits } from '../lib/accounts.js';
import { checkCallLimits } from '../lib/calls/call-limits.js';
import { callProgressQuery } from '../lib/temporal/call-messages.js';
import { CallStatusKey, WorkspaceIdKey } from '../lib/temporal/search-attributes.js';
import { callWorkflowId } from '../lib/temporal/workflow-contracts.js';
import { freePort } from '../scripts/processes.js';
import { createFixture, type Fixture, startApi, type TestApi } from './support/api.js';
import { assertApiError } from './support/assert-api.js';
import { type AgentFixture, createAgentFixture, createQueuedCall } from './support/call-fixtures.js';
import { type CallStack, startCallStack, waitForCallEnd } from './support/call-stack.js';
import type { TestDatabase } from './support/database.js';
import type { SharedDevServer } from './support/temporal.js';

// POST /calls, GET /calls, transcripts and /usage end to end: real HTTP, PostgreSQL, a Temporal
// dev server and the call workers, with the simulator's clock at 1/100 (SIM_TIME_SCALE=0.01).

let stack: CallStack;
let db: TestDatabase;
let temporal: SharedDevServer;
let api: TestApi;
let client: Client;
let owner: Fixture;
let agent: AgentFixture;

before(async () => {
  stack = await startCallStack({ prefix: 'api-calls', simTimeScale: 0.01 });
  ({ db, temporal, api, client } = stack);
  owner = await createFixture(db.orm, { requestsPerSecond: 10_000 });
  agent = await createAgentFixture(db.orm, { workspaceId: owner.workspaceId, name: 'Ada' });
});

after(async () => {
  await stack?.close();
});

const http = () => api.client(owner.secret);
let toSeq = 0;
/** A callee number whose last four digits pick the simulator's scenario. */
const callee = (ending = '5678') => `+4790${String(++toSeq).padStart(3, '0')}${ending}`;

const waitForEnd = (callId: string, secret = owner.secret) => waitForCallEnd(api.client(secret), callId);

describe('POST /calls', () => {
  test('202 queued at once, then completed with analysis and transcript', async () => {
    const t0 = Date.now();
    const res = await http().post('/calls', {
      agent_id: agent.agentId,
      to: callee(),
      metadata: { order: '42' },
    });
    assert.equal(res.status, 202, res.text);
    assert.equal(res.body.object, 'call');
    assert.equal(res.body.status, 'queued');
    assert.equal(res.body.direction, 'outbound');
    assert.equal(res.body.channel, 'phone');
    assert.equal(res.body.from, agent.number);
    assert.deepEqual(res.body.metadata, { order: '42' });
    assert.equal(res.body.analysis, null);
    // No ring_timeout_seconds sent: the call rings for the default 30 s (the workflow starts from this row).
    const stored = await db.orm.em.fork().findOneOrFail(Call, { id: res.body.id });
    assert.equal(stored.ringTimeoutSeconds, 30);

    const done = await waitForEnd(res.body.id);
    if (process.env.CALLS_DEBUG_HISTORY) {
      const history = await client.workflow.getHandle(callWorkflowId(res.body.id)).fetchHistory();
      for (const event of history.events ?? []) {
        const at = Number(event.eventTime?.seconds) * 1000 + Math.round((event.eventTime?.nanos ?? 0) / 1e6);
        console.log('H', at - t0, event.eventType);
      }
    }
    assert.equal(done.status, 'completed');
    assert.equal(done.end_reason, 'agent_hangup');
    assert.ok(done.duration_seconds > 10, 'stored durations are simulated seconds, not scaled');
    assert.equal(done.analysis.outcome, 'resolved');
    assert.equal(done.analysis.sentiment, 'positive');
    assert.equal(done.has_recording, false, 'a simulated (text-only) call has no recording');
    assert.deepEqual(done.metadata, { order: '42' });

    const transcript = await http().get(`/calls/${res.body.id}/transcript`);
    assert.equal(transcript.status, 200);
    assert.equal(transcript.body.object, 'transcript');
    assert.equal(transcript.body.call_id, res.body.id);
    assert.deepEqual(
      transcript.body.data.map((line: { index: number }) => line.index),
      transcript.body.data.map((_: unknown, i: number) => i),
    );
    assert.match(transcript.body.data[0].text, /this is Ada.*I'm calling/);

    // Operators find it in Temporal by id and search attributes.
    const handle = client.workflow.getHandle(callWorkflowId(res.body.id));
    // The row says completed one workflow task before the workflow upserts CallStatus: wait for the end.
    await handle.result();
    const description = await handle.describe();
    assert.equal(description.typedSearchAttributes.get(WorkspaceIdKey), owner.workspaceId);
    assert.equal(description.typedSearchAttributes.get(CallStatusKey), 'completed');
    assert.equal((await handle.query(callProgressQuery)).step, 'completed');
  });

  test('an agent with an analysis_plan and no language model: the analysis has data, success and success_reason null', async () => {
    const planned = await createAgentFixture(db.orm, { workspaceId: owner.workspaceId, name: 'Ada' });
    const plan = {
      data_schema: { type: 'object', properties: { day: { type: 'string' } }, required: ['day'] },
      success_criteria: 'The appointment was confirmed.',
    };
    const patched = await http().patch(`/agents/${planned.agentId}`, { analysis_plan: plan });
    assert.equal(patched.status, 200, patched.text);
    const res = await http().post('/calls', { agent_id: planned.agentId, to: callee() });
    assert.equal(res.status, 202, res.text);
    const done = await waitForEnd(res.body.id);
    assert.equal(done.status, 'completed');
    // The rules still read the call; only the plan's answers, which need a model, are null.
    assert.equal(done.analysis.outcome, 'resolved');
    assert.deepEqual(
      {
        data: done.analysis.data,
        success: done.analysis.success,
        success_reason: done.analysis.success_reason,
      },
      { data: null, success: null, success_reason: null },
    );
    // Stored so, not only shown so; and the call did carry the plan.
    const stored = await db.orm.em.fork().findOneOrFail(Call, { id: res.body.id });
    assert.equal(stored.agentSnapshot.analysisPlan?.successCriteria, plan.success_criteria);
    assert.ok(stored.analysis && 'data' in stored.analysis && 'success_reason' in stored.analysis);
    const { data, success, success_reason } = stored.analysis;
    assert.deepEqual({ data, success, success_reason }, { data: null, success: null, success_reason: null });
  });

  test('simulator endings through the API: busy, refused, transferred', async () => {
    const cases: [string, string, string][] = [
      ['1001', 'failed', 'busy'],
      ['1004', 'failed', 'not_connected'],
      ['2002', 'completed', 'transferred'],
    ];
    const started = await Promise.all(
      cases.map(([ending]) =>
        // A transfer needs a target (lib/voice-runtime/transfer-target.ts).
        http().post('/calls', {
          agent_id: agent.agentId,
          to: callee(ending),
          metadata: { transfer_to: '+4722998877' },
        }),
      ),
    );
    for (const [i, [, status, endReason]] of cases.entries()) {
      const done = await waitForEnd(started[i].body.id);
      assert.equal(done.status, status);
      assert.equal(done.end_reason, endReason);
      assert.equal(done.has_recording, false, 'simulated calls carry no audio');
      if (endReason !== 'transferred') {
        assert.equal(done.transfer, null, 'no transfer was tried');
        continue;
      }
      // The transfer as it went (telephony spec section 1): connected once the carrier took it.
      const { started_at, connected_at, ...transfer } = done.transfer;
      assert.deepEqual(transfer, { to: '+4722998877', mode: 'cold', status: 'connected', failure: null });
      assert.ok(Date.parse(started_at) <= Date.parse(connected_at));
      assert.ok(Date.parse(connected_at) <= Date.parse(done.ended_at));
    }
  });

  test('body checks: 400 with the field named', async () => {
    const base = { agent_id: agent.agentId, to: callee() };
    const metadata21 = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v']));
    const cases: [Record<string, unknown>, string, string][] = [
      [{ to: callee() }, 'parameter_missing', 'agent_id'],
      [{ ...base, to: '4790000000' }, 'parameter_invalid', 'to'],
      [{ ...base, to: '+0123456789' }, 'parameter_invalid', 'to'],
      [{ ...base, from: '12345' }, 'parameter_invalid', 'from'],
      [{ ...base, metadata: metadata21 }, 'parameter_invalid', 'metadata'],
      [{ ...base, metadata: { a: 1 } }, 'parameter_invalid', 'metadata.a'],
      [{ ...base, ring_timeout_seconds: 9 }, 'parameter_invalid', 'ring_timeout_seconds'],
      [{ ...base, ring_timeout_seconds: 121 }, 'parameter_invalid', 'ring_timeout_seconds'],
      [{ ...base, first_message: 'x'.repeat(501) }, 'parameter_invalid', 'first_message'],
      [{ ...base, unexpected: true }, 'parameter_unknown', 'unexpected'],
    ];
    for (const [body, code, param] of cases)
      assertApiError(await http().post('/calls', body), 400, code, param);
    const edge = await http().post('/calls', {
      ...base,
      ring_timeout_seconds: 120,
      first_message: 'x'.repeat(500),
      metadata: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'v'])),
    });
    assert.equal(edge.status, 202, edge.text);
    assert.equal((await db.orm.em.fork().findOneOrFail(Call, { id: edge.body.id })).ringTimeoutSeconds, 120);
    await waitForEnd(edge.body.id);
  });

  test('agent, number and emergency checks, in the documented order', async () => {
    const draft = await createAgentFixture(db.orm, { workspaceId: owner.workspaceId, status: 'draft' });
    const noNumber = await createAgentFixture(db.orm, { workspaceId: owner.workspaceId, numbers: 0 });
    const twoNumbers = await createAgentFixture(db.orm, { workspaceId: owner.workspaceId, numbers: 2 });
    const elsewhere = await createAgentFixture(db.orm);
    const post = (body: Record<string, unknown>) => http().post('/calls', body);

    assertApiError(
      await post({ agent_id: crypto.randomUUID(), to: callee() }),
      404,
      'resource_missing',
      'agent_id',
    );
    assertApiError(
      await post({ agent_id: elsewhere.agentId, to: callee() }),
      404,
      'resource_missing',
      'agent_id',
    );
    // Unpublished beats an emergency number: the agent is checked first.
    assertApiError(
      await post({ agent_id: draft.agentId, to: '+4711200000' }),
      422,
      'agent_not_published',
      'agent_id',
    );
    assertApiError(
      await post({ agent_id: noNumber.agentId, to: callee() }),
      422,
      'agent_has_no_number',
      'agent_id',
    );
    assertApiError(
      await post({ agent_id: twoNumbers.agentId, to: callee() }),
      422,
      'from_number_required',
      'from',
    );
    assertApiError(
      await post({ agent_id: agent.agentId, to: callee(), from: twoNumbers.number }),
      422,
      'from_number_not_assigned',
      'from',
    );
    for (const emergency of ['+4711200000', '+19110000000', '+4711300000', '+27112']) {
      if (!/^\+[1-9]\d{6,14}$/.test(emergency)) continue;
      assertApiError(await post({ agent_id: agent.agentId, to: emergency }), 422, 'emergency_number', 'to');
    }
    // A wrong `from` beats an emergency number: numbers are checked before the emergency table.
    assertApiError(
      await post({ agent_id: agent.agentId, to: '+4711200000', from: '+4799999999' }),
      422,
      'from_number_not_assigned',
      'from',
    );
    const chosen = await post({ agent_id: twoNumbers.agentId, to: callee(), from: twoNumbers.numbers[1] });
    assert.equal(chosen.status, 202, chosen.text);
    assert.equal(chosen.body.from, twoNumbers.numbers[1]);
    await waitForEnd(chosen.body.id);
  });

  test('where a call may go: high-cost numbers, the dialing countries, its own caller id; a refusal writes nothing', async () => {
    const post = (body: Record<string, unknown>) => http().post('/calls', body);
    const callsTo = (to: string) => db.orm.em.fork().count(Call, { toNumber: to });
    // A Norwegian premium-rate number, a UK personal number, the satellite and international
    // premium ranges, a UK mobile (GB is not a default country), the agent's own caller id.
    const refused = [
      '+4782012345',
      '+447012345678',
      '+881612345678',
      '+97912345678',
      '+447700900123',
      agent.number,
    ];
    for (const to of refused) {
      const answer = await post({ agent_id: agent.agentId, to });
      assertApiError(answer, 422, 'destination_not_allowed', 'to');
      assert.equal(await callsTo(to), 0, `nothing written for ${to}`);
    }
    assert.match((await post({ agent_id: agent.agentId, to: '+447700900123' })).body.error.message, /GB/);
    // The emergency table keeps its own code, and comes first.
    assertApiError(await post({ agent_id: agent.agentId, to: '+4711200000' }), 422, 'emergency_number', 'to');
    // The integrator's transfer target is a number the call may dial: the same check, at its param.
    const withTarget = (transfer_to: string, to = callee()) =>
      post({ agent_id: agent.agentId, to, metadata: { transfer_to } });
    assertApiError(await withTarget('the front desk'), 400, 'parameter_invalid', 'metadata.transfer_to');
    assertApiError(await withTarget('+4782012345'), 422, 'destination_not_allowed', 'metadata.transfer_to');
    assertApiError(await withTarget('+447700900123'), 422, 'destination_not_allowed', 'metadata.transfer_to');
    assertApiError(await withTarget('+4711200000'), 422, 'emergency_number', 'metadata.transfer_to');
    const self = callee();
    assertApiError(await withTarget(self, self), 422, 'destination_not_allowed', 'metadata.transfer_to');
    assert.equal(await callsTo(self), 0);

    // A workspace given its own countries: GB is dialled, Norway no longer; `*` is every country
    // but high-cost numbers; `default` goes back to the deployment's.
    const uk = await createAgentFixture(db.orm, { workspaceId: owner.workspaceId });
    const own = await createFixture(db.orm, { requestsPerSecond: 10_000 });
    const abroad = await createAgentFixture(db.orm, { workspaceId: own.workspaceId });
    const postAbroad = (to: string) =>
      api.client(own.secret).post('/calls', { agent_id: abroad.agentId, to });
    await setLimits(db.orm.em.fork(), { workspaceId: own.workspaceId, dialingCountries: 'gb' });
    const placed = await postAbroad('+447700900124');
    assert.equal(placed.status, 202, placed.text);
    assertApiError(await postAbroad(callee()), 422, 'destination_not_allowed', 'to');
    await setLimits(db.orm.em.fork(), { workspaceId: own.workspaceId, dialingCountries: '*' });
    assertApiError(await postAbroad('+4782012345'), 422, 'destination_not_allowed', 'to');
    const anywhere = await postAbroad('+61491570006');
    assert.equal(anywhere.status, 202, anywhere.text);
    await setLimits(db.orm.em.fork(), { workspaceId: own.workspaceId, dialingCountries: 'default' });
    assertApiError(await postAbroad('+447700900125'), 422, 'destination_not_allowed', 'to');
    // The other workspace still has the deployment's countries.
    assertApiError(
      await post({ agent_id: uk.agentId, to: '+447700900126' }),
      422,
      'destination_not_allowed',
      'to',
    );
    await Promise.all([waitForEnd(placed.body.id, own.secret), waitForEnd(anywhere.body.id, own.secret)]);
  });

  test('an Idempotency-Key replays the first answer and never dials twice', async () => {
    const key = `call-${randomBytes(6).toString('hex')}`;
    const body = { agent_id: agent.agentId, to: callee() };
    const first = await http().post('/calls', body, { 'Idempotency-Key': key });
    const again = await http().post('/calls', body, { 'Idempotency-Key': key });
    assert.equal(first.status, 202);
    assert.equal(again.status, 202);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.text, first.text);
    const listed = await http().get(
      `/calls?limit=100&created_after=${encodeURIComponent(first.body.started_at)}`,
    );
    assert.equal(listed.body.data.filter((call: { to: string }) => call.to === body.to).length, 1);
    const reused = await http().post('/calls', { ...body, to: callee() }, { 'Idempotency-Key': key });
    assertApiError(reused, 409, 'idempotency_key_reused', 'Idempotency-Key');
    await waitForEnd(first.body.id);
  });
});

describe('opening line precedence, as seen in the transcript', () => {
  test('call first_message, else outbound_first_message, else first_message; "" lets the person speak', async () => {
    const both = await createAgentFixture(db.orm, {
      workspaceId: owner.workspaceId,
      firstMessage: 'Hi, Ada here from the clinic.',
      outboundFirstMessage: 'Hello, this is Ada calling from the clinic about your appointment.',
    });
    const firstOnly = await createAgentFixture(db.orm, {
      workspaceId: owner.workspaceId,
      firstMessage: 'Hi, Ada here from the clinic.',
    });
    const cases: [AgentFixture, string | undefined, { role: string; text?: string }][] = [
      [
        both,
        'Good morning, a quick question about your order.',
        { role: 'agent', text: 'Good morning, a quick question about your order.' },
      ],
      [
        both,
        undefined,
        { role: 'agent', text: 'Hello, this is Ada calling from the clinic about your appointment.' },
      ],
      [firstOnly, undefined, { role: 'agent', text: 'Hi, Ada here from the clinic.' }],
      [both, '', { role: 'caller' }],
    ];
    const calls = await Promise.all(
      cases.map(([fixture, firstMessage]) =>
        http().post('/calls', {
          agent_id: fixture.agentId,
          to: callee(),
          ...(firstMessage === undefined ? {} : { first_message: firstMessage }),
        }),
      ),
    );
    for (const [i, [, , expected]] of cases.entries()) {
      assert.equal(calls[i].status, 202, calls[i].text);
      await waitForEnd(calls[i].body.id);
      const transcript = (await http().get(`/calls/${calls[i].body.id}/transcript`)).body.data;
      assert.equal(transcript[0].role, expected.role);
      if (expected.text) assert.equal(transcript[0].text, expected.text);
    }
  });

  test('a PATCH to the agent applies from the next call, not to the one already started', async () => {
    const fixture = await createAgentFixture(db.orm, {
      workspaceId: owner.workspaceId,
      outboundFirstMessage: 'The greeting before the change.',
    });
    const before = await http().post('/calls', { agent_id: fixture.agentId, to: callee() });
    const patched = await http().patch(`/agents/${fixture.agentId}`, {
      outbound_first_message: 'The new greeting.',
    });
    assert.equal(patched.status, 200, patched.text);
    const afterPatch = await http().post('/calls', { agent_id: fixture.agentId, to: callee() });
    await Promise.all([waitForEnd(before.body.id), waitForEnd(afterPatch.body.id)]);
    const first = (await http().get(`/calls/${before.body.id}/transcript`)).body.data[0].text;
    const second = (await http().get(`/calls/${afterPatch.body.id}/transcript`)).body.data[0].text;
    assert.equal(first, 'The greeting before the change.');
    assert.equal(second, 'The new greeting.');
  });
});

describe('limits and the trial rule', () => {
  test('calls per minute hold across two API processes; 429 is not stored under the key', async () => {
    const ws = await createFixture(db.orm, { requestsPerSecond: 10_000 });
    const wsAgent = await createAgentFixture(db.orm, { workspaceId: ws.workspaceId });
    await setLimits(db.orm.em.fork(), { workspaceId: ws.workspaceId, callsPerMinute: 3 });
    const second = await startApi({ orm: db.orm, settings: api.deps.settings, temporal: async () => client });
    try {
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          (i % 2 ? second : api)
            .client(ws.secret)
            .post('/calls', { agent_id: wsAgent.agentId, to: callee() }),
        ),
      );
      const accepted = answers.filter((res) => res.status === 202);
      const refused = answers.filter((res) => res.status === 429);
      assert.equal(accepted.length, 3, answers.map((res) => res.status).join(','));
      assert.equal(refused.length, 5);
      for (const res of refused) {
        assertApiError(res, 429, 'call_rate_limited');
        const retryAfter = Number(res.headers.get('retry-after'));
        assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
      }
      const key = `limit-${randomBytes(4).toString('hex')}`;
      const body = { agent_id: wsAgent.agentId, to: callee() };
      assertApiError(
        await api.client(ws.secret).post('/calls', body, { 'Idempotency-Key': key }),
        429,
        'call_rate_limited',
      );
      await setLimits(db.orm.em.fork(), { workspaceId: ws.workspaceId, callsPerMinute: 100 });
      const retried = await api.client(ws.secret).post('/calls', body, { 'Idempotency-Key': key });
      assert.equal(retried.status, 202, 'the same key runs again once the limit allows');
      await Promise.all([...accepted, retried].map((res) => waitForEnd(res.body.id, ws.secret)));
    } finally {
      await second.close();
    }
  });

  test('Retry-After of calls per minute is at most 60 s, also when a call admitted meanwhile started after the request was read', async () => {
    const ws = await createFixture(db.orm, { requestsPerSecond: 10_000 });
    const wsAgent = await createAgentFixture(db.orm, { workspaceId: ws.workspaceId });
    await setLimits(db.orm.em.fork(), { workspaceId: ws.workspaceId, callsPerMinute: 1 });
    const em = db.orm.em.fork();
    const workspace = await em.findOneOrFail(Workspace, { id: ws.workspaceId });
    const now = new Date();
    // Another API process admitted a call while this request waited for the workspace's lock:
    // its start is a moment after this request's `now` (CI once answered Retry-After: 61).
    await createQueuedCall(db.orm, wsAgent, { to: callee() });
    await em
      .fork()
      .nativeUpdate(Call, { workspace: ws.workspaceId }, { startedAt: new Date(now.getTime() + 400) });
    const refusal = await checkCallLimits(em, workspace, 'outbound', now);
    assert.equal(refusal?.code, 'call_rate_limited');
    assert.ok(refusal.retryAfterSeconds <= 60, `Retry-After ${refusal.retryAfterSeconds}`);
  });

  test('daily limit and minutes quota answer 429 with Retry-After', async () => {
    const ws = await createFixture(db.orm, { requestsPerSecond: 10_000 });
    const wsAgent = await createAgentFixture(db.orm, { workspaceId: ws.workspaceId });
    const post = () =>
      api.client(ws.secret).post('/calls', { agent_id: wsAgent.agentId, to: callee('1001') });
    await setLimits(db.orm.em.fork(), { workspaceId: ws.workspaceId, callsPerDay: 1 });
    const first = await post();
    assert.equal(first.status, 202);
    const daily = await post();
    assertApiError(daily, 429, 'call_daily_limit');
    assert.ok(Number(daily.headers.get('retry-after')) <= 86_400);
    await setLimits(db.orm.em.fork(), { workspaceId: ws.workspaceId, callsPerDay: 100, minutesQuota: 0 });
    const quota = await post();
    assertApiError(quota, 429, 'quota_exceeded');
    assert.ok(Number(quota.headers.get('retry-after')) >= 1);
    await waitForEnd(first.body.id, ws.secret);
  });

  test('trial: one call at a time; call_rejected is not stored under the key', async () => {
    const ws = await createFixture(db.orm, { requestsPerSecond: 10_000 });
    await db.orm.em
      .fork()
      .getConnection()
      .execute("update workspaces set plan = 'trial' where id = ?", [ws.workspaceId]);
    const wsAgent = await createAgentFixture(db.orm, { workspaceId: ws.workspaceId });
    const post = (body: Record<string, unknown>, headers?: Record<string, string>) =>
      api.client(ws.secret).post('/calls', { agent_id: wsAgent.agentId, ...body }, headers);
    // Rings unanswered for 10 s (the ring timeout is real time, not simulated).
    const ringing = await post({ to: callee('1002'), ring_timeout_seconds: 10 });
    assert.equal(ringing.status, 202);
    const key = `trial-${randomBytes(4).toString('hex')}`;
    const second = { to: callee('2004') };
    const rejected = await post(second, { 'Idempotency-Key': key });
    assertApiError(rejected, 422, 'call_rejected');
    const ended = await waitForEnd(ringing.body.id, ws.secret);
    assert.equal(ended.end_reason, 'no_answer');
    const retried = await post(second, { 'Idempotency-Key': key });
    assert.equal(retried.status, 202, retried.text);
    assert.equal(retried.headers.get('idempotent-replayed'), null);
    await waitForEnd(retried.body.id, ws.secret);
  });
});

describe('Temporal unreachable', () => {
  test('503 call_outcome_unknown, stored under the key: the same key never dials again', async () => {
    const deadPort = await freePort();
    const unreachable = lazyTemporalClient({
      address: `127.0.0.1:${deadPort}`,
      namespace: temporal.namespace,
    });
    const offline = await startApi({
      orm: db.orm,
      settings: api.deps.settings,
      temporal: () => unreachable.get(),
    });
    try {
      const key = `unknown-${randomBytes(4).toString('hex')}`;
      const body = { agent_id: agent.agentId, to: callee() };
      const first = await offline.client(owner.secret).post('/calls', body, { 'Idempotency-Key': key });
      assertApiError(first, 503, 'call_outcome_unknown');
      const again = await offline.client(owner.secret).post('/calls', body, { 'Idempotency-Key': key });
      assert.equal(again.status, 503);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      // The same key on a healthy API process still answers the stored 503.
      const healthy = await http().post('/calls', body, { 'Idempotency-Key': key });
      assert.equal(healthy.status, 503);
      // The call is listed (queued) so the client can look for it before using a new key.
      const listed = await http().get('/calls?limit=100');
      assert.equal(listed.body.data.filter((call: { to: string }) => call.to === body.to).length, 1);
    } finally {
      await offline.close();
      await unreachable.close();
    }
  });
});

describe('GET /calls and /usage', () => {
  test('filters and pagination, newest first, analysis and has_recording null in lists', async () => {
    const ws = await createFixture(db.orm, { requestsPerSecond: 10_000 });
    const one = await createAgentFixture(db.orm, { workspaceId: ws.workspaceId });
    const two = await createAgentFixture(db.orm, { workspaceId: ws.workspaceId });
    const c = api.client(ws.secret);
    const ids: string[] = [];
    for (const fixture of [one, two, one, two, one]) {
      const res = await c.post('/calls', { agent_id: fixture.agentId, to: callee('2003') });
      ids.push(res.body.id);
    }
    const ended = await Promise.all(ids.map((id) => waitForEnd(id, ws.secret)));

    const all = await c.get('/calls');
    assert.deepEqual(
      all.body.data.map((call: { id: string }) => call.id),
      [...ids].reverse(),
    );
    for (const call of all.body.data) {
      assert.equal(call.analysis, null);
      assert.equal(call.has_recording, null);
    }
    const byAgent = await c.get(`/calls?agent_id=${one.agentId}`);
    assert.deepEqual(
      byAgent.body.data.map((call: { id: string }) => call.id),
      [ids[4], ids[2], ids[0]],
    );
    assert.equal((await c.get('/calls?direction=inbound')).body.data.length, 0);
    assert.equal((await c.get('/calls?direction=outbound')).body.data.length, 5);
    const after = ended[2].started_at;
    const from = await c.get(`/calls?created_after=${encodeURIComponent(after)}`);
    assert.deepEqual(
      from.body.data.map((call: { id: string }) => call.id),
      [ids[4], ids[3], ids[2]],
    );
    const beforeIt = await c.get(`/calls?created_before=${encodeURIComponent(after)}`);
    assert.deepEqual(
      beforeIt.body.data.map((call: { id: string }) => call.id),
      [ids[1], ids[0]],
    );
    const pages: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { data: { id: string }[]; next_cursor: string | null; has_more: boolean } } =
        await c.get(`/calls?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      pages.push(...page.body.data.map((call) => call.id));
      cursor = page.body.next_cursor;
      assert.equal(page.body.has_more, cursor !== null);
    } while (cursor);
    assert.deepEqual(pages, [...ids].reverse());
    assertApiError(await c.get('/calls?direction=sideways'), 400, 'parameter_invalid', 'direction');
    assertApiError(await c.get('/calls?status=completed'), 400, 'parameter_unknown', 'status');
    assertApiError(await c.get(`/calls/${crypto.randomUUID()}`), 404, 'resource_missing', 'call_id');
    assertApiError(await http().get(`/calls/${ids[0]}`), 404, 'resource_missing', 'call_id');
    assertApiError(await http().get(`/calls/${ids[0]}/transcript`), 404, 'resource_missing', 'call_id');

    // Usage of this workspace: five escalated calls, minutes rounded up from the total seconds.
    const usage = await c.get('/usage');
    assert.equal(usage.status, 200, usage.text);
    const seconds = ended.reduce((sum, call) => sum + call.duration_seconds, 0);
    assert.equal(usage.body.object, 'usage');
    assert.equal(usage.body.calls, 5);
    assert.equal(usage.body.minutes, Math.ceil(seconds / 60));
    assert.equal(usage.body.average_duration_seconds, Math.round(seconds / 5));
    assert.deepEqual(usage.body.outcomes, {
      resolved: 0,
      escalated: 5,
      abandoned: 0,
      transferred: 0,
      unknown: 0,
    });
    assert.equal(usage.body.transfer_seconds, 0, 'no transfer was bridged');
    const now = new Date();
    assert.equal(
      usage.body.period.start,
      new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString(),
    );
    const past = await c.get('/usage?start=2020-01-01T00:00:00Z&end=2020-02-01T00:00:00Z');
    assert.equal(past.body.calls, 0);
    assert.equal(past.body.minutes, 0);
    assertApiError(
      await c.get('/usage?start=2020-02-01T00:00:00Z&end=2020-01-01T00:00:00Z'),
      400,
      'parameter_invalid',
      'end',
    );
    const noAnalytics = await createFixture(db.orm, { workspaceId: ws.workspaceId, scopes: ['calls:read'] });
    assertApiError(await api.client(noAnalytics.secret).get('/usage'), 403, 'missing_scope');
  });
});
