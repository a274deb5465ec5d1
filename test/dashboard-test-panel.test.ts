import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setLimits } from '../lib/accounts.js';
import { createFixture, type Fixture } from './support/api.js';
import { assertApiError } from './support/assert-api.js';
import { type CallStack, startCallStack, waitForCallEnd } from './support/call-stack.js';
import { type DashboardClient, signedInClient } from './support/dashboard-session.js';

// The test panel's endpoints over real HTTP on the whole stack (dev server, call and simulator
// workers): a call started from a session, the person's lines, the live stream of the call's lines
// and status, the hang-up, and every refusal the API would give.

let stack: CallStack;
let owner: Fixture;
let client: DashboardClient;
let agentId: string;

before(async () => {
  stack = await startCallStack({ prefix: 'test-panel' });
  owner = await createFixture(stack.db.orm, { requestsPerSecond: 10_000 });
  client = await signedInClient(stack.api.url, stack.db.orm, owner.userId);
  const agent = await client.post('/v1/agents', {
    name: 'Draft agent',
    system_prompt: 'You help.',
    first_message: 'Hello from the draft.',
  });
  assert.equal(agent.status, 201, agent.text);
  agentId = agent.body.id;
});
after(() => stack?.close());

/** Reads the call's server-sent events until the stream ends; returns them in order. */
async function liveEvents(callId: string): Promise<{ event: string; data: any }[]> {
  const response = await fetch(`${stack.api.url}/dashboard/api/calls/${callId}/live`, {
    headers: { cookie: client.cookie! },
  });
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type')!, /^text\/event-stream/);
  const text = await response.text();
  return text
    .trim()
    .split('\n\n')
    .map((block) => {
      const [eventLine, dataLine] = block.split('\n');
      return { event: eventLine!.replace('event: ', ''), data: JSON.parse(dataLine!.replace('data: ', '')) };
    });
}

test('a draft agent answers in the test panel: the lines typed, the live stream, the hang-up', async () => {
  const started = await client.post('/dashboard/api/test-calls', { agent_id: agentId });
  assert.equal(started.status, 201, started.text);
  const callId = started.body.call_id;
  const live = liveEvents(callId);

  // The first line is the agent's greeting; the person answers it.
  for (let i = 0; i < 100; i++) {
    if ((await client.get(`/v1/calls/${callId}/transcript`)).body.data.length > 0) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const said = await client.post(`/dashboard/api/test-calls/${callId}/say`, {
    line: 0,
    text: 'Can you help me?',
  });
  assert.equal(said.status, 202, said.text);
  for (let i = 0; i < 100; i++) {
    if ((await client.get(`/v1/calls/${callId}/transcript`)).body.data.length >= 3) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.equal((await client.post(`/dashboard/api/test-calls/${callId}/hang-up`)).status, 202);

  const call = await waitForCallEnd(stack.api.client(owner.secret), callId);
  assert.equal(call.status, 'completed');
  assert.equal(call.end_reason, 'caller_hangup');
  assert.equal(call.channel, 'web');
  assert.equal(call.metadata.from_label, `Test panel (${(await client.refresh()).body.email})`);

  const events = await live;
  const lines = events.filter((e) => e.event === 'line').map((e) => [e.data.role, e.data.text]);
  assert.deepEqual(lines.slice(0, 2), [
    ['agent', 'Hello from the draft.'],
    ['caller', 'Can you help me?'],
  ]);
  assert.ok(lines.length >= 3, 'the agent answered');
  const statuses = events.filter((e) => e.event === 'status').map((e) => e.data.status);
  assert.equal(statuses.at(-1), 'completed', 'the stream ends with the final status');

  const after = await client.post(`/dashboard/api/test-calls/${callId}/say`, { line: 1, text: 'Hello?' });
  assertApiError(after, 422, 'call_ended', 'call_id');
  assert.equal(
    (await client.post(`/dashboard/api/test-calls/${callId}/hang-up`)).status,
    202,
    'hanging up twice is harmless',
  );
});

test('the refusals of the API: viewers, other workspaces, unpublished agents, bad lines, no CSRF token', async () => {
  const viewer = await createFixture(stack.db.orm, { workspaceId: owner.workspaceId, role: 'viewer' });
  const viewerClient = await signedInClient(stack.api.url, stack.db.orm, viewer.userId);
  assertApiError(
    await viewerClient.post('/dashboard/api/test-calls', { agent_id: agentId }),
    403,
    'role_required',
  );

  const stranger = await createFixture(stack.db.orm);
  const strangerClient = await signedInClient(stack.api.url, stack.db.orm, stranger.userId);
  assertApiError(
    await strangerClient.post('/dashboard/api/test-calls', { agent_id: agentId }),
    404,
    'resource_missing',
    'agent_id',
  );

  const published = await client.post(`/v1/agents/${agentId}/publish`);
  assert.equal(published.status, 200);
  assert.equal((await client.post(`/v1/agents/${agentId}/unpublish`)).status, 200);
  assertApiError(
    await client.post('/dashboard/api/test-calls', { agent_id: agentId }),
    422,
    'agent_not_ready',
    'agent_id',
  );

  assertApiError(await client.post('/dashboard/api/test-calls', {}), 400, 'parameter_missing', 'agent_id');
  assertApiError(
    await client.post('/dashboard/api/test-calls', { agent_id: agentId, metadata: { name: 42 } }),
    400,
    'parameter_invalid',
    'metadata.name',
  );
  assertApiError(
    await client.post(`/dashboard/api/test-calls/${crypto.randomUUID()}/say`, { line: 0, text: 'x' }),
    404,
    'resource_missing',
    'call_id',
  );
  assertApiError(
    await client.post('/dashboard/api/test-calls', { agent_id: agentId }, { csrf: false }),
    403,
    'csrf_token_invalid',
    'X-CSRF-Token',
  );
  assertApiError(
    await strangerClient.get(`/dashboard/api/calls/${crypto.randomUUID()}/live`),
    404,
    'resource_missing',
    'call_id',
  );
});

test('a test call is a call: with the minutes quota used up it is refused as POST /calls refuses, 429 quota_exceeded', async () => {
  const team = await createFixture(stack.db.orm, { requestsPerSecond: 10_000 });
  const teamClient = await signedInClient(stack.api.url, stack.db.orm, team.userId);
  const agent = await teamClient.post('/v1/agents', { name: 'Quota agent', first_message: 'Hello.' });
  assert.equal(agent.status, 201, agent.text);
  await setLimits(stack.db.orm.em.fork(), { workspaceId: team.workspaceId, minutesQuota: 0 });
  const refused = await teamClient.post('/dashboard/api/test-calls', { agent_id: agent.body.id });
  assertApiError(refused, 429, 'quota_exceeded');
  assert.ok(Number(refused.headers.get('retry-after')) >= 1);
  assert.deepEqual((await teamClient.get('/v1/calls')).body.data, [], 'no Call was recorded');
});
