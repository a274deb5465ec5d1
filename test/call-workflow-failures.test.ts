import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import type { WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startCallWorkflow } from '../lib/calls/start-call-workflow.js';
import type { TranscriptLine } from '../lib/calls/transcript.js';
import type { AnswerRequest, Carrier, DialRequest } from '../lib/carrier/carrier.js';
import type { Settings } from '../lib/settings.js';
import { carrierCallbackSignal } from '../lib/temporal/call-messages.js';
import type { CallWorkflowResult } from '../lib/temporal/workflow-contracts.js';
import { callWorkflowId, farEndWorkflowId } from '../lib/temporal/workflow-contracts.js';
import { apologyLine } from '../lib/voice-runtime/apology.js';
import { ScriptedAgent } from '../lib/voice-runtime/scripted-agent.js';
import {
  type AgentAction,
  type AgentTurn,
  type ConversationContext,
  type VoiceRuntime,
  VoiceRuntimeError,
} from '../lib/voice-runtime/voice-runtime.js';
import {
  type AgentFixture,
  createAgentFixture,
  createQueuedCall,
  storedCall,
} from './support/call-fixtures.js';
import type { TestDatabase } from './support/database.js';
import {
  runWorkers,
  startTimeSkippingCallStack,
  type TimeSkippingCallStack,
} from './support/time-skipping-call-stack.js';

// A call is never left unfinished (issue 14): the call workflow on the time-skipping test server
// with a voice runtime or carrier that fails, and with database outages (a trigger that makes
// PostgreSQL refuse one call's writes a number of times). Every call ends `completed` or
// `failed` with its one final event; outages the retry budgets cover change nothing.

let stack: TimeSkippingCallStack;
let db: TestDatabase;
let settings: Settings;
let env: TestWorkflowEnvironment;
let fixture: AgentFixture;

before(async () => {
  // Errors only: these calls fail on purpose, and every failed attempt would log a warning.
  stack = await startTimeSkippingCallStack({ prefix: 'cwff', logLevel: 'ERROR' });
  ({ db, settings } = stack);
  fixture = await createAgentFixture(db.orm, { name: 'Ada' });
});
after(async () => {
  await stack?.close();
});

/** A time-skipping server per test (see stack.newEnvironment(): abandoned children stop its clock). */
beforeEach(async () => {
  env = await stack.newEnvironment();
});
afterEach(async () => {
  await env.teardown();
});

/** The simulated carrier, keeping every release; `transferError` makes transfers fail. */
class ObservedCarrier implements Carrier {
  readonly releases: { callId: string; reason: string }[] = [];
  constructor(
    private readonly inner: Carrier,
    private readonly transferError?: () => Error,
  ) {}
  dial(request: DialRequest) {
    return this.inner.dial(request);
  }
  answer(request: AnswerRequest) {
    return this.inner.answer(request);
  }
  connectAgent(request: Parameters<Carrier['connectAgent']>[0]) {
    return this.inner.connectAgent(request);
  }
  say(request: Parameters<Carrier['say']>[0]) {
    return this.inner.say(request);
  }
  async transfer(request: Parameters<Carrier['transfer']>[0]) {
    if (this.transferError) throw this.transferError();
    return this.inner.transfer(request);
  }
  async release(request: Parameters<Carrier['release']>[0]) {
    this.releases.push({ ...request });
    return this.inner.release(request);
  }
}

/** The scripted agent, except that `respond` does what the test says. */
class FaultyAgent implements VoiceRuntime {
  attempts = 0;
  private readonly scripted = new ScriptedAgent();
  constructor(private readonly respondWith: () => AgentTurn) {}
  openingLine(context: ConversationContext) {
    return this.scripted.openingLine(context);
  }
  async respond(_context: ConversationContext, _transcript: TranscriptLine[]): Promise<AgentTurn> {
    this.attempts++;
    return this.respondWith();
  }
}

/** The same, answering in the worker like the scripted agent: its steps run as local activities. */
class FaultyInProcessAgent extends FaultyAgent {
  readonly runsInProcess = true;
}

async function runCall(
  to: string,
  ports: { carrier?: Carrier; voiceRuntime?: VoiceRuntime } = {},
  beforeStart?: (callId: string) => Promise<void>,
) {
  // A transfer needs a target (lib/voice-runtime/transfer-target.ts): the 2002 callee asks for one.
  const call = await createQueuedCall(db.orm, fixture, { to, metadata: { transfer_to: '+4722998877' } });
  await beforeStart?.(call.id);
  // Without a carrier of the test's own, the simulated one the calls worker builds by default.
  const workers = await stack.workers(env, { ports });
  const startedAt = Date.now();
  const handle = env.client.workflow.getHandle(callWorkflowId(call.id));
  const result = await runWorkers(workers, async () => {
    await startCallWorkflow(env.client, settings, call);
    const outcome = (await handle.result()) as CallWorkflowResult;
    // The far end ends too: it hung up, or it was released.
    await env.client.workflow.getHandle(farEndWorkflowId(call.id)).result();
    return outcome;
  });
  const wallMs = Date.now() - startedAt;
  return { result, wallMs, history: await handle.fetchHistory(), ...(await storedCall(db.orm, call.id)) };
}

type History = Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;

/**
 * Workflow time from the first schedule of activity `type` to its completion, and its attempts.
 * A local activity (the database writes) has no schedule event: its
 * attempts are markers, one per attempt that ended in a backoff on a timer and one for the last;
 * the span then runs from the first marker (after the first attempt) to the last, so it is a
 * lower bound of the same span.
 */
function activitySpan(history: History, type: string): { ms: number; attempts: number } {
  const events = history.events ?? [];
  const time = (event: (typeof events)[number]) =>
    Number(event.eventTime!.seconds) * 1000 + Math.round((event.eventTime!.nanos ?? 0) / 1e6);
  const markers = localActivityMarkers(history, type);
  if (markers.length > 0) {
    const last = markers.at(-1)!;
    assert.equal(last.failed, false, `local activity ${type} completed`);
    return { ms: time(last.event) - time(markers[0]!.event), attempts: last.attempt };
  }
  const scheduled = events.find(
    (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === type,
  );
  assert.ok(scheduled, `activity ${type} was scheduled`);
  const id = Number(scheduled.eventId);
  const started = events.find(
    (event) => Number(event.activityTaskStartedEventAttributes?.scheduledEventId) === id,
  );
  const completed = events.find(
    (event) => Number(event.activityTaskCompletedEventAttributes?.scheduledEventId) === id,
  );
  assert.ok(started && completed, `activity ${type} completed`);
  return {
    ms: time(completed) - time(scheduled),
    attempts: started.activityTaskStartedEventAttributes!.attempt ?? 0,
  };
}

/** The markers of local activity `type`, in order, with each one's attempt and whether it failed. */
function localActivityMarkers(history: History, type: string) {
  return (history.events ?? []).flatMap((event) => {
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_local_activity') return [];
    const data = marker.details?.data?.payloads?.[0]?.data;
    if (!data) return [];
    const info = JSON.parse(Buffer.from(data).toString()) as { activity_type: string; attempt: number };
    if (info.activity_type !== type) return [];
    return [{ event, attempt: info.attempt, failed: Boolean(marker.failure) }];
  });
}

let outageSeq = 0;
/**
 * A database outage for one kind of write: the first `failures` rows written to `table` that
 * match `when` (SQL over `new` and `old`) are refused by PostgreSQL itself, the way writes fail
 * while the database restarts. A sequence counts them (it is not rolled back with the write).
 */
async function databaseOutage(options: {
  table: 'calls' | 'transcript_entries' | 'events';
  on: 'insert' | 'update';
  when: string;
  failures: number;
}): Promise<void> {
  const name = `test_outage_${process.pid}_${++outageSeq}`;
  const connection = db.orm.em.getConnection();
  await connection.execute(`create sequence ${name}`);
  await connection.execute(
    `create function ${name}() returns trigger language plpgsql as $$
     begin
       if (${options.when}) and nextval('${name}') <= ${options.failures} then
         raise exception 'simulated database outage (%)', '${name}';
       end if;
       return new;
     end $$`,
  );
  await connection.execute(
    `create trigger ${name} before ${options.on} on ${options.table} for each row execute function ${name}()`,
  );
}

function assertCompletedOnce(events: { type: string; body: { data: { object: { status: string } } } }[]) {
  assert.equal(events.filter((event) => event.type === 'call.completed').length, 1, 'one call.completed');
  assert.equal(events.filter((event) => event.type === 'call.failed').length, 0, 'no call.failed');
  assert.equal(events.at(-1)?.type, 'call.completed');
  assert.equal(events.at(-1)?.body.data.object.status, 'completed');
}

describe('a live step that cannot go on ends the call agent_error', { timeout: 120_000 }, () => {
  test('agentTurn fails every attempt: completed, agent_error, analysed, released', async () => {
    const voiceRuntime = new FaultyAgent(() => {
      throw new Error('voice runtime unavailable');
    });
    const carrier = new ObservedCarrier(stack.simulatedCarrier(env));
    const { result, call, events, transcript, history, wallMs } = await runCall('+4791245678', {
      voiceRuntime,
      carrier,
    });
    assert.deepEqual(result, {
      status: 'completed',
      endReason: 'agent_error',
      durationSeconds: call.durationSeconds,
    });
    assert.equal(call.status, 'completed');
    assert.equal(call.endReason, 'agent_error');
    assert.ok(call.answeredAt && call.endedAt);
    assert.ok(call.analysis, 'the analysis is stored');
    assert.ok(call.analysis.summary);
    assert.deepEqual(
      events.map((event) => event.type),
      ['call.started', 'call.completed'],
    );
    assertCompletedOnce(events);
    assert.deepEqual(events[1].body.data.object.analysis, call.analysis);
    assert.equal(events[1].body.data.object.end_reason, 'agent_error');
    // The agent's opening line, what the person said that it never answered, and its apology.
    assert.deepEqual(
      transcript.map((line) => line.role),
      ['agent', 'caller', 'agent'],
    );
    assert.equal(transcript[2].text, apologyLine('en-US'));
    assert.deepEqual(carrier.releases, [{ callId: call.id, reason: 'hang_up' }], 'the far end is released');
    // The retry budget of a live step inside the workflow task (a local activity,
    // `agent-turns-in-task`): 12 attempts, their backoffs over 1 s on timers (skipped here), all
    // within 75 s.
    assert.equal(voiceRuntime.attempts, 12);
    assert.ok(localActivityMarkers(history, 'agentTurn').at(-1)?.failed, 'agentTurn failed for good');
    assert.ok(
      !(history.events ?? []).some(
        (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'agentTurn',
      ),
      'no agentTurn activity',
    );
    assert.ok(wallMs < 60_000, `took ${wallMs} ms of wall-clock time`);
  });

  test('agentTurn as a local activity (a runtime in the worker) is refused for good: the same ending, with the apology', async () => {
    // Not retryable, so the step fails at once: a local activity's 75 s budget is wall-clock time,
    // which the test server does not skip (its backoff timers it does).
    const voiceRuntime = new FaultyInProcessAgent(() => {
      throw new VoiceRuntimeError('the runtime refused the turn', false);
    });
    const carrier = new ObservedCarrier(stack.simulatedCarrier(env));
    const { result, call, events, transcript, history, wallMs } = await runCall('+4791245679', {
      voiceRuntime,
      carrier,
    });
    assert.equal(result.status, 'completed');
    assert.equal(call.endReason, 'agent_error');
    assert.ok(call.analysis?.summary, 'the analysis is stored');
    assertCompletedOnce(events);
    assert.deepEqual(
      transcript.map((line) => line.role),
      ['agent', 'caller', 'agent'],
    );
    assert.equal(transcript[2].text, apologyLine('en-US'), 'the agent apologised (not the last resort)');
    assert.deepEqual(carrier.releases, [{ callId: call.id, reason: 'hang_up' }]);
    assert.equal(voiceRuntime.attempts, 1);
    const markers = localActivityMarkers(history, 'agentTurn');
    assert.ok(markers.at(-1)?.failed, 'agentTurn ran and failed as a local activity');
    assert.ok(
      !(history.events ?? []).some(
        (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'agentTurn',
      ),
      'no agentTurn activity',
    );
    assert.ok(wallMs < 60_000, `took ${wallMs} ms of wall-clock time`);
  });

  test('the carrier refuses the transfer (not retryable): completed agent_error, no call.transferred', async () => {
    const carrier = new ObservedCarrier(stack.simulatedCarrier(env), () =>
      ApplicationFailure.nonRetryable('transfer refused by the carrier', 'TransferRefused'),
    );
    const { result, call, events, transcript } = await runCall('+4791242002', { carrier });
    assert.equal(result.status, 'completed');
    assert.equal(result.endReason, 'agent_error');
    assert.equal(transcript.at(-1)?.text, apologyLine('en-US'), 'the agent apologised');
    assert.equal(call.status, 'completed');
    assert.equal(call.endReason, 'agent_error');
    assert.equal(call.transferredTo, null, 'a transfer the carrier refused is not recorded');
    assert.ok(call.analysis);
    assert.deepEqual(
      events.map((event) => event.type),
      ['call.started', 'call.completed'],
    );
    assertCompletedOnce(events);
    assert.deepEqual(carrier.releases, [{ callId: call.id, reason: 'hang_up' }]);
  });
});

describe('database outages the retry budgets cover change nothing', { timeout: 120_000 }, () => {
  test('connectAgent fails through a 30 s outage, then the call goes on as usual', async () => {
    const { result, call, events, transcript, history } = await runCall('+4791255678', {}, (callId) =>
      databaseOutage({
        table: 'transcript_entries',
        on: 'insert',
        when: `new.call_id = '${callId}' and new.index = 0`,
        failures: 9,
      }),
    );
    const span = activitySpan(history, 'connectAgent');
    assert.equal(span.attempts, 10);
    assert.ok(span.ms >= 30_000, `connectAgent succeeded ${span.ms} ms after its first attempt`);
    assert.equal(result.status, 'completed');
    assert.equal(call.status, 'completed');
    assert.equal(call.endReason, 'agent_hangup');
    assert.equal(call.analysis?.outcome, 'resolved');
    assert.deepEqual(
      events.map((event) => event.type),
      ['call.started', 'call.completed'],
    );
    assert.match(transcript[0].text, /this is Ada/);
    assert.equal(transcript.at(-1)?.text, 'Thank you for your time. Goodbye!');
  });

  test('markAnswered fails through a 2-minute outage, then the call goes on as usual', async () => {
    const { result, call, events, history } = await runCall('+4791265678', {}, (callId) =>
      databaseOutage({
        table: 'calls',
        on: 'update',
        when: `new.id = '${callId}' and new.status = 'in_progress' and old.status <> 'in_progress'`,
        failures: 9,
      }),
    );
    const span = activitySpan(history, 'markAnswered');
    assert.equal(span.attempts, 10);
    assert.ok(span.ms >= 120_000, `markAnswered succeeded ${span.ms} ms after its first attempt`);
    assert.equal(result.status, 'completed');
    assert.equal(call.status, 'completed');
    assert.equal(call.endReason, 'agent_hangup');
    assert.deepEqual(
      events.map((event) => event.type),
      ['call.started', 'call.completed'],
    );
  });

  test('writing call.started fails through a 2-minute outage, then the call goes on as usual', async () => {
    const { result, call, events, history } = await runCall('+4791275678', {}, (callId) =>
      databaseOutage({
        table: 'events',
        on: 'insert',
        when: `new.call_id = '${callId}'`,
        failures: 9,
      }),
    );
    // The status change writes its event in the same step.
    const span = activitySpan(history, 'markAnswered');
    assert.equal(span.attempts, 10);
    assert.ok(span.ms >= 120_000, `call.started written ${span.ms} ms after the first attempt`);
    assert.equal(result.status, 'completed');
    assert.equal(call.endReason, 'agent_hangup');
    assert.deepEqual(
      events.map((event) => event.type),
      ['call.started', 'call.completed'],
    );
  });
});

describe('the last-resort handler', { timeout: 120_000 }, () => {
  test('a failure in the workflow itself (a malformed agent turn) still finishes the call once', async () => {
    const voiceRuntime = new FaultyAgent(() => ({ say: 'Hm.', next: undefined as unknown as AgentAction }));
    const carrier = new ObservedCarrier(stack.simulatedCarrier(env));
    const { result, call, events } = await runCall('+4791285678', { voiceRuntime, carrier });
    assert.equal(result.status, 'completed');
    assert.equal(result.endReason, 'agent_error');
    assert.equal(call.status, 'completed');
    assert.equal(call.endReason, 'agent_error');
    assert.ok(call.analysis);
    assert.deepEqual(
      events.map((event) => event.type),
      ['call.started', 'call.completed'],
    );
    assertCompletedOnce(events);
    assert.deepEqual(carrier.releases, [{ callId: call.id, reason: 'hang_up' }]);
  });
});

/**
 * The simulated carrier, except that the first release of a call is raced by an `answered`
 * callback: sent to the call the moment the release begins, before the release is done.
 */
class AnswerRacingReleaseCarrier extends ObservedCarrier {
  private raced = false;
  constructor(
    inner: Carrier,
    private readonly answerNow: (callId: string) => Promise<void>,
  ) {
    super(inner);
  }
  override async release(request: Parameters<Carrier['release']>[0]) {
    if (!this.raced) {
      this.raced = true;
      await this.answerNow(request.callId);
      // Long enough that the answer is in the history before the workflow task that released ends.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
    }
    return super.release(request);
  }
}

describe('a timeout that won its race', { timeout: 120_000 }, () => {
  test('an answer that comes while the ring timeout is acted on does not bring the call back', async () => {
    const carrier = new AnswerRacingReleaseCarrier(stack.simulatedCarrier(env), (callId) =>
      env.client.workflow
        .getHandle(callWorkflowId(callId))
        .signal(carrierCallbackSignal, { type: 'answered' }),
    );
    // 1002: the person never picks up, so the ring timeout (30 s, skipped) ends the wait.
    const { result, call, events, history } = await runCall('+4791251002', { carrier });
    assert.equal(result.status, 'failed');
    assert.equal(result.endReason, 'no_answer');
    assert.equal(call.status, 'failed');
    assert.equal(call.endReason, 'no_answer');
    assert.equal(call.answeredAt, null, 'the late answer did not revive the call');
    assert.deepEqual(
      events.map((event) => event.type),
      ['call.failed'],
    );
    // Released as a ring timeout is (`cancel`); the workflow task that released was refused once
    // (the answer came during it) and ran again, so the release may be repeated: releases are idempotent.
    assert.ok(carrier.releases.length >= 1);
    assert.ok(carrier.releases.every((r) => r.callId === call.id && r.reason === 'cancel'));
    // The late answer is in the history, after the timeout was settled by its 1 ms timer.
    const kinds = (history.events ?? []).map((event) =>
      event.timerStartedEventAttributes
        ? `timer ${Number(event.timerStartedEventAttributes.startToFireTimeout?.seconds ?? 0) * 1000 + Math.round((event.timerStartedEventAttributes.startToFireTimeout?.nanos ?? 0) / 1e6)} ms`
        : event.workflowExecutionSignaledEventAttributes
          ? 'signal'
          : null,
    );
    const settled = kinds.indexOf('timer 1 ms');
    assert.ok(settled > 0, `a 1 ms timer settles the timeout: ${kinds.filter(Boolean).join(', ')}`);
    assert.ok(kinds.lastIndexOf('signal') > settled, 'the answer came after the timeout was settled');
  });
});

/** The simulated carrier, except that the far end never hears the agent's answers (only its opening line). */
class DeafCarrier extends ObservedCarrier {
  override async say(): Promise<undefined> {}
}

describe('the silence timeout', { timeout: 120_000 }, () => {
  test('a line that stays silent ends the call after 10 minutes, on one timer kept across the turns', async () => {
    const carrier = new DeafCarrier(stack.simulatedCarrier(env));
    const { result, call, history } = await runCall('+4791295678', { carrier });
    assert.equal(result.status, 'completed');
    assert.equal(result.endReason, 'silence_timeout');
    assert.equal(call.endReason, 'silence_timeout');
    assert.deepEqual(carrier.releases, [{ callId: call.id, reason: 'hang_up' }]);
    const silentMs = call.endedAt!.getTime() - call.answeredAt!.getTime();
    assert.ok(silentMs >= 10 * 60_000, `ended ${silentMs} ms after the answer`);
    // The ring timeout's timer and the silence timer; the silence timer, started at the first
    // wait, fires 10 minutes later and is started again once for what is left of the second wait;
    // then the 1 ms timer that settles the timeout before the call acts on it.
    const timers = (history.events ?? []).filter((event) => event.timerStartedEventAttributes);
    assert.equal(timers.length, 4);
  });
});
