// One utterance of the agent on a call (a transcript line of its own), as LiveKit's SpeechHandle is:
// what it says, sentence by sentence as taken; which of those began playing, on the call's clock;
// and whether, and when, the person interrupted it. The agent's voice (agent-voice.ts) fills it as
// it plays, and an interruption (interruptions.ts) hands it to every stage: the transcript's cut
// keeps its played text, the recording's cut is its interruption time.

/** A sentence of the agent's speech as it is sent to the client. */
export interface SpeechSentence {
  /** The utterance's index (its transcript line). */
  index: number;
  /** Its place in the utterance. */
  seq: number;
  text: string;
  /** Play time of its first frame on the call's clock; null until it is sent. */
  startedAtMs: number | null;
  /** Its mark came back: the client played all of it. */
  markEchoed: boolean;
  /** Its pieces still to be made when the speech service failed after its first piece was made (made on a retry). */
  unmade?: string[];
}

export class AgentSpeech {
  /** The sentences taken for it, in order. */
  readonly sentences: SpeechSentence[] = [];
  /** Epoch ms when its first audio was sent; null until then. */
  firstAudioAt: number | null = null;
  /** A sentence of it could not be synthesised (the speech service failed past its retries). */
  failed = false;
  /** The call ends with it (its goodbye): it is not dropped for the person speaking on (held-lines.ts). */
  endsCall = false;
  private cutAtMs: number | null = null;

  constructor(readonly index: number) {}

  /** The person spoke over it: nothing more of it plays. */
  get interrupted(): boolean {
    return this.cutAtMs !== null;
  }

  /** When, on the call's clock, the person stopped it; null while it may play on. */
  get interruptedAtMs(): number | null {
    return this.cutAtMs;
  }

  /** Everything it was to say (its sentences taken so far). */
  get text(): string {
    return this.sentences.map((sentence) => sentence.text).join(' ');
  }

  /** What of it the person heard: the sentences that began playing before its interruption (or so far). */
  playedText(): string {
    const until = this.cutAtMs ?? Number.POSITIVE_INFINITY;
    return this.sentences
      .filter((sentence) => sentence.startedAtMs !== null && sentence.startedAtMs <= until)
      .map((sentence) => sentence.text)
      .join(' ');
  }

  /** Whether any of it began playing by `atMs`. */
  startedBy(atMs: number): boolean {
    return this.sentences.some((sentence) => sentence.startedAtMs !== null && sentence.startedAtMs <= atMs);
  }

  /** A sentence more, after those taken. */
  take(text: string): SpeechSentence {
    const sentence: SpeechSentence = {
      index: this.index,
      seq: this.sentences.length,
      text,
      startedAtMs: null,
      markEchoed: false,
    };
    this.sentences.push(sentence);
    return sentence;
  }

  /**
   * A retry after the speech service failed: the sentences that never played and are not queued go,
   * to be made again; a sentence kept keeps its `unmade` pieces, to be made before them.
   */
  forgetUnplayed(queued: ReadonlySet<SpeechSentence>): void {
    const kept = this.sentences.filter((s) => s.startedAtMs !== null || queued.has(s));
    this.sentences.splice(0, this.sentences.length, ...kept);
    this.failed = false;
  }

  /** The person stopped it at `atMs` (the first interruption counts). */
  interrupt(atMs: number): void {
    this.cutAtMs ??= atMs;
  }
}

/** A barge-in: when it cut the agent off, and the utterance it stopped (null: none had begun playing). */
export interface AgentCut {
  atMs: number;
  speech: AgentSpeech | null;
}

/** The mark that tells a sentence has played (`agent-<index>-<seq>`). */
export function markName(sentence: SpeechSentence): string {
  return `agent-${sentence.index}-${sentence.seq}`;
}
