import type { EntityManager } from '@mikro-orm/postgresql';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { AnsweredBy } from '../db/entities/index.js';
import type { Orm } from '../db/orm.js';
import { loadDialingCountries } from '../lib/accounts.js';
import { type ToolCallRow, writeToolCall } from '../lib/agent-tools/tool-call-rows.js';
import { type CallAnalysisResult, type CallAnalyzer, NO_PLAN_ANSWERS } from '../lib/analysis/analyzer.js';
import type { PlanAnswerer } from '../lib/analysis/plan-answerer.js';
import { TranscriptAnalyzer } from '../lib/analysis/transcript-analyzer.js';
import {
  type AgentTurnDeps,
  apologize,
  connectAgent,
  sayAgentLine,
  takeAgentTurn,
} from '../lib/calls/agent-turns.js';
import { type CallEventToWrite, emitCallEvent } from '../lib/calls/call-event-hand-off.js';
import {
  CallMissingError,
  loadCall,
  markAnswered,
  markCompleted,
  markEnded,
  markFailed,
  markRinging,
  recordTransfer,
} from '../lib/calls/call-status-changes.js';
import { checkDestination, type DialingCountries, describeRefusal } from '../lib/calls/destination-policy.js';
import type { TranscriptLine } from '../lib/calls/transcript.js';
import { keepSpokenPart, loadTranscript, recordLines } from '../lib/calls/transcript-rows.js';
import type { CallMedia, Carrier } from '../lib/carrier/carrier.js';
import type { Logger } from '../lib/logger.js';
import type { TurnsHandOver } from '../lib/media/media-control.js';
import { untilRecordingKept } from '../lib/recordings/kept-recording.js';
import type { RecordingStore } from '../lib/recordings/recording-store.js';
import { dropRecordingIfNotKept } from '../lib/recordings/retention.js';
import type { TransferReport } from '../lib/temporal/call-messages.js';
import { transferFailedLine } from '../lib/voice-runtime/transfer-failed.js';
import { type VoiceRuntime, VoiceRuntimeError } from '../lib/voice-runtime/voice-runtime.js';
import { holdLine, notReachedLine } from '../lib/voice-runtime/warm-transfer-lines.js';
import { heartbeating } from './heartbeat.js';

// The call workflow's steps that touch the world: the database, the carrier, the voice runtime
// and the analysis, each a call of lib/calls/. Every one is safe to retry: rows are written with
// unique keys or conditional updates, and the carrier ignores what it already did.

export type { CallEventToWrite };

export interface CallActivityDeps {
  orm: Orm;
  carrier: Carrier;
  voiceRuntime: VoiceRuntime;
  analyzer: CallAnalyzer;
  /** Answers an agent's analysis plan; null without a language model (the plan's fields stay null). */
  planAnswerer: PlanAnswerer | null;
  /** The recordings' store: a call event's `has_recording` is whether the call's recording is there. */
  recordings: RecordingStore;
  /** The service's log, for each agent turn's latency (`agent turn`); none: not logged. */
  logger?: Logger;
  /** DIALING_COUNTRIES: for workspaces without their own, when a transfer target is checked again. */
  dialingCountries: DialingCountries;
}

/** What a transfer came to; `not_allowed`: its target failed the check when used, nothing was dialled. */
export type TransferOutcome =
  | { transferred: true }
  | {
      transferred: false;
      failure: 'not_allowed' | 'refused' /** the agent's line to the caller */;
      say: string;
    }
  /**
   * A warm destination: nothing handed over yet. The caller hears the destination's `message`
   * while the person is rung, else `say` (the agent's line that they are being connected).
   */
  | { transferred: false; warm: { message: string | null; say: string } }
  /**
   * The gateway holding the call's audio bridges it (media/transfer-legs.ts): the workflow dials the
   * target as a leg of the call, warm (the caller hears `message` or `say`, the person a briefing)
   * or cold, and joins the two once the person answered.
   */
  | { transferred: false; bridge: { mode: 'cold' | 'warm'; message: string | null; say: string } }
  /**
   * Handed to a far end's side that tries the target and reports whether it answered (the SIP
   * side): the transfer stays `connecting` until the workflow has its report (`settleReportedTransfer`).
   */
  | { transferred: false; reported: true };

/** Failure types of the voice runtime (activities/calls.ts), as the workflow history shows them. */
export const VOICE_RUNTIME_UNAVAILABLE = 'VoiceRuntimeUnavailable';
export const VOICE_RUNTIME_REJECTED = 'VoiceRuntimeRejected';

/**
 * A failure as Temporal should treat it: a call that is gone, or a request the voice runtime or
 * the analyzer refused (400, 401, 404), is not retried at all (the call ends `agent_error` at
 * once); the voice runtime's passing trouble (429, 5xx, a timeout) is retried by the activity's
 * retry policy, after the `Retry-After` the endpoint asked for when it did.
 */
function asActivityFailure(error: unknown): unknown {
  if (error instanceof CallMissingError)
    return ApplicationFailure.nonRetryable(error.message, 'CallNotFound');
  if (error instanceof Error && error.name === 'AnalysisRejectedError') {
    return ApplicationFailure.nonRetryable(error.message, 'AnalysisRejectedError');
  }
  if (!(error instanceof VoiceRuntimeError)) return error;
  if (!error.retryable) return ApplicationFailure.nonRetryable(error.message, VOICE_RUNTIME_REJECTED);
  return ApplicationFailure.create({
    message: error.message,
    type: VOICE_RUNTIME_UNAVAILABLE,
    ...(error.retryAfterMs !== undefined ? { nextRetryDelay: error.retryAfterMs } : {}),
  });
}

/** Each activity's failures as asActivityFailure says. */
function failingAsTemporalExpects<T extends Record<string, (...args: never[]) => Promise<unknown>>>(
  activities: T,
): T {
  const wrapped = Object.entries(activities).map(([name, activity]) => [
    name,
    (...args: never[]) =>
      activity(...args).catch((error) => {
        throw asActivityFailure(error);
      }),
  ]);
  return Object.fromEntries(wrapped) as T;
}

export function createCallActivities(deps: CallActivityDeps) {
  const em = () => deps.orm.em.fork() as EntityManager;
  const fallbackAnalyzer = new TranscriptAnalyzer();
  const client = () => Context.current().client;
  const step = () => ({
    signal: Context.current().cancellationSignal,
    attempt: Context.current().info.attempt,
  });
  const turnDeps = (): AgentTurnDeps => ({ ...deps, em: em() });
  /** Writes `event` (when the step has one) once and starts its fan-out once. */
  const emit = async (callId: string, event: CallEventToWrite | undefined) => {
    if (event) await emitCallEvent(em(), client(), callId, event, deps.recordings);
  };

  // Every step heartbeats while it runs (activities/heartbeat.ts); the workflow sets the timeouts.
  return heartbeating(
    failingAsTemporalExpects({
      async dial(input: {
        callId: string;
        to: string;
        from: string | null;
        ringTimeoutSeconds: number;
        /** A transfer's leg: the call it is dialled for (lib/carrier/carrier.ts). */
        legOf?: string;
      }) {
        const callWorkflowId = Context.current().info.workflowExecution!.workflowId;
        // A call with audio answers where its media session is held (the workflow watches it).
        return deps.carrier.dial({ ...input, callWorkflowId });
      },

      /**
       * Picks up a call that came in (inbound phone or web): the carrier connects the caller. A call
       * with audio answers where its media session is held (the workflow watches it).
       */
      async answerIncoming(input: { callId: string }): Promise<CallMedia | undefined> {
        const call = await loadCall(em(), input.callId);
        return deps.carrier.answer({
          callId: call.id,
          callWorkflowId: Context.current().info.workflowExecution!.workflowId,
          channel: call.channel,
          caller: call.fromNumber ?? call.fromLabel ?? null,
          farEnd: call.browserFarEnd ? 'browser' : 'simulator',
          ...(call.testCaller
            ? { testCaller: { prompt: call.testCaller.prompt, maxTurns: call.testCaller.maxTurns } }
            : {}),
        });
      },

      async markRinging(input: { callId: string }) {
        await markRinging(em(), input.callId);
      },

      async markAnswered(input: {
        callId: string;
        answeredAt: string;
        answeredBy?: AnsweredBy;
        event?: CallEventToWrite;
      }) {
        await markAnswered(em(), input.callId, new Date(input.answeredAt), input.answeredBy);
        await emit(input.callId, input.event);
      },

      /** The agent's first line (per the opening-line precedence) is written and played; null when it listens first. */
      async connectAgent(input: { callId: string; listenFirst?: boolean }): Promise<TranscriptLine | null> {
        return connectAgent(turnDeps(), input.callId, step(), input.listenFirst);
      },

      /** What the person said, the agent's answer written and played (lib/calls/agent-turns.ts). */
      async agentTurn(input: Parameters<typeof takeAgentTurn>[1]) {
        return takeAgentTurn(turnDeps(), input, step());
      },

      /** A line the agent says while its tools run (`speak_while_waiting`). */
      async sayLine(input: { callId: string; line: TranscriptLine }) {
        await sayAgentLine(turnDeps(), input);
      },

      /** A tool call's row when the workflow knows its end first: the call ended, or its step gave up. */
      async recordToolCall(input: ToolCallRow) {
        await writeToolCall(em(), input);
      },

      /** The agent cannot go on: a short apology in its language before the call is released. */
      async apologize(input: {
        callId: string;
        index: number;
        offsetSeconds: number;
      }): Promise<TranscriptLine> {
        return apologize(turnDeps(), input);
      },

      /** Lines heard after the last agent turn (the person spoke, then hung up). */
      async recordCallerLines(input: { callId: string; lines: TranscriptLine[] }) {
        await recordLines(em(), input.callId, input.lines);
      },

      /** Barge-in: the agent's interrupted line keeps the part that was said (lib/calls/transcript-rows.ts). */
      async keepSpokenPart(input: { callId: string; index: number; spokenText: string }) {
        await keepSpokenPart(em(), input);
      },

      /**
       * Checks the target again as it is now (lib/calls/destination-policy.ts: the workspace's
       * dialing countries may have changed since it was set), hands the call over, then records
       * where to (and writes `event`, call.transferred): a transfer the carrier refused is never
       * recorded, and one whose target fails the check is never dialled.
       */
      async transferCall(input: {
        callId: string;
        to: string;
        event?: CallEventToWrite;
      }): Promise<TransferOutcome> {
        const db = em();
        const call = await loadCall(db, input.callId);
        const refusal = checkDestination(input.to, {
          dialingCountries: await loadDialingCountries(db, call.workspace, deps.dialingCountries),
          ownNumbers: [call.fromNumber, call.toNumber],
        });
        // A retried step keeps the transfer's start (the first attempt's), not its own.
        const tried = call.transfer?.to === input.to ? call.transfer : null;
        const startedAt = tried?.started_at ?? new Date().toISOString();
        // A warm destination: the workflow rings the person and briefs them before the caller is
        // handed over (workflows/call/warm-transfer.ts); a call whose audio a gateway holds is
        // joined to them there (the gateway answers `bridge`), else it is handed over cold.
        const destination = call.agentSnapshot.transferDestinations?.find((d) => d.number === input.to);
        const warm = destination?.mode === 'warm';
        const transfer = {
          to: input.to,
          mode: warm ? ('warm' as const) : ('cold' as const),
          started_at: startedAt,
        };
        if (refusal) {
          deps.logger?.warn('transfer target refused when used; nothing dialled', {
            callId: input.callId,
            to: input.to,
            reason: describeRefusal(input.to, refusal),
          });
          await recordTransfer(db, input.callId, {
            ...transfer,
            status: 'failed',
            failure: 'not_allowed',
            connected_at: null,
          });
          return {
            transferred: false,
            failure: 'not_allowed',
            say: transferFailedLine(call.agentSnapshot.language),
          };
        }
        await recordTransfer(db, input.callId, {
          ...transfer,
          status: 'connecting',
          failure: null,
          connected_at: null,
        });
        const waiting = { message: destination?.message ?? null, say: holdLine(call.agentSnapshot.language) };
        if (warm && !call.mediaGateway) return { transferred: false, warm: waiting };
        const handOver = await deps.carrier.transfer({
          callId: input.callId,
          to: input.to,
          mode: transfer.mode,
        });
        if (handOver === 'bridge') return { transferred: false, bridge: { mode: transfer.mode, ...waiting } };
        // Not bridged: the far end's side takes the call as it is, cold.
        if (warm) {
          await recordTransfer(db, input.callId, {
            ...transfer,
            mode: 'cold',
            status: 'connecting',
            failure: null,
            connected_at: null,
          });
        }
        if (handOver === 'reported') return { transferred: false, reported: true };
        if (handOver === 'refused') {
          deps.logger?.warn('transfer not made: its outcome could not be known, or the call is over', {
            callId: input.callId,
            to: input.to,
          });
          await recordTransfer(db, input.callId, {
            ...transfer,
            mode: 'cold',
            status: 'failed',
            failure: 'refused',
            connected_at: null,
          });
          return {
            transferred: false,
            failure: 'refused',
            say: transferFailedLine(call.agentSnapshot.language),
          };
        }
        await recordTransfer(db, input.callId, {
          ...transfer,
          mode: 'cold',
          status: 'connected',
          failure: null,
          connected_at: new Date().toISOString(),
        });
        await emit(input.callId, input.event);
        return { transferred: true };
      },

      /**
       * A reported transfer's outcome (telephony spec section 1): the target answered, so the
       * transfer is `connected` and `event` (call.transferred) written; or it was not reached, so it
       * is `failed` with why, and the answer is the agent's line to the caller, who is still on the call.
       */
      async settleReportedTransfer(input: {
        callId: string;
        to: string;
        report: TransferReport;
        event?: CallEventToWrite;
      }): Promise<{ say: string } | null> {
        const db = em();
        const call = await loadCall(db, input.callId);
        const transfer = {
          to: input.to,
          mode: call.transfer?.mode ?? ('cold' as const),
          started_at: call.transfer?.started_at ?? new Date().toISOString(),
        };
        if (!input.report.connected) {
          await recordTransfer(db, input.callId, {
            ...transfer,
            status: 'failed',
            failure: input.report.failure,
            connected_at: null,
          });
          return { say: notReachedLine(call.agentSnapshot.language) };
        }
        // A retried step keeps the first attempt's answer time.
        const connectedAt = call.transfer?.connected_at ?? new Date().toISOString();
        await recordTransfer(db, input.callId, {
          ...transfer,
          status: 'connected',
          failure: null,
          connected_at: connectedAt,
        });
        await emit(input.callId, input.event);
        return null;
      },

      async releaseCall(input: { callId: string; reason: 'hang_up' | 'cancel'; legOf?: string }) {
        await deps.carrier.release(input);
      },

      /** Hands the call's turns to the gateway holding its audio (`never` without one). */
      async handOverTurns(
        input: Parameters<NonNullable<Carrier['handOverTurns']>>[0],
      ): Promise<TurnsHandOver> {
        return (await deps.carrier.handOverTurns?.(input)) ?? 'never';
      },

      async markEnded(input: {
        callId: string;
        endedAt: string;
        durationSeconds: number;
        endReason: string;
      }) {
        await markEnded(em(), { ...input, endedAt: new Date(input.endedAt) });
      },

      async markFailed(input: { callId: string; reason: string; endedAt: string; event?: CallEventToWrite }) {
        await markFailed(em(), { ...input, endedAt: new Date(input.endedAt) });
        await dropRecordingIfNotKept(em(), deps.recordings, input.callId);
        await emit(input.callId, input.event);
      },

      /** Reads the transcript and analyses it; `fallback` uses the built-in transcript rules. */
      async analyzeCall(input: { callId: string; fallback?: boolean }): Promise<CallAnalysisResult> {
        const analyzer = input.fallback ? fallbackAnalyzer : deps.analyzer;
        const db = em();
        // What the call's end says for a fact (transferred, agent error) settles the outcome first.
        const [transcript, call] = await Promise.all([
          loadTranscript(db, input.callId),
          loadCall(db, input.callId),
        ]);
        const ending = { endReason: call.endReason ?? null };
        const plan = call.agentSnapshot.analysisPlan ?? null;
        // The fallback reads the transcript by rules alone: no model, so no plan answers.
        const [reading, answers] = await Promise.all([
          analyzer.analyze(transcript, ending),
          plan && !input.fallback && deps.planAnswerer
            ? deps.planAnswerer.answer({ callId: input.callId, transcript, ending, plan })
            : NO_PLAN_ANSWERS,
        ]);
        return { ...reading, ...answers };
      },

      async completeCall(input: {
        callId: string;
        analysis: CallAnalysisResult;
        analyzedAt: string;
        event?: CallEventToWrite;
      }) {
        // RECORDINGS_STORE=s3: the recording the gateway is uploading lands first (lib/recordings/kept-recording.ts).
        await untilRecordingKept(em(), deps.recordings, input.callId);
        await markCompleted(em(), input);
        // A workspace that keeps no recordings (retention 0): gone before call.completed says so.
        await dropRecordingIfNotKept(em(), deps.recordings, input.callId);
        await emit(input.callId, input.event);
      },
    }),
  );
}

export type CallActivities = ReturnType<typeof createCallActivities>;
