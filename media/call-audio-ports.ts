import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { TurnDetector } from '../lib/audio/turn-detector.js';
import type { Logger } from '../lib/logger.js';
import type { SpeechToText } from '../lib/speech/speech-ports.js';
import type { VoiceRuntime } from '../lib/voice-runtime/voice-runtime.js';
import type { AgentAudioOut } from './agent-audio-out.js';
import type { AgentVoice } from './agent-voice.js';
import type { CallRecording } from './call-recording.js';
import type { ClientJoin } from './client-join.js';
import type { HeardAhead } from './heard-ahead.js';

// What one call's audio in the media gateway (media/call-audio.ts) is given, and how it ends.

export interface CallAudioDeps {
  callId: string;
  /** The call workflow the person's turns go to (known once the call is taken). */
  callWorkflowId: string | null;
  temporal: Client;
  stt: SpeechToText;
  /** The agent's language, for the transcription (BCP 47). */
  language: string;
  detector: TurnDetector;
  /** The person's pauses' transcriptions, when the detector's end-of-turn rule reads their words too. */
  heardAhead?: HeardAhead;
  voice: AgentVoice;
  recording: CallRecording | null;
  /** Closes the client's socket. */
  close(code: number, reason: string): void;
  out: CallAudioOut;
  /** Milliseconds on the call's clock (since its stream started). */
  clock: () => number;
  /** Epoch ms of the call clock's 0. */
  startedAt: number;
  logger: Logger;
  /** The agent's runtime, for the turns the gateway takes; null: the workflow keeps them. */
  voiceRuntime: VoiceRuntime | null;
  /** The database, for those turns' lines. */
  em: () => EntityManager;
  /** VOICE_PREEMPTIVE_GENERATION: the answer is asked for during the person's pause (turns in the gateway only). */
  preemptiveGeneration: boolean;
  /**
   * The client tries a transfer's target itself and reports whether it answered (`transfer: report`
   * in its `start`: the SIP side), so the stream stays open until then; other clients are closed
   * with the target in the close reason.
   */
  reportsTransfers?: boolean;
  /** The client joins a transfer's two legs itself when both are its own (`join` in its `start`, media/client-join.ts). */
  clientJoin?: ClientJoin | null;
  /**
   * An outbound phone call that detects answering machines, on a carrier that cannot tell who
   * answered (the SIP side): the gateway hears whether the far end spoke at pick-up, and the beep.
   */
  screensPickUp?: boolean;
}

/** What the call's audio sends the client: the agent's voice, and a transfer's target. */
export interface CallAudioOut extends AgentAudioOut {
  /** The typed `transfer` message (stream-messages.ts): the SIP side dials this target, never a close reason. */
  transfer(to: string): void;
}

export type CallAudioEnd = 'caller_hung_up' | 'released' | 'transferred';
