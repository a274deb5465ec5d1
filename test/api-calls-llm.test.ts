import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Agent } from '../db/entities/index.js';
import { answerIncomingPhoneCall, startWebCall } from '../lib/calls/incoming-calls.js';
import { callWorkflowId } from '../lib/temporal/workflow-contracts.js';
import { createFixture, type Fixture } from './support/api.js';
import { type AgentFixture, createAgentFixture, storedCall } from './support/call-fixtures.js';
import { type CallStack, startCallStack, waitForCallEnd } from './support/call-stack.js';
import {
  type ChatStandIn,
  endCall,
  type SeenRequest,
  type StandInReply,
  schemaAnswer,
  startChatStandIn,
  streamed,
} from './support/chat-completions-stand-in.js';

// End to end with VOICE_LLM_URL pointing at a local OpenAI-compatible stand-in: POST /calls, an
// inbound phone call and a web call through the real API, PostgreSQL, a Temporal dev server and
// the workers, the simulator's clock at 1/100. Every agent line is the model's, the model's
// end_call hangs up, events and analysis are as usual, and Agents show the model as their `llm`.

const API_KEY = 'sk-e2e-voice-key-0000';
let standIn: ChatStandIn;
let stack: CallStack;
let owner: Fixture;
let agent: AgentFixture;

/** The model's words for the person's n-th utterance; after a goodbye it says goodbye and hangs up. */
const modelLine = (turn: number) => `Model line ${turn}: noted, thank you.`;

function model(request: SeenRequest): StandInReply {
  // The analysis plan's questions (strict JSON-schema answers), as a model answers them.
  if (request.body.response_format?.json_schema?.name === 'call_verdict')
    return schemaAnswer(request, { success: true, reason: 'The caller agreed to the visit.' });
  if (request.body.response_format?.type === 'json_schema') return schemaAnswer(request);
  const messages: { role: string; content: string }[] = request.body.messages;
  const last = messages.at(-1)!;
  if (last.role === 'user' && /\bBye\b/.test(last.content))
    return streamed('Model says goodbye!', [endCall()]);
  return streamed(modelLine(messages.filter((message) => message.role === 'user').length));
}

before(async () => {
  standIn = await startChatStandIn(model);
  stack = await startCallStack({
    prefix: 'api-calls-llm',
    simTimeScale: 0.01,
    settings: { voiceLlm: { url: standIn.url, apiKey: API_KEY, model: 'stand-in-model', timeoutMs: 5_000 } },
  });
  owner = await createFixture(stack.db.orm, { requestsPerSecond: 10_000 });
  agent = await createAgentFixture(stack.db.orm, {
    workspaceId: owner.workspaceId,
    name: 'Ada',
    firstMessage: 'Acme Dental, Ada speaking. Hello {{from_label}}!',
  });
  await stack.db.orm.em
    .fork()
    .nativeUpdate(Agent, { id: agent.agentId }, { systemPrompt: 'You book dental visits for {{clinic}}.' });
});
after(async () => {
  await stack?.close();
  await standIn?.close();
});

const http = () => stack.api.client(owner.secret);

test('Agents show the configured model as their llm', async () => {
  const created = await http().post('/agents', { name: 'Bo', system_prompt: 'You help.' });
  assert.equal(created.status, 201, created.text);
  assert.deepEqual(created.body.llm, { provider: 'openai-compatible', model: 'stand-in-model' });
  // An agent recorded before the runtime was configured shows the runtime its calls use now.
  const existing = await http().get(`/agents/${agent.agentId}`);
  assert.deepEqual(existing.body.llm, { provider: 'openai-compatible', model: 'stand-in-model' });
  const list = await http().get('/agents');
  for (const item of list.body.data) {
    assert.deepEqual(item.llm, { provider: 'openai-compatible', model: 'stand-in-model' });
  }
});

test('an outbound call through the API: the transcript is the model’s words, events and analysis as usual', async () => {
  const res = await http().post('/calls', {
    agent_id: agent.agentId,
    to: '+4790015678',
    metadata: { clinic: 'Acme Dental Oslo' },
    first_message: 'Hi, Ada from {{clinic}} here.',
  });
  assert.equal(res.status, 202, res.text);
  const done = await waitForCallEnd(http(), res.body.id);
  assert.equal(done.status, 'completed');
  assert.equal(done.end_reason, 'agent_hangup');
  assert.ok(done.analysis?.summary);
  assert.equal(done.analysis.outcome, 'resolved');

  const transcript = await http().get(`/calls/${res.body.id}/transcript`);
  const agentLines = transcript.body.data
    .filter((line: { role: string }) => line.role === 'agent')
    .map((line: { text: string }) => line.text);
  assert.deepEqual(agentLines, [
    'Hi, Ada from Acme Dental Oslo here.',
    modelLine(1),
    modelLine(2),
    modelLine(3),
    'Model says goodbye!',
  ]);
  // The row says completed before the workflow writes call.completed: wait for the workflow.
  await stack.client.workflow.getHandle(callWorkflowId(res.body.id)).result();
  const { events } = await storedCall(stack.db.orm, res.body.id);
  assert.deepEqual(
    events.map((event) => event.type),
    ['call.started', 'call.completed'],
  );
  assert.deepEqual(events[1].body.data.object.analysis, done.analysis);

  const forCall = standIn.requests.filter((request) =>
    request.body.messages[0].content.startsWith('You book dental visits for Acme Dental Oslo.'),
  );
  assert.equal(forCall.length, 4, 'one request per turn');
  assert.match(forCall[0].body.messages[0].content, /You placed this call/);
  assert.equal(forCall[0].headers.authorization, `Bearer ${API_KEY}`);
});

test('inbound phone calls and web calls use the same runtime', async () => {
  const deps = () => ({
    em: stack.db.orm.em.fork() as EntityManager,
    temporal: stack.client,
    settings: stack.settings,
  });
  const phone = await answerIncomingPhoneCall(deps(), { to: agent.number, from: '+4791115555' });
  assert.ok(phone.answered);
  const web = await startWebCall(deps(), { agentId: agent.agentId, fromLabel: 'Kari' });
  assert.ok(web.started);
  for (const [callId, channel] of [
    [phone.callId, 'phone'],
    [web.callId, 'web'],
  ] as const) {
    const done = await waitForCallEnd(http(), callId);
    assert.equal(done.status, 'completed', channel);
    assert.equal(done.direction, 'inbound');
    assert.equal(done.end_reason, 'agent_hangup', channel);
    const transcript = await http().get(`/calls/${callId}/transcript`);
    const agentLines = transcript.body.data
      .filter((line: { role: string }) => line.role === 'agent')
      .map((line: { text: string }) => line.text);
    assert.equal(
      agentLines[0],
      channel === 'web'
        ? 'Acme Dental, Ada speaking. Hello Kari!'
        : 'Acme Dental, Ada speaking. Hello {{from_label}}!',
      'the first_message with the variables the call has',
    );
    assert.deepEqual(
      agentLines.slice(1),
      [modelLine(1), modelLine(2), modelLine(3), 'Model says goodbye!'],
      channel,
    );
  }
  const webRequests = standIn.requests.filter((request) =>
    /from a web page/.test(request.body.messages[0].content),
  );
  assert.equal(webRequests.length, 4);
  const phoneRequests = standIn.requests.filter((request) =>
    /The person called you\./.test(request.body.messages[0].content),
  );
  assert.equal(phoneRequests.length, 4);
});

test('an agent with an analysis plan: the call’s analysis has the data by its schema and the verdict, in GET /calls and call.completed', async () => {
  const planned = await createAgentFixture(stack.db.orm, { workspaceId: owner.workspaceId, name: 'Planner' });
  const dataSchema = {
    type: 'object',
    additionalProperties: false,
    required: ['visit_day', 'party_size', 'confirmed'],
    properties: {
      visit_day: { type: 'string', enum: ['monday', 'tuesday'] },
      party_size: { type: 'integer' },
      confirmed: { type: 'boolean' },
    },
  };
  const patched = await http().patch(`/agents/${planned.agentId}`, {
    analysis_plan: { data_schema: dataSchema, success_criteria: 'The caller agreed to a visit.' },
  });
  assert.equal(patched.status, 200, patched.text);
  const seenBefore = standIn.requests.length;
  const res = await http().post('/calls', { agent_id: planned.agentId, to: '+4790015678' });
  assert.equal(res.status, 202, res.text);
  const done = await waitForCallEnd(http(), res.body.id);
  assert.equal(done.status, 'completed');
  assert.deepEqual(
    { data: done.analysis.data, success: done.analysis.success, reason: done.analysis.success_reason },
    {
      data: { visit_day: 'monday', party_size: 1, confirmed: true },
      success: true,
      reason: 'The caller agreed to the visit.',
    },
  );
  await stack.client.workflow.getHandle(callWorkflowId(res.body.id)).result();
  const { events } = await storedCall(stack.db.orm, res.body.id);
  assert.deepEqual(events.at(-1)!.body.data.object.analysis, done.analysis);

  // Asked with the plan's schema, strict, and the criteria; with the transcript.
  const asked = standIn.requests.slice(seenBefore).filter((request) => request.body.response_format);
  const byName = new Map(asked.map((request) => [request.body.response_format.json_schema.name, request]));
  assert.deepEqual([...byName.keys()].sort(), ['call_data', 'call_verdict']);
  assert.deepEqual(byName.get('call_data')!.body.response_format, {
    type: 'json_schema',
    json_schema: { name: 'call_data', schema: dataSchema, strict: true },
  });
  assert.match(byName.get('call_verdict')!.body.messages[0].content, /The caller agreed to a visit\./);
  assert.match(byName.get('call_data')!.body.messages[1].content, /^end_reason: agent_hangup\nagent: /);

  // The plan is the call's own: a call of the first agent (no plan) has the three fields null.
  const plain = await http().post('/calls', { agent_id: agent.agentId, to: '+4790015678' });
  const plainDone = await waitForCallEnd(http(), plain.body.id);
  assert.deepEqual(
    [plainDone.analysis.data, plainDone.analysis.success, plainDone.analysis.success_reason],
    [null, null, null],
  );
});
