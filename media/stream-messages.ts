// The Media Streams protocol's messages (Twilio's `<Connect><Stream>`, ../spec/voice-media-v1.md
// section 3): those the gateway reads from a client, and those it sends one. Anything else a
// client sends (an unknown event, a malformed frame) reads as null and is ignored.

export interface StreamStart {
  event: 'start';
  streamSid: string;
  start: {
    streamSid: string;
    callSid?: string;
    tracks?: string[];
    customParameters: Record<string, string>;
    mediaFormat: { encoding: string; sampleRate: number; channels: number };
  };
}

export type ClientMessage =
  | { event: 'connected' }
  | StreamStart
  | { event: 'media'; payload: Uint8Array; track: string }
  | { event: 'mark'; name: string }
  /** A key the caller pressed (Twilio's `dtmf` message, telephony spec section 7). */
  | { event: 'dtmf'; digit: string }
  /** The client's answer to `bridge`: whether it joined the leg `callId` to this call itself (media/client-join.ts). */
  | { event: 'bridged'; callId: string; joined: boolean }
  | { event: 'stop' };

/**
 * What the gateway sends a client; each goes out with the stream's `streamSid`. Besides the agent's
 * audio, its marks (`attached` names the call taken) and `clear`, a transfer's target goes as
 * `transfer`, just before the close: the SIP side dials only that target. The close reason still
 * names it (`transferred to …`) for other Media Streams clients, which know no `transfer` event.
 */
export type GatewayMessage =
  | { event: 'media'; media: { payload: string } }
  | { event: 'mark'; mark: { name: string }; callId?: string }
  | { event: 'clear' }
  | { event: 'transfer'; transfer: { to: string } }
  /** A key the agent pressed, for a client that plays keys itself (`keypad: rfc4733` in its `start`). */
  | { event: 'dtmf'; dtmf: { digit: string } }
  /** Join the transfer's leg `callId` to this call (a client whose `start` names a `join`, media/client-join.ts). */
  | { event: 'bridge'; bridge: { callId: string } };

/** The one audio format a stream carries: 8 kHz μ-law, mono. */
export function isPhoneAudio(format: StreamStart['start']['mediaFormat']): boolean {
  return format.encoding === 'audio/x-mulaw' && format.sampleRate === 8000 && format.channels === 1;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** One key of a telephone keypad (A–D of the fourth column too). */
const KEYPAD_DIGIT = /^[0-9*#A-D]$/;

/** Largest media payload taken: 20 ms is 160 bytes; a client may send up to 100 ms at once. */
const MAX_PAYLOAD_BYTES = 800;

export function readClientMessage(text: string): ClientMessage | null {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObject(message)) return null;
  switch (message.event) {
    case 'connected':
      return { event: 'connected' };
    case 'stop':
      return { event: 'stop' };
    case 'mark': {
      const name = isObject(message.mark) ? message.mark.name : undefined;
      return typeof name === 'string' ? { event: 'mark', name } : null;
    }
    case 'media': {
      const media = message.media;
      if (!isObject(media) || typeof media.payload !== 'string') return null;
      if (media.payload.length > (MAX_PAYLOAD_BYTES * 4) / 3 + 4) return null;
      const payload = Buffer.from(media.payload, 'base64');
      if (payload.length === 0) return null;
      return { event: 'media', payload, track: typeof media.track === 'string' ? media.track : 'inbound' };
    }
    case 'dtmf': {
      const digit = isObject(message.dtmf) ? message.dtmf.digit : undefined;
      return typeof digit === 'string' && KEYPAD_DIGIT.test(digit) ? { event: 'dtmf', digit } : null;
    }
    case 'bridged': {
      const bridged = isObject(message.bridged) ? message.bridged : {};
      const { callId, joined } = bridged;
      return typeof callId === 'string' && typeof joined === 'boolean'
        ? { event: 'bridged', callId, joined }
        : null;
    }
    case 'start':
      return readStart(message);
    default:
      return null;
  }
}

function readStart(message: Record<string, unknown>): StreamStart | null {
  const start = message.start;
  if (!isObject(start)) return null;
  const format = start.mediaFormat;
  if (!isObject(format)) return null;
  const parameters: Record<string, string> = {};
  if (isObject(start.customParameters)) {
    for (const [key, value] of Object.entries(start.customParameters)) {
      if (typeof value === 'string' && value.length <= 512) parameters[key] = value;
    }
  }
  const streamSid = typeof start.streamSid === 'string' ? start.streamSid : String(message.streamSid ?? '');
  return {
    event: 'start',
    streamSid: streamSid.slice(0, 64),
    start: {
      streamSid: streamSid.slice(0, 64),
      ...(typeof start.callSid === 'string' ? { callSid: start.callSid.slice(0, 64) } : {}),
      customParameters: parameters,
      mediaFormat: {
        encoding: String(format.encoding),
        sampleRate: Number(format.sampleRate),
        channels: Number(format.channels),
      },
    },
  };
}
