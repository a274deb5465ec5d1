import type { EntityManager } from '@mikro-orm/postgresql';
import type { EndOfTurnRule } from '../lib/audio/pause-verdict.js';
import { TurnDetector } from '../lib/audio/turn-detector.js';
import type { Logger } from '../lib/logger.js';
import { localSpeechDoubtsBelow } from '../lib/speech/local-doubt.js';
import { AgentVoice } from './agent-voice.js';
import { CallAudio } from './call-audio.js';
import type { CallAudioOut } from './call-audio-ports.js';
import { openRecording } from './call-recording.js';
import type { ClientJoin } from './client-join.js';
import { endOfTurnRule } from './end-of-turn-rule.js';
import type { GatewayContext } from './gateway-context.js';
import { HeardAhead } from './heard-ahead.js';
import { PreparedSpeech } from './prepared-speech.js';
import type { GatewayMessage } from './stream-messages.js';
import { hearTurn } from './turn-transcription.js';

// A stream's call audio (media/call-audio.ts), wired to the gateway's speech, voice activity model
// and recordings: what the client is sent (the agent's voice, marks, `clear`, a transfer's target,
// keys as events for the SIP side) and how its socket closes.

export async function openCallAudio(
  gateway: GatewayContext,
  call: {
    /** The client plays the agent's keys itself: they go as `dtmf` events, not tones. */
    keysAsEvents: boolean;
    /** The client reports a transfer's outcome: the stream stays open until it has. */
    reportsTransfers: boolean;
    /** The client joins a transfer's legs itself when both are its own (media/client-join.ts); null: it cannot. */
    clientJoin: ClientJoin | null;
    /** The call detects answering machines: the gateway hears its first moments (media/pick-up-screen.ts). */
    screensPickUp: boolean;
    callId: string;
    callWorkflowId: string;
    language: string;
    voice: string;
    /** The opening line, when known ahead: synthesised now, so its first audio leaves at once (prepared-speech.ts). */
    opening: string | null;
    /** The call's speech, when its opening began being made before the call was taken. */
    speech?: PreparedSpeech;
    /** False for a transfer's leg: the person rung is not the call's caller, and their side is not recorded. */
    recorded: boolean;
    send: (message: GatewayMessage) => void;
    close: (code: number, reason: string) => void;
  },
): Promise<CallAudio> {
  const speech = call.speech ?? new PreparedSpeech(gateway.tts, call.voice, call.language);
  if (call.opening) speech.prepare(call.opening);
  const t0 = performance.now();
  const startedAt = Date.now();
  const clock = () => performance.now() - t0;
  const logger = gateway.logger.child({ callId: call.callId });
  const recording = call.recorded
    ? await openRecording(gateway.settings.recordingsDir, call.callId, logger, {
        uploads: gateway.recordingUploads,
      })
    : null;
  const out: CallAudioOut = {
    media: (payload: Uint8Array) =>
      call.send({ event: 'media', media: { payload: Buffer.from(payload).toString('base64') } }),
    mark: (name: string) => call.send({ event: 'mark', mark: { name } }),
    clear: () => call.send({ event: 'clear' }),
    transfer: (to: string) => call.send({ event: 'transfer', transfer: { to } }),
    ...(call.keysAsEvents ? { dtmf: (digit: string) => call.send({ event: 'dtmf', dtmf: { digit } }) } : {}),
  };
  const voice = new AgentVoice({
    tts: gateway.tts,
    voice: call.voice,
    language: call.language,
    speech,
    out,
    clock,
    recording,
    logger,
  });
  // The person's pauses, transcribed ahead: the turn's answer starts from them, and their words end
  // turns; scored by the local speech (its English), whose doubt in them delays the end.
  // Only where a rule reads it: with VOICE_TURN_DETECTION=silence the score would be fetched for nothing.
  const doubtBelow =
    gateway.endOfTurn && gateway.settings.speech.local ? localSpeechDoubtsBelow(call.language) : undefined;
  const heardAhead = new HeardAhead((pause, signal) =>
    hearTurn(gateway.stt, call.language, pause.audio, { signal, scored: doubtBelow !== undefined }),
  );
  return new CallAudio({
    callId: call.callId,
    callWorkflowId: call.callWorkflowId,
    temporal: gateway.temporal,
    stt: gateway.stt,
    language: call.language,
    detector: new TurnDetector({
      vad: await gateway.voiceActivity(),
      endpointingMs: gateway.settings.media.endpointingMs,
      ...modelRule(
        gateway,
        { heardAhead, language: call.language, agentLine: () => voice.lastHeard(), doubtBelow },
        logger,
      ),
      // An answering machine's greeting is judged by its first line (workflows/call/screen.ts): the
      // model would end it at the comma of "Hi, you have reached…"; silence hears it whole.
      firstTurnBySilence: call.screensPickUp,
    }),
    heardAhead,
    voice,
    recording,
    close: call.close,
    out,
    clock,
    startedAt,
    logger,
    voiceRuntime: gateway.voiceRuntime,
    em: () => gateway.orm.em.fork() as EntityManager,
    preemptiveGeneration: gateway.settings.media.preemptiveGeneration,
    reportsTransfers: call.reportsTransfers,
    clientJoin: call.clientJoin,
    screensPickUp: call.screensPickUp,
  });
}

/** VOICE_TURN_DETECTION=model: the turn's end asked of the model and the pause's words (end-of-turn-rule.ts), a failure logged once. */
function modelRule(
  gateway: GatewayContext,
  words: Pick<Parameters<typeof endOfTurnRule>[0], 'heardAhead' | 'language' | 'agentLine' | 'doubtBelow'>,
  logger: Logger,
): { endOfTurn?: EndOfTurnRule } {
  const model = gateway.endOfTurn;
  if (!model) return {};
  const { pauseMs, maxMs } = gateway.settings.media.turnDetection;
  return {
    endOfTurn: endOfTurnRule({
      model,
      ...words,
      pauseMs,
      maxMs,
      failed: (error) =>
        logger.warn('end-of-turn model failed: this call’s turns end by silence', { error: `${error}` }),
    }),
  };
}
