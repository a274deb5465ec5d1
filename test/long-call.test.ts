import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Context } from '@temporalio/activity';
import { type WorkflowHandle, WorkflowNotFoundError } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { answerIncomingPhoneCall } from '../lib/calls/incoming-calls.js';
import { recordLines } from '../lib/calls/transcript-rows.js';
import type { CallMedia, Carrier, SpeechPlayed } from '../lib/carrier/carrier.js';
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
import type { AgentTurn, VoiceRuntime } from '../lib/voice-runtime/voice-runtime.js';
import { CONVERSATION_HISTORY_EVENTS } from '../workflows/call/converse.js';
import { type AgentFixture, createAgentFixture, storedCall } from './support/call-fixtures.js';
import {
  runWorkers,
  startTimeSkippingCallStack,
  type TimeSkippingCallStack,
} from './support/time-skipping-call-stack.js';
import { until } from './support/wait-for.js';

// A 60-minute call on the time-skipping server (issue: turn latency at scale, "histories stay
// small"): 720 turns, five seconds apart in the lines' times (the media session is held the whole
// call, as a gateway holds it, so the server's clock does not skip), with an agent whose runtime calls
// out (each turn an activity: the larger history). The conversation goes on in new runs
// (continue-as-new) whenever a run's history reaches CONVERSATION_HISTORY_EVENTS, so no run comes
// near Temporal's limits; across the runs the transcript is complete and in order, no line twice
// (a caller line delivered again just after a new run began is still recognised), the progress
// query answers from the latest run, and the runs replay. The same with the turns taken by the
// media gateway (one `gatewayTurn` signal a turn): handed over once, kept across the runs.

const TURNS = 720;
const SECONDS_PER_TURN = 5;
/** A run may pass the limit by the turn that crossed it. */
const EVENTS_PER_TURN_AT_MOST = 20;

let stack: TimeSkippingCallStack;
let agent: AgentFixture;

before(async () => {
  stack = await startTimeSkippingCallStack({ prefix: 'longcall', logLevel: 'ERROR' });
  agent = await createAgentFixture(stack.db.orm, { firstMessage: 'Hello, this is Ada.' });
});
after(async () => {
  await stack?.close();
});

/** An agent that never wraps up, on a runtime that calls out (a language model's shape). */
const talker: VoiceRuntime = {
  async openingLine() {
    return 'Hello, this is Ada.';
  },
  async respond(_context, transcript): Promise<AgentTurn> {
    return {
      say: `Noted, line ${transcript.length}.`,
      next: { kind: 'continue' },
      timing: { firstTokenMs: 1, answerMs: 1 },
    };
  },
};

/** The gateway's side of the carrier: records the agent's lines (and, `takesTurns`, takes the call's turns). */
class Gateway implements Carrier {
  readonly said: number[] = [];
  /**
   * The lines said, each once: a step retried around a continue-as-new (its workflow task timed
   * out at the run's end) says its line again, which a far end ignores by its index.
   */
  get linesSaid(): number {
    return new Set(this.said).size;
  }
  handOvers = 0;
  constructor(
    readonly taskQueue: string,
    private readonly takesTurns = false,
  ) {}
  async handOverTurns(): Promise<TurnsHandOver> {
    if (!this.takesTurns) return 'never';
    this.handOvers++;
    return 'taken';
  }
  async dial(): Promise<undefined> {
    throw new Error('not dialed here');
  }
  async answer(): Promise<CallMedia> {
    return { taskQueue: this.taskQueue };
  }
  async connectAgent(request: { opening: { index: number } | null }): Promise<void> {
    if (request.opening) this.said.push(request.opening.index);
  }
  async say(request: { index: number }): Promise<SpeechPlayed> {
    this.said.push(request.index);
    return { firstAudioAt: Date.now() };
  }
  async transfer(): Promise<undefined> {
    return undefined;
  }
  async release(): Promise<void> {}
}

/**
 * The media session, asked for by each run: held while the run lasts (a session that ends is the
 * caller gone, and ends the call), until the run's end cancels it; the runs that asked are counted.
 */
let mediaSessionsHeld = 0;
const holds: MediaSessionActivities = {
  async holdMedia() {
    const context = Context.current();
    mediaSessionsHeld++;
    while (!context.cancellationSignal.aborted) {
      context.heartbeat();
      await sleep(200);
    }
  },
};

/**
 * The gateway's delivery of a line (media/workflow-outbox.ts retries it): the time-skipping server
 * answers a signal sent as a run continues as new "Completed workflow" for a moment.
 */
async function signalLatestRun(handle: WorkflowHandle, line: CallerSpeech): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await handle.signal(callerSpeechSignal, line);
      return;
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError) || attempt === 20) throw error;
      await sleep(100);
    }
  }
}

const speech = (utterance: number): CallerSpeech => ({
  utterance,
  text: `Caller line ${utterance}.`,
  startedAtSeconds: utterance * SECONDS_PER_TURN + 1,
  endedAtSeconds: utterance * SECONDS_PER_TURN + 3,
});

/** Until the workflow's record has `lines` transcript lines (it handled the turns sent so far). */
async function kept(handle: WorkflowHandle, lines: number): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if ((await handle.query(callProgressQuery)).transcriptLines >= lines) return;
    await sleep(100);
  }
  assert.fail(`the workflow did not keep ${lines} lines`);
}

/** Every run of the workflow, first to last, with its history. */
async function runsOf(
  handle: WorkflowHandle,
  client: { workflow: { getHandle(id: string, runId?: string): WorkflowHandle } },
) {
  const runs = [];
  let runId: string | undefined;
  for (;;) {
    const history = await client.workflow.getHandle(handle.workflowId, runId).fetchHistory();
    runs.unshift(history);
    const previous = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
    if (!previous) return runs;
    runId = previous;
  }
}

/**
 * Until a signal sent after `before` was handled: its run's history grew by the signal and a
 * completed workflow task (4 events), or a new run began. From the server (no replay, unlike a
 * query), so it can be asked every turn.
 */
async function handled(
  handle: WorkflowHandle,
  before: { runId: string; historyLength: number },
): Promise<void> {
  await until(async () => {
    const now = await handle.describe();
    return now.runId !== before.runId || now.historyLength >= before.historyLength + 4;
  }, 'the turn handled');
}

/** The turn `turn` as the gateway takes it: both lines written, then the `gatewayTurn` signal. */
async function gatewayTakes(handle: WorkflowHandle, callId: string, turn: number): Promise<GatewayTurn> {
  const heard = {
    index: 1 + 2 * turn,
    role: 'caller' as const,
    text: `Caller line ${turn}.`,
    offsetSeconds: turn * SECONDS_PER_TURN + 1,
  };
  const line = {
    index: heard.index + 1,
    role: 'agent' as const,
    text: `Noted, line ${heard.index + 1}.`,
    offsetSeconds: turn * SECONDS_PER_TURN + 3,
  };
  await recordLines(stack.db.orm.em.fork() as EntityManager, callId, [heard, line]);
  const taken: GatewayTurn = {
    utterance: turn,
    heard,
    heardUntilSeconds: turn * SECONDS_PER_TURN + 3,
    result: {
      line,
      next: { kind: 'continue' },
      latency: { index: line.index, firstTokenMs: 1, firstSentenceMs: 1, answerMs: 1 },
    },
  };
  await handle.signal(gatewayTurnSignal, taken);
  return taken;
}

describe('a 60-minute call', { timeout: 600_000 }, () => {
  for (const turnsIn of ['the workflow', 'the gateway'] as const) {
    test(`goes on in new runs: every run stays small, the transcript is whole, no line twice (turns in ${turnsIn})`, {
      timeout: 600_000,
    }, async () => {
      mediaSessionsHeld = 0;
      await stack.withEnvironment(async (env) => {
        const gateway = new Gateway(
          `${stack.settings.taskQueuePrefix}media@long-call-${turnsIn.slice(4)}`,
          turnsIn === 'the gateway',
        );
        const media = await Worker.create({
          connection: env.nativeConnection,
          taskQueue: gateway.taskQueue,
          activities: holds,
        });
        const workers = [
          ...(await stack.workers(env, { ports: { carrier: gateway, voiceRuntime: talker } })),
          media,
        ];
        const answer = await answerIncomingPhoneCall(
          { em: stack.db.orm.em.fork() as EntityManager, temporal: env.client, settings: stack.settings },
          { to: agent.number, from: '+4791230060' },
        );
        assert.ok(answer.answered);
        const handle = env.client.workflow.getHandle(callWorkflowId(answer.callId));
        await runWorkers(workers, async () => {
          await until(() => gateway.said.length === 1, 'the opening line');
          let runId = (await handle.describe()).runId;
          let redelivered = 0;
          for (let turn = 0; turn < TURNS; turn++) {
            if (turnsIn === 'the workflow') {
              await signalLatestRun(handle, speech(turn));
              await until(() => gateway.linesSaid === turn + 2, `the agent's answer to line ${turn}`);
            } else {
              if (turn === 0) await until(() => gateway.handOvers === 1, 'the turns handed over');
              // Turns come one after the other, as a gateway's do: each handled (its workflow task
              // completed) before the next is sent.
              const before = await handle.describe();
              await gatewayTakes(handle, answer.callId, turn);
              await handled(handle, before);
            }
            const current = (await handle.describe()).runId;
            if (current !== runId) {
              // A new run: the gateway's retry of the line (or turn) just handled is recognised there too.
              runId = current;
              if (turnsIn === 'the workflow') await signalLatestRun(handle, speech(turn));
              else await gatewayTakes(handle, answer.callId, turn);
              redelivered++;
            }
          }
          if (turnsIn === 'the gateway') {
            assert.equal(gateway.handOvers, 1, 'the turns stayed with the gateway across the runs');
            assert.deepEqual(gateway.said, [0], 'the workflow said only the opening');
          }
          await kept(handle, 1 + 2 * TURNS);
          const progress = await handle.query(callProgressQuery);
          assert.equal(progress.transcriptLines, 1 + 2 * TURNS, 'the latest run knows every line');
          assert.equal(progress.step, 'in_conversation');
          assert.ok(redelivered >= 1, 'the call went on in a new run');
          const latest = await handle.describe();
          assert.deepEqual(
            [latest.searchAttributes.CallStatus, latest.searchAttributes.AgentId],
            [['in_progress'], [agent.agentId]],
            'the search attributes went along',
          );
          await handle.signal(carrierCallbackSignal, {
            type: 'hung_up',
            atSeconds: TURNS * SECONDS_PER_TURN,
          });
          const result = (await handle.result()) as CallWorkflowResult;
          assert.deepEqual([result.status, result.endReason], ['completed', 'caller_hangup']);
          assert.ok(result.durationSeconds! >= 3590, `${result.durationSeconds} s`);
        });

        const { call, transcript, events } = await storedCall(stack.db.orm, answer.callId);
        assert.equal(call.status, 'completed');
        assert.equal(transcript.length, 1 + 2 * TURNS);
        assert.deepEqual(
          transcript.map((line) => line.index),
          transcript.map((_, i) => i),
          'every line once, in order',
        );
        for (let turn = 0; turn < TURNS; turn++) {
          assert.equal(transcript[1 + 2 * turn].text, `Caller line ${turn}.`);
          assert.equal(transcript[2 + 2 * turn].role, 'agent');
        }
        assert.deepEqual(
          events
            .map((event) => event.type)
            .filter((type) => type === 'call.started' || type === 'call.completed'),
          ['call.started', 'call.completed'],
          'one start and one end for the whole call',
        );

        const runs = await runsOf(handle, env.client);
        // At 5 to 6 events a turn, 720 turns are over 3,600 events: at least two runs.
        assert.ok(runs.length >= 2, `${runs.length} runs`);
        assert.equal(mediaSessionsHeld, runs.length, 'each run holds the media session again');
        for (const run of runs) {
          const length = run.events?.length ?? 0;
          assert.ok(
            length <= CONVERSATION_HISTORY_EVENTS + EVENTS_PER_TURN_AT_MOST,
            `a run of ${length} events`,
          );
        }
        await stack.assertReplays(
          'long-call',
          runs.map((history) => ({ workflowId: handle.workflowId, history })),
        );
      });
    });
  }
});
