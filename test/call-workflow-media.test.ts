import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Context } from '@temporalio/activity';
import type { WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { Agent, Call } from '../db/entities/index.js';
import { answerIncomingPhoneCall } from '../lib/calls/incoming-calls.js';
import { startCallWorkflow } from '../lib/calls/start-call-workflow.js';
import type { TranscriptLine } from '../lib/calls/transcript.js';
import { recordLines } from '../lib/calls/transcript-rows.js';
import type {
  AnswerRequest,
  CallMedia,
  Carrier,
  DialRequest,
  SpeechPlayed,
  TransferHandOver,
} from '../lib/carrier/carrier.js';
import type { TurnsHandOver } from '../lib/media/media-control.js';
import type { MediaSessionActivities } from '../lib/media/media-session.js';
import {
  type CallerSpeech,
  callerSpeechSignal,
  callProgressQuery,
  carrierCallbackSignal,
  type GatewayTurn,
  gatewayTurnSignal,
} from '../lib/temporal/call-messages.js';
import { type CallWorkflowResult, callWorkflowId } from '../lib/temporal/workflow-contracts.js';
import type { AgentAction } from '../lib/voice-runtime/voice-runtime.js';
import { notReachedLine } from '../lib/voice-runtime/warm-transfer-lines.js';
import {
  type AgentFixture,
  createAgentFixture,
  createQueuedCall,
  storedCall,
} from './support/call-fixtures.js';
import { keepHistory } from './support/kept-histories.js';
import {
  runWorkers,
  startTimeSkippingCallStack,
  type TimeSkippingCallStack,
} from './support/time-skipping-call-stack.js';
import { until } from './support/wait-for.js';

// The call workflow's steps for a call with audio (a media gateway holds it), on the time-skipping
// server: the media session beside the conversation and a gateway that dies (heartbeats stop),
// a barge-in that cuts the agent's line to what was said, a speech service that fails, and the
// latency from the end of the caller's speech. The gateway itself is a stand-in here (its carrier
// requests are recorded, its media session is a worker the test controls); test/media-gateway.test.ts
// runs the real one. The turns a gateway takes (`take_turns`, then `gatewayTurn` signals) are
// played by the test the same way.

let stack: TimeSkippingCallStack;
let ada: AgentFixture;
const OPENING = 'Thank you for calling Acme. This is Ada, how can I help?';

before(async () => {
  stack = await startTimeSkippingCallStack({ prefix: 'mediawf', logLevel: 'ERROR' });
  ada = await createAgentFixture(stack.db.orm, { firstMessage: OPENING });
});
after(async () => {
  await stack?.close();
});

/** The carrier side of a gateway: records what the workflow asks, says each line's audio left at once. */
class GatewayStandIn implements Carrier {
  readonly said: { index: number; text: string; hangUp?: boolean }[] = [];
  readonly releases: string[] = [];
  constructor(readonly taskQueue: string) {}
  async dial(_request: { callId: string }): Promise<CallMedia | undefined> {
    throw new Error('not dialed here');
  }
  async answer(_request: AnswerRequest): Promise<CallMedia> {
    return { taskQueue: this.taskQueue };
  }
  async connectAgent(request: { opening: { index: number; text: string } | null }): Promise<void> {
    if (request.opening) this.said.push(request.opening);
  }
  async say(request: { index: number; text: string; hangUp?: boolean }): Promise<SpeechPlayed> {
    this.said.push({ index: request.index, text: request.text, ...(request.hangUp ? { hangUp: true } : {}) });
    return { firstAudioAt: Date.now() };
  }
  async transfer(_request: { to: string }): Promise<TransferHandOver | undefined> {
    return undefined;
  }
  async release(request: { reason: string }): Promise<void> {
    this.releases.push(request.reason);
  }
}

/**
 * The gateway's media session: `holds` while the call's audio lasts; `stops` fails as a gateway
 * stopping with the call live does; `ends` returns after a while, as a session whose stream closed
 * does (its hang-up signal lost on the way). (A killed gateway, whose heartbeats stop, is
 * test/media-gateway.test.ts's: the time-skipping server does not time out a running activity's
 * heartbeats.)
 */
type SessionMode = 'holds' | 'stops' | 'ends' | 'dies';

/** Mode `dies`: the session holds until this is set, then fails as a gateway that died does. */
let gatewayDied = false;

function mediaSession(mode: SessionMode): MediaSessionActivities {
  return {
    async holdMedia() {
      const context = Context.current();
      context.heartbeat();
      if (mode === 'ends') {
        await sleep(1500);
        return;
      }
      if (mode === 'stops') {
        await sleep(500);
        throw ApplicationFailure.nonRetryable('the media gateway stopped', 'MediaGatewayStopped');
      }
      if (mode === 'dies') {
        while (!gatewayDied) {
          context.heartbeat();
          await sleep(100);
        }
        throw ApplicationFailure.nonRetryable('the media gateway is gone', 'MediaGatewayStopped');
      }
      while (!context.cancellationSignal.aborted) {
        context.heartbeat();
        await sleep(200);
      }
    },
  };
}

/**
 * A gateway that takes the call's turns when handed them (`take_turns`): answers from `answers`
 * in order (the last one again after that), each request recorded. The test then plays the
 * gateway's part: it writes the turn's lines and sends the `gatewayTurn` signal.
 */
class TurnTakingGateway extends GatewayStandIn {
  readonly handOvers: Parameters<NonNullable<Carrier['handOverTurns']>>[0][] = [];
  constructor(
    taskQueue: string,
    private readonly answers: TurnsHandOver[],
  ) {
    super(taskQueue);
  }
  async handOverTurns(request: Parameters<NonNullable<Carrier['handOverTurns']>>[0]): Promise<TurnsHandOver> {
    this.handOvers.push(request);
    return this.answers[Math.min(this.handOvers.length, this.answers.length) - 1];
  }
}

async function withCall<T, G extends GatewayStandIn = GatewayStandIn>(
  mode: SessionMode,
  fn: (env: TestWorkflowEnvironment, callId: string, gateway: G) => Promise<T>,
  gatewayOf: (taskQueue: string) => G = (taskQueue) => new GatewayStandIn(taskQueue) as G,
  agent: AgentFixture = ada,
): Promise<T> {
  return stack.withEnvironment(async (env) => {
    const gateway = gatewayOf(`${stack.settings.taskQueuePrefix}media@gateway-${Math.random()}`);
    const media = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: gateway.taskQueue,
      activities: mediaSession(mode),
    });
    const workers = [...(await stack.workers(env, { ports: { carrier: gateway } })), media];
    const answer = await answerIncomingPhoneCall(
      { em: stack.db.orm.em.fork() as EntityManager, temporal: env.client, settings: stack.settings },
      { to: agent.number, from: '+4791230000' },
    );
    assert.ok(answer.answered);
    return runWorkers(workers, () => fn(env, answer.callId, gateway));
  });
}

const speech = (utterance: number, text: string, extra: Partial<CallerSpeech> = {}): CallerSpeech => ({
  utterance,
  text,
  startedAtSeconds: 4 + utterance * 6,
  endedAtSeconds: 6 + utterance * 6,
  ...extra,
});

describe('a call with audio', { timeout: 120_000 }, () => {
  test('a barge-in cuts the agent line to what was said; each turn measured from the end of speech', async () => {
    await withCall('holds', async (env, callId, gateway) => {
      const handle = env.client.workflow.getHandle(callWorkflowId(callId));
      await until(() => gateway.said.length === 1, 'the opening line was played');
      const speechEndedAt = Date.now() - 700;
      await handle.signal(
        callerSpeechSignal,
        speech(0, 'Sorry, could you send me an email?', {
          speechTiming: { speechEndedAt, transcribedAt: speechEndedAt + 300 },
          interrupted: { index: 0, spokenText: 'Thank you for calling Acme.' },
        }),
      );
      await until(() => gateway.said.length === 2, 'the agent answered');
      await handle.signal(callerSpeechSignal, speech(1, 'Thanks, goodbye.'));
      const result = (await handle.result()) as CallWorkflowResult;
      assert.equal(result.endReason, 'agent_hangup');
      keepHistory('inbound-media-barge-in-call', await handle.fetchHistory());
      const { transcript } = await storedCall(stack.db.orm, callId);
      assert.equal(
        transcript[0].text,
        'Thank you for calling Acme.',
        'the interrupted opening keeps its first sentence',
      );
      assert.match(transcript[1].text, /email/);
      const progress = await handle.query(callProgressQuery);
      const [first, second] = progress.agentTurns;
      assert.equal(first.fromSpeechEnd?.transcriptMs, 300);
      assert.ok(first.fromSpeechEnd!.firstTokenMs >= 300);
      assert.ok(first.fromSpeechEnd!.firstAudioMs! >= first.fromSpeechEnd!.firstTokenMs);
      assert.equal(second.fromSpeechEnd, undefined, 'a line without speech timings has none');
    });
  });

  test('an answer dropped unheard (the caller spoke on before it played): its transcript line goes, the lines around it stay', async () => {
    await withCall('holds', async (env, callId, gateway) => {
      const handle = env.client.workflow.getHandle(callWorkflowId(callId));
      await until(() => gateway.said.length === 1, 'the opening line was played');
      await handle.signal(callerSpeechSignal, speech(0, 'I need a taxi.'));
      await until(() => gateway.said.length === 2, 'the agent answered');
      const dropped = gateway.said[1].index;
      // The gateway dropped that answer unheard: the caller's next line says none of it was spoken.
      await handle.signal(
        callerSpeechSignal,
        speech(1, 'To the airport at six.', { interrupted: { index: dropped, spokenText: '' } }),
      );
      await until(() => gateway.said.length === 3, 'the agent answered both');
      await handle.signal(callerSpeechSignal, speech(2, 'Thanks, goodbye.'));
      const result = (await handle.result()) as CallWorkflowResult;
      assert.equal(result.endReason, 'agent_hangup');
      const { transcript } = await storedCall(stack.db.orm, callId);
      assert.equal(
        transcript.some((line) => line.index === dropped),
        false,
        'the dropped answer is no line',
      );
      assert.deepEqual(
        transcript.filter((line) => line.role === 'caller').map((line) => line.text),
        ['I need a taxi.', 'To the airport at six.', 'Thanks, goodbye.'],
      );
      assert.equal(transcript[0].role, 'agent', 'the opening stays');
      assert.ok(
        transcript.filter((line) => line.role === 'agent').length >= 3,
        'the opening, the answer to both lines and the goodbye',
      );
    });
  });

  test('a gateway that is lost: the call ends agent_error, without an apology to no one', async () => {
    await withCall('stops', async (env, callId, gateway) => {
      const result = (await env.client.workflow
        .getHandle(callWorkflowId(callId))
        .result()) as CallWorkflowResult;
      assert.equal(result.status, 'completed');
      assert.equal(result.endReason, 'agent_error');
      keepHistory(
        'inbound-media-lost-call',
        await env.client.workflow.getHandle(callWorkflowId(callId)).fetchHistory(),
      );
      assert.deepEqual(
        gateway.said.map((line) => line.index),
        [0],
        'only the opening: no apology',
      );
      const { call, events } = await storedCall(stack.db.orm, callId);
      assert.equal(call.endReason, 'agent_error');
      assert.ok(call.analysis);
      assert.ok(events.some((e) => e.type === 'call.completed'));
    });
  });

  test('a gateway that dies during the agent’s turn: the turn is cut short and the call ends agent_error in seconds, not the turn’s 75 s budget', async () => {
    gatewayDied = false;
    let diedAt = 0;
    /** The opening is said; then the gateway is gone: every later request to it is refused. */
    class DyingGateway extends GatewayStandIn {
      override async say(request: { index: number; text: string; hangUp?: boolean }): Promise<SpeechPlayed> {
        if (!gatewayDied) {
          gatewayDied = true;
          diedAt = performance.now();
        }
        throw Object.assign(new Error(`connect ECONNREFUSED (line ${request.index})`), {
          code: 'ECONNREFUSED',
        });
      }
    }
    await withCall(
      'dies',
      async (env, callId, gateway) => {
        const handle = env.client.workflow.getHandle(callWorkflowId(callId));
        await until(() => gateway.said.length === 1, 'the opening line was played');
        await handle.signal(callerSpeechSignal, speech(0, 'Can you send me an email?'));
        const result = (await handle.result()) as CallWorkflowResult;
        const tookMs = performance.now() - diedAt;
        assert.equal(result.endReason, 'agent_error');
        assert.ok(diedAt > 0, 'the agent’s answer reached the dead gateway');
        assert.ok(tookMs < 15_000, `the call ended ${Math.round(tookMs)} ms after its gateway died`);
        assert.deepEqual(gateway.releases, ['hang_up']);
        keepHistory('inbound-media-lost-mid-turn-call', await handle.fetchHistory());
      },
      (taskQueue) => new DyingGateway(taskQueue),
    );
  });

  test('a session whose stream ended without a hang-up: the call ends caller_hangup at once, not by the silence timeout', async () => {
    await withCall('ends', async (env, callId, gateway) => {
      const handle = env.client.workflow.getHandle(callWorkflowId(callId));
      const result = (await handle.result()) as CallWorkflowResult;
      assert.equal(result.status, 'completed');
      assert.equal(result.endReason, 'caller_hangup', 'not silence_timeout, 10 minutes later');
      keepHistory('inbound-media-ended-call', await handle.fetchHistory());
      assert.deepEqual(
        gateway.said.map((line) => line.index),
        [0],
        'the opening only: nothing said to no one',
      );
      assert.deepEqual(gateway.releases, [], 'nothing to release: the stream is gone');
      const { call } = await storedCall(stack.db.orm, callId);
      assert.equal(call.endReason, 'caller_hangup');
      assert.ok(
        (call.durationSeconds ?? 0) < 60,
        `ended as of the last thing said: ${call.durationSeconds} s`,
      );
    });
  });

  test('speech that cannot be recognised: the agent apologises and the call ends agent_error', async () => {
    // (The turns stay here: this gateway stand-in cannot take them.)
    await withCall('holds', async (env, callId, gateway) => {
      const handle = env.client.workflow.getHandle(callWorkflowId(callId));
      await until(() => gateway.said.length === 1, 'the opening line was played');
      await handle.signal(carrierCallbackSignal, { type: 'speech_failed' });
      const result = (await handle.result()) as CallWorkflowResult;
      assert.equal(result.endReason, 'agent_error');
      assert.equal(gateway.said.length, 2, 'the apology was played');
      assert.ok(gateway.releases.includes('hang_up'));
    });
  });
});

/** A line as the gateway writes it. */
const line = (
  index: number,
  role: 'caller' | 'agent',
  text: string,
  offsetSeconds: number,
): TranscriptLine => ({
  index,
  role,
  text,
  offsetSeconds,
});

/** A turn the gateway took, answered with `answer` (null: the agent could not answer). */
function gatewayTurn(
  utterance: number,
  heard: TranscriptLine,
  answer: TranscriptLine | null,
  next: AgentAction = { kind: 'continue' },
  failed = false,
): GatewayTurn {
  return {
    utterance,
    heard,
    heardUntilSeconds: heard.offsetSeconds + 2,
    result: failed
      ? null
      : {
          line: answer,
          next,
          latency: { index: heard.index + 1, firstTokenMs: 300, firstSentenceMs: 320, answerMs: 900 },
          ...(next.kind === 'hang_up' && answer ? { hungUp: true } : {}),
        },
  };
}

const em = () => stack.db.orm.em.fork() as EntityManager;

/** A call on a gateway that answers `take_turns` with `answers`, once the turns were first offered. */
function withTurnTakingCall(
  answers: TurnsHandOver[],
  fn: (handle: WorkflowHandle, callId: string, gateway: TurnTakingGateway) => Promise<void>,
): Promise<void> {
  return withCall<void, TurnTakingGateway>(
    'holds',
    async (env, callId, gateway) => {
      await until(() => gateway.handOvers.length === 1, 'the turns were offered to the gateway');
      await fn(env.client.workflow.getHandle(callWorkflowId(callId)), callId, gateway);
    },
    (taskQueue) => new TurnTakingGateway(taskQueue, answers),
  );
}

describe('turns the gateway takes', { timeout: 120_000 }, () => {
  test('handed over once after the opening; each turn kept once (a redelivery is recognised); the hang-up it carried ends the call', async () => {
    await withTurnTakingCall(['taken'], async (handle, callId, gateway) => {
      assert.deepEqual(gateway.handOvers[0], {
        callId,
        nextIndex: 1,
        heardThrough: -1,
        withStoredToolCalls: false,
      });
      const first = gatewayTurn(
        0,
        line(1, 'caller', 'Can I book a table for Friday?', 4),
        line(2, 'agent', 'Friday works. Anything else?', 6),
      );
      const last = gatewayTurn(
        1,
        line(3, 'caller', 'No, that is all, goodbye.', 10),
        line(4, 'agent', 'Goodbye!', 12),
        { kind: 'hang_up' },
      );
      await recordLines(em(), callId, [first.heard, first.result!.line!]);
      await handle.signal(gatewayTurnSignal, first);
      await handle.signal(gatewayTurnSignal, first);
      await recordLines(em(), callId, [last.heard, last.result!.line!]);
      await handle.signal(gatewayTurnSignal, last);
      const result = (await handle.result()) as CallWorkflowResult;
      assert.equal(result.endReason, 'agent_hangup');
      assert.equal(gateway.handOvers.length, 1, 'the turns stayed with the gateway');
      assert.deepEqual(
        gateway.said.map((said) => said.index),
        [0],
        'the workflow played only the opening',
      );
      assert.deepEqual(gateway.releases, [], 'the gateway hung up with the last line');
      const progress = await handle.query(callProgressQuery);
      assert.deepEqual(
        progress.agentTurns.map((turn) => turn.index),
        [2, 4],
        'each turn once',
      );
      assert.equal(progress.transcriptLines, 5);
      const { call, transcript } = await storedCall(stack.db.orm, callId);
      assert.deepEqual(
        transcript.map((entry) => [entry.index, entry.role]),
        [
          [0, 'agent'],
          [1, 'caller'],
          [2, 'agent'],
          [3, 'caller'],
          [4, 'agent'],
        ],
      );
      assert.equal(call.status, 'completed');
      assert.ok(call.analysis);
      keepHistory('inbound-media-gateway-turns-call', await handle.fetchHistory());
    });
  });

  test('not taken while a line the gateway sent is on its way: the workflow answers it, then hands the turns over', async () => {
    await withTurnTakingCall(['not_now', 'taken'], async (handle, callId, gateway) => {
      await handle.signal(callerSpeechSignal, speech(0, 'Hello, is this Acme?'));
      await until(() => gateway.said.length === 2, 'the workflow answered the line sent to it');
      await until(() => gateway.handOvers.length === 2, 'the turns were offered again');
      assert.deepEqual(gateway.handOvers[1], {
        callId,
        nextIndex: 3,
        heardThrough: 0,
        withStoredToolCalls: false,
      });
      await handle.signal(carrierCallbackSignal, { type: 'hung_up', atSeconds: 20 });
      const result = (await handle.result()) as CallWorkflowResult;
      assert.equal(result.endReason, 'caller_hangup');
      assert.equal(gateway.handOvers.length, 2);
    });
  });

  test('a turn the gateway could not answer: the workflow apologises after the person’s line and ends the call agent_error', async () => {
    await withTurnTakingCall(['taken'], async (handle, callId, gateway) => {
      const failed = gatewayTurn(0, line(1, 'caller', 'Are you there?', 4), null, undefined, true);
      await recordLines(em(), callId, [failed.heard]);
      await handle.signal(gatewayTurnSignal, failed);
      const result = (await handle.result()) as CallWorkflowResult;
      assert.equal(result.endReason, 'agent_error');
      assert.deepEqual(
        gateway.said.map((said) => said.index),
        [0, 2],
        'the apology follows the person’s line',
      );
      assert.ok(gateway.releases.includes('hang_up'));
      const { transcript } = await storedCall(stack.db.orm, callId);
      assert.deepEqual(
        transcript.map((entry) => entry.role),
        ['agent', 'caller', 'agent'],
      );
    });
  });
});

/** The caller's first turn, which the gateway took, asks for a transfer to `to`: its lines written, the turn told. */
async function askForTransfer(
  env: TestWorkflowEnvironment,
  callId: string,
  gateway: TurnTakingGateway,
  to: string,
): Promise<WorkflowHandle> {
  await until(() => gateway.handOvers.length === 1, 'the turns were offered to the gateway');
  const handle = env.client.workflow.getHandle(callWorkflowId(callId));
  const asked = gatewayTurn(
    0,
    line(1, 'caller', 'Can I talk to the front desk?', 4),
    line(2, 'agent', 'Of course, putting you through now.', 6),
    { kind: 'transfer', to },
  );
  await recordLines(em(), callId, [asked.heard, asked.result!.line!]);
  await handle.signal(gatewayTurnSignal, asked);
  return handle;
}

/** A gateway whose client (the SIP side) tries a transfer's target and reports the outcome. */
class ReportingGateway extends TurnTakingGateway {
  readonly transfers: string[] = [];
  override async transfer(request: { to: string }): Promise<TransferHandOver> {
    this.transfers.push(request.to);
    return 'reported';
  }
}

describe('a transfer whose outcome the SIP side reports', { timeout: 120_000 }, () => {
  const DESK = '+4722334455';

  /** A call whose gateway takes the turns and whose first turn asks for a transfer to DESK. */
  function withTransferAsked(
    fn: (
      env: TestWorkflowEnvironment,
      handle: WorkflowHandle,
      callId: string,
      gateway: ReportingGateway,
    ) => Promise<void>,
  ) {
    return withCall<void, ReportingGateway>(
      'holds',
      async (env, callId, gateway) => {
        const handle = await askForTransfer(env, callId, gateway, DESK);
        await until(() => gateway.transfers.length === 1, 'the transfer was handed to the gateway');
        await fn(env, handle, callId, gateway);
      },
      (taskQueue) => new ReportingGateway(taskQueue, ['taken']),
    );
  }

  const transferOf = async (callId: string) => (await storedCall(stack.db.orm, callId)).call.transfer;

  test('busy: the transfer is failed, the agent tells the caller and takes turns again; then connected: transferred, call.transferred once', async () => {
    await withTransferAsked(async (_env, handle, callId, gateway) => {
      assert.equal((await transferOf(callId))?.status, 'connecting', 'not connected before the report');
      await handle.signal(carrierCallbackSignal, { type: 'transfer_failed', failure: 'busy' });
      await until(() => gateway.said.length === 2, 'the agent told the caller');
      const { call: ringing } = await storedCall(stack.db.orm, callId);
      assert.equal(gateway.said[1].text, notReachedLine(ringing.agentSnapshot.language ?? null));
      const failed = await transferOf(callId);
      assert.equal(failed?.status, 'failed');
      assert.equal(failed?.failure, 'busy');
      await until(() => gateway.handOvers.length === 2, 'the turns went back to the gateway');
      const again = gatewayTurn(
        1,
        line(4, 'caller', 'Please try once more.', 14),
        line(5, 'agent', 'Trying again.', 16),
        { kind: 'transfer', to: DESK },
      );
      await recordLines(em(), callId, [again.heard, again.result!.line!]);
      await handle.signal(gatewayTurnSignal, again);
      await until(() => gateway.transfers.length === 2, 'the second transfer was handed over');
      await handle.signal(carrierCallbackSignal, { type: 'transfer_connected' });
      const result = (await handle.result()) as CallWorkflowResult;
      assert.equal(result.endReason, 'transferred');
      keepHistory('inbound-media-reported-transfer-call', await handle.fetchHistory());
      const { call, events } = await storedCall(stack.db.orm, callId);
      assert.equal(call.transfer?.status, 'connected');
      assert.equal(call.transfer?.failure, null);
      assert.ok(call.transfer?.connected_at);
      assert.equal(events.filter((event) => event.type === 'call.transferred').length, 1);
    });
  });

  test('a hang-up while the transfer is pending: no transfer (failed, refused), the call ends as the hang-up, nothing said', async () => {
    await withTransferAsked(async (_env, handle, callId, gateway) => {
      await handle.signal(carrierCallbackSignal, { type: 'hung_up', atSeconds: 9 });
      const result = (await handle.result()) as CallWorkflowResult;
      assert.equal(result.endReason, 'caller_hangup');
      const { call, events } = await storedCall(stack.db.orm, callId);
      assert.equal(call.transfer?.status, 'failed');
      assert.equal(call.transfer?.failure, 'refused');
      assert.equal(events.filter((event) => event.type === 'call.transferred').length, 0);
      assert.equal(gateway.said.length, 1, 'nothing said to a caller who is gone');
    });
  });
});

/**
 * A gateway that bridges a transfer itself (a Media Streams call: media/transfer-legs.ts): the leg
 * is dialled through the carrier (recorded here; the test plays its far end by signalling the leg's
 * workflow), and `bridge` joins it (answering `joins`).
 */
class BridgingGateway extends TurnTakingGateway {
  readonly transfers: { to: string; mode?: string }[] = [];
  readonly legs: DialRequest[] = [];
  readonly bridges: { callId: string; legId: string }[] = [];
  readonly legRequests: string[] = [];
  joins = true;
  override async transfer(request: { to: string; mode?: 'cold' | 'warm' }): Promise<TransferHandOver> {
    this.transfers.push({ to: request.to, mode: request.mode });
    return 'bridge';
  }
  override async dial(request: DialRequest): Promise<CallMedia | undefined> {
    assert.ok(request.legOf, 'only a transfer’s leg is dialled here');
    this.legs.push(request);
    return undefined;
  }
  async bridge(request: { callId: string; legId: string }): Promise<boolean> {
    this.bridges.push(request);
    return this.joins;
  }
  override async connectAgent(request: {
    callId: string;
    opening: { index: number; text: string } | null;
    legOf?: string;
  }) {
    if (request.legOf) this.legRequests.push(`connect ${request.opening ? 'briefed' : 'joined'}`);
    else await super.connectAgent(request);
  }
  override async release(request: { reason: string; legOf?: string }): Promise<void> {
    if (request.legOf) this.legRequests.push(`release ${request.reason}`);
    else await super.release(request);
  }
}

describe('a transfer bridged in the gateway (a Media Streams call)', { timeout: 120_000 }, () => {
  const DESK = '+4722334466';

  /** A call whose gateway takes the turns and whose first turn asks for a transfer to DESK (cold, unless `agent` says). */
  function withTransferAsked(
    fn: (
      handle: WorkflowHandle,
      callId: string,
      gateway: BridgingGateway,
      leg: WorkflowHandle,
    ) => Promise<void>,
    agent: AgentFixture = ada,
  ) {
    return withCall<void, BridgingGateway>(
      'holds',
      async (env, callId, gateway) => {
        // The call's audio is held by a gateway (its row says which), as a Media Streams call's is.
        await em().nativeUpdate(Call, { id: callId }, { mediaGateway: 'http://127.0.0.1:8091' });
        const handle = await askForTransfer(env, callId, gateway, DESK);
        await until(() => gateway.legs.length === 1, 'the person was not rung');
        await fn(handle, callId, gateway, env.client.workflow.getHandle(gateway.legs[0].callWorkflowId));
      },
      (taskQueue) => new BridgingGateway(taskQueue, ['taken']),
      agent,
    );
  }

  const transferOf = async (callId: string) => (await storedCall(stack.db.orm, callId)).call.transfer;

  test('the person is rung as a leg of the call; connected only once they answer, then joined: transferred, call.transferred', async () => {
    await withTransferAsked(async (handle, callId, gateway, leg) => {
      assert.deepEqual(gateway.transfers, [{ to: DESK, mode: 'cold' }]);
      assert.equal(gateway.legs[0].legOf, callId);
      assert.equal(gateway.legs[0].to, DESK);
      assert.equal((await transferOf(callId))?.status, 'connecting', 'ringing: not connected yet');
      await leg.signal(carrierCallbackSignal, { type: 'ringing' });
      await leg.signal(carrierCallbackSignal, { type: 'answered' });
      const result = (await handle.result()) as CallWorkflowResult;
      assert.equal(result.endReason, 'transferred');
      keepHistory('inbound-media-bridged-transfer-call', await handle.fetchHistory());
      assert.deepEqual(gateway.bridges, [{ callId, legId: gateway.legs[0].callId }]);
      // Cold: nobody was briefed; the person's far end hears it is joined.
      assert.deepEqual(gateway.legRequests, ['connect joined']);
      const { call, events } = await storedCall(stack.db.orm, callId);
      assert.equal(call.endReason, 'transferred');
      assert.deepEqual(
        { ...call.transfer, started_at: null, connected_at: null },
        {
          to: DESK,
          mode: 'cold',
          status: 'connected',
          failure: null,
          started_at: null,
          connected_at: null,
        },
      );
      assert.ok(call.transfer?.connected_at);
      assert.equal(events.filter((event) => event.type === 'call.transferred').length, 1);
    });
  });

  test('warm: the caller hears the destination’s message, the person is briefed on their leg, then the two are joined', async () => {
    const kari = await createAgentFixture(stack.db.orm, { firstMessage: OPENING });
    const message = 'Please hold, I am getting Kari from the front desk.';
    await stack.db.orm.em.fork().nativeUpdate(
      Agent,
      { id: kari.agentId },
      {
        transferDestinations: [{ number: DESK, description: 'the front desk', mode: 'warm', message }],
      },
    );
    await withTransferAsked(async (handle, callId, gateway, leg) => {
      assert.deepEqual(gateway.transfers, [{ to: DESK, mode: 'warm' }]);
      assert.equal(gateway.said[1]?.text, message, 'the caller heard the message while the person was rung');
      await leg.signal(carrierCallbackSignal, { type: 'answered' });
      const result = (await handle.result()) as CallWorkflowResult;
      assert.equal(result.endReason, 'transferred');
      // Briefed on the leg first (as the leg's agent line), then joined; nothing more said to the leg.
      assert.deepEqual(gateway.legRequests, ['connect briefed']);
      assert.equal(gateway.bridges.length, 1);
      const { call } = await storedCall(stack.db.orm, callId);
      assert.deepEqual([call.transfer?.mode, call.transfer?.status], ['warm', 'connected']);
    }, kari);
  });

  test('busy: failed (busy), nothing joined, the agent tells the caller and takes turns again', async () => {
    await withTransferAsked(async (handle, callId, gateway, leg) => {
      await leg.signal(carrierCallbackSignal, { type: 'busy' });
      await until(() => gateway.said.length === 2, 'the agent told the caller');
      const { call: ringing } = await storedCall(stack.db.orm, callId);
      assert.equal(gateway.said[1].text, notReachedLine(ringing.agentSnapshot.language ?? null));
      const failed = await transferOf(callId);
      assert.deepEqual([failed?.status, failed?.failure, failed?.mode], ['failed', 'busy', 'cold']);
      assert.deepEqual(gateway.bridges, []);
      await until(() => gateway.handOvers.length === 2, 'the turns went back to the gateway');
      await handle.signal(carrierCallbackSignal, { type: 'hung_up', atSeconds: 20 });
      const result = (await handle.result()) as CallWorkflowResult;
      assert.equal(result.endReason, 'caller_hangup');
      const { events } = await storedCall(stack.db.orm, callId);
      assert.equal(events.filter((event) => event.type === 'call.transferred').length, 0);
    });
  });

  test('a person who hangs up just as they are joined: nothing joined (refused), the leg released, the call goes on', async () => {
    await withTransferAsked(async (_handle, callId, gateway, leg) => {
      gateway.joins = false;
      await leg.signal(carrierCallbackSignal, { type: 'answered' });
      await until(() => gateway.said.length === 2, 'the agent told the caller');
      const failed = await transferOf(callId);
      assert.deepEqual([failed?.status, failed?.failure], ['failed', 'refused']);
      assert.deepEqual(gateway.legRequests, ['release hang_up']);
      await until(() => gateway.handOvers.length === 2, 'the turns went back to the gateway');
    });
  });
});

/** A gateway whose calls are placed (an outbound SIP call): the dial says where the audio is held. */
class DialingGateway extends GatewayStandIn {
  readonly dialed: string[] = [];
  override async dial(request: { callId: string }): Promise<CallMedia> {
    this.dialed.push(request.callId);
    return { taskQueue: this.taskQueue };
  }
}

describe('an answering machine on a call with audio (the gateway hears its greeting end)', {
  timeout: 120_000,
}, () => {
  const MESSAGE = 'Hi Kari, this is Ada from Acme. Please call us back.';

  /** An outbound call with audio to a machine (answered speaking), with leave_message; `fn` plays the far end. */
  async function toMachine(fn: (handle: WorkflowHandle, gateway: DialingGateway) => Promise<void>) {
    return stack.withEnvironment(async (env) => {
      const gateway = new DialingGateway(`${stack.settings.taskQueuePrefix}media@gateway-${Math.random()}`);
      const media = await Worker.create({
        connection: env.nativeConnection,
        taskQueue: gateway.taskQueue,
        activities: mediaSession('holds'),
      });
      const workers = [...(await stack.workers(env, { ports: { carrier: gateway } })), media];
      const call = await createQueuedCall(stack.db.orm, ada, {
        to: '+4791239901',
        snapshot: { voicemail: { detect: true, action: 'leave_message', message: MESSAGE } },
      });
      return runWorkers(workers, async () => {
        await startCallWorkflow(env.client, stack.settings, call);
        const handle = env.client.workflow.getHandle(callWorkflowId(call.id));
        await until(() => gateway.dialed.length === 1, 'the call was dialled');
        await handle.signal(carrierCallbackSignal, { type: 'answered', speaking: true, listenedMs: 600 });
        await fn(handle, gateway);
        const result = (await handle.result()) as CallWorkflowResult;
        assert.equal(result.endReason, 'voicemail');
        keepHistory('outbound-media-machine-call', await handle.fetchHistory());
        return call.id;
      });
    });
  }

  test('lines of the greeting are not its end: the message waits for quiet, after the greeting’s words', async () => {
    const callId = await toMachine(async (handle, gateway) => {
      // Judged a machine by its length (no words within 3.7 s); then its first sentence's line.
      await handle.signal(callerSpeechSignal, speech(0, 'Hi, you have reached Kari.'));
      await sleep(2_500);
      assert.equal(gateway.said.length, 0, 'no message while the greeting may go on');
      await handle.signal(callerSpeechSignal, speech(1, 'Please leave a message after the tone.'));
      await handle.signal(carrierCallbackSignal, { type: 'quiet' });
      await until(() => gateway.said.length === 1, 'the message was not left');
    });
    const { call, transcript } = await storedCall(stack.db.orm, callId);
    assert.equal(call.answeredBy, 'machine');
    assert.deepEqual(
      transcript.map((line) => [line.role, line.text]),
      [
        ['caller', 'Hi, you have reached Kari.'],
        ['caller', 'Please leave a message after the tone.'],
        ['agent', MESSAGE],
      ],
    );
  });
});
