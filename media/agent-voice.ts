import { keyFrames } from '../lib/audio/dtmf.js';
import { encodeMulaw } from '../lib/audio/mulaw.js';
import { FRAME_MS, FRAME_SAMPLES, PHONE_SAMPLE_RATE } from '../lib/audio/phone-frames.js';
import { resample } from '../lib/audio/resample.js';
import { keypadLineText } from '../lib/calls/keypad-line.js';
import type { Logger } from '../lib/logger.js';
import { mediaTtsDuration, stageQueueWait, timed } from '../lib/metrics/gateway-metrics.js';
import { SerialQueue } from '../lib/serial-queue.js';
import type { Pcm, TextToSpeech } from '../lib/speech/speech-ports.js';
import { SentenceSplitter, synthesisPieces } from '../lib/voice-runtime/sentences.js';
import type { AgentAudioOut } from './agent-audio-out.js';
import { type AgentCut, AgentSpeech, markName, type SpeechSentence } from './agent-speech.js';
import type { CallRecording } from './call-recording.js';
import { HeldLines } from './held-lines.js';
import { PreparedSpeech } from './prepared-speech.js';

// The agent's voice on one call: its lines, sentence by sentence, synthesised in order and played
// to the client in real time (20 ms μ-law frames, at most LEAD_MS ahead of their play time, as a
// telephony media server paces them). Each line is an AgentSpeech (agent-speech.ts) that knows
// when each of its sentences started playing, so a barge-in tells what the person heard; sending
// only a little ahead, `clear` drops little and a client that does not read holds a bounded buffer.

/** How far ahead of its play time audio is sent. */
const LEAD_MS = 100;
/**
 * After the last frame's play time, how long before the audio counts as played without its mark:
 * short for a client that has never echoed a mark (it will not), long for one that does (a client
 * plays later than the gateway's clock says when its network or its event loop is slow, and its
 * mark then tells when it really played).
 */
const PLAYED_GRACE_MS = { withoutMarks: 200, withMarks: 5000 };

export class AgentVoice {
  private readonly lines = new Map<number, AgentSpeech>();
  /** Audio waiting to be sent, frame by frame, each with its sentence. */
  private readonly queue: { frame: Int16Array; sentence: SpeechSentence; last: boolean; key?: string }[] = [];
  private readonly synthesis = new SerialQueue(stageQueueWait('agent_voice')); // sentences, one after the other, as taken
  private playCursorMs = 0; // play time of the end of the audio sent so far, on the call's clock
  private lastMark: SpeechSentence | null = null; // the last sentence whose mark was sent and not cleared
  private echoesMarks = false; // the client has echoed a mark: it tells when the audio played
  private stopped = false;
  private readonly heldLines = new HeldLines(); // while the person speaks on before hearing the answer
  private readonly ticker: NodeJS.Timeout;

  constructor(
    private readonly deps: {
      tts: TextToSpeech;
      voice: string;
      /** The agent's language (BCP 47): chooses the voice when the service lacks `voice`. */
      language?: string;
      /** The call's speech with its opening made ahead (prepared-speech.ts); else each sentence is made when said. */
      speech?: PreparedSpeech;
      out: AgentAudioOut;
      /** Milliseconds on the call's clock (since its stream started). */
      clock: () => number;
      recording: CallRecording | null;
      logger: Logger;
    },
  ) {
    this.ticker = setInterval(() => this.pump(), FRAME_MS);
  }

  /** One sentence of line `index` while the rest is being made; a repeat (same seq) is ignored. */
  takeSentence(index: number, seq: number, text: string): void {
    const line = this.lineOf(index);
    if (line.interrupted || seq < line.sentences.length) return;
    this.enqueue(line, text);
  }

  /**
   * The whole line: its sentences after those already taken are queued. Resolves once all of it
   * is synthesised and queued (rejects when the speech service fails), with when its first audio left.
   */
  async say(index: number, text: string, endsCall = false): Promise<{ firstAudioAt: number | null }> {
    const line = this.lineOf(index);
    line.endsCall ||= endsCall;
    const sentences: string[] = [];
    const splitter = new SentenceSplitter((sentence) => sentences.push(sentence));
    splitter.push(text);
    splitter.end();
    // A retry after the speech service failed: what never played is made again, in order (the
    // rest of a sentence whose first piece was made, then the sentences after it).
    if (line.failed) {
      line.forgetUnplayed(new Set(this.queue.map((q) => q.sentence)));
      for (const sentence of line.sentences) if (sentence.unmade) this.make(line, sentence, sentence.unmade);
    }
    if (!line.interrupted)
      for (const sentence of sentences.slice(line.sentences.length)) this.enqueue(line, sentence);
    await this.synthesis.idle();
    if (line.failed) throw new Error(`agent line ${index} could not be synthesised`);
    // Its first audio may still wait behind the line before it: the latency counts until it leaves.
    while (
      !this.stopped &&
      !line.interrupted &&
      line.firstAudioAt === null &&
      this.queue.some((q) => q.sentence.index === index)
    ) {
      await new Promise((resolve) => setTimeout(resolve, FRAME_MS));
    }
    return { firstAudioAt: line.firstAudioAt };
  }

  /**
   * Keys the agent pressed, line `index`: in-band DTMF tones (lib/audio/dtmf.ts) queued after the
   * audio before them; a repeat of the line is ignored. Resolves once they are queued.
   */
  async pressKeys(index: number, digits: string): Promise<void> {
    const line = this.lineOf(index);
    if (!line.interrupted && line.sentences.length === 0) {
      const sentence = line.take(keypadLineText(digits));
      void this.synthesis.push(() => {
        if (line.interrupted) return;
        const frames = keyFrames(digits, { asEvents: this.deps.out.dtmf !== undefined });
        for (const [i, item] of frames.entries()) {
          this.queue.push({ ...item, sentence, last: i === frames.length - 1 });
        }
        this.pump();
      });
    }
    await this.synthesis.idle();
  }

  /** Agent audio is queued to play (not held) or still playing. */
  speaking(): boolean {
    return (this.queue.length > 0 && !this.heldLines.held) || this.deps.clock() < this.playCursorMs;
  }

  /** What the person last heard the agent say: the latest line that began playing ('' before any). */
  lastHeard(): string {
    let heard: AgentSpeech | null = null;
    for (const line of this.lines.values())
      if (line.firstAudioAt !== null && line.index > (heard?.index ?? -1)) heard = line;
    return heard?.playedText() ?? '';
  }

  /** Held: audio not yet begun waits (queued as it is made); released, it plays (media/held-answer.ts). */
  hold(held: boolean): void {
    this.heldLines.held = held;
    this.pump();
  }

  /** The held answer is not wanted: its lines go unheard (held-lines.ts); one that ends the call plays. */
  dropHeld(): void {
    if (this.heldLines.drop(this.lines.values(), this.deps.clock())) this.queue.length = 0;
    this.pump();
  }

  /** The first line dropped unheard since `dropHeld` (null: none); from now on lines play. */
  takeDropped(): number | null {
    return this.heldLines.take();
  }

  /**
   * Barge-in: the person is speaking over the agent. Its audio stops (`clear`); the utterance that
   * was playing, and those after it, are interrupted now (each keeps what had begun playing). Null
   * when the agent was not speaking.
   */
  bargeIn(): AgentCut | null {
    if (!this.speaking()) return null;
    const now = this.deps.clock();
    const playing = this.playingLine(now);
    this.queue.length = 0;
    this.deps.out.clear();
    this.playCursorMs = now;
    // What was sent is played or dropped now: no mark is awaited.
    this.lastMark = null;
    if (playing) {
      for (const line of this.lines.values()) if (line.index >= playing.index) line.interrupt(now);
    }
    return { atMs: now, speech: playing };
  }

  /** The client echoed a mark: the audio before it has played. */
  markEchoed(name: string): void {
    this.echoesMarks = true;
    for (const line of this.lines.values()) {
      for (const sentence of line.sentences) if (markName(sentence) === name) sentence.markEchoed = true;
    }
  }

  /**
   * Until everything queued has played (its last mark echoed, or its length and the grace passed),
   * at most `limitMs`.
   */
  async played(limitMs: number): Promise<void> {
    const until = Date.now() + limitMs;
    await this.synthesis.idle();
    while (Date.now() < until) {
      const grace = this.echoesMarks ? PLAYED_GRACE_MS.withMarks : PLAYED_GRACE_MS.withoutMarks;
      const done =
        this.queue.length === 0 &&
        (this.lastMark === null ||
          this.lastMark.markEchoed ||
          this.deps.clock() >= this.playCursorMs + grace);
      if (done) return;
      await new Promise((resolve) => setTimeout(resolve, FRAME_MS));
    }
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.ticker);
    this.queue.length = 0;
  }

  private lineOf(index: number): AgentSpeech {
    let line = this.lines.get(index);
    if (!line) {
      line = new AgentSpeech(index);
      this.lines.set(index, line);
      this.heldLines.dropIfUnheard(line, this.deps.clock());
      // Only the last few lines matter (a barge-in, a late `say`): the map stays small.
      if (this.lines.size > 8) this.lines.delete(this.lines.keys().next().value!);
    }
    return line;
  }

  private enqueue(line: AgentSpeech, text: string): void {
    const sentence = line.take(text);
    // A line's first sentence is made in pieces (its first clause first): each plays once made.
    this.make(line, sentence, sentence.seq === 0 ? synthesisPieces(text, this.deps.language) : [text]);
  }

  /** Synthesises `pieces` of `sentence` in turn, queueing each as it is made. */
  private make(line: AgentSpeech, sentence: SpeechSentence, pieces: string[]): void {
    delete sentence.unmade;
    void this.synthesis.push(async () => {
      for (const [i, piece] of pieces.entries()) {
        // After a failure the line's later sentences wait for its retry, so that it plays in order
        // (a sentence the retry forgot is made again as a new one).
        if (line.interrupted || line.failed || !line.sentences.includes(sentence)) return;
        const synthesisStartedAt = Date.now();
        let speech: Pcm;
        try {
          const made =
            this.deps.speech ?? new PreparedSpeech(this.deps.tts, this.deps.voice, this.deps.language);
          speech = await timed(mediaTtsDuration, () => made.synthesize(piece));
        } catch (error) {
          // A failure is the line's (`say` reports it); the next lines still get their turn.
          line.failed = true;
          sentence.unmade = pieces.slice(i);
          this.deps.logger.warn('agent speech not synthesised', { index: line.index, error: `${error}` });
          return;
        }
        // The synthesis time of each sentence until its first audio (the first one's is in every turn's latency).
        if (i === 0) {
          const ttsMs = Date.now() - synthesisStartedAt;
          this.deps.logger.info('agent sentence', { index: line.index, seq: sentence.seq, ttsMs });
        }
        if (line.interrupted) return;
        const samples = resample(speech.samples, speech.sampleRate, PHONE_SAMPLE_RATE);
        const lastPiece = i === pieces.length - 1;
        for (let at = 0; at < samples.length; at += FRAME_SAMPLES) {
          const frame = new Int16Array(FRAME_SAMPLES);
          frame.set(samples.subarray(at, at + FRAME_SAMPLES));
          this.queue.push({ frame, sentence, last: lastPiece && at + FRAME_SAMPLES >= samples.length });
        }
        this.pump();
      }
    });
  }

  /** Sends what is due: frames up to LEAD_MS ahead of the moment they play. */
  private pump(): void {
    const now = this.deps.clock();
    while (
      !this.heldLines.held &&
      this.queue.length > 0 &&
      Math.max(now, this.playCursorMs) < now + LEAD_MS
    ) {
      const { frame, sentence, last, key } = this.queue.shift()!;
      const playsAt = Math.max(now, this.playCursorMs);
      if (sentence.startedAtMs === null) {
        sentence.startedAtMs = playsAt;
        const line = this.lines.get(sentence.index);
        if (line && line.firstAudioAt === null) line.firstAudioAt = Date.now();
      }
      if (key) this.deps.out.dtmf?.(key);
      this.deps.out.media(encodeMulaw(frame));
      this.deps.recording?.agent(frame, playsAt);
      this.playCursorMs = playsAt + FRAME_MS;
      if (last) {
        this.deps.out.mark(markName(sentence));
        this.lastMark = sentence;
      }
    }
  }

  private playingLine(now: number): AgentSpeech | null {
    let playing: AgentSpeech | null = null;
    for (const line of this.lines.values()) if (line.startedBy(now)) playing = line;
    return playing;
  }
}
