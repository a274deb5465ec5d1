import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { decodeMulaw, encodeMulaw } from '../audio/mulaw.js';

// A Media Streams client, as Twilio's side of `<Connect><Stream>` behaves: after `start` it sends
// the person's line in real time, a 20 ms μ-law frame every 20 ms (silence when they say nothing,
// as a phone line does), and plays what the gateway sends in real time: a mark comes back once the
// audio before it has played, and `clear` drops what has not played yet. The tests' caller, and
// the speaking simulator's far end (activities/speaking-far-end.ts).

const FRAME_SAMPLES = 160;
const FRAME_MS = 20;
const SILENCE = new Int16Array(FRAME_SAMPLES);
/** A frame whose samples all stay within this is silence (a line's hiss, μ-law's smallest steps). */
const SOUND_LEVEL = 64;

/** A call coming in (`to`, `from`), or a stream attaching to a call the service placed (`callId`). */
export interface StartOptions {
  to?: string;
  from?: string;
  callId?: string;
  token?: string;
  mediaFormat?: { encoding: string; sampleRate: number; channels: number };
}

/** Agent audio as the client played it. */
interface PlayedFrame {
  samples: Int16Array;
  /** Wall-clock ms (performance.now()) when it plays. */
  playsAt: number;
}

export class MediaStreamsClient {
  readonly streamSid = `MZ${randomBytes(16).toString('hex')}`;
  readonly closed: Promise<{ code: number; reason: string }>;
  /** Every agent frame that played (cleared ones are not), in order; kept only with `keepAgentAudio`. */
  readonly played: PlayedFrame[] = [];
  /** When the last agent frame that played started (performance.now()); -1: none yet. */
  private lastPlaysAt = -1;
  /** The gateway's `attached` mark came: the stream carries the placed call (`callId`). */
  readonly attached: Promise<void>;
  private onAttached!: () => void;
  /** Wall-clock ms of each `clear` received. */
  readonly clears: number[] = [];
  /** Frames of the caller's speech (`say`) sent so far. */
  saidFrames = 0;
  /** For each `clear` received, how many frames of the caller's speech had been sent by then. */
  readonly clearedAfterSaidFrames: number[] = [];
  /** Every message but `media` received from the gateway (marks, `clear`, `transfer`, ...), in order, as sent. */
  readonly events: { event: string; [key: string]: unknown }[] = [];
  /** Marks received, and when each was echoed. */
  readonly marks: { name: string; echoedAt: number | null }[] = [];
  /** Agent frames received but not played yet. */
  private pending: PlayedFrame[] = [];
  private playEnd = 0;
  /**
   * When the last agent frame with sound in it ends playing (performance.now()): a line bridged to
   * another phone (media/transfer-bridge.ts) carries that phone's silence too, which is not speech.
   */
  private soundEnd = 0;
  private readonly toSay: Int16Array[] = [];
  private sequence = 1;
  private chunk = 0;
  private pump: NodeJS.Timeout | undefined;
  private stopped = false;
  /** When the last frame of said audio left (performance.now()). */
  private lastSaidAt = 0;

  private constructor(
    private readonly socket: WebSocket,
    private readonly keepAgentAudio: boolean,
  ) {
    this.attached = new Promise((resolve) => {
      this.onAttached = resolve;
    });
    this.closed = new Promise((resolve) =>
      socket.once('close', (code, reason) => {
        this.stopped = true;
        clearTimeout(this.pump);
        resolve({ code, reason: reason.toString() });
      }),
    );
    socket.on('message', (data) => this.receive(JSON.parse(data.toString())));
  }

  /** `keepAgentAudio: false` (a long-lived caller) keeps no agent audio, only when it plays. */
  static async connect(url: string, options: { keepAgentAudio?: boolean } = {}): Promise<MediaStreamsClient> {
    const socket = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return new MediaStreamsClient(socket, options.keepAgentAudio ?? true);
  }

  /** `connected` and `start`, then the line's audio in real time. */
  start(options: StartOptions): void {
    this.send({ event: 'connected', protocol: 'Call', version: '1.0.0' });
    const customParameters: Record<string, string> =
      options.callId !== undefined
        ? { callId: options.callId }
        : { to: options.to ?? '', from: options.from ?? '' };
    if (options.token !== undefined) customParameters.token = options.token;
    this.send({
      event: 'start',
      sequenceNumber: String(this.sequence++),
      start: {
        streamSid: this.streamSid,
        accountSid: 'AC00000000000000000000000000000000',
        callSid: `CA${randomBytes(16).toString('hex')}`,
        tracks: ['inbound'],
        customParameters,
        mediaFormat: options.mediaFormat ?? { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      },
      streamSid: this.streamSid,
    });
    const startedAt = performance.now();
    const tick = () => {
      if (this.stopped) return;
      const said = this.toSay.shift();
      this.sendFrame(said ?? SILENCE);
      if (said) {
        this.lastSaidAt = performance.now();
        this.saidFrames++;
      }
      this.playOut();
      // Paced on the clock, not on the timer: frames leave every 20 ms on average.
      this.pump = setTimeout(tick, Math.max(0, startedAt + this.chunk * FRAME_MS - performance.now()));
    };
    tick();
  }

  /**
   * Says `samples` (8 kHz) in real time from the next frame on; resolves when the last frame is
   * sent, with the moment it left (performance.now()): the end of the caller's audio on the line.
   */
  async say(samples: Int16Array): Promise<number> {
    for (let at = 0; at < samples.length; at += FRAME_SAMPLES) {
      const frame = new Int16Array(FRAME_SAMPLES);
      frame.set(samples.subarray(at, at + FRAME_SAMPLES));
      this.toSay.push(frame);
    }
    while (this.toSay.length > 0 && !this.stopped) await sleep(FRAME_MS);
    return this.lastSaidAt;
  }

  /** Sends raw text: a malformed or unknown message. */
  sendRaw(text: string): void {
    this.socket.send(text);
  }

  /** The caller hangs up. */
  stop(): void {
    this.send({ event: 'stop', sequenceNumber: String(this.sequence++), streamSid: this.streamSid });
    this.stopped = true;
    clearTimeout(this.pump);
  }

  /**
   * The line goes quiet without a hang-up (a dropped NAT mapping, a sleeping laptop): no more
   * frames, while the socket stays open and still answers the gateway's pings.
   */
  goQuiet(): void {
    this.stopped = true;
    clearTimeout(this.pump);
  }

  close(): void {
    this.stopped = true;
    clearTimeout(this.pump);
    this.socket.close();
  }

  /** Until agent audio has come and then nothing has played for `quietMs`; at most `limitMs`. */
  async agentFinished(options: { quietMs?: number; limitMs?: number; after?: number } = {}): Promise<void> {
    const { quietMs = 800, limitMs = 30_000, after = 0 } = options;
    const until = performance.now() + limitMs;
    while (performance.now() < until) {
      const heardSome = this.lastPlaysAt >= 0 && this.lastPlaysAt >= after;
      if (heardSome && this.pending.length === 0 && performance.now() - this.playEnd >= quietMs) return;
      await sleep(FRAME_MS);
    }
    throw new Error('the agent did not finish speaking');
  }

  /** Until no agent sound is waiting to play and none has played for `quietMs` (the agent is silent). */
  async agentSilent(quietMs = 300): Promise<void> {
    while (!this.stopped && performance.now() - this.soundEnd < quietMs) await sleep(FRAME_MS);
  }

  /** Until the first agent audio after `after` (performance.now()) plays; its time. */
  async agentStarts(after: number, limitMs = 30_000): Promise<number> {
    const until = performance.now() + limitMs;
    while (performance.now() < until) {
      const first =
        this.played.find((frame) => frame.playsAt >= after) ?? this.pending.find((f) => f.playsAt >= after);
      if (first) return first.playsAt;
      await sleep(5);
    }
    throw new Error('no agent audio came');
  }

  /** Whether agent audio came after `after` (performance.now()) within `limitMs`; kept audio or not. */
  async agentSpokeSince(after: number, limitMs: number): Promise<boolean> {
    const until = performance.now() + limitMs;
    while (performance.now() < until && !this.stopped) {
      if (this.lastPlaysAt >= after || this.pending.some((frame) => frame.playsAt >= after)) return true;
      await sleep(FRAME_MS);
    }
    return false;
  }

  /** The agent audio that played between `from` and `to` (performance.now() times), as 8 kHz samples. */
  agentAudio(from = 0, to = Number.POSITIVE_INFINITY): Int16Array {
    const frames = this.played.filter((frame) => frame.playsAt >= from && frame.playsAt < to);
    const audio = new Int16Array(frames.length * FRAME_SAMPLES);
    for (const [i, frame] of frames.entries()) audio.set(frame.samples, i * FRAME_SAMPLES);
    return audio;
  }

  private send(message: object): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(message));
  }

  private sendFrame(samples: Int16Array): void {
    const timestamp = this.chunk * FRAME_MS;
    this.chunk++;
    this.send({
      event: 'media',
      sequenceNumber: String(this.sequence++),
      media: {
        track: 'inbound',
        chunk: String(this.chunk),
        timestamp: String(timestamp),
        payload: Buffer.from(encodeMulaw(samples)).toString('base64'),
      },
      streamSid: this.streamSid,
    });
  }

  private receive(message: { event: string; media?: { payload: string }; mark?: { name: string } }): void {
    const now = performance.now();
    if (message.event !== 'media') this.events.push(message);
    if (message.event === 'media' && message.media) {
      const samples = decodeMulaw(Buffer.from(message.media.payload, 'base64'));
      const playsAt = Math.max(now, this.playEnd);
      this.playEnd = playsAt + (samples.length / 8000) * 1000;
      if (samples.some((sample) => Math.abs(sample) > SOUND_LEVEL)) this.soundEnd = this.playEnd;
      this.pending.push({ samples, playsAt });
    } else if (message.event === 'mark' && message.mark) {
      if (message.mark.name === 'attached') this.onAttached();
      this.marks.push({ name: message.mark.name, echoedAt: null });
      this.pendingMarks.push({ name: message.mark.name, at: this.playEnd });
    } else if (message.event === 'clear') {
      this.clears.push(now);
      this.clearedAfterSaidFrames.push(this.saidFrames);
      this.pending = this.pending.filter((frame) => frame.playsAt <= now);
      this.pendingMarks = [];
      this.playEnd = Math.min(this.playEnd, now);
      this.soundEnd = Math.min(this.soundEnd, now);
    }
    this.playOut();
  }

  private pendingMarks: { name: string; at: number }[] = [];

  /** Moves what has started playing to `played`, and echoes the marks whose audio has played. */
  private playOut(): void {
    const now = performance.now();
    while (this.pending.length > 0 && this.pending[0].playsAt <= now) {
      const frame = this.pending.shift()!;
      this.lastPlaysAt = frame.playsAt;
      if (this.keepAgentAudio) this.played.push(frame);
    }
    while (this.pendingMarks.length > 0 && this.pendingMarks[0].at <= now) {
      const mark = this.pendingMarks.shift()!;
      const kept = this.marks.find((m) => m.name === mark.name && m.echoedAt === null);
      if (kept) kept.echoedAt = now;
      this.send({ event: 'mark', streamSid: this.streamSid, mark: { name: mark.name } });
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
