import type { EntityManager } from '@mikro-orm/postgresql';
import type { Call } from '../db/entities/index.js';
import {
  type AgentTurnResult,
  loadToolExchanges,
  type TurnStepDeps,
  takeAgentTurn,
} from '../lib/calls/agent-turns.js';
import { loadCall } from '../lib/calls/call-status-changes.js';
import { conversationContextOf } from '../lib/calls/conversation-context.js';
import type { TranscriptLine } from '../lib/calls/transcript.js';
import { keepSpokenPart, loadTranscript, recordLines } from '../lib/calls/transcript-rows.js';
import type { CallAudioCommand, MediaCommandAnswer, TakeTurns } from '../lib/media/media-control.js';
import { retryWithBackoff } from '../lib/retry-with-backoff.js';
import { type CallerSpeech, callerLineOf, type GatewayTurn } from '../lib/temporal/call-messages.js';
import { inSpan } from '../lib/tracing/tracing.js';
import { AnswersAhead } from '../lib/voice-runtime/answers-ahead.js';
import { VoiceRuntimeError } from '../lib/voice-runtime/voice-runtime.js';

// The turn loop where the audio is (docs/performance.md, "The turn loop in the gateway"). Once the
// call workflow hands a call's turns to its gateway (`take_turns`), the gateway answers the
// person itself: the same step as the workflow's `agentTurn` (lib/calls/agent-turns.ts: the
// person's line written beside the model's request, the answer spoken sentence by sentence as it
// streams, then written), with the call's own audio as its carrier, so no workflow task stands
// between the person and the agent's first words. Each turn then goes to the workflow (a
// `gatewayTurn` signal), which keeps the call's record and acts on what the answer asks. A turn
// that needs the workflow (the agent's tools, a transfer, a hang-up) or that fails hands the turns
// back. While the person pauses, before their turn has ended, the answer may be asked for ahead
// (`prepare`, lib/voice-runtime/answers-ahead.ts); the turn takes it if it asks the same.

/** A turn is retried on passing failures (the model's, the database's) for this long, as the workflow's step is. */
const TURN_BUDGET_MS = 75_000;
const FIRST_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 5_000;

export interface TurnLoopDeps extends Pick<TurnStepDeps, 'voiceRuntime' | 'carrier' | 'logger'> {
  callId: string;
  em: () => EntityManager;
  /** Aborts the turn in flight (the call's audio is over). */
  signal: AbortSignal;
  sleep?: (ms: number) => Promise<void>;
}

export class TurnLoop {
  /** The turns are the gateway's: the next line's index, and whether the model is shown stored tool calls. */
  private floor: { nextIndex: number; withStoredToolCalls: boolean } | null = null;
  /**
   * The call and its lines so far, read once when the turns are taken and kept by the turns
   * here (the workflow writes no line meanwhile): each turn asks the model without a read.
   */
  private known: { call: Call; lines: TranscriptLine[] } | null = null;
  private readonly ahead: AnswersAhead;
  /** A turn is being answered: an answer asked for ahead now would be a second request for it. */
  private answering = false;

  constructor(private readonly deps: TurnLoopDeps) {
    this.ahead = new AnswersAhead(deps.voiceRuntime);
    deps.signal.addEventListener('abort', () => this.ahead.drop(), { once: true });
  }

  /** Answers taken from ahead by a turn, and answers begun ahead and thrown away. */
  get answersAhead(): { taken: number; dropped: number } {
    return this.ahead.counts;
  }

  /** The gateway takes the call's turns now. */
  get holding(): boolean {
    return this.floor !== null;
  }

  /**
   * `take_turns`: taken unless an utterance the gateway sent has not reached the workflow yet
   * (`lastSent` past the workflow's `heardThrough`): the workflow answers that one first.
   */
  take(command: TakeTurns, lastSent: number): 'taken' | 'not_now' {
    if (lastSent > command.heardThrough) return 'not_now';
    this.ahead.drop();
    this.floor = { nextIndex: command.nextIndex, withStoredToolCalls: command.withStoredToolCalls };
    // The workflow may have written lines while it had the turns: read again at the next turn.
    this.known = null;
    return 'taken';
  }

  /**
   * The person paused with `speech` said, and their turn may end with it: the model is asked for
   * the answer now, as the turn would ask it. Nothing is written or spoken until a turn takes it.
   */
  async prepare(speech: Pick<CallerSpeech, 'text' | 'startedAtSeconds' | 'interrupted'>): Promise<void> {
    const floor = this.floor;
    if (!floor || this.deps.signal.aborted) return;
    const heard = callerLineOf(speech, floor.nextIndex);
    const known = await this.conversation(heard.index, speech.interrupted);
    const stored = floor.withStoredToolCalls ? await loadToolExchanges(this.deps.em(), this.deps.callId) : [];
    // The turns went back, or a turn is being answered or took them on, meanwhile: the answer
    // asked for now would not be taken.
    if (this.answering || this.floor !== floor || floor.nextIndex !== heard.index) return;
    this.ahead.begin(conversationContextOf(known.call), [...known.lines, heard], {
      ...(stored.length ? { toolExchanges: stored } : {}),
    });
  }

  /** The person went on speaking: the answer begun for their pause is thrown away. */
  dropPrepared(): void {
    this.ahead.drop();
  }

  /**
   * Answers `speech` (the turns are the gateway's); what the workflow is told of the turn. Traced as
   * one span per turn (`conversation turn`, lib/tracing/tracing.ts) from the end of the person's
   * speech, with its transcription as an event: the model's and the speech service's requests are
   * its children, so a slow turn shows where it waited.
   */
  turn(speech: CallerSpeech): Promise<GatewayTurn> {
    const timing = speech.speechTiming;
    const attributes = { 'call.id': this.deps.callId, 'turn.utterance': speech.utterance };
    return inSpan('conversation turn', { attributes, startTime: timing?.speechEndedAt }, async (span) => {
      if (timing) span?.addEvent('transcribed', timing.transcribedAt);
      const taken = await this.answerTurn(speech);
      span?.setAttribute('turn.answered', taken.result !== null);
      return taken;
    });
  }

  private async answerTurn(speech: CallerSpeech): Promise<GatewayTurn> {
    const floor = this.floor!;
    const { callId } = this.deps;
    const heard = callerLineOf(speech, floor.nextIndex);
    const taken: GatewayTurn = {
      utterance: speech.utterance,
      heard,
      heardUntilSeconds: speech.endedAtSeconds,
      ...(speech.interrupted ? { interrupted: speech.interrupted } : {}),
      result: null,
    };
    this.answering = true;
    try {
      taken.result = await this.answer(speech, heard);
    } catch (error) {
      // The agent cannot answer: the person's line is kept, and the workflow ends the call.
      this.deps.logger?.error('gateway turn failed', { callId, error: `${error}` });
      await recordLines(this.deps.em(), callId, [heard]).catch(() => {});
    } finally {
      this.answering = false;
    }
    const result = taken.result;
    if (!result || result.toolCalls?.length || result.next.kind !== 'continue') {
      this.ahead.drop();
      this.floor = null;
      this.known = null;
    } else {
      floor.nextIndex = result.line ? result.line.index + 1 : heard.index + 1;
      this.known?.lines.push(heard, ...(result.line ? [result.line] : []));
    }
    return taken;
  }

  private async answer(speech: CallerSpeech, heard: TranscriptLine): Promise<AgentTurnResult> {
    const { callId, signal, logger } = this.deps;
    return retryWithBackoff(
      async (attempt) => {
        // Barge-in: the line the person spoke over keeps only what was heard (again on a retry: idempotent).
        if (speech.interrupted) await keepSpokenPart(this.deps.em(), { callId, ...speech.interrupted });
        const known = await this.conversation(heard.index, speech.interrupted);
        return takeAgentTurn(
          { ...this.deps, voiceRuntime: this.ahead.runtime, em: this.deps.em() },
          {
            callId,
            heard,
            answerAtSeconds: speech.endedAtSeconds,
            ...(speech.speechTiming ? { speechTiming: speech.speechTiming } : {}),
            ...(this.floor?.withStoredToolCalls ? { withStoredToolCalls: true } : {}),
            hangUpWithLastLine: true,
            known: { call: known.call, before: known.lines },
          },
          { signal, attempt },
        );
      },
      {
        firstMs: FIRST_BACKOFF_MS,
        maxMs: MAX_BACKOFF_MS,
        budgetMs: TURN_BUDGET_MS,
        // A refusal is not retried, nor a turn of a call whose audio is over; a model's Retry-After is kept.
        waitAfter: (error, backoffMs) => {
          if (signal.aborted || (error instanceof VoiceRuntimeError && !error.retryable)) return null;
          return Math.max(backoffMs, error instanceof VoiceRuntimeError ? (error.retryAfterMs ?? 0) : 0);
        },
        onRetry: (error, attempt) =>
          logger?.warn('gateway turn: retrying', { callId, attempt, error: `${error}` }),
        ...(this.deps.sleep ? { sleep: this.deps.sleep } : {}),
      },
    );
  }

  /** The call and its lines before line `below`, read when not known; a barge-in cuts the line it names. */
  private async conversation(
    below: number,
    interrupted: CallerSpeech['interrupted'],
  ): Promise<{ call: Call; lines: TranscriptLine[] }> {
    const { callId } = this.deps;
    if (!this.known) {
      const [call, lines] = await Promise.all([
        loadCall(this.deps.em(), callId),
        loadTranscript(this.deps.em(), callId, below),
      ]);
      this.known = { call, lines };
    }
    if (interrupted) {
      const at = this.known.lines.findIndex((l) => l.index === interrupted.index && l.role === 'agent');
      // A line none of which was heard goes (lib/calls/transcript-rows.ts, keepSpokenPart).
      if (at >= 0 && !interrupted.spokenText.trim()) this.known.lines.splice(at, 1);
      else if (at >= 0) this.known.lines[at].text = interrupted.spokenText;
    }
    return this.known;
  }
}

/**
 * The carrier of a call's turn loop in the gateway: the turn's words go straight to that call's own
 * commands (media/call-audio.ts `command`), as the workflow's carrier would send them.
 */
export function commandsCarrier(
  command: <C extends CallAudioCommand>(command: C) => Promise<MediaCommandAnswer<C>>,
): TurnLoopDeps['carrier'] {
  return {
    saySentence: async ({ index, seq, text }) => {
      await command({ type: 'sentence', index, seq, text });
    },
    say: ({ index, text, hangUp }) =>
      command({ type: 'say' as const, index, text, ...(hangUp ? { hangUp } : {}) }),
    sendDigits: async ({ index, digits }) => {
      await command({ type: 'digits', index, digits });
    },
  };
}
