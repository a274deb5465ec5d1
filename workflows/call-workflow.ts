import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  ActivityFailure,
  condition,
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
import { CallStatusKey } from '../lib/search-attributes.js';
import {
  type CallerSpeech,
  type CallProgress,
  type CallStep,
  type CarrierCallback,
  callerSpeechSignal,
  callProgressQuery,
  carrierCallbackSignal,
} from './call-messages.js';
import { speakingSeconds } from './speech-timing.js';

// One workflow per call, both directions: workflow id `call-<callId>`, task queue `calls`.
//
//   dial ─ ringing ─┬─ answered ─ agent joins ─ conversation ─ hang-up ─ analysis ─ completed
//                   └─ busy / declined / not connected / ring timeout ─ failed
//
// Calls that come in (inbound phone, web) have nothing to dial: they are picked up
// (`answerIncoming`), then continue at "agent joins".

export interface CallWorkflowInput {
  callId: string;
  workspaceId: string;
  agentId: string | null;
  direction: CallDirection;
  channel: CallChannel;
  from: string | null;
  to: string | null;
  ringTimeoutSeconds: number;
  /** True for a call that reaches us already answered: there is nothing to dial. */
  answered: boolean;
  /** Task queue of event delivery (`taskQueues().webhooks`). */
  eventsTaskQueue: string;
}

export interface CallWorkflowResult {
  status: CallStatus;
  endReason: string;
  durationSeconds: number | null;
}

/** Failure types the call activities throw that no retry can fix (activities/calls.ts). */
const NON_RETRYABLE = ['CallNotFound', 'AnalysisRejectedError'];

/** Database writes: quick, retried until the database is back. */
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

/** Requests to the carrier and the voice runtime during a live call: a caller will not wait long. */
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

/** The analysis may call a language model: longer attempts that heartbeat, retried with backoff. */
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
  });

  const step = (next: CallStep) => {
    progress.step = next;
  };
  const setStatus = (status: CallStatus) => {
    progress.status = status;
    upsertSearchAttributes([{ key: CallStatusKey, value: status }]);
  };
  const now = () => new Date().toISOString();

  async function emit(type: CallEventType, extra?: CallEventExtra) {
    const { eventId } = await records.emitCallEvent({ callId, type, occurredAt: now(), extra });
    try {
      // Delivery runs on its own: the call never waits for webhooks.
      await startChild('eventFanOutWorkflow', {
        args: [{ eventId }],
        workflowId: `event-fanout-${eventId}`,
        taskQueue: input.eventsTaskQueue,
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  }

  async function fail(reason: 'busy' | 'no_answer' | 'not_connected'): Promise<CallWorkflowResult> {
    progress.endReason = reason;
    await records.markFailed({ callId, reason, endedAt: now() });
    setStatus('failed');
    step('failed');
    await emit('call.failed', { reason });
    return { status: 'failed', endReason: reason, durationSeconds: null };
  }

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
      if (!(error instanceof ActivityFailure)) throw error;
      return fail('not_connected');
    }
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
      await live.releaseCall({ callId, reason: 'cancel' }).catch(() => undefined);
      return fail('no_answer');
    }
    if (answer === 'busy') return fail('busy');
    if (answer !== 'answered') return fail('not_connected');
  } else {
    // A call that came in (inbound phone or web): pick it up, the carrier connects the caller.
    try {
      await live.answerIncoming({ callId });
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      return fail('not_connected');
    }
  }

  // Connected: the call is on, the agent joins with its opening line (or listens first).
  await records.markAnswered({ callId, answeredAt: now() });
  setStatus('in_progress');
  await emit('call.started');
  step('connecting_agent');
  let lastAgentLine = await live.connectAgent({ callId });
  let nextIndex = lastAgentLine ? 1 : 0;
  progress.transcriptLines = nextIndex;
  step('in_conversation');

  let endReason = 'caller_hangup';
  let durationSeconds = 0;
  for (;;) {
    const someoneSpoke = await condition(() => heard.length > 0 || hungUp !== null, SILENCE_TIMEOUT);
    if (!someoneSpoke) {
      endReason = 'silence_timeout';
      await live.releaseCall({ callId, reason: 'hang_up' }).catch(() => undefined);
      durationSeconds = agentFinishedAt(lastAgentLine);
      break;
    }
    if (hungUp !== null) {
      const unanswered = heard.splice(0).map((speech) => lineOf(speech, nextIndex++));
      await records.recordCallerLines({ callId, lines: unanswered });
      progress.transcriptLines = nextIndex;
      durationSeconds = (hungUp as { atSeconds: number }).atSeconds;
      break;
    }
    const speech = heard.shift()!;
    const turn = await live.agentTurn({
      callId,
      heard: lineOf(speech, nextIndex),
      answerAtSeconds: speech.endedAtSeconds,
    });
    lastAgentLine = turn.line;
    nextIndex = turn.line.index + 1;
    progress.transcriptLines = nextIndex;
    if (turn.next.kind === 'hang_up') {
      endReason = 'agent_hangup';
      await live.releaseCall({ callId, reason: 'hang_up' });
      durationSeconds = agentFinishedAt(lastAgentLine);
      break;
    }
    if (turn.next.kind === 'transfer') {
      endReason = 'transferred';
      await live.transferCall({ callId, to: turn.next.to });
      await emit('call.transferred', { transferred_to: turn.next.to });
      durationSeconds = agentFinishedAt(lastAgentLine);
      break;
    }
  }

  // Over: record how it ended, then the analysis; only then is the call completed.
  step('hanging_up');
  progress.endReason = endReason;
  await records.markEnded({
    callId,
    endedAt: now(),
    durationSeconds: Math.round(durationSeconds),
    endReason,
  });
  step('analyzing');
  let result: Awaited<ReturnType<CallActivities['analyzeCall']>>;
  try {
    result = await analysis.analyzeCall({ callId });
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    // The configured analyzer gave up (or refused): the built-in transcript rules still answer.
    result = await analysis.analyzeCall({ callId, fallback: true });
  }
  await records.completeCall({ callId, analysis: result, analyzedAt: now() });
  setStatus('completed');
  await emit('call.completed');
  step('completed');
  return { status: 'completed', endReason, durationSeconds: Math.round(durationSeconds) };
}

function lineOf(speech: CallerSpeech, index: number): TranscriptLine {
  return { index, role: 'caller', text: speech.text, offsetSeconds: speech.startedAtSeconds };
}

/** When the agent's last line ends, in simulated seconds since the answer. */
function agentFinishedAt(line: TranscriptLine | null): number {
  return line ? line.offsetSeconds + speakingSeconds(line.text) : 0;
}
