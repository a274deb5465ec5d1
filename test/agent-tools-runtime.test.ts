import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import type { HistoryAndWorkflowId } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { Agent, type AgentTool, ToolCall } from '../db/entities/index.js';
import { startCallWorkflow } from '../lib/calls/start-call-workflow.js';
import type { Carrier } from '../lib/carrier/carrier.js';
import { toolCalls as toolCallsMetric } from '../lib/metrics/service-metrics.js';
import type { Settings } from '../lib/settings.js';
import { callWorkflowId, farEndWorkflowId } from '../lib/temporal/workflow-contracts.js';
import { OpenAiCompatibleRuntime } from '../lib/voice-runtime/openai-compatible-runtime.js';
import { verifyWebhookSignature } from '../lib/webhooks/verify-signature.js';
import { createToolsWorker } from '../workers/tools-worker.js';
import {
  type AgentFixture,
  createAgentFixture,
  createQueuedCall,
  storedCall,
} from './support/call-fixtures.js';
import {
  type ChatStandIn,
  endCall,
  type SeenRequest,
  type StandInReply,
  startChatStandIn,
  streamed,
} from './support/chat-completions-stand-in.js';
import type { TestDatabase } from './support/database.js';
import {
  runWorkers,
  startTimeSkippingCallStack,
  type TimeSkippingCallStack,
} from './support/time-skipping-call-stack.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

// The agent's own tools during calls (agent-tools spec section 3), on the time-skipping test
// server with a language-model stand-in that calls them and a real HTTP receiver as the tool:
// the signed request and its headers, the result handed back to the model, the line said while
// waiting, each retry rule with one id, the limits, the errors the model is told, the rows of
// GET /calls/{id}/tool-calls, a hang-up while a tool runs, and the histories replaying.

const SECRET = `tsec_${'ab'.repeat(32)}`;

let stack: TimeSkippingCallStack;
let db: TestDatabase;
let settings: Settings;
let env: TestWorkflowEnvironment;
let fixture: AgentFixture;
let standIn: ChatStandIn;
let tool: WebhookReceiver;
const histories: HistoryAndWorkflowId[] = [];

const CHECK_AVAILABILITY = (url: string, overrides: Partial<AgentTool> = {}): AgentTool => ({
  name: 'check_availability',
  description: 'Free appointment slots on a given day.',
  parameters: {
    type: 'object',
    properties: { day: { type: 'string' } },
    required: ['day'],
    additionalProperties: false,
  },
  url,
  timeoutSeconds: 2,
  speakWhileWaiting: 'One moment while I check the calendar.',
  ...overrides,
});

before(async () => {
  [stack, standIn, tool] = await Promise.all([
    startTimeSkippingCallStack({ prefix: 'tools', logLevel: 'ERROR' }),
    startChatStandIn(),
    startWebhookReceiver(),
  ]);
  ({ db, settings } = stack);
  fixture = await createAgentFixture(db.orm, { name: 'Ada' });
});
after(async () => {
  await Promise.all([standIn?.close(), tool?.close()]);
  await stack?.close();
});
beforeEach(async () => {
  env = await stack.newEnvironment();
  standIn.requests.length = 0;
  tool.requests.length = 0;
  tool.answer = () => ({ status: 200, body: '{"slots":["10:00","14:30"]}' });
  // The receiver is on 127.0.0.1: private targets allowed, as a development setup does.
  settings.webhooksAllowPrivateTargets = true;
});
afterEach(async () => {
  await env.teardown();
});

async function setTools(tools: AgentTool[], secret: string | null = SECRET) {
  await db.orm.em.fork().nativeUpdate(Agent, { id: fixture.agentId }, { tools, toolsSecret: secret });
}

const succeededCount = async () =>
  (await toolCallsMetric.get()).values.find((value) => value.labels.status === 'succeeded')?.value ?? 0;

const lastMessage = (request: SeenRequest) => request.body.messages.at(-1);

/**
 * A model that asks for the calendar once the person agrees to go ahead, speaks what the tool gave
 * it, and otherwise follows the friendly callee's script until their goodbye.
 */
function calendarModel(args = '{"day":"tuesday"}'): (request: SeenRequest) => StandInReply {
  return (request) => {
    const last = lastMessage(request);
    if (last.role === 'tool') return streamed(`Here is what I found: ${last.content}`);
    if (last.role === 'user' && /Go ahead/.test(last.content)) {
      return streamed('', [{ name: 'check_availability', arguments: args }]);
    }
    if (last.role === 'user' && /\bBye\b/.test(last.content)) return streamed('Goodbye!', [endCall()]);
    return streamed('Great, thank you.');
  };
}

async function runCall(options: { to?: string; metadata?: Record<string, string>; deaf?: boolean } = {}) {
  const call = await createQueuedCall(db.orm, fixture, {
    to: options.to ?? '+4791245678',
    firstMessage: 'Hi, this is Ada from Acme Dental. Do you have a minute?',
    metadata: options.metadata ?? { customer: 'kari' },
  });
  const voiceRuntime = new OpenAiCompatibleRuntime({
    url: standIn.url,
    apiKey: 'sk-test',
    model: 'stand-in',
    timeoutMs: 5_000,
  });
  // A deaf far end hears the opening line only: after its one reply the line stays silent.
  const simulated = stack.simulatedCarrier(env);
  const carrier: Carrier = options.deaf
    ? Object.assign(Object.create(simulated) as Carrier, { say: async () => undefined })
    : simulated;
  const workers = await stack.workers(env, { ports: { voiceRuntime, carrier } });
  const handle = env.client.workflow.getHandle(callWorkflowId(call.id));
  await runWorkers(workers, async () => {
    await startCallWorkflow(env.client, settings, call);
    await handle.result();
    await env.client.workflow.getHandle(farEndWorkflowId(call.id)).result();
  });
  const history = await handle.fetchHistory();
  histories.push({ workflowId: callWorkflowId(call.id), history });
  const toolCalls = await db.orm.em
    .fork()
    .find(ToolCall, { call: call.id }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  return { ...(await storedCall(db.orm, call.id)), history, toolCalls };
}

/** The tool steps in the history: activity type, summary and input of each scheduled attempt series. */
function toolActivities(history: Awaited<ReturnType<typeof runCall>>['history']) {
  return (history.events ?? []).flatMap((event) => {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (!scheduled?.taskQueue?.name?.endsWith('tools')) return [];
    const summary = event.userMetadata?.summary?.data;
    return [
      {
        type: scheduled.activityType?.name,
        summary: summary ? JSON.parse(Buffer.from(summary).toString('utf8')) : undefined,
      },
    ];
  });
}

describe('a tool call during a call', { timeout: 120_000 }, () => {
  test('the signed request, the line while waiting, the result spoken, the row and the activity named for the tool', async () => {
    await setTools([CHECK_AVAILABILITY(`${tool.url}/availability`)]);
    standIn.reply = calendarModel();
    const succeededBefore = await succeededCount();
    const { call, transcript, toolCalls, history } = await runCall();
    assert.equal((await succeededCount()) - succeededBefore, 1, 'agent_tool_calls_total{status="succeeded"}');
    assert.equal(call.status, 'completed');
    assert.equal(call.endReason, 'agent_hangup');

    // One request, as spec section 3 fixes it.
    assert.equal(tool.requests.length, 1);
    const [request] = tool.requests;
    assert.equal(request.path, '/availability');
    assert.equal(request.method, 'POST');
    assert.equal(request.headers['content-type'], 'application/json');
    const id = request.headers['idempotency-key'] as string;
    assert.match(id, /^tc_[0-9a-f]{32}$/);
    const check = verifyWebhookSignature({
      rawBody: request.rawBody,
      signatureHeader: request.headers['voice-signature'] as string,
      secret: SECRET,
    });
    assert.ok(check.ok, JSON.stringify(check));
    assert.deepEqual(JSON.parse(request.rawBody.toString('utf8')), {
      object: 'tool_call',
      id,
      call_id: call.id,
      agent_id: fixture.agentId,
      name: 'check_availability',
      arguments: { day: 'tuesday' },
      metadata: { customer: 'kari' },
      attempt: 1,
    });

    // The line while waiting was said (the model's answer had no words), then the result.
    const agentLines = transcript.filter((line) => line.role === 'agent').map((line) => line.text);
    assert.ok(agentLines.includes('One moment while I check the calendar.'), agentLines.join(' | '));
    assert.ok(
      agentLines.includes('Here is what I found: {"slots":["10:00","14:30"]}'),
      agentLines.join(' | '),
    );

    // The model got the result as the tool message of its own call, and later turns still see it.
    const followUp = standIn.requests.find((seen) => lastMessage(seen).role === 'tool')!;
    const messages = followUp.body.messages;
    assert.equal(messages.at(-2).role, 'assistant');
    assert.equal(messages.at(-2).tool_calls[0].id, id);
    assert.equal(messages.at(-2).tool_calls[0].function.name, 'check_availability');
    assert.equal(messages.at(-1).tool_call_id, id);
    assert.equal(messages.at(-1).content, '{"slots":["10:00","14:30"]}');
    const offered = followUp.body.tools.map((offer: { function: { name: string } }) => offer.function.name);
    // This call has no transfer target, so transfer_call is not offered (docs/calls.md).
    assert.deepEqual(offered, ['end_call', 'check_availability']);
    const last = standIn.requests.at(-1)!.body.messages;
    assert.ok(
      last.some((message: { role: string; tool_call_id?: string }) => message.tool_call_id === id),
      'a later turn still shows the tool call',
    );

    assert.equal(toolCalls.length, 1);
    const [row] = toolCalls;
    assert.equal(row.id, id);
    assert.equal(row.status, 'succeeded');
    assert.equal(row.attempts, 1);
    assert.equal(row.responseStatus, 200);
    assert.equal(row.result, '{"slots":["10:00","14:30"]}');
    assert.deepEqual(row.arguments, { day: 'tuesday' });
    assert.ok(typeof row.durationMs === 'number' && row.durationMs >= 0);

    assert.deepEqual(toolActivities(history), [
      { type: 'check_availability', summary: `check_availability ${id}` },
    ]);
  });

  test("the model's own words with the call: the line while waiting is not said", async () => {
    await setTools([CHECK_AVAILABILITY(`${tool.url}/availability`)]);
    const model = calendarModel();
    standIn.reply = (request) => {
      const last = lastMessage(request);
      if (last.role === 'user' && /Go ahead/.test(last.content)) {
        return streamed('Let me have a look.', [
          { name: 'check_availability', arguments: '{"day":"monday"}' },
        ]);
      }
      return model(request);
    };
    const { transcript, toolCalls } = await runCall();
    assert.equal(toolCalls[0].status, 'succeeded');
    const agentLines = transcript.filter((line) => line.role === 'agent').map((line) => line.text);
    assert.ok(agentLines.includes('Let me have a look.'), agentLines.join(' | '));
    assert.ok(!agentLines.includes('One moment while I check the calendar.'), agentLines.join(' | '));
  });

  test('without a secret the request carries no signature', async () => {
    await setTools([CHECK_AVAILABILITY(`${tool.url}/availability`)], null);
    standIn.reply = calendarModel();
    await runCall();
    assert.equal(tool.requests.length, 1);
    assert.equal(tool.requests[0].headers['voice-signature'], undefined);
  });
});

describe('retries: one decision, one id', { timeout: 120_000 }, () => {
  test('500 then 200: two attempts with the same id and Idempotency-Key, attempt counting up', async () => {
    await setTools([CHECK_AVAILABILITY(`${tool.url}/availability`)]);
    standIn.reply = calendarModel();
    let n = 0;
    tool.answer = () => (++n === 1 ? { status: 500, body: 'oops' } : { status: 200, body: 'ten o clock' });
    const { toolCalls, history } = await runCall();
    assert.equal(tool.requests.length, 2);
    const bodies = tool.requests.map((request) => JSON.parse(request.rawBody.toString('utf8')));
    assert.equal(bodies[0].id, bodies[1].id);
    assert.equal(tool.requests[0].headers['idempotency-key'], tool.requests[1].headers['idempotency-key']);
    assert.deepEqual(
      bodies.map((body) => body.attempt),
      [1, 2],
    );
    assert.equal(toolCalls[0].status, 'succeeded');
    assert.equal(toolCalls[0].attempts, 2);
    assert.equal(toolCalls[0].result, 'ten o clock');
    assert.equal(toolActivities(history).length, 1, 'one activity; Temporal retried it');
  });

  test('429 with Retry-After, then 408: retried, the third attempt answers', async () => {
    await setTools([CHECK_AVAILABILITY(`${tool.url}/availability`)]);
    standIn.reply = calendarModel();
    let n = 0;
    tool.answer = () => {
      n += 1;
      if (n === 1) return { status: 429, headers: { 'retry-after': '1' } };
      return n === 2 ? { status: 408 } : { status: 200, body: 'ok' };
    };
    const { toolCalls } = await runCall();
    assert.equal(tool.requests.length, 3);
    // (The time-skipping server skips the waits between attempts; test/agent-tools-request.test.ts
    // checks the Retry-After a retry waits for.)
    assert.equal(toolCalls[0].status, 'succeeded');
    assert.equal(toolCalls[0].attempts, 3);
  });

  test('503 every time: three attempts, then the model is told tool_unavailable', async () => {
    await setTools([CHECK_AVAILABILITY(`${tool.url}/availability`)]);
    standIn.reply = calendarModel();
    tool.answer = () => ({ status: 503 });
    const { toolCalls } = await runCall();
    assert.equal(tool.requests.length, 3);
    assert.equal(toolCalls[0].status, 'failed');
    assert.equal(toolCalls[0].attempts, 3);
    assert.equal(toolCalls[0].responseStatus, 503);
    assert.equal(toolCalls[0].result, '{"error":"tool_unavailable"}');
    const told = standIn.requests.find((seen) => lastMessage(seen).role === 'tool')!;
    assert.equal(lastMessage(told).content, '{"error":"tool_unavailable"}');
  });

  test('a tool that hangs past its timeout: each attempt ends at timeout_seconds, then tool_unavailable', async () => {
    await setTools([CHECK_AVAILABILITY(`${tool.url}/availability`, { timeoutSeconds: 1 })]);
    standIn.reply = calendarModel();
    tool.answer = () => ({ status: 200, hang: true });
    const { toolCalls } = await runCall();
    assert.equal(tool.requests.length, 3);
    assert.equal(toolCalls[0].status, 'failed');
    assert.equal(toolCalls[0].responseStatus, null);
    assert.equal(toolCalls[0].result, '{"error":"tool_unavailable"}');
  });
});

describe('answers that are not retried', { timeout: 120_000 }, () => {
  test('404: refused, not retried; the model is told the status and the start of the body', async () => {
    await setTools([CHECK_AVAILABILITY(`${tool.url}/availability`)]);
    standIn.reply = calendarModel();
    tool.answer = () => ({ status: 404, body: 'no such day' });
    const { toolCalls } = await runCall();
    assert.equal(tool.requests.length, 1);
    assert.equal(toolCalls[0].status, 'refused');
    assert.equal(toolCalls[0].attempts, 1);
    assert.equal(toolCalls[0].responseStatus, 404);
    const expected = '{"error":"tool_refused","status":404,"body":"no such day"}';
    assert.equal(toolCalls[0].result, expected);
    const told = standIn.requests.find((seen) => lastMessage(seen).role === 'tool')!;
    assert.equal(lastMessage(told).content, expected);
  });

  test('a redirect is not followed', async () => {
    await setTools([CHECK_AVAILABILITY(`${tool.url}/availability`)]);
    standIn.reply = calendarModel();
    tool.answer = (_n, path) =>
      path === '/availability'
        ? { status: 302, headers: { location: `${tool.url}/elsewhere` } }
        : { status: 200 };
    const { toolCalls } = await runCall();
    assert.deepEqual(
      tool.requests.map((request) => request.path),
      ['/availability'],
    );
    assert.equal(toolCalls[0].status, 'refused');
    assert.equal(toolCalls[0].responseStatus, 302);
  });

  test('an answer over 64 KiB is refused to the model, and only its start is kept', async () => {
    await setTools([CHECK_AVAILABILITY(`${tool.url}/availability`)]);
    standIn.reply = calendarModel();
    tool.answer = () => ({ status: 200, body: 'x'.repeat(70 * 1024) });
    const { toolCalls } = await runCall();
    assert.equal(toolCalls[0].status, 'refused');
    assert.ok(toolCalls[0].result!.length < 2048, `${toolCalls[0].result!.length} characters kept`);
    assert.match(toolCalls[0].result!, /^\{"error":"tool_refused","status":200,"body":"x+"\}$/);
  });

  test('a URL on a private address is refused at request time unless private targets are allowed', async () => {
    settings.webhooksAllowPrivateTargets = false;
    await setTools([CHECK_AVAILABILITY(`${tool.url.replace('http:', 'https:')}/availability`)]);
    standIn.reply = calendarModel();
    const { toolCalls } = await runCall();
    assert.equal(tool.requests.length, 0, 'nothing reached the private address');
    assert.equal(toolCalls[0].status, 'refused');
    assert.equal(toolCalls[0].attempts, 1);
    assert.equal(toolCalls[0].responseStatus, null);
    assert.equal(
      toolCalls[0].result,
      '{"error":"tool_refused","status":null,"body":"target refused: the address is not public"}',
    );
  });
});

describe('arguments and limits', { timeout: 120_000 }, () => {
  test('arguments that do not fit send nothing; the model is told why, tries again, and the second call goes out', async () => {
    await setTools([CHECK_AVAILABILITY(`${tool.url}/availability`)]);
    const model = calendarModel('{"day":5}');
    standIn.reply = (request) => {
      const last = lastMessage(request);
      if (last.role === 'tool' && /invalid_arguments/.test(last.content)) {
        return streamed('', [{ name: 'check_availability', arguments: '{"day":"tuesday"}' }]);
      }
      return model(request);
    };
    const { toolCalls } = await runCall();
    assert.equal(tool.requests.length, 1);
    assert.deepEqual(
      toolCalls.map((row) => [row.status, row.attempts]),
      [
        ['invalid_arguments', 0],
        ['succeeded', 1],
      ],
    );
    assert.deepEqual(toolCalls[0].arguments, { day: 5 });
    assert.deepEqual(JSON.parse(toolCalls[0].result!), {
      error: 'invalid_arguments',
      details: '/day must be string',
    });
  });

  test('a model that keeps giving bad arguments is told so twice more, then its tools are not offered', async () => {
    await setTools([CHECK_AVAILABILITY(`${tool.url}/availability`)]);
    standIn.reply = (request) => {
      const last = lastMessage(request);
      const offered = request.body.tools.map((offer: { function: { name: string } }) => offer.function.name);
      if (last.role === 'tool' || (last.role === 'user' && /Go ahead/.test(last.content))) {
        return offered.includes('check_availability')
          ? streamed('', [{ name: 'check_availability', arguments: '{}' }])
          : streamed('Sorry, I cannot check the calendar right now.');
      }
      if (last.role === 'user' && /\bBye\b/.test(last.content)) return streamed('Goodbye!', [endCall()]);
      return streamed('Great.');
    };
    const { toolCalls, transcript } = await runCall();
    assert.equal(tool.requests.length, 0);
    assert.deepEqual(
      toolCalls.map((row) => row.status),
      ['invalid_arguments', 'invalid_arguments', 'invalid_arguments'],
    );
    assert.ok(transcript.some((line) => line.text === 'Sorry, I cannot check the calendar right now.'));
  });

  test('more than 10 calls in one turn: the rest are told tool_limit and not sent', async () => {
    await setTools([CHECK_AVAILABILITY(`${tool.url}/availability`, { speakWhileWaiting: null })]);
    const twelve = Array.from({ length: 12 }, (_, i) => ({
      name: 'check_availability',
      arguments: JSON.stringify({ day: `day ${i}` }),
    }));
    standIn.reply = (request) => {
      const last = lastMessage(request);
      if (last.role === 'tool') return streamed('I have checked every day.');
      if (last.role === 'user' && /Go ahead/.test(last.content)) return streamed('Let me look.', twelve);
      if (last.role === 'user' && /\bBye\b/.test(last.content)) return streamed('Goodbye!', [endCall()]);
      return streamed('Great.');
    };
    const { toolCalls } = await runCall();
    assert.equal(tool.requests.length, 10);
    assert.equal(toolCalls.length, 10);
    const told = standIn.requests.find((seen) => lastMessage(seen).role === 'tool')!;
    const results = told.body.messages.filter((message: { role: string }) => message.role === 'tool');
    assert.equal(results.length, 12);
    assert.deepEqual(
      results.slice(10).map((message: { content: string }) => message.content),
      ['{"error":"tool_limit"}', '{"error":"tool_limit"}'],
    );
    assert.deepEqual(
      told.body.tools.map((offer: { function: { name: string } }) => offer.function.name),
      ['end_call'],
      'the limit reached: only the built-in tools offered (no transfer target on this call)',
    );
  });
});

describe('the call ends while a tool runs', { timeout: 120_000 }, () => {
  test('the person hangs up: the result is dropped, the row says canceled, the call ends caller_hangup', async () => {
    await setTools([CHECK_AVAILABILITY(`${tool.url}/availability`, { timeoutSeconds: 10 })]);
    // The person hangs up once they have heard the line while waiting (their script is over).
    standIn.reply = (request) => {
      const last = lastMessage(request);
      if (last.role === 'user' && /\bBye\b/.test(last.content)) {
        return streamed('', [{ name: 'check_availability', arguments: '{"day":"friday"}' }]);
      }
      return streamed('Great.');
    };
    tool.answer = () => ({ status: 200, body: 'late', delayMs: 4_000 });
    const { call, toolCalls } = await runCall();
    assert.equal(call.endReason, 'caller_hangup');
    assert.equal(toolCalls.length, 1);
    assert.equal(toolCalls[0].status, 'canceled');
    assert.equal(toolCalls[0].result, null);
    assert.equal(tool.requests.length, 1, 'the request went out and was not repeated');
  });
});

describe('the silence timeout while a tool runs', { timeout: 120_000 }, () => {
  test("the tool's time does not count: the 10 minutes start once the agent has answered after it", async () => {
    await setTools([CHECK_AVAILABILITY(`${tool.url}/availability`, { timeoutSeconds: 10 })]);
    standIn.reply = calendarModel();
    tool.answer = () => ({ status: 200, body: 'nine o clock', delayMs: 4_000 });
    const { call, toolCalls } = await runCall({ deaf: true });
    assert.equal(call.endReason, 'silence_timeout');
    const [row] = toolCalls;
    assert.equal(row.status, 'succeeded');
    assert.ok(row.durationMs! >= 4_000);
    // Workflow time: the person last spoke just before the model's decision; the tool then ran
    // about 4 s. Had the silence counted it, the call would end 10 minutes after the decision.
    const silentFor = call.endedAt!.getTime() - row.createdAt.getTime();
    assert.ok(silentFor >= 10 * 60_000 + 3_500, `ended ${silentFor} ms after the decision`);
  });
});

describe('a tools worker killed mid-request', { timeout: 120_000 }, () => {
  test('the next attempt, on a new worker, carries the same id; the call goes on with its answer', async () => {
    await setTools([CHECK_AVAILABILITY(`${tool.url}/availability`, { timeoutSeconds: 20 })]);
    standIn.reply = calendarModel();
    let n = 0;
    tool.answer = () =>
      ++n === 1 ? { status: 200, hang: true } : { status: 200, body: 'after the restart' };
    const call = await createQueuedCall(db.orm, fixture, {
      to: '+4791245678',
      firstMessage: 'Hi, Ada here.',
    });
    const voiceRuntime = new OpenAiCompatibleRuntime({
      url: standIn.url,
      apiKey: 'k',
      model: 'm',
      timeoutMs: 5_000,
    });
    const workers = await stack.workers(env, { ports: { voiceRuntime }, withoutTools: true });
    // The tools worker as deployed: a process of its own (workers/main.ts tools), killed with SIGKILL.
    const child = spawn(process.execPath, ['--import', 'tsx', 'workers/main.ts', 'tools'], {
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: env.address,
        DATABASE_URL: db.url,
        TASK_QUEUE_PREFIX: settings.taskQueuePrefix,
        WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
        LOG_LEVEL: 'error',
        METRICS_PORT: '',
      },
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    let replacement: Worker | undefined;
    try {
      const handle = env.client.workflow.getHandle(callWorkflowId(call.id));
      await runWorkers(workers, async () => {
        await startCallWorkflow(env.client, settings, call);
        await tool.waitForRequests(1, 60_000);
        child.kill('SIGKILL');
        await exited;
        replacement = await createToolsWorker({ connection: env.nativeConnection, orm: db.orm, settings });
        const running = replacement.run();
        await handle.result();
        await env.client.workflow.getHandle(farEndWorkflowId(call.id)).result();
        replacement.shutdown();
        await running;
      });
      histories.push({ workflowId: callWorkflowId(call.id), history: await handle.fetchHistory() });
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    assert.equal(tool.requests.length, 2);
    const [first, second] = tool.requests.map((request) => JSON.parse(request.rawBody.toString('utf8')));
    assert.equal(first.id, second.id);
    assert.equal(tool.requests[0].headers['idempotency-key'], tool.requests[1].headers['idempotency-key']);
    assert.deepEqual([first.attempt, second.attempt], [1, 2]);
    const rows = await db.orm.em.fork().find(ToolCall, { call: call.id });
    assert.deepEqual(
      rows.map((row) => [row.id, row.status, row.attempts, row.result]),
      [[first.id, 'succeeded', 2, 'after the restart']],
    );
    const { transcript } = await storedCall(db.orm, call.id);
    assert.ok(transcript.some((line) => line.text === 'Here is what I found: after the restart'));
  });
});

describe('the histories replay', { timeout: 120_000 }, () => {
  test('every call of this file replays with the current workflow code', async () => {
    assert.ok(histories.length >= 10);
    for await (const result of Worker.runReplayHistories(
      { workflowBundle: stack.bundles.calls },
      histories,
    )) {
      assert.equal(result.error, undefined, `${result.workflowId}: ${result.error}`);
    }
  });
});
