import { mulaw } from 'alawmulaw';
import type { FromWorklet, ToWorklet } from './talk-worklet.js';

// The test panel's Talk: the microphone streamed to the call over a WebSocket of the dashboard's
// own origin (GET /dashboard/api/test-calls/{call_id}/talk, which the API relays to the media
// gateway), in the Media Streams protocol as Twilio's client speaks it: `connected`, `start`, 20 ms
// of 8 kHz μ-law per `media` frame in real time, and `stop` to hang up. The agent's audio comes
// back as `media` and plays; `clear` stops it at once; each `mark` is echoed once the audio sent
// before it has played. The resampling and playback run on the audio thread (talk-worklet.ts).

export class MicrophoneRefused extends Error {}

/** The microphone, opened before the call is placed: a person answering the browser's prompt keeps no call waiting. */
export interface Microphone {
  context: AudioContext;
  stream: MediaStream;
  node: AudioWorkletNode;
  close(): void;
}

export async function openMicrophone(): Promise<Microphone> {
  if (!navigator.mediaDevices?.getUserMedia || typeof AudioWorkletNode === 'undefined') {
    throw new MicrophoneRefused(
      'This browser offers no microphone to this page (it needs HTTPS, or http://localhost).',
    );
  }
  let stream: MediaStream;
  try {
    stream = await navigator.mediaDevices.getUserMedia({
      audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true },
    });
  } catch (error) {
    throw new MicrophoneRefused(
      `The microphone could not be opened (${error instanceof Error ? error.name : 'refused'}): allow it for this site and try again.`,
    );
  }
  const context = new AudioContext();
  try {
    await context.audioWorklet.addModule('/assets/talk-worklet.js');
    await context.resume();
  } catch (error) {
    for (const track of stream.getTracks()) track.stop();
    void context.close();
    throw error;
  }
  const node = new AudioWorkletNode(context, 'talk', {
    numberOfInputs: 1,
    numberOfOutputs: 1,
    outputChannelCount: [1],
  });
  context.createMediaStreamSource(stream).connect(node);
  node.connect(context.destination);
  return {
    context,
    stream,
    node,
    close() {
      for (const track of stream.getTracks()) track.stop();
      node.port.onmessage = null;
      node.disconnect();
      void context.close();
    },
  };
}

export interface TalkCallbacks {
  /** The socket closed: the call is over for this page (the code and reason the server gave). */
  onClosed(closed: { code: number; reason: string; opened: boolean }): void;
}

/** A call's audio over the page's socket; `hangUp()` ends it as a caller hanging up. */
export class TalkConnection {
  private readonly socket: WebSocket;
  private readonly streamSid = `MZ${crypto.randomUUID().replace(/-/g, '')}`;
  private sequence = 0;
  private chunk = 0;
  private opened = false;

  constructor(
    callId: string,
    private readonly mic: Microphone,
    callbacks: TalkCallbacks,
  ) {
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    this.socket = new WebSocket(`${scheme}//${location.host}/dashboard/api/test-calls/${callId}/talk`);
    this.socket.onopen = () => {
      this.opened = true;
      this.send({ event: 'connected', protocol: 'Call', version: '1.0.0' });
      this.send({
        event: 'start',
        start: {
          streamSid: this.streamSid,
          callSid: callId,
          tracks: ['inbound'],
          // The API puts in what the gateway needs (its token, the call); the page has no secret.
          customParameters: {},
          mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
        },
      });
      mic.node.port.onmessage = (event: MessageEvent<FromWorklet>) => this.fromAudioThread(event.data);
    };
    this.socket.onmessage = (event) => this.fromGateway(String(event.data));
    this.socket.onclose = (event) => {
      mic.close();
      callbacks.onClosed({ code: event.code, reason: event.reason, opened: this.opened });
    };
  }

  /** The person hangs up: `stop`, then the socket closes (a closed tab does the same by closing it). */
  hangUp(): void {
    if (this.socket.readyState === WebSocket.OPEN) this.send({ event: 'stop' });
    this.socket.close(1000, 'hung up');
  }

  private send(message: object): void {
    if (this.socket.readyState !== WebSocket.OPEN) return;
    this.sequence += 1;
    this.socket.send(
      JSON.stringify({ ...message, sequenceNumber: String(this.sequence), streamSid: this.streamSid }),
    );
  }

  private fromAudioThread(message: FromWorklet): void {
    if (message.type === 'played') {
      this.send({ event: 'mark', mark: { name: message.name } });
      return;
    }
    const payload = mulaw.encode(message.samples);
    this.chunk += 1;
    this.send({
      event: 'media',
      media: {
        track: 'inbound',
        chunk: String(this.chunk),
        timestamp: String(this.chunk * 20),
        payload: toBase64(payload),
      },
    });
  }

  private fromGateway(text: string): void {
    let message: { event?: string; media?: { payload?: string }; mark?: { name?: string } };
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    const post = (to: ToWorklet, transfer: Transferable[] = []) =>
      this.mic.node.port.postMessage(to, transfer);
    if (message.event === 'media' && typeof message.media?.payload === 'string') {
      const samples = mulaw.decode(fromBase64(message.media.payload));
      const floats = Float32Array.from(samples, (sample) => sample / 32768);
      post({ type: 'play', samples: floats }, [floats.buffer]);
    } else if (message.event === 'mark' && typeof message.mark?.name === 'string') {
      post({ type: 'mark', name: message.mark.name });
    } else if (message.event === 'clear') {
      post({ type: 'clear' });
    }
  }
}

function toBase64(bytes: Uint8Array): string {
  let text = '';
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text);
}

function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
