import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  ActivityFailure,
  condition,
  isCancellation,
  log,
  ParentClosePolicy,
  proxyActivities,
  setHandler,
  startChild,
  upsertSearchAttributes,
  WorkflowIdReusePolicy,
} from '@temporalio/workflow';
import type { CallActivities } from '../activities/calls.js';
import type { CallChannel, CallDirection, CallEventType, CallStatus } from '../db/entities/index.js';
import type { CallEventExtra } from '../lib/calls/call-events.js';
import type { TranscriptLine } from '../lib/calls/transcript.js';
import {
  type CallerSpeech,
  type CallProgress,
  type CallStep,
  type CarrierCallback,
  callerSpeechSignal,
  callProgressQuery,
  carrierCallbackSignal,
} from '../lib/temporal/call-messages.js';
import { CallStatusKey } from '../lib/temporal/search-attributes.js';
import {
  type CallWorkflowInput,
  type CallWorkflowResult,
  EVENT_FAN_OUT_WORKFLOW,
  type EventFanOutWorkflow,
  eventFanOutWorkflowId,
} from '../lib/temporal/workflow-contracts.js';
import { speakingSeconds } from './speech-timing.js';

// One workflow per call, both directions: workflow id `call-<callId>`, task queue `calls`.
//
//   dial ─ ringing ─┬─ answered ─ agent joins ─ conversation ─ hang-up ─ analysis ─ completed
//                   └─ busy / declined / not connected / ring timeout ─ failed
//
// Calls that come in (inbound phone, web) have nothing to dial: they are picked up
// (`answerIncoming`), then continue at "agent joins".
//
// A call is never left unfinished: a live step that fails past its retry budget ends an answered
// call `agent_error` (still analysed and completed), and a last-resort handler around the whole
// call finishes it whatever else fails (docs/calls.md, "Retry budgets").

/** Failure types the call activities throw that no retry can fix (activities/calls.ts). */
const NON_RETRYABLE = ['CallNotFound', 'AnalysisRejectedError'];

// Retry budgets. The database writes are idempotent (unique keys, conditional updates), so they
// are retried until the database is back, however long it takes. A PostgreSQL restart (about
// 30 s) must never end a call early: every step that touches the database survives at least that.

/** Database writes: quick, retried until the database is back (no attempt limit). */
const records = proxyActivities<CallActivities>({
  startToCloseTimeout: '10 seconds',
  heartbeatTimeout: '5 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    nonRetryableErrorTypes: NON_RETRYABLE,
  },
});

/** Requests to the carrier only (dial, release) during a live call: a caller will not wait long. */
const live = proxyActivities<CallActivities>({
  startToCloseTimeout: '15 seconds',
  heartbeatTimeout: '5 seconds',
  retry: {
    initialInterval: '500 milliseconds',
    backoffCoefficient: 2,
    maximumInterval: '5 seconds',
    maximumAttempts: 5,
    nonRetryableErrorTypes: NON_RETRYABLE,
  },
});

/**
 * Live-call steps that also read or write the database (answerIncoming, connectAgent, agentTurn,
 * transferCall): attempts every 5 s at most, without an attempt limit, for up to 75 s in all. That
 * outlasts a 30 s database outage even when the attempt running as it ends hangs for its whole
 * 15 s (30 + 15 + 5 = 50 s), yet still ends a call whose agent truly cannot go on within about a
 * minute and a quarter (the call then ends `agent_error`, or `not_connected` before the answer).
 */
const liveWithDatabase = proxyActivities<CallActivities>({
  startToCloseTimeout: '15 seconds',
  scheduleToCloseTimeout: '75 seconds',
  heartbeatTimeout: '5 seconds',
  retry: {
    initialInterval: '500 milliseconds',
    backoffCoefficient: 2,
    maximumInterval: '5 seconds',
    nonRetryableErrorTypes: NON_RETRYABLE,
  },
});

/**
 * The analysis may call a language model: longer attempts that heartbeat, retried with backoff
 * (about 62 s of waits over 6 attempts, so a 30 s database outage does not exhaust it either).
 * When it gives up, the built-in transcript rules answer on `records` (they only read the database).
 */
const analysis = proxyActivities<CallActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '20 seconds',
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 6,
    nonRetryableErrorTypes: NON_RETRYABLE,
  },
});

/** Longest the agent waits for the other person to say something before it ends the call. */
const SILENCE_TIMEOUT = '10 minutes';

/**
 * `end_reason` of an answered call whose agent could not go on: its runtime, the carrier's media
 * or the service's own storage failed past the retry budget of a live step (or something failed
 * unexpectedly). The call is still completed, with an analysis and `call.completed`.
 */
const AGENT_ERROR = 'agent_error';

type FailReason = 'busy' | 'no_answer' | 'not_connected';

/** A step failed for good (its retries ran out or it cannot be retried); not a cancellation. */
function failedForGood(error: unknown): error is ActivityFailure {
  return error instanceof ActivityFailure && !isCancellation(error);
}

export async function callWorkflow(input: CallWorkflowInput): Promise<CallWorkflowResult> {
  const { callId } = input;
  const progress: CallProgress = {
    step: input.answered ? 'connecting_agent' : 'dialing',
    status: 'queued',
    transcriptLines: 0,
    lastCarrierCallback: null,
    endReason: null,
  };
  const callbacks: CarrierCallback[] = [];
  const heard: CallerSpeech[] = [];
  const utterancesSeen = new Set<number>();
  let hungUp: { atSeconds: number } | null = null;
  /** End of the last thing the person said, in simulated seconds since the answer. */
  let heardUntil = 0;

  setHandler(callProgressQuery, () => progress);
  setHandler(carrierCallbackSignal, (callback) => {
    progress.lastCarrierCallback = callback.type;
    if (callback.type === 'hung_up') hungUp ??= { atSeconds: callback.atSeconds };
    else callbacks.push(callback);
  });
  setHandler(callerSpeechSignal, (speech) => {
    if (utterancesSeen.has(speech.utterance)) return;
    utterancesSeen.add(speech.utterance);
    heard.push(speech);
    heardUntil = Math.max(heardUntil, speech.endedAtSeconds);
  });

  // How far the call got, for the endings below (and the last-resort handler).
  /** The far end was reached: a dial placed, or a call that came in picked up. */
  let farEndReached = false;
  /** The carrier reported the far end connected (or the call came in connected). */
  let connected = false;
  /** `markAnswered` is stored: from here on the call ends `completed`. */
  let answered = false;
  let failedWith: FailReason | null = null;
  let ended: { endReason: string; durationSeconds: number } | null = null;
  let lastAgentLine: TranscriptLine | null = null;
  let nextIndex = 0;

  const step = (next: CallStep) => {
    progress.step = next;
  };
  const setStatus = (status: CallStatus) => {
    progress.status = status;
    upsertSearchAttributes([{ key: CallStatusKey, value: status }]);
  };
  const now = () => new Date().toISOString();
  /** Simulated seconds since the answer until the last line anyone said. */
  const spokenSoFar = () => Math.max(agentFinishedAt(lastAgentLine), heardUntil, hungUp?.atSeconds ?? 0);

  async function emit(type: CallEventType, extra?: CallEventExtra) {
    const { eventId } = await records.emitCallEvent({ callId, type, occurredAt: now(), extra });
    try {
      // Delivery runs on its own: the call never waits for webhooks.
      await startChild<EventFanOutWorkflow>(EVENT_FAN_OUT_WORKFLOW, {
        args: [{ eventId }],
        workflowId: eventFanOutWorkflowId(eventId),
        taskQueue: input.eventsTaskQueue,
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  }

  /** Ends the far end from our side, best effort: a carrier that cannot be reached does not stop the call from ending. */
  async function release(reason: 'hang_up' | 'cancel'): Promise<void> {
    try {
      await live.releaseCall({ callId, reason });
    } catch (error) {
      if (!failedForGood(error)) throw error;
    }
  }

  async function fail(reason: FailReason): Promise<CallWorkflowResult> {
    failedWith = reason;
    progress.endReason = reason;
    await records.markFailed({ callId, reason, endedAt: now() });
    setStatus('failed');
    step('failed');
    await emit('call.failed', { reason });
    return { status: 'failed', endReason: reason, durationSeconds: null };
  }

  /** Over: record how it ended (once), then the analysis; only then is the call completed. */
  async function complete(endReason: string, durationSeconds: number): Promise<CallWorkflowResult> {
    if (ended === null) {
      step('hanging_up');
      progress.endReason = endReason;
      await records.markEnded({
        callId,
        endedAt: now(),
        durationSeconds: Math.round(durationSeconds),
        endReason,
      });
      ended = { endReason, durationSeconds: Math.round(durationSeconds) };
    }
    const how = ended;
    step('analyzing');
    let result: Awaited<ReturnType<CallActivities['analyzeCall']>>;
    try {
      result = await analysis.analyzeCall({ callId });
    } catch (error) {
      if (!failedForGood(error)) throw error;
      // The configured analyzer gave up (or refused): the built-in transcript rules still answer.
      // They only read the transcript, so they are retried like a database write.
      result = await records.analyzeCall({ callId, fallback: true });
    }
    await records.completeCall({ callId, analysis: result, analyzedAt: now() });
    setStatus('completed');
    await emit('call.completed');
    step('completed');
    return { status: 'completed', endReason: how.endReason, durationSeconds: how.durationSeconds };
  }

  /**
   * A live step failed past its retry budget: the agent cannot go on. The far end is released,
   * what the person said that the agent never answered is kept, and the call completes `agent_error`.
   */
  async function agentFailed(unanswered: CallerSpeech[]): Promise<CallWorkflowResult> {
    await release('hang_up');
    if (unanswered.length > 0) {
      const lines = unanswered.map((speech) => lineOf(speech, nextIndex++));
      await records.recordCallerLines({ callId, lines });
      progress.transcriptLines = nextIndex;
    }
    return complete(AGENT_ERROR, spokenSoFar());
  }

  /** The call from the dial (or pick-up) to its end. */
  async function run(): Promise<CallWorkflowResult> {
    // Dial and wait for the carrier's callbacks; the ring timeout is a durable timer.
    if (!input.answered) {
      try {
        await live.dial({
          callId,
          to: input.to!,
          from: input.from,
          ringTimeoutSeconds: input.ringTimeoutSeconds,
        });
      } catch (error) {
        if (!failedForGood(error)) throw error;
        return fail('not_connected');
      }
      farEndReached = true;
      let ringing = false;
      const outcome = async (): Promise<CarrierCallback['type'] | 'ring_timeout'> => {
        for (;;) {
          if (!(await condition(() => callbacks.length > 0, ringTimeoutLeft()))) return 'ring_timeout';
          const callback = callbacks.shift()!;
          if (callback.type !== 'ringing') return callback.type;
          if (!ringing) {
            ringing = true;
            step('ringing');
            await records.markRinging({ callId });
            setStatus('ringing');
          }
        }
      };
      const dialedAt = Date.now();
      const ringTimeoutLeft = () => Math.max(1, dialedAt + input.ringTimeoutSeconds * 1000 - Date.now());
      const answer = await outcome();
      if (answer === 'ring_timeout' || answer === 'declined') {
        await release('cancel');
        return fail('no_answer');
      }
      if (answer === 'busy') return fail('busy');
      if (answer !== 'answered') return fail('not_connected');
    } else {
      // A call that came in (inbound phone or web): pick it up, the carrier connects the caller.
      try {
        await liveWithDatabase.answerIncoming({ callId });
      } catch (error) {
        if (!failedForGood(error)) throw error;
        return fail('not_connected');
      }
      farEndReached = true;
    }
    connected = true;

    // Connected: the call is on, the agent joins with its opening line (or listens first).
    await records.markAnswered({ callId, answeredAt: now() });
    answered = true;
    setStatus('in_progress');
    await emit('call.started');
    step('connecting_agent');
    try {
      lastAgentLine = await liveWithDatabase.connectAgent({ callId });
    } catch (error) {
      if (!failedForGood(error)) throw error;
      return agentFailed(heard.splice(0));
    }
    nextIndex = lastAgentLine ? 1 : 0;
    progress.transcriptLines = nextIndex;
    step('in_conversation');

    for (;;) {
      const someoneSpoke = await condition(() => heard.length > 0 || hungUp !== null, SILENCE_TIMEOUT);
      if (!someoneSpoke) {
        await release('hang_up');
        return complete('silence_timeout', agentFinishedAt(lastAgentLine));
      }
      if (hungUp !== null) {
        const unanswered = heard.splice(0).map((speech) => lineOf(speech, nextIndex++));
        await records.recordCallerLines({ callId, lines: unanswered });
        progress.transcriptLines = nextIndex;
        return complete('caller_hangup', (hungUp as { atSeconds: number }).atSeconds);
      }
      const speech = heard.shift()!;
      let turn: Awaited<ReturnType<CallActivities['agentTurn']>>;
      try {
        turn = await liveWithDatabase.agentTurn({
          callId,
          heard: lineOf(speech, nextIndex),
          answerAtSeconds: speech.endedAtSeconds,
        });
      } catch (error) {
        if (!failedForGood(error)) throw error;
        return agentFailed([speech, ...heard.splice(0)]);
      }
      lastAgentLine = turn.line;
      nextIndex = turn.line.index + 1;
      progress.transcriptLines = nextIndex;
      if (turn.next.kind === 'hang_up') {
        await release('hang_up');
        return complete('agent_hangup', agentFinishedAt(lastAgentLine));
      }
      if (turn.next.kind === 'transfer') {
        try {
          await liveWithDatabase.transferCall({ callId, to: turn.next.to });
        } catch (error) {
          if (!failedForGood(error)) throw error;
          return agentFailed(heard.splice(0));
        }
        await emit('call.transferred', { transferred_to: turn.next.to });
        return complete('transferred', agentFinishedAt(lastAgentLine));
      }
    }
  }

  try {
    return await run();
  } catch (error) {
    // Cancelling the workflow (an operator's decision) is not a failure of the call.
    if (isCancellation(error)) throw error;
    // Last resort: whatever failed, the call is not left unfinished. Every step from here is on
    // `records` (retried until the database is back) or best effort, and repeats of what already
    // happened are harmless (events are written once per call and type, ended_at and the analysis once).
    log.error('call workflow failed; finishing the call', { callId, error: `${error}` });
    if (failedWith !== null) return fail(failedWith);
    if (!answered) {
      if (farEndReached) await release(connected ? 'hang_up' : 'cancel');
      return fail('not_connected');
    }
    if (ended === null) await release('hang_up');
    return complete(AGENT_ERROR, spokenSoFar());
  }
}

function lineOf(speech: CallerSpeech, index: number): TranscriptLine {
  return { index, role: 'caller', text: speech.text, offsetSeconds: speech.startedAtSeconds };
}

/** When the agent's last line ends, in simulated seconds since the answer. */
function agentFinishedAt(line: TranscriptLine | null): number {
  return line ? line.offsetSeconds + speakingSeconds(line.text) : 0;
}
