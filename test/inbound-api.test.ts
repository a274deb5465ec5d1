import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { WebhookEndpoint } from '../db/entities/index.js';
import { setLimits } from '../lib/accounts.js';
import { answerIncomingPhoneCall, startWebCall } from '../lib/calls/incoming-calls.js';
import type { Settings } from '../lib/settings.js';
import { SIMULATED_FRONT_DESK } from '../lib/voice-runtime/transfer-target.js';
import { verifyWebhookSignature } from '../lib/webhooks/verify-signature.js';
import { createFixture, type Fixture, type TestApi } from './support/api.js';
import { assertApiError } from './support/assert-api.js';
import { type AgentFixture, createAgentFixture } from './support/call-fixtures.js';
import { type CallStack, startCallStack, waitForCallEnd } from './support/call-stack.js';
import type { TestDatabase } from './support/database.js';
import { insertEndpoint } from './support/webhook-fixtures.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

// Inbound phone calls and web calls through the API exactly like outbound ones: GET /calls and
// its filters, GET /calls/{id}, transcripts, /usage and signed webhook deliveries to a real local
// receiver. Real HTTP, PostgreSQL, a Temporal dev server, the call and webhook workers, and the
// simulator's clock at 1/100 (SIM_TIME_SCALE=0.01).

let stack: CallStack;
let db: TestDatabase;
let api: TestApi;
let client: Client;
let receiver: WebhookReceiver;
let endpoint: WebhookEndpoint;
let owner: Fixture;
let published: AgentFixture;
let draft: AgentFixture;
let settings: Settings;

before(async () => {
  [stack, receiver] = await Promise.all([
    startCallStack({
      prefix: 'inbound-api',
      simTimeScale: 0.01,
      webhooks: true,
      settings: { webhooksAllowPrivateTargets: true },
    }),
    startWebhookReceiver(),
  ]);
  ({ db, api, client, settings } = stack);
  owner = await createFixture(db.orm, { requestsPerSecond: 10_000 });
  published = await createAgentFixture(db.orm, {
    workspaceId: owner.workspaceId,
    name: 'Ada',
    firstMessage: 'Thanks for calling Acme, Ada speaking.',
  });
  draft = await createAgentFixture(db.orm, { workspaceId: owner.workspaceId, status: 'draft', numbers: 0 });
  endpoint = await insertEndpoint(db.orm.em.fork() as EntityManager, {
    workspaceId: owner.workspaceId,
    url: `${receiver.url}/hooks`,
    events: ['call.started', 'call.completed', 'call.failed', 'call.transferred'],
  });
});

after(async () => {
  await stack?.close();
  await receiver?.close();
});

const http = () => api.client(owner.secret);
const incomingDeps = () => ({ em: db.orm.em.fork() as EntityManager, temporal: client, settings });

const waitForEnd = (callId: string) => waitForCallEnd(http(), callId);

test('inbound and web calls show in lists, filters, transcripts, usage and webhooks like outbound ones', async () => {
  // Started one after the other (list order), then run side by side.
  const outbound = await http().post('/calls', { agent_id: published.agentId, to: '+4790005678' });
  assert.equal(outbound.status, 202, outbound.text);
  const phone = await answerIncomingPhoneCall(incomingDeps(), { to: published.number, from: '+4791112002' });
  assert.ok(phone.answered);
  const web = await startWebCall(incomingDeps(), {
    agentId: draft.agentId,
    fromLabel: 'Dashboard test panel',
  });
  assert.ok(web.started);
  const [outboundDone, phoneDone, webDone] = await Promise.all(
    [outbound.body.id, phone.callId, web.callId].map(waitForEnd),
  );

  // GET /calls/{id}: the full Call, analysis filled in, has_recording false (text-only calls are not recorded).
  assert.equal(phoneDone.direction, 'inbound');
  assert.equal(phoneDone.channel, 'phone');
  assert.equal(phoneDone.agent_id, published.agentId);
  assert.equal(phoneDone.from, '+4791112002');
  assert.equal(phoneDone.to, published.number);
  assert.equal(phoneDone.status, 'completed');
  assert.equal(phoneDone.end_reason, 'transferred');
  assert.equal(phoneDone.has_recording, false);
  assert.equal(phoneDone.analysis.outcome, 'transferred');
  assert.deepEqual(phoneDone.metadata, {});
  assert.equal(webDone.direction, 'inbound');
  assert.equal(webDone.channel, 'web');
  assert.equal(webDone.agent_id, draft.agentId);
  assert.equal(webDone.from, null);
  assert.equal(webDone.to, null);
  assert.deepEqual(webDone.metadata, { from_label: 'Dashboard test panel' });
  assert.equal(webDone.has_recording, false);
  assert.equal(webDone.analysis.outcome, 'resolved');
  assert.equal(outboundDone.direction, 'outbound');

  // Transcripts: every line, the agent greeting with its first_message.
  for (const call of [phoneDone, webDone]) {
    const transcript = await http().get(`/calls/${call.id}/transcript`);
    assert.equal(transcript.status, 200);
    assert.equal(transcript.body.call_id, call.id);
    assert.ok(transcript.body.data.length >= 2);
    assert.deepEqual(
      transcript.body.data.map((line: { index: number }) => line.index),
      transcript.body.data.map((_: unknown, i: number) => i),
    );
  }
  const phoneTranscript = await http().get(`/calls/${phoneDone.id}/transcript`);
  assert.deepEqual(phoneTranscript.body.data[0], {
    index: 0,
    role: 'agent',
    text: 'Thanks for calling Acme, Ada speaking.',
  });
  assert.ok(
    phoneTranscript.body.data.some((line: { role: string; text: string }) =>
      /transferring you/i.test(line.text),
    ),
  );

  // Lists: newest first, has_recording and analysis null; direction and agent_id filters.
  const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((call) => call.id);
  const all = await http().get('/calls');
  assert.deepEqual(ids(all), [web.callId, phone.callId, outbound.body.id]);
  for (const call of all.body.data) {
    assert.equal(call.has_recording, null);
    assert.equal(call.analysis, null);
  }
  assert.deepEqual(ids(await http().get('/calls?direction=inbound')), [web.callId, phone.callId]);
  assert.deepEqual(ids(await http().get('/calls?direction=outbound')), [outbound.body.id]);
  assert.deepEqual(ids(await http().get(`/calls?agent_id=${published.agentId}`)), [
    phone.callId,
    outbound.body.id,
  ]);
  assert.deepEqual(ids(await http().get(`/calls?agent_id=${draft.agentId}&direction=inbound`)), [web.callId]);
  assert.deepEqual(ids(await http().get(`/calls?agent_id=${draft.agentId}&direction=outbound`)), []);
  const page = await http().get('/calls?direction=inbound&limit=1');
  assert.deepEqual(ids(page), [web.callId]);
  assert.deepEqual(
    ids(await http().get(`/calls?direction=inbound&limit=1&cursor=${page.body.next_cursor}`)),
    [phone.callId],
  );

  // Usage counts every direction and channel.
  const usage = await http().get('/usage');
  assert.equal(usage.status, 200, usage.text);
  const seconds = [outboundDone, phoneDone, webDone].reduce((sum, call) => sum + call.duration_seconds, 0);
  assert.equal(usage.body.calls, 3);
  assert.equal(usage.body.minutes, Math.ceil(seconds / 60));
  assert.equal(usage.body.average_duration_seconds, Math.round(seconds / 3));
  assert.deepEqual(usage.body.outcomes, {
    resolved: 2,
    escalated: 0,
    abandoned: 0,
    transferred: 1,
    unknown: 0,
  });

  // Webhooks: each call's events, signed, with data.object the Call as GET shows it.
  const expected = [
    [outbound.body.id, 'call.started'],
    [outbound.body.id, 'call.completed'],
    [phone.callId, 'call.started'],
    [phone.callId, 'call.transferred'],
    [phone.callId, 'call.completed'],
    [web.callId, 'call.started'],
    [web.callId, 'call.completed'],
  ];
  const requests = await receiver.waitForRequests(expected.length, 30_000);
  const events = requests.map((request) => {
    assert.equal(request.path, '/hooks');
    const check = verifyWebhookSignature({
      rawBody: request.rawBody,
      signatureHeader: request.headers['service-signature'] as string,
      secret: endpoint.secret,
    });
    assert.ok(check.ok, 'the delivery is signed with the endpoint secret');
    const body = JSON.parse(request.rawBody.toString('utf8'));
    assert.equal(request.headers['service-event-type'], body.type);
    return body;
  });
  assert.deepEqual(events.map((event) => [event.data.object.id, event.type]).sort(), [...expected].sort());
  const completed = new Map([outboundDone, phoneDone, webDone].map((call) => [call.id, call]));
  for (const event of events) {
    const call = event.data.object;
    if (event.type === 'call.started') {
      assert.equal(call.status, 'in_progress');
      assert.equal(call.analysis, null);
      assert.equal(call.has_recording, false);
    }
    if (event.type === 'call.completed') assert.deepEqual(call, completed.get(call.id));
    if (event.type === 'call.transferred') {
      assert.equal(call.direction, 'inbound');
      // TRANSFER_NUMBER (the simulator's front desk), never the number dialled: it rings this agent.
      assert.equal(event.data.transferred_to, SIMULATED_FRONT_DESK);
    }
  }
});

test('calls not taken leave nothing behind: no Call, no event', async () => {
  const ws = await createFixture(db.orm, { requestsPerSecond: 10_000 });
  const unpublished = await createAgentFixture(db.orm, {
    workspaceId: ws.workspaceId,
    status: 'unpublished',
  });
  const answer = await answerIncomingPhoneCall(incomingDeps(), {
    to: unpublished.number,
    from: '+4791115678',
  });
  assert.deepEqual(answer, { answered: false, reason: 'agent_not_published' });
  const list = await api.client(ws.secret).get('/calls');
  assert.equal(list.status, 200);
  assert.deepEqual(list.body.data, []);
  const usage = await api.client(ws.secret).get('/usage');
  assert.equal(usage.body.calls, 0);
});

test('calls that come in pass the workspace admission: the minutes quota and the trial line, not the dialing pace', async () => {
  const ws = await createFixture(db.orm, { requestsPerSecond: 10_000 });
  const agent = await createAgentFixture(db.orm, { workspaceId: ws.workspaceId, name: 'Quota' });
  const em = () => db.orm.em.fork() as EntityManager;
  // Dialing out is paced by calls_per_minute and calls_per_day; a call that comes in is not.
  await setLimits(em(), { workspaceId: ws.workspaceId, callsPerMinute: 0, callsPerDay: 0, minutesQuota: 0 });
  assertApiError(
    await api.client(ws.secret).post('/calls', { agent_id: agent.agentId, to: '+4790005679' }),
    429,
    'call_rate_limited',
  );
  const phone = await answerIncomingPhoneCall(incomingDeps(), { to: agent.number, from: '+4791116001' });
  assert.deepEqual(phone, { answered: false, reason: 'quota_exceeded' });
  const web = await startWebCall(incomingDeps(), { agentId: agent.agentId, fromLabel: 'widget' });
  assert.equal(web.started, false);
  assert.equal(!web.started && web.refusal.code, 'quota_exceeded');
  assert.deepEqual((await api.client(ws.secret).get('/calls')).body.data, [], 'no Call was recorded');

  // The trial plan's one line holds for calls that come in too.
  const trial = await createAgentFixture(db.orm, { plan: 'trial', name: 'Trial' });
  const trialKey = await createFixture(db.orm, { workspaceId: trial.workspaceId, requestsPerSecond: 10_000 });
  const waitForTrialCall = (callId: string) => waitForCallEnd(api.client(trialKey.secret), callId);
  const first = await answerIncomingPhoneCall(incomingDeps(), { to: trial.number, from: '+4791112004' });
  assert.ok(first.answered);
  const second = await answerIncomingPhoneCall(incomingDeps(), { to: trial.number, from: '+4791116002' });
  assert.deepEqual(second, { answered: false, reason: 'trial_line_busy' });
  const webOnTrial = await startWebCall(incomingDeps(), { agentId: trial.agentId });
  assert.equal(!webOnTrial.started && webOnTrial.refusal.code, 'trial_line_busy');
  await waitForTrialCall(first.callId);
  const afterwards = await answerIncomingPhoneCall(incomingDeps(), { to: trial.number, from: '+4791112004' });
  assert.ok(afterwards.answered, 'the line is free again once the call ended');
  await waitForTrialCall(afterwards.callId);
});
