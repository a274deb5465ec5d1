// Splits text that arrives in pieces (a streamed answer) into sentences as soon as each is
// complete, so the voice side can start speaking the first one while the rest is being made.
// A sentence ends at `.`, `!`, `?` or `…` (closing quotes and brackets included) followed by
// whitespace, or at a line break; what is left when the text ends is the last sentence.
// The first piece of a line may end sooner, at its first clause (a `,`, `;` or `:`, or a dash
// between spaces): "Certainly," is synthesised and playing while the rest of the sentence is made,
// so the line's first audio comes sooner (docs/voice.md, "A line's first clause first"). Every
// splitter of a line's text cuts it the same way, so a line re-split as it grows keeps its pieces.

const SENTENCE_END = /[.!?…]+["'”’)\]]*\s+|\n+/g;
const CLAUSE_END = /[,;:]["'”’)\]]*\s+|\s+[–—]\s+/g;

export class SentenceSplitter {
  private buffer = '';
  private pieces = 0;

  constructor(private readonly onSentence: (sentence: string) => void) {}

  /** Adds the next piece of text; hands over every sentence it completes. */
  push(piece: string): void {
    this.buffer += piece;
    let start = 0;
    for (let end = this.nextEnd(start); end !== null; end = this.nextEnd(start)) {
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

  /** Where the next piece from `from` ends (past its whitespace), or null while it is incomplete. */
  private nextEnd(from: number): number | null {
    const ends = this.pieces === 0 ? [SENTENCE_END, CLAUSE_END] : [SENTENCE_END];
    let end: number | null = null;
    for (const pattern of ends) {
      pattern.lastIndex = from;
      const match = pattern.exec(this.buffer);
      if (match && (end === null || match.index + match[0].length < end)) end = match.index + match[0].length;
    }
    return end;
  }

  private emit(text: string): void {
    const sentence = text.trim();
    if (!sentence) return;
    this.pieces++;
    this.onSentence(sentence);
  }
}
