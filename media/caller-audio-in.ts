import { decodeMulaw } from '../lib/audio/mulaw.js';
import type { TurnDetector, TurnEvent } from '../lib/audio/turn-detector.js';
import type { Logger } from '../lib/logger.js';
import { mediaTurnDetectionLag, stageQueueWait } from '../lib/metrics/gateway-metrics.js';
import { SerialQueue } from '../lib/serial-queue.js';
import type { CallRecording } from './call-recording.js';
import type { PickUpScreen } from './pick-up-screen.js';

// The person's audio as it comes in (the caller-input stage of the media path, media/call-audio.ts):
// decoded (μ-law), recorded (channel 1), heard by the pick-up screen, then through voice activity
// detection and the turn detector, one message after the other, whose events go on to the person's
// turns (media/user-turns.ts). Detection that falls behind is bounded: frames past
// MAX_FRAMES_BEHIND are recorded but not detected, never queued without end.

/** Caller frames waiting for voice activity detection before new ones are dropped (10 s). */
const MAX_FRAMES_BEHIND = 500;
/** μ-law at 8 kHz: 8 samples (bytes) a millisecond. */
const SAMPLES_PER_MS = 8;

export interface CallerAudioInDeps {
  detector: TurnDetector;
  recording: CallRecording | null;
  pickUp: PickUpScreen | null;
  /** The turn detector's events, in order. */
  onTurnEvent: (event: TurnEvent) => void;
  logger: Logger;
}

export class CallerAudioIn {
  /** The person's audio heard so far, in ms: each message counts as long as it is (10 to 100 ms), not as one 20 ms frame. */
  private heardMs = 0;
  /** Frames through detection, one after the other (its size: the frames behind). */
  private readonly detection = new SerialQueue(stageQueueWait('caller_audio'));

  constructor(private readonly deps: CallerAudioInDeps) {}

  /** Caller frames waiting for voice activity detection (the gateway's `media_frames_behind`). */
  get framesWaiting(): number {
    return this.detection.size;
  }

  /**
   * The person's next audio (μ-law at 8 kHz, a sample a byte: 10 to 100 ms a message), in order.
   * `detect` false: recorded and screened only (a far end being handed over: what it hears then is
   * not the agent's to answer).
   */
  hear(payload: Uint8Array, detect: boolean): void {
    const atMs = this.heardMs;
    const untilMs = atMs + payload.length / SAMPLES_PER_MS;
    this.heardMs = untilMs;
    const samples = decodeMulaw(payload);
    this.deps.recording?.caller(samples, atMs);
    this.deps.pickUp?.heard(samples, atMs);
    if (!detect) return;
    if (this.detection.size >= MAX_FRAMES_BEHIND) return; // detection fell behind: bounded, not queued forever
    const arrived = performance.now();
    this.detection
      .push(async () => {
        const events = await this.deps.detector.push(samples, atMs);
        for (const event of events) {
          if (event.type === 'speech_started' || event.type === 'turn_ended') {
            mediaTurnDetectionLag.observe({ event: event.type }, (performance.now() - arrived) / 1000);
          }
          this.deps.onTurnEvent(event);
        }
        this.deps.pickUp?.detected(untilMs, events);
      })
      .catch((error: unknown) =>
        this.deps.logger.error('voice activity detection failed', { error: `${error}` }),
      );
  }

  /**
   * Once the audio heard so far is through detection: the turn under way, if any, ends here (the
   * person hung up, or an answering machine's greeting is over) and its event goes on.
   */
  flush(): Promise<void> {
    return this.detection.push(() => {
      const last = this.deps.detector.flush();
      if (last) this.deps.onTurnEvent(last);
    });
  }
}
