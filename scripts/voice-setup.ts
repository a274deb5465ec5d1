import type { Settings } from '../lib/settings.js';
import { startLocalSpeechServer } from './local-speech-server.js';
import { mediaControlToken, mediaStreamsToken, sipControlToken } from './media-streams-token.js';

// Speech for `npm start` and `npm run start:cluster` (../spec/voice-media-v1.md section 2): with
// VOICE_SPEECH=local the local speech server is provisioned and started on loopback and both
// speech ports point at it; with VOICE_STT_URL and VOICE_TTS_URL the ports are those. Speech means
// a media gateway: what the gateway and the workers need (the speech URLs, MEDIA_GATEWAY_URL,
// MEDIA_CONTROL_URL, and MEDIA_STREAMS_TOKEN and MEDIA_CONTROL_TOKEN, generated once and kept in the
// data folder when unset; with CARRIER=sip also SIP_CONTROL_TOKEN, kept the same way) comes back as
// the environment to pass on.
// Without speech: nothing, and calls stay text-only.

export interface VoiceSetup {
  /** Settings to pass to the gateway and the workers; empty without speech. */
  env: NodeJS.ProcessEnv;
  /** The local speech server, when this started one. */
  localServer?: { url: string; stop(): Promise<void> };
}

export function speechConfigured(settings: Pick<Settings, 'speech'>): boolean {
  return settings.speech.local || Boolean(settings.speech.stt && settings.speech.tts);
}

export async function setUpVoice(
  settings: Pick<Settings, 'speech' | 'media'>,
  dataDir: string,
  log: (line: string) => void,
): Promise<VoiceSetup> {
  if (!speechConfigured(settings)) return { env: {} };
  const token = mediaStreamsToken(dataDir, settings.media.streamsToken);
  // The workers' calls go to the gateway this starts (the simulator's far ends then speak); they
  // command it on its control port, with a secret of its own.
  const gateway = {
    MEDIA_STREAMS_TOKEN: token,
    MEDIA_GATEWAY_URL: settings.media.gatewayUrl ?? `http://127.0.0.1:${settings.media.port}`,
    MEDIA_CONTROL_URL: settings.media.controlUrl,
    MEDIA_CONTROL_TOKEN: mediaControlToken(dataDir, settings.media.controlToken),
    // CARRIER=sip: the SIP side's control API has a secret of its own, which the workers present.
    ...(settings.media.carrier === 'sip'
      ? { SIP_CONTROL_TOKEN: sipControlToken(dataDir, settings.media.sip.controlToken) }
      : {}),
  };
  if (!settings.speech.local) return { env: gateway };
  const localServer = await startLocalSpeechServer({ log: (line: string) => log(`speech: ${line}`) });
  log(`speech: local speech server on ${localServer.url}`);
  return {
    // VOICE_SPEECH=local goes on too: the gateway reads the local speech's scores (lib/speech/local-doubt.ts).
    env: {
      ...gateway,
      VOICE_SPEECH: 'local',
      VOICE_STT_URL: localServer.url,
      VOICE_TTS_URL: localServer.url,
    },
    localServer,
  };
}
