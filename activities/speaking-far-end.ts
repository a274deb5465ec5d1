import { resample } from '../lib/audio/resample.js';
import type { Logger } from '../lib/logger.js';
import { MediaStreamsClient } from '../lib/media/media-streams-client.js';
import { retryWithBackoff } from '../lib/retry-with-backoff.js';
import { speechComesBack } from '../lib/speech/speech-comes-back.js';
import type { TextToSpeech } from '../lib/speech/speech-ports.js';
import type { FarEndAudio } from '../lib/temporal/workflow-contracts.js';

// The speaking simulator (docs/voice.md, "The simulator speaks"): the far ends of calls placed with
// audio, each a Media Streams client in the carrier-simulator worker's process, connected to the
// media gateway holding the call. The far end's workflow decides as ever (same scenarios, lines
// and timing); here its answer opens the stream, its lines are synthesised and spoken into it in
// real time, and its hang-up is `stop`. The gateway hears the lines, transcribes them and tells
// the call workflow itself.

/** The simulated person's voice: not the agent's (an unknown id is the server's default voice; OpenAI has `echo`). */
export const SIMULATED_PERSON_VOICE = 'echo';
/**
 * The gateway confirms the attachment within this long, or the far end has not answered (a loaded
 * gateway reads the call and opens its voice activity model first). Under the 10 s an attempt of
 * the far end's callback may take (FAR_END_CALLBACKS).
 */
const ATTACH_WITHIN_MS = 8000;
/**
 * A line the agent does not answer within this long was not heard (lost in a loaded gateway, or
 * recognised as nothing): the person says it again, as anyone on a phone would, at most
 * UNHEARD_REPEATS times. Without it a lost line leaves both sides waiting for the silence timeout.
 */
const UNANSWERED_AFTER_MS = 15_000;
const UNHEARD_REPEATS = 2;

/** An answering machine's beep: 0.5 s of 1 kHz at about -9 dBFS, 8 kHz. */
const MACHINE_BEEP = Int16Array.from({ length: 4000 }, (_, i) =>
  Math.round(12_000 * Math.sin((2 * Math.PI * 1000 * i) / 8000)),
);

interface FarEndStream {
  client: MediaStreamsClient;
  /** What the person says, one line after the other, and their hang-up after it. */
  speaking: Promise<void>;
  /** Lines said so far. */
  lines: number;
}

export interface SpeakingFarEndDeps {
  tts: TextToSpeech;
  logger: Logger;
  /** Tests shorten UNANSWERED_AFTER_MS. */
  unansweredAfterMs?: number;
  /**
   * The gateway closed a far end's stream while the person had not hung up: our side hung up on
   * them (a bridged transfer that ended, media/transfer-bridge.ts, where no workflow releases the
   * far end as text). The far end's workflow hears it, as a phone hears the line go dead.
   */
  hungUpOn?: (callId: string) => void;
}

export class SpeakingFarEnds {
  private readonly streams = new Map<string, FarEndStream>();

  constructor(private readonly deps: SpeakingFarEndDeps) {}

  /** The person picks up: the stream connects and attaches to the call (once per call; a retry finds it). */
  async answer(audio: FarEndAudio): Promise<boolean> {
    if (this.streams.has(audio.callId)) return true;
    const client = await MediaStreamsClient.connect(audio.streamsUrl, { keepAgentAudio: false });
    client.start({ callId: audio.callId, token: audio.token });
    const stream: FarEndStream = { client, speaking: Promise.resolve(), lines: 0 };
    this.streams.set(audio.callId, stream);
    void client.closed.then(() => {
      if (this.streams.get(audio.callId) !== stream) return; // the person hung up, or a retry took over
      this.streams.delete(audio.callId);
      this.deps.hungUpOn?.(audio.callId);
    });
    let timer: NodeJS.Timeout | undefined;
    const attached = await Promise.race([
      client.attached.then(() => true),
      client.closed.then(() => false), // refused: the call is over, or not this gateway's
      new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ATTACH_WITHIN_MS))),
    ]).finally(() => clearTimeout(timer));
    if (attached === 'late') {
      // Forgotten at once: a retry must open a stream of its own, not find this closing one.
      if (this.streams.get(audio.callId) === stream) this.streams.delete(audio.callId);
      client.close();
      throw new Error(`media gateway ${audio.streamsUrl} did not attach call ${audio.callId}`);
    }
    if (!attached && this.streams.get(audio.callId) === stream) this.streams.delete(audio.callId);
    return attached;
  }

  /**
   * The person says `text` once the agent's audio has stopped playing (they do not talk over it),
   * in real time. Queued behind what they are still saying; false when the stream is gone.
   */
  say(audio: FarEndAudio, text: string): boolean {
    return this.queue(audio, async (stream) => {
      const { client } = stream;
      await client.agentSilent();
      // A speech server being started again is waited for: a person's line is late, never lost.
      const spoken = await retryWithBackoff(
        () => this.deps.tts.synthesize(text, { voice: SIMULATED_PERSON_VOICE }),
        speechComesBack({ budgetMs: 30_000 }),
      );
      const samples = resample(spoken.samples, spoken.sampleRate, 8000);
      const saidAt = await client.say(samples);
      const line = ++stream.lines;
      void this.sayAgainIfUnanswered(audio, stream, { line, samples, saidAt, repeats: 0 });
    });
  }

  /** Says the line again when the agent stays silent after it and the person has said nothing since. */
  private async sayAgainIfUnanswered(
    audio: FarEndAudio,
    stream: FarEndStream,
    said: { line: number; samples: Int16Array; saidAt: number; repeats: number },
  ): Promise<void> {
    const answered = await stream.client.agentSpokeSince(
      said.saidAt,
      this.deps.unansweredAfterMs ?? UNANSWERED_AFTER_MS,
    );
    const stillLast = this.streams.get(audio.callId) === stream && stream.lines === said.line;
    if (answered || !stillLast || said.repeats >= UNHEARD_REPEATS) return;
    this.deps.logger.warn('simulated person not answered; says it again', { callId: audio.callId });
    this.queue(audio, async () => {
      if (stream.lines !== said.line) return; // a new line of theirs came first
      const saidAt = await stream.client.say(said.samples);
      void this.sayAgainIfUnanswered(audio, stream, { ...said, saidAt, repeats: said.repeats + 1 });
    });
  }

  /**
   * An answering machine's beep (scenario 3001): 0.5 s of 1 kHz after what it is still saying (its
   * greeting), heard by the gateway as a real machine's would be. False when the stream is gone.
   */
  beep(audio: FarEndAudio): boolean {
    return this.queue(audio, async ({ client }) => {
      await client.say(MACHINE_BEEP);
    });
  }

  /** The person hangs up once they have said their piece: `stop`, and the socket closes. */
  hangUp(audio: FarEndAudio): boolean {
    const queued = this.queue(audio, async ({ client }) => {
      client.stop();
      client.close();
    });
    this.streams.delete(audio.callId);
    return queued;
  }

  private queue(audio: FarEndAudio, step: (stream: FarEndStream) => Promise<void>): boolean {
    const stream = this.streams.get(audio.callId);
    if (!stream) return false;
    stream.speaking = stream.speaking
      .then(() => step(stream))
      .catch((error: unknown) =>
        this.deps.logger.warn('simulated person not heard', { callId: audio.callId, error: `${error}` }),
      );
    return true;
  }
}
