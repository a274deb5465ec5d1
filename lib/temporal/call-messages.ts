import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { CallStatus } from '../../db/entities/index.js';
import type { AgentTurnResult } from '../calls/agent-turns.js';
import type { TranscriptLine } from '../calls/transcript.js';

// Signals and queries of the call workflow and of the simulated far end, declared once so the
// workflows, the carrier adapter and the tests share the same typed definitions.

/** A carrier's status callback about the far end of a call. */
export type CarrierCallback =
  | { type: 'ringing' }
  /**
   * `speaking`: whether the far end was already speaking as it answered (the carrier's voice
   * activity at pick-up; an answering machine starts its greeting at once, a person waits to hear
   * who calls). Absent: the carrier cannot tell.
   */
  | {
      type: 'answered';
      speaking?: boolean;
      /** The carrier listened this long after the answer before it said `speaking`: the answer came that much earlier. */
      listenedMs?: number;
    }
  /** An answering machine's beep ended: it records from here (telephony spec section 6). */
  | { type: 'beep' }
  /**
   * A call with audio: the far end, having spoken, has been silent 1 s, at or after the
   * answering-machine decision; a greeting without a beep is over (media/pick-up-screen.ts).
   */
  | { type: 'quiet' }
  | { type: 'busy' }
  | { type: 'declined' }
  | { type: 'not_connected' }
  /** The far end hung up, `atSeconds` simulated seconds after it answered. */
  | { type: 'hung_up'; atSeconds: number }
  /**
   * A call with audio: the person's speech could not be recognised (the speech-to-text service
   * failed past its retries); the agent cannot go on, so it apologises and the call ends `agent_error`.
   */
  | { type: 'speech_failed' }
  /**
   * A cold transfer the far end's side reports (the SIP side: the REFER's final NOTIFY was 2xx, or
   * the target it dialled itself answered): the target answered, the caller is theirs now.
   */
  | { type: 'transfer_connected' }
  /** The same transfer failed: the target was busy, did not answer, or the attempt was refused; the caller is still ours. */
  | { type: 'transfer_failed'; failure: TransferFailure };

/** Why a transfer's target was not reached (telephony spec section 1, the Call's `transfer.failure`). */
export type TransferFailure = 'busy' | 'no_answer' | 'refused';

/** A reported transfer's outcome: the target answered, or why it was not reached. */
export type TransferReport = { connected: true } | { connected: false; failure: TransferFailure };

/** What the person on the far end said (speech recognised by the carrier's media stream). */
export interface CallerSpeech {
  /** 0-based count of the person's utterances; a repeated callback carries the same number. */
  utterance: number;
  text: string;
  startedAtSeconds: number;
  endedAtSeconds: number;
  /**
   * A call with audio (the media gateway): when the person stopped speaking and when their words
   * were transcribed, wall-clock epoch milliseconds, for the turn's latency.
   */
  speechTiming?: { speechEndedAt: number; transcribedAt: number };
  /**
   * Barge-in: the person spoke over the agent's line `index`, which stopped; only `spokenText` of
   * it (the sentences that had started playing) was said, and the transcript keeps only that.
   */
  interrupted?: { index: number; spokenText: string };
}

/** The person's utterance as transcript line `index`. */
export function callerLineOf(
  speech: Pick<CallerSpeech, 'text' | 'startedAtSeconds'>,
  index: number,
): TranscriptLine {
  return { index, role: 'caller', text: speech.text, offsetSeconds: speech.startedAtSeconds };
}

export const carrierCallbackSignal = defineSignal<[CarrierCallback]>('carrierCallback');
export const callerSpeechSignal = defineSignal<[CallerSpeech]>('callerSpeech');

/**
 * A turn the media gateway took on its own, once the call workflow handed it the turns
 * (`take_turns`, docs/performance.md "The turn loop in the gateway"): the person's utterance, the
 * lines both were written as and the agent's answer as the `agentTurn` step gives it. The
 * workflow keeps the call's record from it and acts on what the answer asks (tools, a transfer, a
 * hang-up). One signal per turn, in order with the call's other signals; a redelivery carries the
 * same utterance number and is recognised.
 */
export interface GatewayTurn {
  /** The person's utterance the agent answered (numbered with the `callerSpeech` ones). */
  utterance: number;
  /** The person's line as written. */
  heard: TranscriptLine;
  /** End of what the person said, in seconds since the answer. */
  heardUntilSeconds: number;
  /** A barge-in before this line: the interrupted agent line keeps only `spokenText` (already stored). */
  interrupted?: { index: number; spokenText: string };
  /** The agent's answer; null when the agent could not answer (its runtime failed past its retries). */
  result: AgentTurnResult | null;
}
export const gatewayTurnSignal = defineSignal<[GatewayTurn]>('gatewayTurn');

export type CallStep =
  | 'dialing'
  | 'ringing'
  | 'connecting_agent'
  | 'in_conversation'
  | 'hanging_up'
  | 'analyzing'
  | 'completed'
  | 'failed';

/**
 * How long the voice runtime took for one agent turn, in milliseconds from the moment it was asked
 * (wall-clock time of the activity's last attempt). The scripted agent answers at once, so all three
 * are its (near-zero) answer time.
 */
export interface AgentTurnLatency {
  /** Transcript index of the agent's line (the turn's place even when it said nothing). */
  index: number;
  /** Until the first token of the model's answer; null when nothing came before the answer was whole. */
  firstTokenMs: number | null;
  /** Until the first complete sentence, which a streaming voice side can start speaking; null without words. */
  firstSentenceMs: number | null;
  /** Until the whole answer was in. */
  answerMs: number;
  /**
   * A call with audio: from the end of the person's speech until their transcript line, the first
   * token of the answer and the first agent audio sent (null when the agent said nothing).
   */
  fromSpeechEnd?: { transcriptMs: number; firstTokenMs: number; firstAudioMs: number | null };
}

/** What an operator sees when querying a running call (`temporal workflow query --type callProgress`). */
export interface CallProgress {
  step: CallStep;
  status: CallStatus;
  transcriptLines: number;
  /** The last carrier callback received, e.g. `ringing`. */
  lastCarrierCallback: CarrierCallback['type'] | null;
  endReason: string | null;
  /** Each agent turn's latency so far, oldest first (at most the last 50). */
  agentTurns: AgentTurnLatency[];
}

export const callProgressQuery = defineQuery<CallProgress>('callProgress');

// Toward the far end (the carrier's media stream and call control).

/** The agent joined the call's audio; `opening` is its first line, or null when it waits for the person. */
export interface AgentJoined {
  opening: { index: number; text: string } | null;
}
export const agentJoinedSignal = defineSignal<[AgentJoined]>('agentJoined');
/** One agent line; `hangUp`: the agent hangs up once it is said (the line and the release in one). */
export interface AgentSpeech {
  index: number;
  text: string;
  hangUp?: boolean;
  /** Keys the agent pressed (telephony spec section 7): the line is `[keypad] …`, the far end hears the tones. */
  digits?: string;
}
export const agentSpeechSignal = defineSignal<[AgentSpeech]>('agentSpeech');
/** The call is over for the far end: hung up by the agent, transferred away, or the dial canceled. */
export const farEndReleasedSignal =
  defineSignal<[{ reason: 'hang_up' | 'transfer' | 'cancel'; to?: string }]>('farEndReleased');

// From the dashboard's test panel to its far end (workflows/browser-caller-workflow.ts).

/** A line the person typed; `line` counts the person's lines from 0, so a resent line is heard once. */
export const browserCallerSaysSignal = defineSignal<[{ line: number; text: string }]>('browserCallerSays');
export const browserCallerHangUpSignal = defineSignal('browserCallerHangUp');
