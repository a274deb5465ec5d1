import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { verifyWebhookSignature } from '../lib/webhooks/verify-signature.js';
import { createFixture, type Fixture, type TestApi } from './support/api.js';
import { type AgentFixture, createAgentFixture } from './support/call-fixtures.js';
import { type CallStack, startCallStack } from './support/call-stack.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

// The hand-off between the call workflow and webhooks, end to end: a call placed through the API
// reaches a subscribed receiver as signed call.started and call.completed events whose data.object
// is the Call as GET /calls/{id} shows it.

let stack: CallStack;
let api: TestApi;
let owner: Fixture;
let agent: AgentFixture;
let receiver: WebhookReceiver;

before(async () => {
  [stack, receiver] = await Promise.all([
    startCallStack({
      prefix: 'wh-calls',
      simTimeScale: 0.01,
      webhooks: true,
      settings: { webhooksAllowPrivateTargets: true },
    }),
    startWebhookReceiver(),
  ]);
  ({ api } = stack);
  owner = await createFixture(stack.db.orm);
  agent = await createAgentFixture(stack.db.orm, { workspaceId: owner.workspaceId, name: 'Ada' });
});

after(async () => {
  await stack?.close();
  await receiver?.close();
});

test('a call placed through the API arrives as signed call.started and call.completed events', async () => {
  const http = api.client(owner.secret);
  const endpoint = await http.post('/webhooks', {
    url: `${receiver.url}/calls`,
    events: ['call.started', 'call.completed'],
  });
  assert.equal(endpoint.status, 201);
  const call = await http.post('/calls', {
    agent_id: agent.agentId,
    to: '+4790005678',
    metadata: { order: '42' },
  });
  assert.equal(call.status, 202, call.text);

  const deadline = Date.now() + 60_000;
  while (receiver.requests.filter((r) => r.path === '/calls').length < 2 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
  }
  const got = receiver.requests.filter((r) => r.path === '/calls');
  const events = got.map((r) => {
    assert.ok(
      verifyWebhookSignature({
        rawBody: r.rawBody,
        signatureHeader: r.headers['service-signature'] as string,
        secret: endpoint.body.secret,
      }).ok,
    );
    const body = JSON.parse(r.rawBody.toString('utf8'));
    assert.equal(r.headers['service-event-id'], body.id);
    assert.equal(r.headers['service-event-type'], body.type);
    return body;
  });
  const byType = Object.fromEntries(events.map((e) => [e.type, e]));
  assert.deepEqual(Object.keys(byType).sort(), ['call.completed', 'call.started']);
  assert.equal(byType['call.started'].data.object.id, call.body.id);
  assert.equal(byType['call.started'].data.object.status, 'in_progress');
  assert.deepEqual(byType['call.started'].data.object.metadata, { order: '42' });
  const completed = byType['call.completed'].data.object;
  assert.equal(completed.status, 'completed');
  assert.ok(completed.analysis);
  const fetched = await http.get(`/calls/${call.body.id}`);
  assert.deepEqual(completed, fetched.body, 'data.object is the Call as GET /calls/{id} shows it');

  const log = await http.get(`/webhooks/${endpoint.body.id}/deliveries`);
  assert.deepEqual(
    log.body.data.map((d: { status: string }) => d.status),
    ['delivered', 'delivered'],
  );
});
