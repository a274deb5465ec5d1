import type { Client } from '@temporalio/client';
import type { Orm } from '../db/orm.js';
import type { SileroVoiceActivity } from '../lib/audio/voice-activity.js';
import type { Logger } from '../lib/logger.js';
import type { Settings } from '../lib/settings.js';
import type { EndOfTurnModel } from '../lib/speech/end-of-turn.js';
import type { SpeechToText, TextToSpeech } from '../lib/speech/speech-ports.js';
import type { VoiceRuntime } from '../lib/voice-runtime/voice-runtime.js';
import type { CallSessions } from './call-sessions.js';
import type { GatewayDrain } from './gateway-drain.js';
import type { RecordingUploads } from './recording-uploads.js';

/** What every part of one media gateway process shares. */
export interface GatewayContext {
  settings: Pick<Settings, 'taskQueuePrefix' | 'temporalNamespace' | 'media' | 'recordingsDir' | 'speech'>;
  /** MEDIA_STREAMS_TOKEN: opens a new inbound stream (`to`/`from`), nothing else. */
  streamsToken: string;
  /**
   * MEDIA_CONTROL_TOKEN: what the workers' carrier and the SIP side present to the control API, and
   * the key of each call's own stream token (lib/media/stream-token.ts).
   */
  controlToken: string;
  /** Where the workers' carrier reaches this gateway's control API: its name on the calls it holds. */
  controlUrl: string;
  orm: Orm;
  temporal: Client;
  stt: SpeechToText;
  tts: TextToSpeech;
  /** VOICE_TURN_DETECTION=model: the speech server's end-of-turn model; undefined: the silence rule. */
  endOfTurn?: EndOfTurnModel;
  /** Voice activity detection for one call (the model is loaded once per process; each call has its own state). */
  voiceActivity: () => Promise<SileroVoiceActivity>;
  sessions: CallSessions;
  /** Set by SIGTERM: no new streams, readiness 503, live calls finish (gateway-drain.ts). */
  drain: GatewayDrain;
  /** The agent's runtime (VOICE_LLM_URL, else the scripted agent) for the turns the gateway takes (turn-loop.ts). */
  voiceRuntime: VoiceRuntime | null;
  /** RECORDINGS_STORE=s3: each finished recording goes to the store (recording-uploads.ts); none: RECORDINGS_DIR is the store. */
  recordingUploads?: RecordingUploads;
  logger: Logger;
}
