import type { Settings } from '../../lib/settings.js';

// Where the test panel's Talk streams the microphone: the media gateway the workers' calls go to
// (MEDIA_GATEWAY_URL, with MEDIA_STREAMS_TOKEN), which `npm start` and `start:cluster` pass to the
// API whenever speech is configured. Without them the panel offers typing only, and says why.

export type TalkGateway =
  | { available: true; controlUrl: string; token: string }
  | { available: false; reason: string };

export const TALK_UNAVAILABLE_REASON =
  'Talking needs speech: start the service with VOICE_SPEECH=local (or VOICE_STT_URL and VOICE_TTS_URL), ' +
  'which also starts the media gateway.';

export function talkGateway(settings: Pick<Settings, 'media'>): TalkGateway {
  const { gatewayUrl, streamsToken } = settings.media;
  if (!gatewayUrl || !streamsToken) return { available: false, reason: TALK_UNAVAILABLE_REASON };
  return { available: true, controlUrl: gatewayUrl, token: streamsToken };
}
