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
