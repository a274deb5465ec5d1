import { setCurrentDetails, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { CallStatus } from '../../db/entities/index.js';
import type { TranscriptLine } from '../../lib/calls/transcript.js';
import type { CallMedia } from '../../lib/carrier/carrier.js';
import {
  type CallerSpeech,
  type CallProgress,
  type CallStep,
  type CarrierCallback,
  callerSpeechSignal,
  callProgressQuery,
  carrierCallbackSignal,
  type GatewayTurn,
  gatewayTurnSignal,
  type TransferReport,
} from '../../lib/temporal/call-messages.js';
import type { CallRuntime } from '../../lib/temporal/call-runtime.js';
import { CallStatusKey } from '../../lib/temporal/search-attributes.js';
import type { CallWorkflowInput, ConversationResume } from '../../lib/temporal/workflow-contracts.js';
import { speakingSeconds } from '../speech-timing.js';

/**
 * `end_reason` of an answered call whose agent could not go on: its runtime, the carrier's media
 * or the service's own storage failed past the retry budget of a live step (or something failed
 * unexpectedly). The call is still completed, with an analysis and `call.completed`.
 */
export const AGENT_ERROR = 'agent_error';

export type FailReason = 'busy' | 'no_answer' | 'not_connected';

/** How an answered call ended: what `markEnded` stores. */
export interface Ending {
  endReason: string;
  durationSeconds: number;
}

/**
 * One call as its workflow sees it: what the carrier and the person sent (filled in by the
 * signal handlers), how far the call got (for the endings and the last-resort handler), and the
 * progress the `callProgress` query shows.
 */
export class CallState {
  readonly callId: string;
  /** How the agent and the analyzer run, once asked (before the agent's first step). */
  runtime: CallRuntime | null = null;
  readonly progress: CallProgress;
  /** Carrier callbacks not yet handled, oldest first (`hung_up` is kept apart in `hungUp`). */
  readonly callbacks: CarrierCallback[] = [];
  /** What the person said that the agent has not answered yet, oldest first. */
  readonly heard: CallerSpeech[] = [];
  hungUp: { atSeconds: number } | null = null;
  /** End of the last thing the person said, in simulated seconds since the answer. */
  heardUntil = 0;

  /** The far end was reached: a dial placed, or a call that came in picked up. */
  farEndReached = false;
  /** The carrier reported the far end connected (or the call came in connected). */
  connected = false;
  /** Where the call's audio is held, for a call with audio (the media gateway); null: text only. */
  media: CallMedia | null = null;
  /** The media gateway holding the call's audio was lost (its session stopped heartbeating). */
  mediaLost = false;
  /**
   * The gateway's media session of the call ended (its stream closed) while the call went on: the
   * person is gone even when their hang-up never reached this workflow.
   */
  mediaEnded = false;
  /** The person's speech could not be recognised any more (`speech_failed`). */
  speechFailed = false;
  /** Whether the far end was speaking as it answered; null: the carrier cannot tell (`answered`). */
  answeredSpeaking: boolean | null = null;
  /** Workflow time (epoch ms) the `answered` callback came: the answering-machine decision counts from it. */
  answeredAtMs = 0;
  /** An answering machine's beep was heard (`beep`). */
  beeped = false;
  /** A call with audio: the far end's greeting is over, heard as 1 s of silence after speech (`quiet`). */
  greetingOver = false;
  /** A cold transfer's outcome as the far end's side reported it (`transfer_connected`, `transfer_failed`); null: none yet. */
  transferReport: TransferReport | null = null;
  /** `markAnswered` is stored: from here on the call ends `completed`. */
  answered = false;
  failedWith: FailReason | null = null;
  /** What `markEnded` stored, once it has. */
  ended: Ending | null = null;
  lastAgentLine: TranscriptLine | null = null;
  /** Index of the next transcript line. */
  nextIndex = 0;
  /** Calls of the agent's own tools so far (the call's limit counts them). */
  toolCallCount = 0;
  /** The person's utterance numbers seen: a repeated delivery is recognised (carried into a new run). */
  readonly utterancesSeen: Set<number>;
  /** The media gateway takes the call's turns (handed over, not yet handed back): the workflow writes no line meanwhile. */
  turnsInGateway = false;
  /** The call's carrier keeps its turns with the workflow (a text call, a far end that follows the lines). */
  turnsStayHere = false;
  /** Turns the gateway took and reported, not yet handled, oldest first. */
  readonly gatewayTurns: GatewayTurn[] = [];

  constructor(readonly input: CallWorkflowInput) {
    this.callId = input.callId;
    this.utterancesSeen = new Set(input.resume?.utterancesSeen);
    this.progress = {
      step: input.answered ? 'connecting_agent' : 'dialing',
      status: 'queued',
      transcriptLines: 0,
      lastCarrierCallback: null,
      endReason: null,
      agentTurns: [],
    };
  }

  step(next: CallStep): void {
    this.progress.step = next;
    setCurrentDetails(`${this.progress.status}, step ${next}`); // the Web UI's current details
  }

  /** A status change, also kept in the `CallStatus` search attribute. */
  setStatus(status: CallStatus): void {
    this.progress.status = status;
    upsertSearchAttributes([{ key: CallStatusKey, value: status }]);
    setCurrentDetails(`${status}, step ${this.progress.step}`);
  }

  /** Simulated seconds since the answer until the last line anyone said. */
  spokenSoFar(): number {
    return Math.max(agentFinishedAt(this.lastAgentLine), this.heardUntil, this.hungUp?.atSeconds ?? 0);
  }
}

/** Utterance numbers a new run of the conversation still recognises as seen (retries come soon after). */
const UTTERANCES_CARRIED = 200;

/** The call's state, with the query and the signals that feed it registered (a resumed run: as its last run left it). */
export function openCall(input: CallWorkflowInput): CallState {
  const call = new CallState(input);
  if (input.resume) resumeCall(call, input.resume);
  setHandler(callProgressQuery, () => call.progress);
  setHandler(carrierCallbackSignal, (callback) => {
    call.progress.lastCarrierCallback = callback.type;
    if (callback.type === 'hung_up') call.hungUp ??= { atSeconds: callback.atSeconds };
    else if (callback.type === 'speech_failed') call.speechFailed = true;
    else if (callback.type === 'beep') call.beeped = true;
    else if (callback.type === 'quiet') call.greetingOver = true;
    else if (callback.type === 'transfer_connected') call.transferReport = { connected: true };
    else if (callback.type === 'transfer_failed')
      call.transferReport = { connected: false, failure: callback.failure };
    else {
      if (callback.type === 'answered') {
        call.answeredSpeaking = callback.speaking ?? null;
        call.answeredAtMs = Date.now() - (callback.listenedMs ?? 0);
      }
      call.callbacks.push(callback);
    }
  });
  setHandler(callerSpeechSignal, (speech) => {
    if (call.utterancesSeen.has(speech.utterance)) return;
    call.utterancesSeen.add(speech.utterance);
    call.heard.push(speech);
    call.heardUntil = Math.max(call.heardUntil, speech.endedAtSeconds);
  });
  setHandler(gatewayTurnSignal, (turn) => {
    if (call.utterancesSeen.has(turn.utterance)) return;
    call.utterancesSeen.add(turn.utterance);
    call.gatewayTurns.push(turn);
    call.heardUntil = Math.max(call.heardUntil, turn.heardUntilSeconds);
  });
  return call;
}

/** A long conversation's next run: the call as its last run left it, answered and in conversation. */
function resumeCall(call: CallState, resume: ConversationResume): void {
  Object.assign(call.progress, resume.progress);
  call.runtime = resume.runtime;
  call.media = resume.media;
  call.lastAgentLine = resume.lastAgentLine;
  call.nextIndex = resume.nextIndex;
  call.heardUntil = resume.heardUntil;
  call.heard.push(...resume.heard);
  call.callbacks.push(...resume.callbacks);
  call.hungUp = resume.hungUp;
  call.speechFailed = resume.speechFailed;
  call.toolCallCount = resume.toolCalls ?? 0;
  call.turnsInGateway = resume.turnsInGateway ?? false;
  call.turnsStayHere = resume.turnsStayHere ?? false;
  call.gatewayTurns.push(...(resume.gatewayTurns ?? []));
  call.farEndReached = true;
  call.connected = true;
  call.answered = true;
}

/** What the next run of a long conversation needs to go on where this one is. */
export function conversationResume(call: CallState): ConversationResume {
  return {
    runs: (call.input.resume?.runs ?? 0) + 1,
    runtime: call.runtime,
    media: call.media,
    lastAgentLine: call.lastAgentLine,
    nextIndex: call.nextIndex,
    heardUntil: call.heardUntil,
    heard: [...call.heard],
    callbacks: [...call.callbacks],
    hungUp: call.hungUp,
    speechFailed: call.speechFailed,
    toolCalls: call.toolCallCount,
    turnsInGateway: call.turnsInGateway,
    turnsStayHere: call.turnsStayHere,
    gatewayTurns: [...call.gatewayTurns],
    utterancesSeen: [...call.utterancesSeen].slice(-UTTERANCES_CARRIED),
    progress: call.progress,
  };
}

/** When the agent's last line ends, in simulated seconds since the answer. */
export function agentFinishedAt(line: TranscriptLine | null): number {
  return line ? line.offsetSeconds + speakingSeconds(line.text) : 0;
}
