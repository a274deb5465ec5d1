import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import type { HistoryAndWorkflowId, WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Agent } from '../db/entities/index.js';
import { startCallWorkflow } from '../lib/calls/start-call-workflow.js';
import type { AnswerRequest, Carrier, DialRequest } from '../lib/carrier/carrier.js';
import { createLogger } from '../lib/logger.js';
import type { Settings } from '../lib/settings.js';
import { type CallProgress, callProgressQuery } from '../lib/temporal/call-messages.js';
import {
  type CallWorkflowResult,
  callWorkflowId,
  farEndWorkflowId,
} from '../lib/temporal/workflow-contracts.js';
import { apologyLine } from '../lib/voice-runtime/apology.js';
import { TRANSFER_UNAVAILABLE } from '../lib/voice-runtime/llm-prompt.js';
import { OpenAiCompatibleRuntime } from '../lib/voice-runtime/openai-compatible-runtime.js';
import { transferFailedLine } from '../lib/voice-runtime/transfer-failed.js';
import { CALL_AGENT_STEPS_CALLING_OUT_LOCAL } from '../workflows/activity-options.js';
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
  transferCall,
} from './support/chat-completions-stand-in.js';
import type { TestDatabase } from './support/database.js';
import { historyText } from './support/history-text.js';
import { keepHistory } from './support/kept-histories.js';
import {
  runWorkers,
  startTimeSkippingCallStack,
  type TimeSkippingCallStack,
} from './support/time-skipping-call-stack.js';

// Calls whose agent is the language-model runtime (VOICE_LLM_*, operations contract section 7),
// on the time-skipping test server against a local OpenAI-compatible stand-in (real HTTP, real
// server-sent events): what the model says is what the person hears and what the transcript
// keeps; its tool calls hang up and transfer; 429 (Retry-After), 500, a malformed chunk and a hang
// are retried within the turn's budget; a refusal or a budget run out ends the call `agent_error`
// after a spoken apology, analysed and completed. The API key appears in no history and no log.

const API_KEY = 'sk-voice-test-9f8e7d6c5b4a-never-logged';
const TRANSFER_TO = '+4722334455';

let stack: TimeSkippingCallStack;
let db: TestDatabase;
let settings: Settings;
let env: TestWorkflowEnvironment;
let fixture: AgentFixture;
let standIn: ChatStandIn;
/** Everything the service logged (the calls worker's log) and everything this process printed. */
const logged: string[] = [];
const printed: string[] = [];
/** Every history of every call of this file, checked for the key at the end. */
const histories: HistoryAndWorkflowId[] = [];

before(async () => {
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      printed.push(String(chunk));
      return write(chunk, ...rest);
    }) as typeof stream.write;
  }
  // Errors only: some of these calls fail on purpose, and every failed attempt would log a warning.
  [stack, standIn] = await Promise.all([
    startTimeSkippingCallStack({ prefix: 'cwllm', logLevel: 'ERROR' }),
    startChatStandIn(),
  ]);
  ({ db, settings } = stack);
  fixture = await createAgentFixture(db.orm, { name: 'Ada' });
  await db.orm.em
    .fork()
    .nativeUpdate(
      Agent,
      { id: fixture.agentId },
      { systemPrompt: 'You are Ada from Acme Dental. You call {{first_name}} about {{appointment}}.' },
    );
});
after(async () => {
  await standIn?.close();
  await stack?.close();
});
beforeEach(async () => {
  env = await stack.newEnvironment();
  standIn.requests.length = 0;
});
afterEach(async () => {
  await env.teardown();
});

/** The simulated carrier, keeping every line the far end was played and every release. */
class ObservedCarrier implements Carrier {
  readonly said: string[] = [];
  readonly releases: string[] = [];
  readonly transfers: string[] = [];
  constructor(private readonly inner: Carrier) {}
  dial(request: DialRequest) {
    return this.inner.dial(request);
  }
  answer(request: AnswerRequest) {
    return this.inner.answer(request);
  }
  connectAgent(request: Parameters<Carrier['connectAgent']>[0]) {
    if (request.opening) this.said.push(request.opening.text);
    return this.inner.connectAgent(request);
  }
  say(request: Parameters<Carrier['say']>[0]) {
    this.said.push(request.text);
    // The agent's last line may carry its hang-up: a release too.
    if (request.hangUp) this.releases.push('hang_up');
    return this.inner.say(request);
  }
  transfer(request: Parameters<Carrier['transfer']>[0]) {
    this.transfers.push(request.to);
    return this.inner.transfer(request);
  }
  release(request: Parameters<Carrier['release']>[0]) {
    this.releases.push(request.reason);
    return this.inner.release(request);
  }
}

/** The model's side of the friendly callee's conversation (`…5678`), by how many times the person spoke. */
const AGENT_WORDS = [
  'Hi Kari, this is Ada from Acme Dental. I am calling about your cleaning on Tuesday at 10.',
  'Wonderful. Shall I confirm Tuesday at 10 for you?',
  'Of course. I will email you a confirmation right away.',
  "You're welcome, Kari! Is there anything else?",
  'Goodbye, Kari, and have a lovely day.',
];

const userTurns = (request: SeenRequest) =>
  request.body.messages.filter((message: { role: string }) => message.role === 'user').length;

/** A model that follows the friendly script, hangs up after the person's goodbye and transfers on request. */
function scriptedModel(request: SeenRequest): StandInReply {
  const last = request.body.messages.at(-1);
  if (last.role === 'user' && /real person/.test(last.content)) {
    return streamed('Of course, connecting you now.', [transferCall(TRANSFER_TO)]);
  }
  if (last.role === 'user' && /\bBye\b/.test(last.content)) return streamed(AGENT_WORDS[4], [endCall()]);
  return streamed(AGENT_WORDS[Math.min(userTurns(request), 3)]);
}

async function runCall(options: {
  to: string;
  /** Commits the call's history as `<keep>-call` (test/support/kept-histories.ts). */
  keep?: string;
  firstMessage?: string;
  timeoutMs?: number;
  metadata?: Record<string, string>;
}) {
  const call = await createQueuedCall(db.orm, fixture, {
    to: options.to,
    firstMessage: options.firstMessage ?? null,
    metadata: options.metadata ?? { first_name: 'Kari', appointment: 'your cleaning on Tuesday at 10' },
  });
  const carrier = new ObservedCarrier(stack.simulatedCarrier(env));
  const voiceRuntime = new OpenAiCompatibleRuntime({
    url: standIn.url,
    apiKey: API_KEY,
    model: 'stand-in-model',
    timeoutMs: options.timeoutMs ?? 5_000,
  });
  const logger = createLogger('debug', { write: (line) => logged.push(line) });
  const workers = await stack.workers(env, { ports: { voiceRuntime, carrier }, logger });
  const handle = env.client.workflow.getHandle(callWorkflowId(call.id));
  const startedAt = Date.now();
  const { result, progress } = await runWorkers(workers, async () => {
    await startCallWorkflow(env.client, settings, call);
    const outcome = (await handle.result()) as CallWorkflowResult;
    await env.client.workflow.getHandle(farEndWorkflowId(call.id)).result();
    return { result: outcome, progress: (await handle.query(callProgressQuery)) as CallProgress };
  });
  const wallMs = Date.now() - startedAt;
  const history = await handle.fetchHistory();
  if (options.keep) keepHistory(`${options.keep}-call`, history);
  histories.push(
    { workflowId: callWorkflowId(call.id), history },
    {
      workflowId: farEndWorkflowId(call.id),
      history: await env.client.workflow.getHandle(farEndWorkflowId(call.id)).fetchHistory(),
    },
  );
  return { result, progress, carrier, history, wallMs, ...(await storedCall(db.orm, call.id)) };
}

type History = Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;

/** Epoch ms of a marker's `{seconds, nanos}`. */
const epochMs = (time: { seconds: number; nanos: number }) =>
  time.seconds * 1000 + Math.round(time.nanos / 1e6);

/**
 * The first step of local activity `type` (its markers, up to the first that succeeded): workflow
 * time from its schedule to its end, its last attempt, and the failure it ended with. A failed
 * attempt whose backoff is over 1 s leaves a marker of its own (then a timer); shorter backoffs
 * stay in the worker.
 */
function firstLocalActivity(history: History, type: string) {
  const markers = (history.events ?? []).flatMap((event) => {
    const marker = event.markerRecordedEventAttributes;
    const payload = marker?.details?.data?.payloads?.[0]?.data;
    if (!marker || !payload) return [];
    const data = JSON.parse(Buffer.from(payload).toString('utf8'));
    return data.activity_type === type ? [{ data, failure: marker.failure ?? undefined }] : [];
  });
  assert.ok(markers.length > 0, `local activity ${type} ran`);
  const end = markers.findIndex((marker) => !marker.failure);
  const step = end === -1 ? markers : markers.slice(0, end + 1);
  const last = step.at(-1)!;
  return {
    ms: epochMs(last.data.complete_time) - epochMs(step[0].data.original_schedule_time),
    attempts: last.data.attempt as number,
    failure: last.failure,
  };
}

/**
 * The agent's steps run inside the call's workflow task, as local activities (`agent-turns-in-task`):
 * no activity task for them, every attempt a success or a failure the step expected, and nothing
 * printed about the shape (before issue 19, each call's first step was refused as a local activity).
 */
function assertAgentStepsRunInTheWorkflowTask(history: History) {
  const events = history.events ?? [];
  const scheduled = events.flatMap(
    (event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
  );
  assert.deepEqual(
    scheduled.filter((name) => name === 'connectAgent' || name === 'agentTurn'),
    [],
    'no activity task for the agent',
  );
  firstLocalActivity(history, 'connectAgent');
  firstLocalActivity(history, 'agentTurn');
  const failedMarkers = events.filter(
    (event) => event.markerRecordedEventAttributes && event.markerRecordedEventAttributes.failure,
  );
  assert.deepEqual(
    failedMarkers.map((event) => event.markerRecordedEventAttributes?.failure?.message),
    [],
    'no local activity failed',
  );
  for (const line of printed) assert.ok(!/RunsAsActivity|calls out; it runs as an activity/.test(line), line);
}

describe('the model speaks, and its tool calls end and transfer calls', { timeout: 120_000 }, () => {
  test('an outbound call says what the model says, from the prompt with its variables; end_call hangs up', async () => {
    standIn.reply = scriptedModel;
    const { result, call, transcript, events, carrier, progress, history } = await runCall({
      to: '+4791245678',
      keep: 'llm-end-call',
    });
    assert.equal(result.status, 'completed');
    assert.equal(call.endReason, 'agent_hangup');
    assert.deepEqual(
      transcript.filter((line) => line.role === 'agent').map((line) => line.text),
      AGENT_WORDS,
    );
    assert.deepEqual(
      transcript.map((line) => line.role),
      ['agent', 'caller', 'agent', 'caller', 'agent', 'caller', 'agent', 'caller', 'agent'],
    );
    assert.deepEqual(carrier.said, AGENT_WORDS, 'the far end heard the model, line by line');
    assert.deepEqual(carrier.releases, ['hang_up']);
    assert.deepEqual(
      events.map((event) => event.type),
      ['call.started', 'call.completed'],
    );
    assert.ok(call.analysis?.summary);
    assertAgentStepsRunInTheWorkflowTask(history);

    // The opening (nothing configured on an outbound call: the model opens) and four turns.
    assert.equal(standIn.requests.length, 5);
    const [opening, , , , lastTurn] = standIn.requests;
    const system: string = opening.body.messages[0].content;
    assert.ok(
      system.startsWith(
        'You are Ada from Acme Dental. You call Kari about your cleaning on Tuesday at 10.\n\n',
      ),
      system,
    );
    assert.match(system, /You placed this call/);
    assert.deepEqual(
      lastTurn.body.messages.map((message: { role: string }) => message.role),
      ['system', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user'],
    );
    assert.deepEqual(
      lastTurn.body.messages.slice(1).map((message: { content: string }) => message.content),
      transcript.slice(0, 8).map((line) => line.text),
    );
    for (const request of standIn.requests) {
      assert.equal(request.headers.authorization, `Bearer ${API_KEY}`);
      assert.equal(request.body.stream, true);
    }

    // Each turn's latency, in the progress query and in the service's log.
    assert.deepEqual(
      progress.agentTurns.map((turn) => turn.index),
      [2, 4, 6, 8],
    );
    for (const turn of progress.agentTurns) {
      assert.ok(turn.firstTokenMs !== null && turn.firstTokenMs <= turn.answerMs, JSON.stringify(turn));
      assert.ok(turn.firstSentenceMs !== null && turn.firstSentenceMs <= turn.answerMs, JSON.stringify(turn));
    }
    const turnLogs = logged
      .map((line) => JSON.parse(line))
      .filter((line) => line.msg === 'agent turn' && line.callId === call.id);
    assert.deepEqual(
      turnLogs.map((line) => [line.index, line.next, typeof line.firstTokenMs, typeof line.answerMs]),
      [
        [2, 'continue', 'number', 'number'],
        [4, 'continue', 'number', 'number'],
        [6, 'continue', 'number', 'number'],
        [8, 'hang_up', 'number', 'number'],
      ],
    );
  });

  test('transfer_call transfers to the call’s target (its metadata.transfer_to): call.transferred, end transferred', async () => {
    standIn.reply = scriptedModel;
    const { call, events, transcript } = await runCall({
      to: '+4791242002',
      metadata: { first_name: 'Kari', transfer_to: TRANSFER_TO },
      keep: 'llm-transfer-call',
      firstMessage: 'Hi {{first_name}}, Ada from Acme Dental here. \\{{not_a_variable}}',
    });
    assert.equal(call.status, 'completed');
    assert.equal(call.endReason, 'transferred');
    assert.equal(call.transferredTo, TRANSFER_TO);
    assert.equal(
      transcript[0].text,
      'Hi Kari, Ada from Acme Dental here. {{not_a_variable}}',
      "the call's first_message with its variables filled in, the escaped one kept literal",
    );
    assert.equal(transcript.at(-1)?.text, 'Of course, connecting you now.');
    assert.deepEqual(
      events.map((event) => event.type),
      ['call.started', 'call.transferred', 'call.completed'],
    );
    assert.equal(events[1].body.data.transferred_to, TRANSFER_TO);
    // The model's words miss the transcript rules' phrases; the call's end_reason decides.
    assert.equal(call.analysis?.outcome, 'transferred');
  });
});

describe('a transfer without a number to go to', { timeout: 120_000 }, () => {
  test('the model is told transfer is not available, its answer is spoken, and the call goes on', async () => {
    // Before, an outbound call's own caller ID was the target, which rings this agent again.
    standIn.reply = (request) => {
      const last = request.body.messages.at(-1);
      if (last.role === 'tool')
        return streamed("I'm sorry, I can't put you through, but I can help you myself.");
      if (last.role === 'user' && /real person/.test(last.content)) {
        return streamed('Let me see.', [{ name: 'transfer_call', arguments: '{}' }]);
      }
      return scriptedModel(request);
    };
    const { call, events, transcript } = await runCall({
      to: '+4791242002',
      firstMessage: 'Hi {{first_name}}.',
    });
    assert.equal(call.status, 'completed');
    assert.equal(call.transferredTo, null);
    assert.deepEqual(
      events.map((event) => event.type),
      ['call.started', 'call.completed'],
    );
    assert.equal(
      transcript.at(-1)?.text,
      "Let me see. I'm sorry, I can't put you through, but I can help you myself.",
    );
    assert.equal(call.endReason, 'caller_hangup', 'the person heard it out and hung up');
    const system: string = standIn.requests[0].body.messages[0].content;
    assert.match(system, /This call has no number to transfer to/);
    const followUp = standIn.requests.at(-1)!.body.messages;
    assert.deepEqual(
      followUp.slice(-2).map((message: { role: string }) => message.role),
      ['assistant', 'tool'],
    );
    assert.equal(followUp.at(-2).tool_calls[0].function.name, 'transfer_call');
    assert.equal(followUp.at(-1).tool_call_id, followUp.at(-2).tool_calls[0].id);
    assert.equal(followUp.at(-1).content, TRANSFER_UNAVAILABLE);
  });
});

describe('a transfer target checked again when it is used', { timeout: 120_000 }, () => {
  test('a target the workspace may no longer dial is never dialled: the agent says so and the call goes on', async () => {
    // Set when London was allowed (or written past the API): the check at the transfer refuses it.
    const london = '+447700900123';
    standIn.reply = (request) => {
      const last = request.body.messages.at(-1);
      if (last.role === 'user' && /real person/.test(last.content)) {
        return streamed('Of course, connecting you now.', [transferCall(london)]);
      }
      return scriptedModel(request);
    };
    const { call, events, transcript, carrier } = await runCall({
      to: '+4791242002',
      metadata: { first_name: 'Kari', transfer_to: london },
      firstMessage: 'Hi {{first_name}}.',
      keep: 'llm-transfer-refused',
    });
    assert.equal(call.status, 'completed');
    assert.deepEqual(carrier.transfers, [], 'nothing was dialled');
    assert.equal(call.transferredTo, null);
    assert.notEqual(call.endReason, 'transferred');
    // The Call says what became of it (telephony spec section 1).
    assert.deepEqual(
      { ...call.transfer, started_at: undefined },
      {
        to: london,
        mode: 'cold',
        status: 'failed',
        failure: 'not_allowed',
        started_at: undefined,
        connected_at: null,
      },
    );
    assert.deepEqual(
      events.map((event) => event.type),
      ['call.started', 'call.completed'],
    );
    const agentLines = transcript.filter((line) => line.role === 'agent').map((line) => line.text);
    const announced = agentLines.indexOf('Of course, connecting you now.');
    assert.ok(announced >= 0, agentLines.join(' | '));
    assert.equal(agentLines[announced + 1], transferFailedLine(call.agentSnapshot.language));
    assert.ok(
      carrier.said.includes(transferFailedLine(call.agentSnapshot.language)),
      'and the caller heard it',
    );
    assert.ok(
      logged.some((line) => /transfer target refused when used/.test(line) && line.includes(call.id)),
      'the refusal is logged',
    );
  });
});

describe('VOICE_LLM_TIMEOUT_MS sets the budget of the agent steps', { timeout: 120_000 }, () => {
  test('a 30 s timeout: each attempt of the opening and the turns may take it, and the whole step longer', async () => {
    standIn.reply = scriptedModel;
    const { call, history } = await runCall({ to: '+4791245678', timeoutMs: 30_000 });
    assert.equal(call.endReason, 'agent_hangup');
    assertAgentStepsRunInTheWorkflowTask(history);
    // A local activity's options are not in its history: the ones the workflow takes for 30 s.
    const options = CALL_AGENT_STEPS_CALLING_OUT_LOCAL(30_000);
    // Before, a fixed 15 s cut a model answering within its 30 s.
    assert.ok(Number(options.startToCloseTimeout) > 30_000, `start-to-close ${options.startToCloseTimeout}`);
    assert.ok(Number(options.scheduleToCloseTimeout) >= Number(options.startToCloseTimeout) + 30_000);
  });
});

describe('retries within the turn, and the agent_error ending', { timeout: 120_000 }, () => {
  test('429 with Retry-After, a 500 and a malformed chunk are retried; the turn then succeeds', async () => {
    let turnRequests = 0;
    standIn.reply = (request) => {
      // The first turn's first three attempts fail, each its own way.
      if (userTurns(request) === 1 && ++turnRequests <= 3) {
        return [
          { kind: 'status', status: 429, headers: { 'retry-after': '4' } } as const,
          { kind: 'status', status: 500 } as const,
          { kind: 'malformed' } as const,
        ][turnRequests - 1];
      }
      return scriptedModel(request);
    };
    const { call, history, transcript } = await runCall({
      to: '+4791245678',
      firstMessage: 'Hi {{first_name}}.',
    });
    assert.equal(call.endReason, 'agent_hangup');
    assert.equal(transcript[0].text, 'Hi Kari.');
    assert.equal(transcript[2].text, AGENT_WORDS[1]);
    const turn = firstLocalActivity(history, 'agentTurn');
    assert.equal(turn.attempts, 4);
    // Retry-After: 4 s before the second attempt (workflow time, skipped), then the backoff.
    assert.ok(turn.ms >= 4_000, `${turn.ms} ms`);
    const firstTurn = standIn.requests.filter((request) => userTurns(request) === 1);
    assert.equal(firstTurn.length, 4);
    for (const request of firstTurn) assert.deepEqual(request.body.messages, firstTurn[0].body.messages);
  });

  test('a refusal (401) is not retried: the agent apologises and hangs up, agent_error, analysed', async () => {
    standIn.reply = (request) =>
      userTurns(request) === 0
        ? scriptedModel(request)
        : {
            kind: 'status',
            status: 401,
            body: { error: { message: `Incorrect API key provided: ${request.headers.authorization}` } },
          };
    const { result, call, events, transcript, carrier, history } = await runCall({
      to: '+4791245678',
      keep: 'llm-agent-error',
    });
    assert.equal(result.status, 'completed');
    assert.equal(call.endReason, 'agent_error');
    assert.deepEqual(
      transcript.map((line) => [line.role, line.text]),
      [
        ['agent', AGENT_WORDS[0]],
        ['caller', 'Oh, hi. Yes, I have a minute. Go ahead.'],
        ['agent', apologyLine('en-US')],
      ],
    );
    assert.deepEqual(carrier.said, [AGENT_WORDS[0], apologyLine('en-US')], 'the far end hears the apology');
    assert.deepEqual(carrier.releases, ['hang_up']);
    assert.ok(call.analysis?.summary);
    assert.deepEqual(
      events.map((event) => event.type),
      ['call.started', 'call.completed'],
    );
    assert.equal(events[1].body.data.object.end_reason, 'agent_error');
    const turn = firstLocalActivity(history, 'agentTurn');
    assert.equal(turn.attempts, 1, 'not retried');
    assert.equal(turn.failure?.applicationFailureInfo?.type, 'VoiceRuntimeRejected');
    assert.equal(turn.failure?.applicationFailureInfo?.nonRetryable, true);
    assert.match(turn.failure?.message ?? '', /401 Incorrect API key provided: Bearer \[redacted\]/);
    assert.equal(standIn.requests.length, 2, 'the opening, and one attempt of the turn');
  });

  test('a model that hangs past the timeout every time: retried until the budget, then the apology', async () => {
    standIn.reply = (request) => (userTurns(request) === 0 ? scriptedModel(request) : { kind: 'hang' });
    const { call, transcript, history, wallMs, carrier } = await runCall({
      to: '+4791245678',
      timeoutMs: 250,
    });
    assert.equal(call.status, 'completed');
    assert.equal(call.endReason, 'agent_error');
    assert.equal(transcript.at(-1)?.text, apologyLine('en-US'));
    assert.equal(carrier.said.at(-1), apologyLine('en-US'));
    assert.ok(call.durationSeconds && call.durationSeconds > 0);
    const turn = firstLocalActivity(history, 'agentTurn');
    assert.ok(turn.attempts > 5, `${turn.attempts} attempts`);
    assert.match(
      turn.failure?.message ?? turn.failure?.cause?.message ?? '',
      /did not answer within 250 ms|timed out/i,
    );
    // 12 attempts of 250 ms, their backoffs over 1 s on timers the test server skips.
    assert.equal(turn.attempts, 12);
    assert.ok(wallMs < 60_000, `took ${wallMs} ms of wall-clock time`);
  });
});

describe('the key stays secret; the histories replay', { timeout: 120_000 }, () => {
  test('the API key is in no workflow history and in no log line', () => {
    assert.ok(histories.length >= 8, `${histories.length} histories`);
    for (const { workflowId, history } of histories) {
      const text = historyText(history);
      // The decoded payloads are there (each workflow's input names its call as a JSON value)...
      const callId = workflowId.slice(-36);
      assert.ok(new RegExp(`":"(call-)?${callId}"`).test(text), `${workflowId}'s payloads were read`);
      // ...and the key is in none of them.
      assert.ok(!text.includes(API_KEY), `${workflowId}'s history carries the key`);
    }
    assert.ok(logged.length > 0 && printed.length > 0);
    for (const line of [...logged, ...printed]) assert.ok(!line.includes(API_KEY), `logged: ${line}`);
  });

  test('every call of this file replays with the current workflow code', async () => {
    await stack.assertReplays('llm-calls', histories);
  });
});
