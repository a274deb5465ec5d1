import type { TranscriptLine } from '../calls/transcript.js';
import type { AgentTurn, ConversationContext, RespondOptions, VoiceRuntime } from './voice-runtime.js';

// Preemptive generation (LiveKit Agents' term): the agent's answer is asked for while the person
// is still silent but their turn has not ended yet (a pause of 200 ms, transcribed during the
// endpointing wait), so that when the turn does end the model has already been thinking. The turn
// then asks the runtime as always, and is handed the answer begun ahead when it asks exactly the
// same (the same conversation, the same lines, the same tool results): the sentences made so far
// at once, the rest as they come. Anything else (the person went on speaking, the workflow wrote a
// line meanwhile) is asked anew and the answer begun ahead is aborted. The cost is a model request
// that is thrown away when the person goes on after the pause (VOICE_PREEMPTIVE_GENERATION=false
// turns it off).

type AheadOptions = Pick<RespondOptions, 'toolExchanges' | 'offerTools'>;

interface Ahead {
  key: string;
  controller: AbortController;
  relay: {
    /** Sentences made before a turn took the answer. */
    sentences: string[];
    /** The turn's onSentence once it took the answer. */
    onSentence: ((sentence: string) => void) | null;
  };
  answer: Promise<AgentTurn>;
  /** performance.now() when the model was asked. */
  askedAt: number;
}

export class AnswersAhead {
  private ahead: Ahead | null = null;
  /** Answers taken by a turn, and answers begun ahead that were thrown away (for the log and the bench). */
  readonly counts = { taken: 0, dropped: 0 };
  /** The runtime the turns ask: the answer begun ahead when asked the same, else the runtime itself. */
  readonly runtime: VoiceRuntime;

  constructor(private readonly inner: VoiceRuntime) {
    this.runtime = {
      ...(inner.runsInProcess !== undefined ? { runsInProcess: inner.runsInProcess } : {}),
      ...(inner.timeoutMs !== undefined ? { timeoutMs: inner.timeoutMs } : {}),
      openingLine: (context, options) => inner.openingLine(context, options),
      respond: (context, transcript, options) => this.respond(context, transcript, options),
    };
  }

  /** Starts the answer to `transcript` (ending with the person's line) before a turn asks for it. */
  begin(context: ConversationContext, transcript: TranscriptLine[], options: AheadOptions = {}): void {
    this.drop();
    const controller = new AbortController();
    // Sentences wait here until a turn takes the answer (a runtime may give them before it returns).
    const relay: Ahead['relay'] = { sentences: [], onSentence: null };
    const askedAt = performance.now();
    const answer = this.inner.respond(context, transcript, {
      ...options,
      signal: controller.signal,
      onSentence: (sentence) => {
        if (relay.onSentence) relay.onSentence(sentence);
        else relay.sentences.push(sentence);
      },
    });
    const ahead: Ahead = { key: keyOf(context, transcript, options), controller, relay, answer, askedAt };
    // Not taken and failed: nobody waits for it.
    ahead.answer.catch(() => {});
    this.ahead = ahead;
  }

  /** The person went on speaking (or the turn went elsewhere): the answer begun ahead is aborted. */
  drop(): void {
    const ahead = this.ahead;
    if (!ahead) return;
    this.ahead = null;
    this.counts.dropped++;
    ahead.controller.abort();
  }

  private respond(
    context: ConversationContext,
    transcript: TranscriptLine[],
    options: RespondOptions = {},
  ): Promise<AgentTurn> {
    const ahead = this.ahead;
    if (!ahead || ahead.key !== keyOf(context, transcript, options)) {
      this.drop();
      return this.inner.respond(context, transcript, options);
    }
    this.ahead = null;
    this.counts.taken++;
    const takenAt = performance.now();
    const { signal } = options;
    // The turn's signal may outlive the turn (the call's own): its listener goes with the answer.
    const abort = () => ahead.controller.abort();
    if (signal?.aborted) abort();
    else signal?.addEventListener('abort', abort, { once: true });
    const forget = () => signal?.removeEventListener('abort', abort);
    ahead.answer.then(forget, forget);
    if (options.onSentence) {
      for (const sentence of ahead.relay.sentences) options.onSentence(sentence);
      ahead.relay.onSentence = options.onSentence;
    }
    // The turn's clock starts when it asked: what the model did before that cost the turn nothing.
    const sinceTaken = (ms: number) => Math.max(0, Math.round(ahead.askedAt + ms - takenAt));
    return ahead.answer.then((turn) =>
      turn.timing
        ? {
            ...turn,
            timing: {
              firstTokenMs: turn.timing.firstTokenMs === null ? null : sinceTaken(turn.timing.firstTokenMs),
              answerMs: sinceTaken(turn.timing.answerMs),
            },
          }
        : turn,
    );
  }
}

/** What makes two requests the same request: the conversation, its lines as the model sees them, the tools' part. */
function keyOf(context: ConversationContext, transcript: TranscriptLine[], options: AheadOptions): string {
  return JSON.stringify([
    context,
    transcript.map((line) => [line.index, line.role, line.text]),
    options.toolExchanges ?? [],
    options.offerTools ?? true,
  ]);
}
