import type { TurnEvent } from '../lib/audio/turn-detector.js';
import type { HeardWords } from '../lib/speech/speech-ports.js';

// What the person said up to a pause (`speech_paused`), transcribed before their turn has ended
// (media/call-audio.ts): when the turn then ends with the same audio, its transcription is the
// turn's, already in or on its way. One at a time; one the person went on from (more speech, or a
// turn whose audio differs) is aborted, since it would only take the speech server's time.

type Pause = Extract<TurnEvent, { type: 'speech_paused' }>;
type TurnEnded = Extract<TurnEvent, { type: 'turn_ended' }>;
type Span = Pick<TurnEnded, 'startedAtMs' | 'endedAtMs'>;

/** A pause's transcription. */
export interface PauseHeard {
  startedAtMs: number;
  endedAtMs: number;
  /** The words, with the recogniser's confidence when it gave it (the end of the turn reads it). */
  heard: Promise<HeardWords>;
  text: Promise<string>;
  /** Epoch ms of its request, and of its answer once in. */
  requestedAt: number;
  answeredAt: number | null;
}

export class HeardAhead {
  private current: { heard: PauseHeard; stop: AbortController } | null = null;

  constructor(private readonly transcribe: (event: Pause, signal: AbortSignal) => Promise<HeardWords>) {}

  /** Transcribes the pause now (the one before it is dropped). */
  begin(pause: Pause): PauseHeard {
    this.drop();
    const stop = new AbortController();
    const words = this.transcribe(pause, stop.signal);
    const heard: PauseHeard = {
      startedAtMs: pause.startedAtMs,
      endedAtMs: pause.endedAtMs,
      heard: words,
      text: words.then((said) => said.text),
      requestedAt: Date.now(),
      answeredAt: null,
    };
    heard.text.then(
      () => {
        heard.answeredAt = Date.now();
      },
      () => {}, // a turn that ends with this audio transcribes it again
    );
    this.current = { heard, stop };
    return heard;
  }

  /** Whether `heard` is still the latest pause's (nothing dropped or took it since). */
  isCurrent(heard: PauseHeard): boolean {
    return this.current?.heard === heard;
  }

  /** The words of `pause` when it is the latest pause's transcription (under way or in), else null. */
  wordsOf(pause: Span): Promise<HeardWords> | null {
    return this.latestOf(pause)?.heard ?? null;
  }

  /** The person went on: the pause's transcription is aborted. False when there was none. */
  drop(): boolean {
    if (!this.current) return false;
    this.current.stop.abort();
    this.current = null;
    return true;
  }

  /** The turn ended: the pause's transcription when it is of the same audio; else it is dropped (null). */
  takeFor(turn: TurnEnded): PauseHeard | null {
    const heard = this.latestOf(turn);
    if (heard) {
      this.current = null;
      return heard;
    }
    this.drop();
    return null;
  }

  /** The latest pause's transcription when it is of the same audio as `span` (its start and end). */
  private latestOf(span: Span): PauseHeard | null {
    const heard = this.current?.heard;
    return heard?.startedAtMs === span.startedAtMs && heard.endedAtMs === span.endedAtMs ? heard : null;
  }
}
