import type { EndOfTurnRule, WordsVerdict } from '../lib/audio/pause-verdict.js';
import type { EndOfTurnModel } from '../lib/speech/end-of-turn.js';
import type { HeardWords } from '../lib/speech/speech-ports.js';
import { emailAskedFor } from '../lib/voice-runtime/email-read-out.js';
import { type NumberAsked, numberAskedFor, soundsUnfinished } from '../lib/voice-runtime/unfinished-words.js';
import type { HeardAhead } from './heard-ahead.js';
import { WordsDoubt } from './words-doubt.js';

// VOICE_TURN_DETECTION=model (docs/voice.md, "End of turn by a model"): the turn detector's rule for
// a call. The model hears the voice of the turn so far; the words of the pause, transcribed from it
// for the answer anyway (heard-ahead.ts), must not sound unfinished (lib/voice-runtime/unfinished-words.ts).
// Both are asked at the pause, and the turn ends when both are in and say so: the words cost no time
// on the way to the answer, which waits for them in any case. The words are read after what the
// agent last said: once it asked for a number, a short group of digits is not the end of it (as many
// digits as it said the number has are); once it asked for an email address, its first part is not.
// Words the recogniser was unsure of (below `doubtBelow`; Whisper writes a cut-off phrase as a
// finished sentence, less surely than a finished one; words-doubt.ts) end the turn only after a
// longer silence.

export function endOfTurnRule(options: {
  model: EndOfTurnModel;
  heardAhead: HeardAhead;
  /** The agent's language (BCP 47): which words lead on. */
  language: string;
  /** What the caller last heard the agent say (AgentVoice.lastHeard); none: the words alone. */
  agentLine?: () => string;
  /** The average log probability below which words are unsure (lib/speech/local-doubt.ts); none: never. */
  doubtBelow?: number;
  pauseMs: number;
  maxMs: number;
  failed?: (error: unknown) => void;
}): EndOfTurnRule {
  const { model, heardAhead, language, agentLine, doubtBelow, pauseMs, maxMs, failed } = options;
  const doubt = doubtBelow === undefined ? null : new WordsDoubt(doubtBelow);
  type Asked = { numberAsked: NumberAsked | null; emailAsked: boolean };
  const verdict = (startedAtMs: number, heard: HeardWords, asked: Asked): WordsVerdict => {
    const unsure = doubt?.unsure(startedAtMs, heard) ?? false;
    if (soundsUnfinished(heard.text, language, asked)) return 'unfinished';
    return unsure ? 'unsure' : 'finished';
  };
  return {
    complete: (samples) => model.complete({ sampleRate: 8000, samples }),
    words: (pause) => {
      const line = agentLine?.() ?? '';
      const asked = { numberAsked: numberAskedFor(line, language), emailAsked: emailAskedFor(line) };
      return heardAhead.wordsOf(pause)?.then((heard) => verdict(pause.startedAtMs, heard, asked)) ?? null;
    },
    pauseMs,
    maxMs,
    ...(failed ? { failed } : {}),
  };
}
