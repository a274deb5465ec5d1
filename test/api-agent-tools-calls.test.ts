import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { verifyToolRequestSignature } from '../clients/typescript/src/index.js';
import { createFixture, type Fixture } from './support/api.js';
import { type AgentFixture, createAgentFixture } from './support/call-fixtures.js';
import { type CallStack, startCallStack, waitForCallEnd } from './support/call-stack.js';
import {
  type ChatStandIn,
  endCall,
  type SeenRequest,
  type StandInReply,
  startChatStandIn,
  streamed,
} from './support/chat-completions-stand-in.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

// Agent tools end to end on a real Temporal dev server (no time skipping): tools and the secret
// set through the API, a call placed with POST /calls whose model calls the tool, the request
// checked with the typed client's verifier and the secret the API showed, a Retry-After waited
// out in wall-clock time, GET /calls/{id}/tool-calls, and a rotated secret signing the next call.

let standIn: ChatStandIn;
let stack: CallStack;
let owner: Fixture;
let agent: AgentFixture;
let tool: WebhookReceiver;
/** The first secret the API made. */
let firstSecret: string;

function model(request: SeenRequest): StandInReply {
  const last = request.body.messages.at(-1);
  if (last.role === 'tool') return streamed(`The order is ${JSON.parse(last.content).state}.`);
  if (last.role === 'user' && /Go ahead/.test(last.content)) {
    return streamed('Let me look that up.', [{ name: 'order_status', arguments: '{"order":"A-17"}' }]);
  }
  if (last.role === 'user' && /\bBye\b/.test(last.content)) return streamed('Goodbye!', [endCall()]);
  return streamed('Noted, thank you.');
}

before(async () => {
  [standIn, tool] = await Promise.all([startChatStandIn(model), startWebhookReceiver()]);
  stack = await startCallStack({
    prefix: 'api-tools-calls',
    simTimeScale: 0.01,
    settings: {
      voiceLlm: { url: standIn.url, apiKey: 'sk-tools', model: 'stand-in-model', timeoutMs: 5_000 },
      // The tool listens on 127.0.0.1.
      webhooksAllowPrivateTargets: true,
    },
  });
  owner = await createFixture(stack.db.orm, { requestsPerSecond: 10_000 });
  agent = await createAgentFixture(stack.db.orm, { workspaceId: owner.workspaceId, name: 'Ada' });
});
after(async () => {
  await stack?.close();
  await Promise.all([standIn?.close(), tool?.close()]);
});

const http = () => stack.api.client(owner.secret);

async function placeCall() {
  const res = await http().post('/calls', {
    agent_id: agent.agentId,
    to: '+4790015678',
    first_message: 'Hi, Ada from Acme here. Do you have a minute?',
    metadata: { order_source: 'web' },
  });
  assert.equal(res.status, 202, res.text);
  const done = await waitForCallEnd(http(), res.body.id);
  assert.equal(done.status, 'completed');
  return res.body.id as string;
}

test('a tool set through the API is called during a call: signed, retried after Retry-After, listed', async () => {
  const patched = await http().patch(`/agents/${agent.agentId}`, {
    tools: [
      {
        type: 'function',
        name: 'order_status',
        description: 'The state of an order.',
        parameters: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
        url: `${tool.url}/orders`,
        timeout_seconds: 5,
      },
    ],
  });
  assert.equal(patched.status, 200, patched.text);
  const made = await http().post(`/agents/${agent.agentId}/tools-secret`, {});
  assert.equal(made.status, 200, made.text);
  const secret: string = made.body.secret;
  firstSecret = secret;

  let n = 0;
  tool.answer = () => {
    n += 1;
    return n === 1
      ? { status: 429, headers: { 'retry-after': '2' } }
      : { status: 200, body: '{"state":"shipped"}' };
  };
  const callId = await placeCall();

  assert.equal(tool.requests.length, 2);
  const gap = tool.requests[1].receivedAt - tool.requests[0].receivedAt;
  assert.ok(gap >= 1_900 && gap < 5_000, `the retry waited for Retry-After: 2 (${gap} ms)`);
  for (const request of tool.requests) {
    const check = await verifyToolRequestSignature({
      rawBody: request.rawBody,
      signatureHeader: request.headers['voice-signature'] as string,
      secret,
    });
    assert.ok(check.ok, JSON.stringify(check));
  }
  const body = JSON.parse(tool.requests[1].rawBody.toString('utf8'));
  assert.equal(body.call_id, callId);
  assert.deepEqual(body.metadata, { order_source: 'web' });
  assert.equal(body.attempt, 2);

  const listed = await http().get(`/calls/${callId}/tool-calls`);
  assert.equal(listed.status, 200, listed.text);
  assert.equal(listed.body.data.length, 1);
  const [row] = listed.body.data;
  assert.equal(row.object, 'tool_call');
  assert.equal(row.id, body.id);
  assert.equal(row.id, tool.requests[0].headers['idempotency-key']);
  assert.equal(row.name, 'order_status');
  assert.deepEqual(row.arguments, { order: 'A-17' });
  assert.equal(row.status, 'succeeded');
  assert.equal(row.attempts, 2);
  assert.equal(row.response_status, 200);
  assert.equal(row.result, '{"state":"shipped"}');
  assert.ok(row.duration_ms >= 1_900, `duration from the first attempt (${row.duration_ms} ms)`);

  const transcript = await http().get(`/calls/${callId}/transcript`);
  const lines = transcript.body.data.map((line: { text: string }) => line.text);
  assert.ok(lines.includes('Let me look that up.'), lines.join(' | '));
  assert.ok(lines.includes('The order is shipped.'), lines.join(' | '));
});

test('a rotated secret signs the next call; the old one no longer verifies', async () => {
  const rotated = await http().post(`/agents/${agent.agentId}/tools-secret`, {});
  assert.equal(rotated.status, 200);
  tool.requests.length = 0;
  tool.answer = () => ({ status: 200, body: '{"state":"delivered"}' });
  await placeCall();
  assert.equal(tool.requests.length, 1);
  const [request] = tool.requests;
  const withNew = await verifyToolRequestSignature({
    rawBody: request.rawBody,
    signatureHeader: request.headers['voice-signature'] as string,
    secret: rotated.body.secret,
  });
  assert.ok(withNew.ok);
  const withOld = await verifyToolRequestSignature({
    rawBody: request.rawBody,
    signatureHeader: request.headers['voice-signature'] as string,
    secret: firstSecret,
  });
  assert.equal(withOld.ok, false);
});
