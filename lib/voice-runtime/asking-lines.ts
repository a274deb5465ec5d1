// Whether the agent's line asks the caller for something (a number, a spelling, an email address):
// the caller's words at a pause are read after it (lib/voice-runtime/unfinished-words.ts,
// email-read-out.ts), as LiveKit's turn detector reads the conversation before the turn.

/** A question's closing mark, after any closing quote or bracket. */
export const QUESTION_END = /\?["'”’)\]]*$/u;

/**
 * Words that ask for something, at a word's start (a sentence that mentions a number and asks for
 * it without a question mark: "Please read me the code.", "Oppgi kundenummeret ditt.").
 */
const REQUEST =
  /(?<!\p{L})(?:please|tell|give|read|say|spell|enter|type|vennligst|oppgi|si|gi|uppge|säg|ge|angiv|sig|bitte|nennen|sagen|geben)(?!\p{L})/iu;

/** The first sentence of `line` that mentions `about` and is a question or a request; undefined: none. */
export function askingSentence(line: string, about: RegExp): string | undefined {
  return line
    .split(/(?<=[.?!])\s+/u)
    .find((sentence) => about.test(sentence) && (QUESTION_END.test(sentence) || REQUEST.test(sentence)));
}
