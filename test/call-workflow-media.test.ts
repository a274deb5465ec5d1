import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { answerIncomingPhoneCall } from '../lib/calls/incoming-calls.js';
import type { AnswerRequest, CallMedia, Carrier, SpeechPlayed } from '../lib/carrier/carrier.js';
import type { MediaSessionActivities } from '../lib/media/media-session.js';
import {
  type CallerSpeech,
  callerSpeechSignal,
  callProgressQuery,
  carrierCallbackSignal,
} from '../lib/temporal/call-messages.js';
import { type CallWorkflowResult, callWorkflowId } from '../lib/temporal/workflow-contracts.js';
import { type AgentFixture, createAgentFixture, storedCall } from './support/call-fixtures.js';
import { keepHistory } from './support/kept-histories.js';
import {
  runWorkers,
  startTimeSkippingCallStack,
  type TimeSkippingCallStack,
} from './support/time-skipping-call-stack.js';

// The call workflow's steps for a call with audio (a media gateway holds it), on the time-skipping
// server: the media session beside the conversation and a gateway that dies (heartbeats stop),
// a barge-in that cuts the agent's line to what was said, a speech service that fails, and the
// latency from the end of the caller's speech. The gateway itself is a stand-in here (its carrier
// requests are recorded, its media session is a worker the test controls); test/media-gateway.test.ts
// runs the real one.

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
  async dial(): Promise<undefined> {
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
  async transfer(): Promise<void> {}
  async release(request: { reason: string }): Promise<void> {
    this.releases.push(request.reason);
  }
}

/**
 * The gateway's media session: `holds` while the call's audio lasts; `stops` fails as a gateway
 * stopping with the call live does. (A killed gateway, whose heartbeats stop, is
 * test/media-gateway.test.ts's: the time-skipping server does not time out a running activity's
 * heartbeats.)
 */
function mediaSession(mode: 'holds' | 'stops'): MediaSessionActivities {
  return {
    async holdMedia() {
      const context = Context.current();
      context.heartbeat();
      if (mode === 'stops') {
        await sleep(500);
        throw ApplicationFailure.nonRetryable('the media gateway stopped', 'MediaGatewayStopped');
      }
      while (!context.cancellationSignal.aborted) {
        context.heartbeat();
        await sleep(200);
      }
    },
  };
}

async function withCall<T>(
  mode: 'holds' | 'stops',
  fn: (env: TestWorkflowEnvironment, callId: string, gateway: GatewayStandIn) => Promise<T>,
): Promise<T> {
  return stack.withEnvironment(async (env) => {
    const gateway = new GatewayStandIn(`${stack.settings.taskQueuePrefix}media@gateway-${Math.random()}`);
    const media = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: gateway.taskQueue,
      activities: mediaSession(mode),
    });
    const workers = [...(await stack.workers(env, { ports: { carrier: gateway } })), media];
    const answer = await answerIncomingPhoneCall(
      { em: stack.db.orm.em.fork() as EntityManager, temporal: env.client, settings: stack.settings },
      { to: ada.number, from: '+4791230000' },
    );
    assert.ok(answer.answered);
    return runWorkers(workers, () => fn(env, answer.callId, gateway));
  });
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 300 && !check(); i++) await sleep(50);
  assert.ok(check(), what);
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

  test('speech that cannot be recognised: the agent apologises and the call ends agent_error', async () => {
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
