// The caller's turns, from their 8 kHz audio frame by frame: when speech begins, when it has lasted
// long enough to count (a barge-in may stop the agent), and when the turn ends with the utterance.
import { SerialQueue } from '../serial-queue.js';
import { type EndOfTurnRule, PauseVerdict } from './pause-verdict.js';
import { VAD_SAMPLE_RATE, VAD_WINDOW_SAMPLES, type VoiceActivity } from './voice-activity.js';

export type TurnEvent =
  /** The detector heard speech begin (the first frame above the start threshold). */
  | { type: 'speech_started'; atMs: number }
  /**
   * Speech has lasted at least minSpeechMs (at `atMs`, the end of that frame): a barge-in may stop
   * the agent now. `audio`: the utterance so far (its first words), `startedAtMs` its start.
   */
  | { type: 'speech_confirmed'; atMs: number; startedAtMs: number; audio: Int16Array }
  /**
   * endpointingMs of silence after speech of at least minTurnSpeechMs (or maxUtteranceMs of it);
   * audio = the utterance at 8 kHz with its pre-roll.
   */
  | { type: 'turn_ended'; startedAtMs: number; endedAtMs: number; audio: Int16Array }
  /**
   * A pause of PAUSE_MS in a turn's speech, before endpointing ends it: `audio` is the turn_ended
   * audio the turn will have if no speech follows, but for the rest of its post-roll's silence (the
   * same words): its transcription and answer may start now, taken if the turn ends with this audio.
   */
  | { type: 'speech_paused'; startedAtMs: number; endedAtMs: number; audio: Int16Array }
  /** Speech again after `speech_paused`: what was started for the pause is of no use. */
  | { type: 'speech_resumed'; atMs: number };

export interface TurnDetectorOptions {
  vad: VoiceActivity;
  /** Silence after confirmed speech that ends the turn (VOICE_ENDPOINTING_MS). */
  endpointingMs: number;
  /** Voiced time before speech may barge in over the agent (default 300 ms): a cough or a click does not. */
  minSpeechMs?: number;
  /**
   * Voiced time before speech is a turn when it ends (default 150 ms): a short "Hi." or "Hello?"
   * is one (it is a third of minSpeechMs and shorter at 8 kHz); a click is not. What it said is
   * the transcription's to tell: a turn without words adds no line (media/call-audio.ts).
   */
  minTurnSpeechMs?: number;
  /** A turn ends after this long even without a pause (default 30 s); bounds the audio held. */
  maxUtteranceMs?: number;
  /** End of turn by a model (VOICE_TURN_DETECTION=model) instead of endpointingMs of silence. */
  endOfTurn?: EndOfTurnRule;
  /** The model ends turns from the second on; the first ends by silence (a greeting screened whole). */
  firstTurnBySilence?: boolean;
}

/** Silero's usual hysteresis: speech begins at 0.5 and goes on while the probability stays >= 0.35. */
const START_THRESHOLD = 0.5;
const CONTINUE_THRESHOLD = 0.35;
/** Audio kept before the detected start (the detector hears a word's onset late) and after the end. */
const PRE_ROLL_MS = 200;
const POST_ROLL_MS = 200;
/** The pause that announces `speech_paused` and asks the model: a turn's end waits for its words (docs/performance.md "The pause at 60 ms"). */
const PAUSE_MS = 60;
const DEFAULT_MIN_SPEECH_MS = 300;
const DEFAULT_MIN_TURN_SPEECH_MS = 150;
const DEFAULT_MAX_UTTERANCE_MS = 30_000;

interface TimedFrame {
  atMs: number;
  samples: Int16Array;
}

/** Speech heard and not yet ended or dismissed. */
interface Utterance {
  startedAtMs: number;
  /** End of the last VAD window held for speech (not of the frames after it: 0-31 ms sooner). */
  lastVoicedEndMs: number;
  voicedMs: number;
  confirmed: boolean;
  /** `speech_paused` was announced for the silence since lastVoicedEndMs. */
  pauseAnnounced: boolean;
  frames: TimedFrame[];
  /** The end-of-turn model's decision on the current pause: null until asked (speech again: null). */
  verdict: PauseVerdict | null;
}

/**
 * One call's turn detection. Frames are processed in the order `push` is called (a push waits for
 * the ones before it); call `flush` after the last push has settled.
 */
export class TurnDetector {
  private readonly vad: VoiceActivity;
  private readonly endpointingMs: number;
  private readonly minSpeechMs: number;
  private readonly minTurnSpeechMs: number;
  private readonly maxUtteranceMs: number;
  /** The VAD window being filled, as floats in -1..1. */
  private readonly window = new Float32Array(VAD_WINDOW_SAMPLES);
  private windowFill = 0;
  private probability = 0;
  private windowEndMs = 0; // where the window `probability` is of ended, on the call's clock
  /** The last PRE_ROLL_MS of frames, whatever they held. */
  private recent: TimedFrame[] = [];
  private utterance: Utterance | null = null;
  private readonly frames = new SerialQueue(); // processed one after the other, in order
  private endOfTurn: EndOfTurnRule | undefined;
  /** The model's rule, held back (firstTurnBySilence): endOfTurn from the first turn's end on. */
  private heldRule: EndOfTurnRule | undefined;

  constructor(options: TurnDetectorOptions) {
    this.vad = options.vad;
    this.endpointingMs = options.endpointingMs;
    this.minSpeechMs = options.minSpeechMs ?? DEFAULT_MIN_SPEECH_MS;
    this.minTurnSpeechMs = Math.min(options.minTurnSpeechMs ?? DEFAULT_MIN_TURN_SPEECH_MS, this.minSpeechMs);
    this.maxUtteranceMs = options.maxUtteranceMs ?? DEFAULT_MAX_UTTERANCE_MS;
    if (options.firstTurnBySilence) this.heldRule = options.endOfTurn;
    else this.endOfTurn = options.endOfTurn;
  }

  /** 20 ms of the caller's audio (160 samples at 8 kHz), in order; atMs = the frame's start on the call's clock. */
  push(frame: Int16Array, atMs: number): Promise<TurnEvent[]> {
    const own = frame.slice();
    return this.frames.push(() => this.process(own, atMs));
  }

  /** The speech being heard, up to its last voiced frame (with its pre-roll); null between utterances. */
  speechSoFar(): Int16Array | null {
    return this.utterance ? this.endTurn(this.utterance, this.utterance.lastVoicedEndMs).audio : null;
  }

  /** The caller hung up: a turn in progress ends now (or null when none). */
  flush(): TurnEvent | null {
    const utterance = this.utterance;
    this.utterance = null;
    if (!utterance || !this.isTurn(utterance)) return null;
    return this.endTurn(utterance, utterance.lastVoicedEndMs);
  }

  private async process(frame: Int16Array, atMs: number): Promise<TurnEvent[]> {
    await this.listen(frame, atMs);
    const endMs = atMs + (frame.length * 1000) / VAD_SAMPLE_RATE;
    const timed = { atMs, samples: frame };
    const events: TurnEvent[] = [];
    let utterance = this.utterance;
    if (!utterance && this.probability >= START_THRESHOLD) {
      utterance = {
        startedAtMs: atMs,
        lastVoicedEndMs: atMs,
        voicedMs: 0,
        confirmed: false,
        pauseAnnounced: false,
        frames: [...this.recent],
        verdict: null,
      };
      this.utterance = utterance;
      events.push({ type: 'speech_started', atMs });
    }
    this.remember(timed);
    if (!utterance) return events;

    utterance.frames.push(timed);
    if (this.probability >= CONTINUE_THRESHOLD) {
      utterance.voicedMs += endMs - atMs;
      utterance.lastVoicedEndMs = this.windowEndMs;
      utterance.verdict = null;
      if (utterance.pauseAnnounced) {
        utterance.pauseAnnounced = false;
        events.push({ type: 'speech_resumed', atMs });
      }
    }
    if (!utterance.confirmed && utterance.voicedMs >= this.minSpeechMs) {
      utterance.confirmed = true;
      const { audio } = this.endTurn(utterance, endMs);
      events.push({ type: 'speech_confirmed', atMs: endMs, startedAtMs: utterance.startedAtMs, audio });
    }
    const silentMs = endMs - utterance.lastVoicedEndMs;
    const lastedMs = endMs - utterance.startedAtMs;
    const endingSilenceMs = this.endingSilenceMs(utterance);
    if (silentMs >= endingSilenceMs || lastedMs >= this.maxUtteranceMs) {
      // Speech too short to count is dismissed without an event: it never was a turn.
      this.utterance = null;
      if (this.isTurn(utterance)) {
        events.push(this.endTurn(utterance, silentMs >= endingSilenceMs ? utterance.lastVoicedEndMs : endMs));
        [this.endOfTurn, this.heldRule] = [this.endOfTurn ?? this.heldRule, undefined];
      }
      return events;
    }
    // Asked at the pause, not at pauseMs: its answer (30-80 ms) is in by then; the words come after.
    if (this.endOfTurn && silentMs >= PAUSE_MS && !utterance.verdict && this.isTurn(utterance)) {
      this.askModel(this.endOfTurn, utterance);
    }
    if (utterance.pauseAnnounced && this.endOfTurn) {
      utterance.verdict?.askWords({
        startedAtMs: utterance.startedAtMs,
        endedAtMs: utterance.lastVoicedEndMs,
      });
    }
    if (silentMs >= PAUSE_MS && !utterance.pauseAnnounced && this.isTurn(utterance)) {
      utterance.pauseAnnounced = true;
      const { startedAtMs, endedAtMs, audio } = this.endTurn(utterance, utterance.lastVoicedEndMs);
      events.push({ type: 'speech_paused', startedAtMs, endedAtMs, audio });
    }
    return events;
  }

  /** The silence that ends this utterance now: the model's decision, else endpointingMs. */
  private endingSilenceMs(utterance: Utterance): number {
    if (!this.endOfTurn || !this.isTurn(utterance)) return this.endpointingMs;
    return utterance.verdict?.endingSilenceMs() ?? this.endOfTurn.maxMs;
  }

  /** Asks the model about the pause now; its answer is taken by the frames that follow. */
  private askModel(rule: EndOfTurnRule, utterance: Utterance): void {
    // Up to its last speech: with 200 ms of silence after it, more cut-off sentences were "complete".
    const { audio } = this.endTurn(utterance, utterance.lastVoicedEndMs, 0);
    utterance.verdict = new PauseVerdict(rule, audio, (error) => {
      // Not asked again on this call: the silence rule from the next frame on (the turn's own included).
      if (this.endOfTurn !== rule) return;
      this.endOfTurn = undefined;
      rule.failed?.(error);
    });
  }

  private isTurn(utterance: Utterance): boolean {
    return utterance.voicedMs >= this.minTurnSpeechMs;
  }

  /** Runs the detector on every full window the frame completes; the probability is the latest one. */
  private async listen(frame: Int16Array, atMs: number): Promise<void> {
    for (let i = 0; i < frame.length; i++) {
      this.window[this.windowFill++] = frame[i] / 32768;
      if (this.windowFill === VAD_WINDOW_SAMPLES) {
        this.windowFill = 0;
        this.probability = await this.vad.probability(this.window);
        this.windowEndMs = atMs + ((i + 1) * 1000) / VAD_SAMPLE_RATE;
      }
    }
  }

  private remember(frame: TimedFrame): void {
    this.recent.push(frame);
    while (this.recent.length > 0 && this.recent[0].atMs < frame.atMs - PRE_ROLL_MS + 1) this.recent.shift();
  }

  private endTurn(
    utterance: Utterance,
    endedAtMs: number,
    postRollMs = POST_ROLL_MS,
  ): Extract<TurnEvent, { type: 'turn_ended' }> {
    const kept = utterance.frames.filter((frame) => frame.atMs < endedAtMs + postRollMs);
    const audio = new Int16Array(kept.reduce((total, frame) => total + frame.samples.length, 0));
    let offset = 0;
    for (const frame of kept) {
      audio.set(frame.samples, offset);
      offset += frame.samples.length;
    }
    return { type: 'turn_ended', startedAtMs: utterance.startedAtMs, endedAtMs, audio };
  }
}
