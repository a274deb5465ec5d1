import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Context } from '@temporalio/activity';
import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { ApplicationFailure, WorkflowIdReusePolicy } from '@temporalio/common';
import { Call, type CallEventType, type CallStatus, TranscriptEntry } from '../db/entities/index.js';
import type { Orm } from '../db/orm.js';
import type { CallAnalysisResult, CallAnalyzer } from '../lib/analysis/analyzer.js';
import { TranscriptAnalyzer } from '../lib/analysis/transcript-analyzer.js';
import { type CallEventExtra, writeCallEventOnce } from '../lib/calls/call-events.js';
import { conversationContextOf } from '../lib/calls/conversation-context.js';
import type { TranscriptLine } from '../lib/calls/transcript.js';
import type { Carrier } from '../lib/carrier/carrier.js';
import type { Logger } from '../lib/logger.js';
import type { AgentTurnLatency } from '../lib/temporal/call-messages.js';
import { RUNS_AS_ACTIVITY } from '../lib/temporal/failure-types.js';
import {
  EVENT_FAN_OUT_WORKFLOW,
  type EventFanOutWorkflow,
  eventFanOutWorkflowId,
} from '../lib/temporal/workflow-contracts.js';
import { eventFanOutMetadata } from '../lib/temporal/workflow-metadata.js';
import { apologyLine } from '../lib/voice-runtime/apology.js';
import {
  type AgentAction,
  type VoiceRuntime,
  VoiceRuntimeError,
} from '../lib/voice-runtime/voice-runtime.js';
import { heartbeating } from './heartbeat.js';

// The call workflow's steps that touch the world: the database, the carrier, the voice runtime
// and the analysis. Every one is safe to retry: rows are written with unique keys or
// conditional updates, and the carrier ignores what it already did.

export interface CallActivityDeps {
  orm: Orm;
  carrier: Carrier;
  voiceRuntime: VoiceRuntime;
  analyzer: CallAnalyzer;
  /** The service's log, for each agent turn's latency (`agent turn`); none: not logged. */
  logger?: Logger;
}

/** Failure types of the voice runtime (activities/calls.ts), as the workflow history shows them. */
export const VOICE_RUNTIME_UNAVAILABLE = 'VoiceRuntimeUnavailable';
export const VOICE_RUNTIME_REJECTED = 'VoiceRuntimeRejected';

/** The event a status change writes in the same step (calls since patch `lean-call-2`). */
export interface CallEventToWrite {
  type: CallEventType;
  occurredAt: string;
  extra?: CallEventExtra;
  /** The fan-out workflow `event-fanout-<eventId>` is started on this task queue. */
  fanOutTaskQueue: string;
}

/** Refuses to run `port`'s step inside a workflow task (as a local activity) unless the port answers in process. */
function runsHere(port: { runsInProcess?: boolean }, step: string): void {
  if (Context.current().info.isLocal && !port.runsInProcess) {
    throw ApplicationFailure.nonRetryable(`${step} calls out; it runs as an activity`, RUNS_AS_ACTIVITY);
  }
}

/**
 * A runtime failure as Temporal should treat it: a passing trouble (429, 5xx, a timeout) is retried
 * by the activity's retry policy, after the `Retry-After` the endpoint asked for when it did; a
 * refusal (400, 401, 404) is not retried at all, so the call ends `agent_error` at once.
 */
function asActivityFailure(error: unknown): unknown {
  if (!(error instanceof VoiceRuntimeError)) return error;
  if (!error.retryable) return ApplicationFailure.nonRetryable(error.message, VOICE_RUNTIME_REJECTED);
  return ApplicationFailure.create({
    message: error.message,
    type: VOICE_RUNTIME_UNAVAILABLE,
    ...(error.retryAfterMs !== undefined ? { nextRetryDelay: error.retryAfterMs } : {}),
  });
}

export function createCallActivities(deps: CallActivityDeps) {
  const fork = () => deps.orm.em.fork() as EntityManager;
  const fallbackAnalyzer = new TranscriptAnalyzer();

  async function loadCall(em: EntityManager, callId: string): Promise<Call> {
    const call = await em.findOne(Call, { id: callId });
    if (!call) throw ApplicationFailure.nonRetryable(`call ${callId} does not exist`, 'CallNotFound');
    return call;
  }

  async function updateCall(callId: string, change: (call: Call) => void): Promise<void> {
    const em = fork();
    const call = await loadCall(em, callId);
    change(call);
    await em.flush();
  }

  async function loadTranscript(
    em: EntityManager,
    callId: string,
    below?: number,
  ): Promise<TranscriptLine[]> {
    const rows = await em.find(
      TranscriptEntry,
      below === undefined ? { call: callId } : { call: callId, index: { $lt: below } },
      { orderBy: { index: 'asc' } },
    );
    return rows.map(transcriptLineOf);
  }

  /** Inserts lines; a line already written by an earlier attempt stays as it is. */
  async function recordLines(callId: string, lines: TranscriptLine[]): Promise<void> {
    if (lines.length === 0) return;
    const values = lines.map(() => '(?, ?, ?, ?, ?, ?, now())').join(', ');
    await deps.orm.em.getConnection().execute(
      `insert into transcript_entries (id, call_id, index, role, text, offset_seconds, created_at) values ${values} on conflict (call_id, index) do nothing`,
      lines.flatMap((line) => [
        randomUUID(),
        callId,
        line.index,
        line.role,
        line.text,
        Math.round(line.offsetSeconds),
      ]),
    );
  }

  /** Writes the event once (with the call as it is now) and starts its fan-out workflow once. */
  async function emitEvent(callId: string, event: CallEventToWrite): Promise<string> {
    const { fanOutTaskQueue, ...row } = event;
    const eventId = await writeCallEventOnce(fork(), {
      callId,
      ...row,
      occurredAt: new Date(row.occurredAt),
    });
    await startEventFanOut(Context.current().client, {
      eventId,
      type: event.type,
      callId,
      taskQueue: fanOutTaskQueue,
    });
    return eventId;
  }

  // Every step heartbeats while it runs (activities/heartbeat.ts); the workflow sets the timeouts.
  return heartbeating({
    async dial(input: { callId: string; to: string; from: string | null; ringTimeoutSeconds: number }) {
      const callWorkflowId = Context.current().info.workflowExecution!.workflowId;
      await deps.carrier.dial({ ...input, callWorkflowId });
    },

    /** Picks up a call that came in (inbound phone or web): the carrier connects the caller. */
    async answerIncoming(input: { callId: string }) {
      const call = await loadCall(fork(), input.callId);
      const callWorkflowId = Context.current().info.workflowExecution!.workflowId;
      await deps.carrier.answer({
        callId: call.id,
        callWorkflowId,
        channel: call.channel,
        caller: call.fromNumber ?? call.fromLabel ?? null,
        farEnd: call.browserFarEnd ? 'browser' : 'simulator',
      });
    },

    async markRinging(input: { callId: string }) {
      await updateCall(input.callId, (call) => {
        if (call.status === 'queued') call.status = 'ringing';
      });
    },

    async markAnswered(input: { callId: string; answeredAt: string; event?: CallEventToWrite }) {
      await updateCall(input.callId, (call) => {
        call.status = 'in_progress';
        call.answeredAt ??= new Date(input.answeredAt);
        // The carrier (the simulator too) records every answered call from the moment it connects.
        call.hasRecording = true;
      });
      if (input.event) await emitEvent(input.callId, input.event);
    },

    /** The agent's first line (per the opening-line precedence) is written and played; null when it listens first. */
    async connectAgent(input: { callId: string }): Promise<TranscriptLine | null> {
      runsHere(deps.voiceRuntime, 'connectAgent');
      const call = await loadCall(fork(), input.callId);
      const text = await deps.voiceRuntime
        .openingLine(conversationContextOf(call), { signal: Context.current().cancellationSignal })
        .catch((error) => {
          throw asActivityFailure(error);
        });
      const line: TranscriptLine | null = text ? { index: 0, role: 'agent', text, offsetSeconds: 0 } : null;
      if (line) await recordLines(input.callId, [line]);
      await deps.carrier.connectAgent({
        callId: input.callId,
        opening: line && { index: 0, text: line.text },
      });
      return line;
    },

    /**
     * Writes what the person said, asks the voice runtime for the agent's answer, writes and plays
     * it. `line` is null when the agent only acted (a tool call without words). `latency` is the
     * turn's timing (also logged as `agent turn`). With `hangUpWithLastLine`, a line after which
     * the agent hangs up is played with the hang-up (`hungUp`: the far end is released).
     */
    async agentTurn(input: {
      callId: string;
      heard: TranscriptLine;
      /** When the agent starts answering: the end of what it heard, in simulated seconds. */
      answerAtSeconds: number;
      hangUpWithLastLine?: boolean;
    }): Promise<{
      line: TranscriptLine | null;
      next: AgentAction;
      latency?: AgentTurnLatency;
      hungUp?: boolean;
    }> {
      runsHere(deps.voiceRuntime, 'agentTurn');
      const em = fork();
      const call = await loadCall(em, input.callId);
      await recordLines(input.callId, [input.heard]);
      const transcript = await loadTranscript(em, input.callId, input.heard.index + 1);
      const index = input.heard.index + 1;
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      let firstSentenceMs: number | null = null;
      // Sentences come as soon as each is complete. The carrier port takes whole lines (the
      // simulated far end hears the line at once), so here the first one only marks the time a
      // streaming voice side could have started speaking; the line is played once it is whole and
      // stored, so a retried turn never plays two versions of it.
      const turn = await deps.voiceRuntime
        .respond(conversationContextOf(call), transcript, {
          signal: Context.current().cancellationSignal,
          onSentence: () => {
            firstSentenceMs ??= elapsed();
          },
        })
        .catch((error) => {
          throw asActivityFailure(error);
        });
      // One clock for the three: from the moment the runtime was asked (the runtime's own first
      // token time starts a moment later, so it never comes out after the whole answer).
      const answerMs = elapsed();
      const latency: AgentTurnLatency = {
        index,
        firstTokenMs: turn.timing ? turn.timing.firstTokenMs : answerMs,
        firstSentenceMs: firstSentenceMs ?? (turn.timing ? null : answerMs),
        answerMs,
      };
      if (turn.say) {
        // A retry after the line was written plays the stored line, so the far end hears one version.
        await recordLines(input.callId, [
          { index, role: 'agent', text: turn.say, offsetSeconds: input.answerAtSeconds },
        ]);
      }
      const stored = await em.fork().findOne(TranscriptEntry, { call: input.callId, index, role: 'agent' });
      const hungUp = Boolean(stored && input.hangUpWithLastLine && turn.next.kind === 'hang_up');
      if (stored) {
        await deps.carrier.say({
          callId: input.callId,
          index: stored.index,
          text: stored.text,
          ...(hungUp ? { hangUp: true } : {}),
        });
      }
      deps.logger?.info('agent turn', {
        callId: input.callId,
        ...latency,
        next: turn.next.kind,
        attempt: Context.current().info.attempt,
      });
      const line = stored ? transcriptLineOf(stored) : null;
      return hungUp ? { line, next: turn.next, latency, hungUp } : { line, next: turn.next, latency };
    },

    /**
     * The agent cannot go on (a live step failed past its budget): it says a short apology in its
     * language before the call is released. Written after every line already stored; a retry
     * finds the apology it wrote and plays that.
     */
    async apologize(input: {
      callId: string;
      index: number;
      offsetSeconds: number;
    }): Promise<TranscriptLine> {
      const em = fork();
      const call = await loadCall(em, input.callId);
      const text = apologyLine(call.agentSnapshot.language);
      const last = await em.findOne(TranscriptEntry, { call: input.callId }, { orderBy: { index: 'desc' } });
      const alreadySaid = last && last.role === 'agent' && last.text === text && last.index >= input.index;
      const index = alreadySaid ? last.index : Math.max(input.index, (last?.index ?? -1) + 1);
      const line: TranscriptLine = { index, role: 'agent', text, offsetSeconds: input.offsetSeconds };
      await recordLines(input.callId, [line]);
      await deps.carrier.say({ callId: input.callId, index, text });
      return alreadySaid ? transcriptLineOf(last) : line;
    },

    /** Lines heard after the last agent turn (the person spoke, then hung up). */
    async recordCallerLines(input: { callId: string; lines: TranscriptLine[] }) {
      await recordLines(input.callId, input.lines);
    },

    /**
     * Hands the call over, then records where to (and writes `event`, call.transferred, since
     * patch `lean-call-2`): a transfer the carrier refused is never recorded.
     */
    async transferCall(input: { callId: string; to: string; event?: CallEventToWrite }) {
      await loadCall(fork(), input.callId);
      await deps.carrier.transfer({ callId: input.callId, to: input.to });
      await updateCall(input.callId, (call) => {
        call.transferredTo = input.to;
      });
      if (input.event) await emitEvent(input.callId, input.event);
    },

    async releaseCall(input: { callId: string; reason: 'hang_up' | 'cancel' }) {
      await deps.carrier.release(input);
    },

    async markEnded(input: { callId: string; endedAt: string; durationSeconds: number; endReason: string }) {
      await updateCall(input.callId, (call) => {
        call.endedAt ??= new Date(input.endedAt);
        call.durationSeconds ??= input.durationSeconds;
        call.endReason ??= input.endReason;
      });
    },

    async markFailed(input: { callId: string; reason: string; endedAt: string; event?: CallEventToWrite }) {
      await updateCall(input.callId, (call) => {
        call.status = 'failed';
        call.endReason = input.reason;
        call.endedAt ??= new Date(input.endedAt);
      });
      if (input.event) await emitEvent(input.callId, input.event);
    },

    /** Reads the transcript and analyses it; `fallback` uses the built-in transcript rules. */
    async analyzeCall(input: { callId: string; fallback?: boolean }): Promise<CallAnalysisResult> {
      const analyzer = input.fallback ? fallbackAnalyzer : deps.analyzer;
      runsHere(analyzer, 'analyzeCall');
      const em = fork();
      const [transcript, call] = await Promise.all([
        loadTranscript(em, input.callId),
        em.findOneOrFail(Call, { id: input.callId }),
      ]);
      try {
        return await analyzer.analyze(transcript, { endReason: call.endReason ?? null });
      } catch (error) {
        if (error instanceof Error && error.name === 'AnalysisRejectedError') {
          throw ApplicationFailure.nonRetryable(error.message, 'AnalysisRejectedError');
        }
        throw error;
      }
    },

    async completeCall(input: {
      callId: string;
      analysis: CallAnalysisResult;
      analyzedAt: string;
      event?: CallEventToWrite;
    }) {
      await updateCall(input.callId, (call) => {
        call.status = 'completed' satisfies CallStatus;
        call.analysis ??= { ...input.analysis, created_at: input.analyzedAt };
      });
      if (input.event) await emitEvent(input.callId, input.event);
    },

    /**
     * Writes the event once per (call, type) and returns its id for the hand-off to delivery. With
     * `fanOutTaskQueue` it also starts the event's fan-out workflow there (`event-fanout-<eventId>`,
     * once: a retry finds it started); without, the call workflow starts it as its child.
     */
    async emitCallEvent(input: {
      callId: string;
      type: CallEventType;
      occurredAt: string;
      extra?: CallEventExtra;
      fanOutTaskQueue?: string;
    }): Promise<{ eventId: string }> {
      const { fanOutTaskQueue, callId, ...event } = input;
      if (fanOutTaskQueue !== undefined)
        return { eventId: await emitEvent(callId, { ...event, fanOutTaskQueue }) };
      return {
        eventId: await writeCallEventOnce(fork(), { ...input, occurredAt: new Date(input.occurredAt) }),
      };
    },
  });
}

/** Hands an event to delivery: its fan-out workflow, started once (delivery never holds up the call). */
async function startEventFanOut(
  client: Client,
  event: { eventId: string; type: CallEventType; callId: string; taskQueue: string },
): Promise<void> {
  try {
    await client.workflow.start<EventFanOutWorkflow>(EVENT_FAN_OUT_WORKFLOW, {
      args: [{ eventId: event.eventId }],
      workflowId: eventFanOutWorkflowId(event.eventId),
      taskQueue: event.taskQueue,
      ...eventFanOutMetadata(event),
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}

function transcriptLineOf(row: TranscriptEntry): TranscriptLine {
  return { index: row.index, role: row.role, text: row.text, offsetSeconds: row.offsetSeconds };
}

export type CallActivities = ReturnType<typeof createCallActivities>;
