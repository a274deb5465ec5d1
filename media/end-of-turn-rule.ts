import type { EndOfTurnRule } from '../lib/audio/turn-detector.js';
import type { EndOfTurnModel } from '../lib/speech/end-of-turn.js';
import { soundsUnfinished } from '../lib/voice-runtime/unfinished-words.js';
import type { HeardAhead } from './heard-ahead.js';

// VOICE_TURN_DETECTION=model (docs/voice.md, "End of turn by a model"): the turn detector's rule for
// a call. The model hears the voice of the turn so far; the words of the pause, transcribed from it
// for the answer anyway (heard-ahead.ts), must not sound unfinished (lib/voice-runtime/unfinished-words.ts).
// Both are asked at the pause, and the turn ends when both are in and say so: the words cost no time
// on the way to the answer, which waits for them in any case.

export function endOfTurnRule(options: {
  model: EndOfTurnModel;
  heardAhead: HeardAhead;
  /** The agent's language (BCP 47): which words lead on. */
  language: string;
  pauseMs: number;
  maxMs: number;
  failed?: (error: unknown) => void;
}): EndOfTurnRule {
  const { model, heardAhead, language, pauseMs, maxMs, failed } = options;
  return {
    complete: (samples) => model.complete({ sampleRate: 8000, samples }),
    unfinished: (pause) =>
      heardAhead.wordsOf(pause)?.then((text) => soundsUnfinished(text, language)) ?? null,
    pauseMs,
    maxMs,
    ...(failed ? { failed } : {}),
  };
}
