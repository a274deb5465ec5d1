import type { EndOfTurnRule } from '../lib/audio/turn-detector.js';
import type { EndOfTurnModel } from '../lib/speech/end-of-turn.js';
import { asksForNumber, soundsUnfinished } from '../lib/voice-runtime/unfinished-words.js';
import type { HeardAhead } from './heard-ahead.js';

// VOICE_TURN_DETECTION=model (docs/voice.md, "End of turn by a model"): the turn detector's rule for
// a call. The model hears the voice of the turn so far; the words of the pause, transcribed from it
// for the answer anyway (heard-ahead.ts), must not sound unfinished (lib/voice-runtime/unfinished-words.ts).
// Both are asked at the pause, and the turn ends when both are in and say so: the words cost no time
// on the way to the answer, which waits for them in any case. The words are read after what the
// agent last said: once it asked for a number, a short group of digits is not the end of it.

export function endOfTurnRule(options: {
  model: EndOfTurnModel;
  heardAhead: HeardAhead;
  /** The agent's language (BCP 47): which words lead on. */
  language: string;
  /** What the caller last heard the agent say (AgentVoice.lastHeard); none: the words alone. */
  agentLine?: () => string;
  pauseMs: number;
  maxMs: number;
  failed?: (error: unknown) => void;
}): EndOfTurnRule {
  const { model, heardAhead, language, agentLine, pauseMs, maxMs, failed } = options;
  return {
    complete: (samples) => model.complete({ sampleRate: 8000, samples }),
    unfinished: (pause) => {
      const numberAsked = agentLine ? asksForNumber(agentLine()) : false;
      return (
        heardAhead.wordsOf(pause)?.then((text) => soundsUnfinished(text, language, { numberAsked })) ?? null
      );
    },
    pauseMs,
    maxMs,
    ...(failed ? { failed } : {}),
  };
}
