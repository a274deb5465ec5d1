import { mediaStreamsUrl } from '../../lib/media/media-control.js';
import { streamTokenFor } from '../../lib/media/stream-token.js';
import type { Settings } from '../../lib/settings.js';

// Where the test panel's Talk streams the microphone: the media gateway the workers' calls go to
// (its public MEDIA_GATEWAY_URL for the stream, its MEDIA_CONTROL_URL as the call's gateway, and
// MEDIA_CONTROL_TOKEN to make the call's own stream token), which `npm start` and `start:cluster`
// pass to the API whenever speech is configured. Without them the panel offers typing only, and
// says why.

export type TalkGateway =
  | { available: true; controlUrl: string; streamsUrl: string; streamTokenFor(callId: string): string }
  | { available: false; reason: string };

export const TALK_UNAVAILABLE_REASON =
  'Talking needs speech: start the service with VOICE_SPEECH=local (or VOICE_STT_URL and VOICE_TTS_URL), ' +
  'which also starts the media gateway.';

export function talkGateway(settings: Pick<Settings, 'media'>): TalkGateway {
  const { gatewayUrl, controlUrl, controlToken } = settings.media;
  if (!gatewayUrl || !controlToken) return { available: false, reason: TALK_UNAVAILABLE_REASON };
  return {
    available: true,
    controlUrl,
    streamsUrl: mediaStreamsUrl(gatewayUrl),
    // Made as the browser's socket opens: the relay attaches at once.
    streamTokenFor: (callId) => streamTokenFor(controlToken, callId, 0),
  };
}
