import { GatewayPlacement, mediaGateways } from '../../lib/media/gateway-placement.js';
import { streamTokenFor } from '../../lib/media/stream-token.js';
import type { Settings } from '../../lib/settings.js';

// Where the test panel's Talk streams the microphone: a media gateway the workers' calls go to,
// one that is not draining (lib/media/gateway-placement.ts: MEDIA_GATEWAY_URLS, else
// MEDIA_GATEWAY_URL with MEDIA_CONTROL_URL), with MEDIA_CONTROL_TOKEN to make the call's own stream
// token; `npm start` and `start:cluster` pass them to the API whenever speech is configured.
// Without them the panel offers typing only, and says why.

export type TalkGateway =
  | {
      available: true;
      /** The control URL of a gateway for a new Talk call (pinned on the call as its media gateway). */
      pick(): Promise<string>;
      /** The Media Streams address of the gateway a call is pinned to. */
      streamsUrlOf(controlUrl: string): string;
      streamTokenFor(callId: string): string;
    }
  | { available: false; reason: string };

export const TALK_UNAVAILABLE_REASON =
  'Talking needs speech: start the service with VOICE_SPEECH=local (or VOICE_STT_URL and VOICE_TTS_URL), ' +
  'which also starts the media gateway.';

/** One placement per settings (an API process's), so its turns and readiness answers carry over. */
const placements = new WeakMap<object, GatewayPlacement>();

export function talkGateway(settings: Pick<Settings, 'media'>): TalkGateway {
  const { controlToken } = settings.media;
  const gateways = mediaGateways(settings.media);
  if (gateways.length === 0 || !controlToken) return { available: false, reason: TALK_UNAVAILABLE_REASON };
  let placement = placements.get(settings.media);
  if (!placement) {
    placement = new GatewayPlacement(gateways);
    placements.set(settings.media, placement);
  }
  const placed = placement;
  return {
    available: true,
    pick: async () => (await placed.pick()).controlUrl,
    streamsUrlOf: (controlUrl) => placed.streamsUrlOf(controlUrl),
    // Made as the browser's socket opens: the relay attaches at once.
    streamTokenFor: (callId) => streamTokenFor(controlToken, callId, 0),
  };
}
