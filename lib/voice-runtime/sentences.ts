import { primaryLanguage } from '../speech/openai-speech-to-text.js';

// Splits text that arrives in pieces (a streamed answer) into sentences as soon as each is
// complete, so the voice side can start speaking the first one while the rest is being made.
// A sentence ends at `.`, `!`, `?` or `…` (closing quotes and brackets included) followed by
// whitespace, or at a line break; what is left when the text ends is the last sentence.

const SENTENCE_END = /[.!?…]+["'”’)\]]*\s+|\n+/g;

export class SentenceSplitter {
  private buffer = '';

  constructor(private readonly onSentence: (sentence: string) => void) {}

  /** Adds the next piece of text; hands over every sentence it completes. */
  push(piece: string): void {
    this.buffer += piece;
    let start = 0;
    SENTENCE_END.lastIndex = 0;
    for (let match = SENTENCE_END.exec(this.buffer); match; match = SENTENCE_END.exec(this.buffer)) {
      const end = match.index + match[0].length;
      this.emit(this.buffer.slice(start, end));
      start = end;
    }
    this.buffer = this.buffer.slice(start);
  }

  /** The text is complete: hands over what is left. */
  end(): void {
    this.emit(this.buffer);
    this.buffer = '';
  }

  private emit(text: string): void {
    const sentence = text.trim();
    if (sentence) this.onSentence(sentence);
  }
}

const CLAUSE_END = /[,;:]["'”’)\]]*\s+|\s+[–—]\s+/;

/**
 * A line's first sentence as it is synthesised (docs/voice.md, "A line's first clause first"): in
 * English, its first clause and the rest ("Certainly," then "I can help you with that booking."),
 * so that the clause plays while the rest is made; otherwise, and in the other languages, whole.
 * The local voices of the other languages (eSpeak NG) make a sentence in milliseconds, so a cut
 * gains nothing there, and Whisper base heard eSpeak's Norwegian opening worse when it was cut.
 */
export function synthesisPieces(sentence: string, language: string | undefined): string[] {
  if (!language || primaryLanguage(language) !== 'en') return [sentence];
  const clause = CLAUSE_END.exec(sentence);
  if (!clause || clause.index === 0) return [sentence];
  const end = clause.index + clause[0].length;
  const rest = sentence.slice(end).trim();
  return rest ? [sentence.slice(0, end).trim(), rest] : [sentence];
}
