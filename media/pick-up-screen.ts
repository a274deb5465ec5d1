import { BeepDetector } from '../lib/audio/tone-detector.js';
import type { TurnEvent } from '../lib/audio/turn-detector.js';

// What the gateway hears of an outbound phone call's first moments for answering-machine
// detection (telephony spec section 6; workflows/call/screen.ts), for a carrier that cannot tell
// itself (the SIP side): whether the far end was already speaking as it answered (a machine starts
// its greeting at once, a person waits to hear who calls), and an answering machine's beep.

/** Audio heard from the answer that says whether the far end was speaking at pick-up. */
export const PICK_UP_LISTEN_MS = 600;
/** Longest the answer waits for that audio on the wall clock (none may come: RTP that never flows). */
const PICK_UP_WAIT_LIMIT_MS = 1_500;
/** A beep comes after a greeting: listened for this long from the answer, then not any more. */
const BEEP_LISTEN_MS = 60_000;

export class PickUpScreen {
  /** Audio the turn detector has processed, in ms from the answer. */
  private processedMs = 0;
  /** When the far end's speech first started (ms from the answer); null: not yet. */
  private speechStartedAtMs: number | null = null;
  private readonly beeps = new BeepDetector();
  private beeped = false;
  private wake: (() => void) | null = null;

  constructor(private readonly onBeep: () => void) {}

  /** The far end's next 20 ms, at `atMs` from the answer, in order: a beep ending in it is reported once. */
  heard(samples: Int16Array, atMs: number): void {
    if (this.beeped || atMs >= BEEP_LISTEN_MS) return;
    if (this.beeps.push(samples)) {
      this.beeped = true;
      this.onBeep();
    }
  }

  /** The turn detector's events for audio up to `untilMs` (from the answer). */
  detected(untilMs: number, events: readonly TurnEvent[]): void {
    for (const event of events) {
      if (event.type === 'speech_started') this.speechStartedAtMs ??= event.atMs;
    }
    this.processedMs = Math.max(this.processedMs, untilMs);
    this.wake?.();
  }

  /**
   * Whether the far end was speaking in its first PICK_UP_LISTEN_MS, once that much audio is
   * heard; null when it did not come in time (the carrier's audio never flowed: who answered is
   * then unknown).
   */
  async speakingAtPickUp(): Promise<boolean | null> {
    const deadline = Date.now() + PICK_UP_WAIT_LIMIT_MS;
    while (this.processedMs < PICK_UP_LISTEN_MS && this.speechStartedAtMs === null) {
      const left = deadline - Date.now();
      if (left <= 0) return null;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
    return this.speechStartedAtMs !== null && this.speechStartedAtMs < PICK_UP_LISTEN_MS;
  }
}
