import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { CallStatus } from '../../db/entities/index.js';

// Signals and queries of the call workflow and of the simulated far end, declared once so the
// workflows, the carrier adapter and the tests share the same typed definitions.

/** A carrier's status callback about the far end of a call. */
export type CarrierCallback =
  | { type: 'ringing' }
  | { type: 'answered' }
  | { type: 'busy' }
  | { type: 'declined' }
  | { type: 'not_connected' }
  /** The far end hung up, `atSeconds` simulated seconds after it answered. */
  | { type: 'hung_up'; atSeconds: number };

/** What the person on the far end said (speech recognised by the carrier's media stream). */
export interface CallerSpeech {
  /** 0-based count of the person's utterances; a repeated callback carries the same number. */
  utterance: number;
  text: string;
  startedAtSeconds: number;
  endedAtSeconds: number;
}

export const carrierCallbackSignal = defineSignal<[CarrierCallback]>('carrierCallback');
export const callerSpeechSignal = defineSignal<[CallerSpeech]>('callerSpeech');

export type CallStep =
  | 'dialing'
  | 'ringing'
  | 'connecting_agent'
  | 'in_conversation'
  | 'hanging_up'
  | 'analyzing'
  | 'completed'
  | 'failed';

/** What an operator sees when querying a running call (`temporal workflow query --type callProgress`). */
export interface CallProgress {
  step: CallStep;
  status: CallStatus;
  transcriptLines: number;
  /** The last carrier callback received, e.g. `ringing`. */
  lastCarrierCallback: CarrierCallback['type'] | null;
  endReason: string | null;
}

export const callProgressQuery = defineQuery<CallProgress>('callProgress');

// Toward the far end (the carrier's media stream and call control).

/** The agent joined the call's audio; `opening` is its first line, or null when it waits for the person. */
export interface AgentJoined {
  opening: { index: number; text: string } | null;
}
export const agentJoinedSignal = defineSignal<[AgentJoined]>('agentJoined');
export const agentSpeechSignal = defineSignal<[{ index: number; text: string }]>('agentSpeech');
/** The call is over for the far end: hung up by the agent, transferred away, or the dial canceled. */
export const farEndReleasedSignal =
  defineSignal<[{ reason: 'hang_up' | 'transfer' | 'cancel'; to?: string }]>('farEndReleased');
