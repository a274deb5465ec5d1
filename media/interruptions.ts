import type { Logger } from '../lib/logger.js';
import { mediaBargeIns } from '../lib/metrics/gateway-metrics.js';
import type { CallerSpeech } from '../lib/temporal/call-messages.js';
import { isBackchannel } from '../lib/voice-runtime/backchannel.js';
import type { AgentCut } from './agent-speech.js';
import type { AgentVoice } from './agent-voice.js';
import type { TurnLoop } from './turn-loop.js';

// Interruptions of the agent on one call (the media path's one place for them, media/user-turns.ts):
// a key pressed stops the agent at once. Speech over the agent that lasts 300 ms (speech_confirmed)
// stops it once its first words are heard, unless they are only a backchannel ("mhm", "yeah", "ja":
// lib/voice-runtime/backchannel.ts), which means "go on". Speech over the agent that goes on past
// LONGEST_BACKCHANNEL_MS from its start stops it, unless its first words were a backchannel and
// all its words so far still are ("yeah, okay", said in one breath): those are heard again then,
// and every LONGEST_BACKCHANNEL_MS while it lasts, and stop the agent unless they come within
// REJUDGE_LIMIT_MS and are only "go on". So a real interruption clears within the spec's 1.5 s even
// when it begins with "yeah" or the transcription is slow. A backchannel the agent talked on
// through is no line of the caller's. The next line of the person's carries what the agent had
// said of the line it stopped.
//
// An interruption is one event, handed to every stage that must obey it: the agent's voice stops
// (its `bargeIn`, which clears the client and interrupts the utterance playing: agent-speech.ts),
// then each of `obeying` in order (the recording's cut, call-audio.ts), and the utterance's played
// text becomes the transcript's cut with the person's next line (`take`).

/** Speech over the agent longer than this (from its start) interrupts, unless all its words so far are a backchannel. */
export const LONGEST_BACKCHANNEL_MS = 1_000;
/** How long the words of such speech are waited for before it stops the agent anyway (1 s + this < 1.5 s). */
export const REJUDGE_LIMIT_MS = 400;

export interface InterruptionsDeps {
  callId: string;
  voice: Pick<AgentVoice, 'bargeIn' | 'speaking'>;
  loop: TurnLoop | null;
  /** Transcribes the speech so far (the first words of speech over the agent); aborted once of no use. */
  transcribe: (audio: Int16Array, signal: AbortSignal) => Promise<string>;
  /** The speech being heard so far (the turn detector's); none: long speech is not heard again. */
  speechSoFar?: () => Int16Array | null;
  /** The stages that obey an interruption besides the voice (the recording's cut), in order. */
  obeying?: readonly ((cut: AgentCut) => void)[];
  logger: Logger;
}

/** Speech over the agent being judged: a backchannel, or an interruption. */
interface Judging {
  timer: NodeJS.Timeout;
  /** Its first words were only a backchannel. */
  backchannel: boolean;
  /** It stopped the agent. */
  interrupted: boolean;
  /** The person paused (60 ms of silence: `speech_paused`): a pause is no "going on". */
  paused: boolean;
  /** LONGEST_BACKCHANNEL_MS from its start have passed. */
  long: boolean;
  /** Its words were heard again past LONGEST_BACKCHANNEL_MS (the turn's own words judge its end). */
  heardAgain: boolean;
  /**
   * When (performance.now()) it stops the agent at the latest unless heard again as "go on": its
   * start + LONGEST_BACKCHANNEL_MS + REJUDGE_LIMIT_MS, also when it paused at its second and went on later.
   */
  deadline: number;
  /** Those words are being transcribed now. */
  hearingAgain: boolean;
  /** Aborts its transcriptions once it is decided or over: their words would change nothing. */
  words: AbortController;
}

export class Interruptions {
  /** A barge-in waiting to go to the workflow with the person's next line. */
  private interrupted: CallerSpeech['interrupted'] | undefined;
  private judging: Judging | null = null;

  constructor(private readonly deps: InterruptionsDeps) {}

  /** A key pressed: the agent stops at once. */
  byKey(): void {
    this.deps.loop?.dropPrepared();
    this.interrupt('barge-in by a key', {});
  }

  /**
   * The person's speech over the agent lasted long enough to count (`speechMs` of it so far, its
   * audio `audio`): it interrupts once its first words are not a backchannel, or at the latest
   * LONGEST_BACKCHANNEL_MS after it began.
   */
  speechOverAgent(audio: Int16Array, speechMs: number, atMs: number): void {
    this.endJudging();
    const judging: Judging = {
      timer: setTimeout(
        () => {
          judging.long = true;
          if (!judging.paused) this.longSpeech(judging, atMs);
        },
        Math.max(0, LONGEST_BACKCHANNEL_MS - speechMs),
      ),
      backchannel: false,
      interrupted: false,
      paused: false,
      long: false,
      heardAgain: false,
      hearingAgain: false,
      deadline: performance.now() - speechMs + LONGEST_BACKCHANNEL_MS + REJUDGE_LIMIT_MS,
      words: new AbortController(),
    };
    this.judging = judging;
    this.deps.transcribe(audio, judging.words.signal).then(
      (words) => {
        if (this.judging !== judging || judging.interrupted) return;
        if (!isBackchannel(words)) return this.decide(judging, 'barge-in', { atMs });
        judging.backchannel = true;
        this.deps.logger.info('backchannel over the agent: it goes on', { callId: this.deps.callId, words });
      },
      // Words that cannot be heard: an interruption, as before there were words to judge by.
      () => this.decide(judging, 'barge-in', { atMs }),
    );
  }

  /** The person paused in the speech being judged. */
  paused(): void {
    if (this.judging) this.judging.paused = true;
  }

  /** The person spoke again after a pause: past LONGEST_BACKCHANNEL_MS, that is no backchannel. */
  resumed(atMs: number): void {
    const judging = this.judging;
    if (!judging) return;
    judging.paused = false;
    if (judging.long) this.longSpeech(judging, atMs);
  }

  /**
   * The person's speech is over (its turn ended). `backchannel`: its first words were only a
   * backchannel and the agent is still talking, so it is no line. `unjudged`: its words never came
   * in time, and the turn's own transcription judges it (judgeTurn). Else it is a turn.
   */
  speechEnded(): 'turn' | 'backchannel' | 'unjudged' {
    const judging = this.endJudging();
    if (!judging || judging.interrupted) return 'turn';
    if (!judging.backchannel || judging.heardAgain) return 'unjudged';
    return this.deps.voice.speaking() ? 'backchannel' : 'turn';
  }

  /** An unjudged turn's words: a backchannel while the agent talks is no line (false); else it interrupts and is one. */
  judgeTurn(words: string): boolean {
    if (isBackchannel(words) && this.deps.voice.speaking()) return false;
    this.interrupt('barge-in', { late: true });
    return true;
  }

  /** The barge-in waiting for the person's next line, handed to that line once. */
  take(): Pick<CallerSpeech, 'interrupted'> {
    const interrupted = this.interrupted;
    this.interrupted = undefined;
    return interrupted ? { interrupted } : {};
  }

  /** The barge-in waiting for the next line, without taking it (the answer asked ahead carries it). */
  get pending(): Pick<CallerSpeech, 'interrupted'> {
    return this.interrupted ? { interrupted: this.interrupted } : {};
  }

  /** Ends the judging under way (no timer left behind); the call is over too. */
  stop(): void {
    this.endJudging();
  }

  /**
   * Speech over the agent past LONGEST_BACKCHANNEL_MS: it stops the agent, unless its first words
   * were a backchannel and all its words so far, heard within REJUDGE_LIMIT_MS, still are; then it
   * is heard again a LONGEST_BACKCHANNEL_MS later while it goes on.
   */
  private longSpeech(judging: Judging, atMs: number): void {
    if (this.judging !== judging || judging.interrupted || judging.hearingAgain) return;
    const audio = judging.backchannel ? this.deps.speechSoFar?.() : null;
    // The first hearing again keeps to the deadline: speech that paused at its second and went on
    // later has what is left of it (none: it stops the agent now), so the stop stays within 1.4 s.
    const limitMs = judging.heardAgain
      ? REJUDGE_LIMIT_MS
      : Math.min(REJUDGE_LIMIT_MS, judging.deadline - performance.now());
    if (!audio || limitMs <= 0) {
      this.decide(judging, 'barge-in', { atMs, reason: 'long speech' });
      return;
    }
    judging.heardAgain = true;
    judging.hearingAgain = true;
    clearTimeout(judging.timer);
    judging.timer = setTimeout(
      () => this.decide(judging, 'barge-in', { atMs, reason: 'long speech, its words too late' }),
      limitMs,
    );
    this.deps.transcribe(audio, judging.words.signal).then(
      (words) => {
        judging.hearingAgain = false;
        if (this.judging !== judging || judging.interrupted) return;
        if (!isBackchannel(words)) return this.decide(judging, 'barge-in', { atMs, reason: 'long speech' });
        clearTimeout(judging.timer);
        judging.timer = setTimeout(() => {
          if (!judging.paused) this.longSpeech(judging, atMs);
        }, LONGEST_BACKCHANNEL_MS);
        this.deps.logger.info('long backchannel over the agent: it goes on', {
          callId: this.deps.callId,
          words,
        });
      },
      () => this.decide(judging, 'barge-in', { atMs, reason: 'long speech' }),
    );
  }

  private decide(judging: Judging, message: string, fields: Record<string, unknown>): void {
    if (this.judging !== judging || judging.interrupted) return;
    judging.interrupted = true;
    clearTimeout(judging.timer);
    judging.words.abort();
    this.interrupt(message, fields);
  }

  private interrupt(message: string, fields: Record<string, unknown>): void {
    const cut = this.deps.voice.bargeIn();
    if (!cut) return;
    for (const obey of this.deps.obeying ?? []) obey(cut);
    // Audio sent ahead but not yet playing was cleared; with no utterance begun there is no line to cut.
    if (!cut.speech) return;
    mediaBargeIns.inc();
    const interruption = { index: cut.speech.index, spokenText: cut.speech.playedText() };
    this.interrupted = interruption;
    this.deps.logger.info(message, { callId: this.deps.callId, ...interruption, ...fields });
  }

  private endJudging(): Judging | null {
    const judging = this.judging;
    if (judging) {
      clearTimeout(judging.timer);
      judging.words.abort();
    }
    this.judging = null;
    return judging;
  }
}
