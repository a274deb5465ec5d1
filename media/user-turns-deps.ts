import type { Logger } from '../lib/logger.js';
import type { SpeechToText } from '../lib/speech/speech-ports.js';
import type { CarrierCallback } from '../lib/temporal/call-messages.js';
import type { AgentVoice } from './agent-voice.js';
import type { HeardAhead } from './heard-ahead.js';
import type { InterruptionsDeps } from './interruptions.js';
import type { TurnLoop } from './turn-loop.js';
import type { WorkflowOutbox } from './workflow-outbox.js';

// What the person's turns of one call (media/user-turns.ts) are given.

export interface UserTurnsDeps {
  callId: string;
  stt: SpeechToText;
  /** The agent's language, for the transcription (BCP 47). */
  language: string;
  voice: Pick<AgentVoice, 'speaking' | 'bargeIn' | 'hold' | 'dropHeld' | 'takeDropped'>;
  /** The gateway's turn loop; null: the workflow answers every line. */
  loop: TurnLoop | null;
  outbox: WorkflowOutbox;
  /** Epoch ms of the call clock's 0. */
  startedAt: number;
  /** VOICE_PREEMPTIVE_GENERATION: the answer is asked for during the person's pause. */
  preemptiveGeneration: boolean;
  /** Whether the call's audio is ending (nothing more is asked ahead or answered here). */
  ending: () => boolean;
  callBack: (callback: CarrierCallback) => Promise<void>;
  /** The stages besides the voice that obey an interruption (interruptions.ts). */
  obeyingInterruptions?: InterruptionsDeps['obeying'];
  /** The speech being heard so far (the turn detector's), for speech over the agent heard again. */
  speechSoFar?: InterruptionsDeps['speechSoFar'];
  /** Its pauses' transcriptions when shared (their words end a turn: media/end-of-turn-rule.ts). */
  heardAhead?: HeardAhead;
  logger: Logger;
}
