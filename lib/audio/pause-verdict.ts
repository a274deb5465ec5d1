// VOICE_TURN_DETECTION=model (docs/voice.md, "End of turn by a model"): one pause of a caller's
// turn, judged by the end-of-turn model and by the pause's words, and the silence that ends the
// turn given their answers so far. The turn detector (turn-detector.ts) makes one at each pause
// and asks it at every frame of the silence; speech again throws it away.

/** A pause of a turn: its utterance's start and its last speech, ms on the call's clock. */
export interface Pause {
  startedAtMs: number;
  endedAtMs: number;
}

/**
 * At a pause in a turn (`speech_paused`) the model is asked whether it is complete; from `pauseMs`
 * of silence on, complete ends it (at its last speech, as silence would), not complete waits for
 * more speech up to `maxMs` of silence, and so does a decision still on its way. A model that
 * fails is not asked again on this call: its turns end by endpointingMs from then on, and
 * `failed` is told once.
 */
export interface EndOfTurnRule {
  complete(audio: Int16Array): Promise<boolean>;
  /**
   * How the words of the pause announced (a frame before: its transcription has begun) sound.
   * Unfinished: the turn waits up to maxMs. Finished: the model's yes ends it at pauseMs, its no
   * halfway to maxMs. Unsure (finished, but the recogniser doubts them): halfway, or maxMs on the
   * model's no. null, or a failure: the model alone.
   */
  words?(pause: Pause): Promise<WordsVerdict> | null;
  pauseMs: number;
  maxMs: number;
  failed?(error: unknown): void;
}

/** How a pause's words sound (EndOfTurnRule.words). */
export type WordsVerdict = 'finished' | 'unfinished' | 'unsure';

export class PauseVerdict {
  private answer: 'pending' | 'complete' | 'incomplete' = 'pending';
  /** EndOfTurnRule.words's answer: undefined until asked; none: no words came. */
  private words: 'pending' | WordsVerdict | 'none' | undefined;

  /** Asks the model now about `audio`, the turn up to its last speech; a failure goes to `modelFailed`. */
  constructor(
    private readonly rule: EndOfTurnRule,
    audio: Int16Array,
    modelFailed: (error: unknown) => void,
  ) {
    rule.complete(audio).then((complete) => {
      this.answer = complete ? 'complete' : 'incomplete';
    }, modelFailed);
  }

  /** Asks once how the pause's words sound; no words, or none that come, leave it to the model. */
  askWords(pause: Pause): void {
    if (!this.rule.words || this.words) return;
    const asked = this.rule.words(pause);
    this.words = asked ? 'pending' : 'none';
    asked?.then(
      (words) => {
        this.words = words;
      },
      () => {
        this.words = 'none';
      },
    );
  }

  /** The silence (ms after the last speech) that ends the turn, by the answers in so far. */
  endingSilenceMs(): number {
    const { rule, answer, words } = this;
    const wordsIn = !rule.words || words === 'finished' || words === 'unsure' || words === 'none';
    if (answer === 'pending' || !wordsIn) return rule.maxMs;
    // One doubt (the model's of finished words, the recogniser's of its own) ends it halfway: a pause
    // before "…to the airport" of up to a second keeps the turn whole; both doubts wait maxMs.
    const halfway = Math.round((rule.pauseMs + rule.maxMs) / 2);
    if (answer === 'complete') return words === 'unsure' ? halfway : rule.pauseMs;
    return words === 'finished' ? halfway : rule.maxMs;
  }
}
