import type { HeardWords } from '../lib/speech/speech-ports.js';

// Whether the words of a caller's pause are unsure (media/end-of-turn-rule.ts): Whisper writes a
// phrase cut off at a pause as a finished sentence, less surely than one that is finished. A caller
// Whisper hears poorly (an accent, a bad line, a robotic voice: of eSpeak NG's English, 33 of 40
// complete sentences scored below the threshold) would wait at every turn for a doubt that tells
// nothing: once the caller's own finished turns scored below it (the median of their last ones),
// the score is not read for the rest of the call, and the words alone decide, as without scores.

/** Finished turns kept, and how many it takes to judge the caller. */
const KEPT_TURNS = 5;
const JUDGED_AFTER_TURNS = 3;

export class WordsDoubt {
  /** The scores of the caller's finished turns: each utterance's last pause, the latest last. */
  private readonly turnScores: number[] = [];
  /** The latest pause's utterance (its start) and score: its utterance's last so far. */
  private latest: { startedAtMs: number; avgLogprob: number } | null = null;

  /** `below`: the average log probability below which a pause's words are unsure (lib/speech/local-doubt.ts). */
  constructor(private readonly below: number) {}

  /** Whether the words heard at a pause of the utterance begun at `startedAtMs` are unsure; in the order heard. */
  unsure(startedAtMs: number, heard: HeardWords): boolean {
    if (this.latest && this.latest.startedAtMs !== startedAtMs) {
      // A new utterance: the one before ended at its last pause, whose words were its turn's.
      this.turnScores.push(this.latest.avgLogprob);
      if (this.turnScores.length > KEPT_TURNS) this.turnScores.shift();
      this.latest = null;
    }
    if (heard.avgLogprob === undefined || !heard.text.trim()) return false;
    this.latest = { startedAtMs, avgLogprob: heard.avgLogprob };
    return heard.avgLogprob < this.below && !this.heardPoorly();
  }

  /** The caller's finished turns themselves score below the threshold: it tells nothing about them. */
  private heardPoorly(): boolean {
    if (this.turnScores.length < JUDGED_AFTER_TURNS) return false;
    const sorted = [...this.turnScores].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)] < this.below;
  }
}
