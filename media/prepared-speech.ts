import type { Call } from '../db/entities/index.js';
import { conversationContextOf } from '../lib/calls/conversation-context.js';
import type { Pcm, TextToSpeech } from '../lib/speech/speech-ports.js';
import { configuredOpeningLine, introduction } from '../lib/voice-runtime/opening-line.js';
import { ScriptedAgent } from '../lib/voice-runtime/scripted-agent.js';
import { SentenceSplitter, synthesisPieces } from '../lib/voice-runtime/sentences.js';
import type { VoiceRuntime } from '../lib/voice-runtime/voice-runtime.js';

// The agent's speech for one call, some of it made ahead (issue "turn-taking and languages": the
// first line without delay). The opening line is known before the agent says it (the call's
// configured first message, or the scripted agent's introduction), so its sentences are synthesised
// as soon as the call's stream starts, while the call is answered and the workflow connects the
// agent; when the agent then says that line, its audio is ready. An agent's opening is mostly the
// same on every call, so the sentences made ahead are kept per text-to-speech and voice
// (OPENINGS_KEPT, most recently used): the next call's opening is ready at once, and calls whose
// streams start together (a campaign's burst answered at once) share one synthesis under way. A
// sentence that was not prepared, or whose preparation failed, is synthesised when it is said.

/** Sentences made ahead per call, at most: a long opening is not all synthesised for nothing. */
const MOST_PREPARED = 3;
/** Sentences made ahead kept for later calls, per text-to-speech (about 100 KB each). */
const OPENINGS_KEPT = 64;

/** Sentences made ahead on earlier calls, by voice and text, most recently used last. */
const kept = new WeakMap<TextToSpeech, Map<string, Pcm>>();
/** Sentences being made ahead now, by voice and text: a call that needs one too waits for it. */
const underWay = new WeakMap<TextToSpeech, Map<string, Promise<Pcm>>>();

function perTts<T>(maps: WeakMap<TextToSpeech, Map<string, T>>, tts: TextToSpeech): Map<string, T> {
  let sentences = maps.get(tts);
  if (!sentences) {
    sentences = new Map();
    maps.set(tts, sentences);
  }
  return sentences;
}

export class PreparedSpeech {
  private readonly ready = new Map<string, Promise<Pcm>>();

  constructor(
    private readonly tts: TextToSpeech,
    private readonly voice: string,
    /** The agent's language: a voice the service lacks falls back to one of it (speech-ports.ts). */
    private readonly language?: string,
  ) {}

  private made(sentence: string): Promise<Pcm> {
    return this.tts.synthesize(sentence, {
      voice: this.voice,
      ...(this.language ? { language: this.language } : {}),
    });
  }

  /** Starts synthesising the first sentences of `line` now. */
  prepare(line: string): void {
    const sentences: string[] = [];
    const splitter = new SentenceSplitter((sentence) => sentences.push(sentence));
    splitter.push(line);
    splitter.end();
    const earlier = perTts(kept, this.tts);
    const making = perTts(underWay, this.tts);
    // The first sentence in the pieces the voice will make it in (its first clause first).
    const pieces = sentences
      .slice(0, MOST_PREPARED)
      .flatMap((sentence, i) => (i === 0 ? synthesisPieces(sentence, this.language) : [sentence]));
    for (const sentence of pieces) {
      if (this.ready.has(sentence)) continue;
      const key = `${this.voice}\u0000${this.language ?? ''}\u0000${sentence}`;
      const known = earlier.get(key);
      if (known) {
        earlier.delete(key); // most recently used last
        earlier.set(key, known);
        this.ready.set(sentence, Promise.resolve(known));
        continue;
      }
      let made = making.get(key);
      if (!made) {
        made = this.made(sentence);
        making.set(key, made);
        made
          .then(
            (audio) => {
              earlier.set(key, audio);
              if (earlier.size > OPENINGS_KEPT) earlier.delete(earlier.keys().next().value!);
            },
            () => {}, // a failed preparation is made again when said (synthesize), and prepared anew
          )
          .finally(() => making.delete(key));
      }
      this.ready.set(sentence, made);
    }
  }

  /** How many sentences wait, made ahead, to be said. */
  get prepared(): number {
    return this.ready.size;
  }

  /** The sentence's audio: the one made ahead (once), else made now. */
  synthesize(sentence: string): Promise<Pcm> {
    const made = this.ready.get(sentence);
    if (!made) return this.made(sentence);
    this.ready.delete(sentence);
    return made.catch(() => this.made(sentence));
  }
}

/**
 * The opening line the agent will say on `call`, when it is known before it is asked for: the
 * configured one (filled in), or the scripted agent's introduction. Null: the agent listens first,
 * or a language model writes the line (nothing to make ahead).
 */
export function openingToPrepare(call: Call, runtime: VoiceRuntime | null): string | null {
  const context = conversationContextOf(call);
  const configured = configuredOpeningLine(context);
  if (configured !== undefined) return configured;
  return runtime instanceof ScriptedAgent ? introduction(context) : null;
}
