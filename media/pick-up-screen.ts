import { BeepDetector } from '../lib/audio/tone-detector.js';
import type { TurnEvent } from '../lib/audio/turn-detector.js';
import { STT_TIMEOUT_MS } from '../lib/settings.js';
import { SPEECH_BACK_WITHIN_MS } from '../lib/speech/speech-comes-back.js';

// What the gateway hears of an outbound phone call's first moments for answering-machine
// detection (telephony spec section 6; workflows/call/screen.ts), for a carrier that cannot tell
// itself (the SIP side): whether the far end was already speaking as it answered (a machine starts
// its greeting at once, a person waits to hear who calls), an answering machine's beep, and the
// end of its greeting for one without a beep (1 s of silence after speech, once the decision is due).

/** Audio heard from the answer that says whether the far end was speaking at pick-up. */
export const PICK_UP_LISTEN_MS = 600;
/** Longest the answer waits for that audio on the wall clock (none may come: RTP that never flows). */
const PICK_UP_WAIT_LIMIT_MS = 1_500;
/** A beep comes after a greeting: listened for this long from the answer, then not any more. */
const BEEP_LISTEN_MS = 60_000;
/** The greeting is over after this much silence following speech (the spec's "1 s of silence")... */
const QUIET_AFTER_SPEECH_MS = 1_000;
/** ...once the decision is due (workflows/call/screen.ts decides 3.7 s after the answer). */
const QUIET_NOT_BEFORE_MS = 3_700;
/**
 * The beep or the greeting's end goes to the workflow after the greeting's words, the record of who
 * answered: they are waited for as long as a transcription may take (one request's timeout, then
 * the speech server's come-back budget), not the hang-up's shorter limit. The machine records for
 * far longer, so a message that begins late is still on it.
 */
export const GREETING_WORDS_LIMIT_MS = STT_TIMEOUT_MS + SPEECH_BACK_WITHIN_MS;

export class PickUpScreen {
  /** Audio the turn detector has processed, in ms from the answer. */
  private processedMs = 0;
  /** When the far end's speech first started (ms from the answer); null: not yet. */
  private speechStartedAtMs: number | null = null;
  private readonly beeps = new BeepDetector();
  private beeped = false;
  private wake: (() => void) | null = null;
  /** The far end is speaking now; when its last speech ended (ms from the answer; null: none yet). */
  private speaking = false;
  private speechEndedAtMs: number | null = null;
  private quietReported = false;

  constructor(
    private readonly on: {
      beep: () => void;
      /** The greeting is over: 1 s of silence after speech, at or after the decision (once). */
      quiet: () => void;
    },
  ) {}

  /** The far end's next 20 ms, at `atMs` from the answer, in order: a beep ending in it is reported once. */
  heard(samples: Int16Array, atMs: number): void {
    if (this.beeped || atMs >= BEEP_LISTEN_MS) return;
    if (this.beeps.push(samples)) {
      this.beeped = true;
      this.on.beep();
    }
  }

  /** The turn detector's events for audio up to `untilMs` (from the answer). */
  detected(untilMs: number, events: readonly TurnEvent[]): void {
    for (const event of events) {
      if (event.type === 'speech_started') this.speechStartedAtMs ??= event.atMs;
      if (event.type === 'speech_started' || event.type === 'speech_resumed') this.speaking = true;
      if (event.type === 'speech_paused' || event.type === 'turn_ended') {
        this.speaking = false;
        this.speechEndedAtMs = event.endedAtMs;
      }
    }
    this.processedMs = Math.max(this.processedMs, untilMs);
    this.wake?.();
    const quiet =
      !this.quietReported &&
      !this.speaking &&
      this.speechEndedAtMs !== null &&
      untilMs >= QUIET_NOT_BEFORE_MS &&
      untilMs - this.speechEndedAtMs >= QUIET_AFTER_SPEECH_MS &&
      untilMs < BEEP_LISTEN_MS;
    if (quiet) {
      this.quietReported = true;
      this.on.quiet();
    }
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
