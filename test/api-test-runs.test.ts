import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { defaultPayloadConverter } from '@temporalio/common';
import type { TestRun as TestRunBody } from '../clients/typescript/src/index.js';
import { TestRun } from '../db/entities/index.js';
import { farEndWorkflowId, type TestCallerInput } from '../lib/temporal/workflow-contracts.js';
import { createTestRun } from '../lib/test-runs/create-test-run.js';
import { createFixture, type Fixture, startApi, type TestApi } from './support/api.js';
import { assertApiError } from './support/assert-api.js';
import { type AgentFixture, createAgentFixture } from './support/call-fixtures.js';
import { type CallStack, startCallStack } from './support/call-stack.js';
import {
  type ChatStandIn,
  endCall,
  type SeenRequest,
  type StandInReply,
  startChatStandIn,
  streamed,
} from './support/chat-completions-stand-in.js';
import { until } from './support/wait-for.js';

// Test runs through the API end to end (post-call spec section 2): real HTTP, PostgreSQL, a
// Temporal dev server and the workers; the language model (the agent, the simulated callers and
// the verdicts) is a local OpenAI-compatible stand-in. The workflow's own rules (limits, cancel
// under way, agent_error) are in test/test-run-workflow.test.ts.

let standIn: ChatStandIn;
let stack: CallStack;
let owner: Fixture;
let agent: AgentFixture;

const isCaller = (request: SeenRequest) =>
  String(request.body.messages[0]?.content).startsWith("You are testing a business's AI voice agent");

/** The caller asks once, then says goodbye; a "talker" never does. The agent notes and says goodbye back. */
function model(request: SeenRequest): StandInReply {
  const messages: { role: string; content: string }[] = request.body.messages;
  if (isCaller(request)) {
    const said = messages.filter((message) => message.role === 'assistant').length;
    if (/talker/.test(messages[0]!.content)) return { kind: 'json', text: `Still talking (${said}).` };
    return said === 0
      ? { kind: 'json', text: 'I would like a cleaning.' }
      : { kind: 'json', text: 'Bye!', toolCalls: [endCall()] };
  }
  if (request.body.response_format?.json_schema?.name === 'call_verdict') {
    const passes = /cleaning/.test(messages[0]!.content);
    return {
      kind: 'json',
      text: JSON.stringify({ success: passes, reason: passes ? 'A cleaning was asked for.' : 'No refund.' }),
    };
  }
  const last = messages.at(-1)!;
  if (/Bye/.test(last.content)) return streamed('Goodbye!', [endCall()]);
  return streamed('Noted, we can do Tuesday.');
}

before(async () => {
  standIn = await startChatStandIn(model);
  stack = await startCallStack({
    prefix: 'api-test-runs',
    simTimeScale: 0.01,
    settings: {
      voiceLlm: { url: standIn.url, apiKey: undefined, model: 'stand-in-model', timeoutMs: 5_000 },
    },
  });
  owner = await createFixture(stack.db.orm, { requestsPerSecond: 10_000 });
  // Draft agents can be tested.
  agent = await createAgentFixture(stack.db.orm, { workspaceId: owner.workspaceId, status: 'draft' });
});
after(async () => {
  await stack?.close();
  await standIn?.close();
});

const http = () => stack.api.client(owner.secret);
const scenarios = [
  {
    name: 'Cleaning',
    caller_prompt: 'You want a dental cleaning.',
    success_criteria: 'The caller asked for a cleaning.',
  },
  {
    name: 'Refund',
    caller_prompt: 'You want a refund.',
    success_criteria: 'A refund was promised.',
    max_turns: 3,
  },
];
const runCount = () => stack.db.orm.em.fork().count(TestRun, {});

async function finished(id: string) {
  let run: TestRunBody | undefined;
  await until(
    async () => {
      const read: TestRunBody = (await http().get(`/test-runs/${id}`)).body;
      run = read;
      return read.status === 'completed' || read.status === 'canceled';
    },
    () => `test run ${id} still ${run?.status}`,
    { limitMs: 60_000, everyMs: 100 },
  );
  return run!;
}

test('POST answers 202 queued with every result pending; the run completes with each call judged; GET and the list show it', async () => {
  const usageBefore = (await http().get('/usage')).body.calls;
  const created = await http().post(
    `/agents/${agent.agentId}/test-runs`,
    { scenarios },
    { 'Idempotency-Key': 'tr-1' },
  );
  assert.equal(created.status, 202, created.text);
  assert.equal(created.body.object, 'test_run');
  assert.equal(created.body.status, 'queued');
  assert.equal(created.body.agent_id, agent.agentId);
  assert.equal(created.body.completed_at, null);
  assert.deepEqual(created.body.summary, { passed: 0, failed: 0, errored: 0 });
  assert.deepEqual(created.body.results, [
    { scenario: 'Cleaning', run: 1, call_id: null, status: 'pending', reason: null },
    { scenario: 'Refund', run: 1, call_id: null, status: 'pending', reason: null },
  ]);
  // The same key and body: the same run, not a second one.
  const before = await runCount();
  const again = await http().post(
    `/agents/${agent.agentId}/test-runs`,
    { scenarios },
    { 'Idempotency-Key': 'tr-1' },
  );
  assert.equal(again.body.id, created.body.id);
  assert.equal(await runCount(), before);

  const run = await finished(created.body.id);
  assert.equal(run.status, 'completed');
  assert.ok(Date.parse(run.completed_at!) >= Date.parse(run.created_at));
  assert.deepEqual(run.summary, { passed: 1, failed: 1, errored: 0 });
  assert.deepEqual(
    run.results.map((r: TestRunBody['results'][number]) => [r.scenario, r.run, r.status, r.reason]),
    [
      ['Cleaning', 1, 'passed', 'A cleaning was asked for.'],
      ['Refund', 1, 'failed', 'No refund.'],
    ],
  );
  // Each result's call is a web call of the agent with the verdict in its analysis.
  const call = (await http().get(`/calls/${run.results[0].call_id}`)).body;
  assert.equal(call.channel, 'web');
  assert.equal(call.agent_id, agent.agentId);
  assert.equal(call.status, 'completed');
  assert.equal(call.analysis.success, true);
  assert.equal(call.metadata.test_run_id, run.id);

  // Test calls count in GET /usage like any web call.
  assert.equal((await http().get('/usage')).body.calls - usageBefore, 2);

  const list = await http().get(`/agents/${agent.agentId}/test-runs?limit=1`);
  assert.equal(list.status, 200);
  assert.equal(list.body.object, 'list');
  assert.deepEqual(list.body.data, [run]);
});

test('cancel: a running run is canceled (200); a finished one is 422 test_run_state_invalid; unknown ids are 404', async () => {
  const talk = [{ name: 'Talker', caller_prompt: 'You are a talker.', success_criteria: 'x', max_turns: 50 }];
  const created = await http().post(`/agents/${agent.agentId}/test-runs`, {
    scenarios: talk,
    runs_per_scenario: 2,
  });
  assert.equal(created.status, 202, created.text);
  await until(
    async () =>
      (await http().get(`/test-runs/${created.body.id}`)).body.results.every(
        (r: TestRunBody['results'][number]) => r.call_id,
      ),
    'both calls started',
    { limitMs: 30_000 },
  );
  const canceled = await http().post(`/test-runs/${created.body.id}/cancel`);
  assert.equal(canceled.status, 200, canceled.text);
  assert.equal(canceled.body.status, 'canceled');
  assert.ok(canceled.body.completed_at);
  const run = await finished(created.body.id);
  await until(
    async () => (await http().get(`/test-runs/${created.body.id}`)).body.summary.errored === 2,
    'both results errored',
    { limitMs: 30_000 },
  );
  const after = (await http().get(`/test-runs/${run.id}`)).body;
  assert.deepEqual(
    after.results.map((r: TestRunBody['results'][number]) => r.reason),
    Array(2).fill('The run was canceled while this call was under way.'),
  );
  // The calls hung up went on to their end (and their analysis).
  for (const result of after.results) {
    await until(
      async () => (await http().get(`/calls/${result.call_id}`)).body.status === 'completed',
      'call ended',
    );
  }

  const again = await http().post(`/test-runs/${run.id}/cancel`);
  assertApiError(again, 422, 'test_run_state_invalid');
  assertApiError(
    await http().post(`/test-runs/${crypto.randomUUID()}/cancel`),
    404,
    'resource_missing',
    'test_run_id',
  );
  assertApiError(
    await http().get(`/test-runs/${crypto.randomUUID()}`),
    404,
    'resource_missing',
    'test_run_id',
  );
  assertApiError(await http().get('/test-runs/not-a-uuid'), 400, 'parameter_invalid', 'test_run_id');
});

describe('bad input: each its code and param, nothing written', () => {
  const many = (n: number) => Array.from({ length: n }, (_, i) => ({ ...scenarios[0]!, name: `S${i}` }));
  const cases: [string, Record<string, unknown>, string][] = [
    ['more than 20 scenarios', { scenarios: many(21) }, 'scenarios'],
    ['no scenario', { scenarios: [] }, 'scenarios'],
    ['more than 10 runs', { scenarios, runs_per_scenario: 11 }, 'runs_per_scenario'],
    ['max_turns over 50', { scenarios: [{ ...scenarios[0], max_turns: 51 }] }, 'scenarios[0].max_turns'],
    ['an empty name', { scenarios: [scenarios[0], { ...scenarios[1], name: '' }] }, 'scenarios[1].name'],
    [
      'a caller_prompt over 4000',
      { scenarios: [{ ...scenarios[0], caller_prompt: 'x'.repeat(4001) }] },
      'scenarios[0].caller_prompt',
    ],
    [
      'success_criteria over 2000',
      { scenarios: [{ ...scenarios[0], success_criteria: 'x'.repeat(2001) }] },
      'scenarios[0].success_criteria',
    ],
  ];
  for (const [what, body, param] of cases) {
    test(what, async () => {
      const before = await runCount();
      assertApiError(
        await http().post(`/agents/${agent.agentId}/test-runs`, body),
        400,
        'parameter_invalid',
        param,
      );
      assert.equal(await runCount(), before);
    });
  }

  test('an archived agent is 422 agent_not_ready', async () => {
    const archived = await createAgentFixture(stack.db.orm, {
      workspaceId: owner.workspaceId,
      status: 'archived',
    });
    const before = await runCount();
    assertApiError(
      await http().post(`/agents/${archived.agentId}/test-runs`, { scenarios }),
      422,
      'agent_not_ready',
      'agent_id',
    );
    assert.equal(await runCount(), before);
  });

  test('an unknown agent is 404; no language model is 422 llm_required', async () => {
    const before = await runCount();
    assertApiError(
      await http().post(`/agents/${crypto.randomUUID()}/test-runs`, { scenarios }),
      404,
      'resource_missing',
      'agent_id',
    );
    assertApiError(
      await http().get(`/agents/${crypto.randomUUID()}/test-runs`),
      404,
      'resource_missing',
      'agent_id',
    );
    let plain: TestApi | undefined;
    try {
      plain = await startApi({
        orm: stack.db.orm,
        settings: { voiceLlm: undefined, analysisLlm: undefined },
      });
      const refused = await plain
        .client(owner.secret)
        .post(`/agents/${agent.agentId}/test-runs`, { scenarios });
      assertApiError(refused, 422, 'llm_required');
    } finally {
      await plain?.close();
    }
    assert.equal(await runCount(), before);
  });
});

test('max_turns left out is 12: in the document, on the stored run and given to the caller; the caller’s model is offered end_call, the agent’s requests are its own', async () => {
  const doc = (await stack.api.client().get('/openapi.json')).body;
  const createBody =
    doc.paths['/agents/{agent_id}/test-runs'].post.requestBody.content['application/json'].schema;
  const resolved = createBody.$ref ? doc.components.schemas[createBody.$ref.split('/').at(-1)] : createBody;
  assert.equal(resolved.properties.scenarios.items.properties.max_turns.default, 12);

  const seenBefore = standIn.requests.length;
  const created = await http().post(`/agents/${agent.agentId}/test-runs`, { scenarios: [scenarios[0]] });
  assert.equal(created.status, 202, created.text);
  const stored = await stack.db.orm.em.fork().findOneOrFail(TestRun, { id: created.body.id });
  assert.deepEqual(
    stored.scenarios.map((s) => s.maxTurns),
    [12],
  );
  assert.equal(stored.runsPerScenario, 1);
  const run = await finished(created.body.id);
  assert.equal(run.results[0]!.status, 'passed');
  // The caller (the call's far end) was started with the default cap.
  const history = await stack.client.workflow
    .getHandle(farEndWorkflowId(run.results[0]!.call_id!))
    .fetchHistory();
  const input = defaultPayloadConverter.fromPayload<TestCallerInput>(
    history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!,
  );
  assert.equal(input.maxTurns, 12);

  // Both the caller and the agent are played by the stand-in, and both are offered an end_call:
  // the caller's requests are its own (its instructions, one tool, not streamed), the agent's theirs.
  const seen = standIn.requests.slice(seenBefore);
  const callerRequests = seen.filter(isCaller);
  const agentRequests = seen.filter((request) => !isCaller(request) && !request.body.response_format);
  assert.equal(callerRequests.length, 2, 'a line, then goodbye with end_call');
  for (const request of callerRequests) {
    assert.deepEqual(
      (request.body.tools ?? []).map((tool: { type: string; function: { name: string } }) => [
        tool.type,
        tool.function.name,
      ]),
      [['function', 'end_call']],
    );
    assert.match(request.body.tools[0].function.description, /^Hang up/);
    assert.equal(request.body.stream, false);
    assert.match(request.body.messages[0].content, /Your part: You want a dental cleaning\.$/);
  }
  // The caller hears the agent's lines as `user`, its own as `assistant`; it spoke first.
  const conversation = (request: SeenRequest) =>
    request.body.messages.slice(1).map((m: { role: string; content: string }) => `${m.role}: ${m.content}`);
  assert.deepEqual(callerRequests.map(conversation), [
    ['user: (the agent picked up and is silent)'],
    ['assistant: I would like a cleaning.', 'user: Noted, we can do Tuesday.'],
  ]);
  // The agent hears the caller's lines as `user`. (Whether it gets to answer the goodbye before
  // the caller's hang-up is a race, so only its first request is pinned.)
  assert.ok(agentRequests.length >= 1);
  assert.deepEqual(conversation(agentRequests[0]!), ['user: I would like a cleaning.']);
  for (const request of agentRequests) {
    assert.equal(request.body.stream, true);
    assert.match(request.body.messages[0].content, /You confirm appointments\./);
    assert.doesNotMatch(JSON.stringify(request.body.messages), /You are testing a business/);
    assert.ok(
      request.body.tools.every(
        (tool: { function: { description: string } }) =>
          !/^Hang up: call it when what you called for/.test(tool.function.description),
      ),
      'the agent is not offered the caller’s end_call',
    );
  }
});

test('GET /agents/{id}/test-runs: newest first, limit and cursor page through, only that agent’s runs', async () => {
  const other = await createFixture(stack.db.orm, { requestsPerSecond: 10_000 });
  const listed = await createAgentFixture(stack.db.orm, { workspaceId: other.workspaceId, status: 'draft' });
  const neighbour = await createAgentFixture(stack.db.orm, {
    workspaceId: other.workspaceId,
    status: 'draft',
  });
  // Rows as POST writes them (no workflow: the list reads PostgreSQL only), a second apart.
  const ids: string[] = [];
  const t0 = Date.now() - 60_000;
  for (const [i, agentId] of [listed.agentId, listed.agentId, neighbour.agentId, listed.agentId].entries()) {
    const em = stack.db.orm.em.fork();
    const { run } = await createTestRun(em, {
      workspaceId: other.workspaceId,
      agentId,
      scenarios: [{ name: `S${i}`, callerPrompt: 'p', successCriteria: 'c', maxTurns: 12 }],
      runsPerScenario: 1,
    });
    await em.nativeUpdate(TestRun, { id: run.id }, { createdAt: new Date(t0 + i * 1000) });
    if (agentId === listed.agentId) ids.push(run.id);
  }
  const client = stack.api.client(other.secret);
  const path = `/agents/${listed.agentId}/test-runs`;
  const all = await client.get(path);
  assert.equal(all.status, 200, all.text);
  assert.deepEqual(
    all.body.data.map((run: TestRunBody) => run.id),
    [...ids].reverse(),
  );
  assert.equal(all.body.has_more, false);
  assert.equal(all.body.next_cursor, null);

  const first = await client.get(`${path}?limit=2`);
  assert.deepEqual(
    first.body.data.map((run: TestRunBody) => [run.id, run.results[0]!.scenario]),
    [
      [ids[2], 'S3'],
      [ids[1], 'S1'],
    ],
  );
  assert.equal(first.body.has_more, true);
  assert.ok(first.body.next_cursor);
  const second = await client.get(`${path}?limit=2&cursor=${first.body.next_cursor}`);
  assert.equal(second.status, 200, second.text);
  assert.deepEqual(
    second.body.data.map((run: TestRunBody) => run.id),
    [ids[0]],
  );
  assert.equal(second.body.has_more, false);
  assert.equal(second.body.next_cursor, null);
  assertApiError(await client.get(`${path}?cursor=nope`), 400, 'parameter_invalid', 'cursor');
  // Another workspace's agent is missing, not empty.
  assertApiError(await http().get(path), 404, 'resource_missing', 'agent_id');
});
