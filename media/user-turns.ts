import type { TurnEvent } from '../lib/audio/turn-detector.js';
import { keypadLineText } from '../lib/calls/keypad-line.js';
import { stageQueueWait } from '../lib/metrics/gateway-metrics.js';
import { SerialQueue } from '../lib/serial-queue.js';
import { type CallerSpeech, callerSpeechSignal, gatewayTurnSignal } from '../lib/temporal/call-messages.js';
import { HeardAhead } from './heard-ahead.js';
import { HeldAnswer } from './held-answer.js';
import { Interruptions } from './interruptions.js';
import type { KeypadTurnEnded } from './keypad-turn.js';
import { hearTurn, transcribeTurn } from './turn-transcription.js';
import type { UserTurnsDeps } from './user-turns-deps.js';

// The person's turns of one call (the user-turn stage of the media path, media/call-audio.ts):
// the turn detector's events in, the person's lines out. Speech over the agent may stop it
// (interruptions.ts); a short sound over it is no turn. At a pause (60 ms) the utterance so far is
// transcribed ahead (heard-ahead.ts) and, turns in the gateway, its answer asked for (turn-loop.ts);
// a turn that ends with that same utterance takes both. Each turn's line goes, in order, to the
// gateway's turn loop or to the call workflow (`callerSpeech`); a key pressed is a turn of its own.
// Speech (300 ms of it) before the answer to the last line is heard holds that answer (held-answer.ts).

/** A turn's timing, for its `caller turn` log line (the voice bench reads it). */
type TurnTiming = Record<'speechEndedAt' | 'endpointedMs' | 'sttMs' | 'sttAfterTurnMs', number> & {
  heardAhead: boolean;
};

/** The speech being heard: whether the agent was speaking when it began, and whether it lasted long enough to barge in. */
interface SpeechHeard {
  overAgent: boolean;
  confirmed: boolean;
}

export class UserTurns {
  /** The person's turns, transcribed and sent one after the other. */
  private readonly turns = new SerialQueue(stageQueueWait('user_turns'));
  /** The person's lines after transcription, answered here or sent to the workflow, one after the other. */
  private readonly answers = new SerialQueue(stageQueueWait('answers'));
  private utterances = 0;
  private speech: SpeechHeard | null = null;
  /** The last utterance handed on (answered here or sent): the workflow takes its turns back only once it has it. */
  private sent = -1;
  /** Lines handed on whose turn is not over yet (answered here or sent). */
  private linesInFlight = 0;
  /** The transcription of the person's current pause, if they paused. */
  private readonly heardAhead: HeardAhead;
  private readonly interruptions: Interruptions; // by a key, or by speech that is no backchannel
  private readonly held: HeldAnswer; // the answer waits while the person speaks on before hearing it

  constructor(private readonly deps: UserTurnsDeps) {
    this.heardAhead =
      deps.heardAhead ??
      new HeardAhead((pause, signal) => hearTurn(deps.stt, deps.language, pause.audio, { signal }));
    this.held = new HeldAnswer(deps.voice);
    this.interruptions = new Interruptions({
      callId: deps.callId,
      voice: deps.voice,
      loop: deps.loop,
      transcribe: (audio, signal) => this.transcribe(audio, signal),
      ...(deps.speechSoFar ? { speechSoFar: deps.speechSoFar } : {}),
      obeying: deps.obeyingInterruptions,
      logger: deps.logger,
    });
  }

  /** The call's audio is over: nothing is judged any more. */
  stop(): void {
    this.interruptions.stop();
  }

  /** The last utterance handed on (the turn hand-over's `heardThrough` check, turn-loop.ts). */
  get lastSent(): number {
    return this.sent;
  }

  /** The person's turns whose words are still being transcribed, then told. */
  get transcribing(): Promise<void> {
    return this.turns.idle();
  }

  /** The person's lines still being answered here or told to the workflow. */
  get answering(): Promise<void> {
    return this.answers.idle();
  }

  /** The turn detector's next event. */
  onTurnEvent(event: TurnEvent): void {
    if (event.type === 'speech_started') {
      this.dropHeardAhead();
      this.speech = { overAgent: this.deps.voice.speaking(), confirmed: false };
      return;
    }
    if (event.type === 'speech_resumed') {
      this.dropHeardAhead();
      this.interruptions.resumed(event.atMs);
      return;
    }
    if (event.type === 'speech_paused') {
      this.interruptions.paused();
      this.hearAhead(event);
      return;
    }
    if (event.type === 'speech_confirmed') {
      if (this.speech) this.speech.confirmed = true;
      // The person has spoken long enough over the agent to stop it, unless it is a backchannel;
      // or before they heard the answer to their last line, which then waits (held-answer.ts).
      if (this.deps.voice.speaking())
        this.interruptions.speechOverAgent(event.audio, event.atMs - event.startedAtMs, event.atMs);
      else if (this.linesInFlight > 0) this.held.speaking();
      return;
    }
    this.turnEnded(event);
  }

  /** The first key of a keypad turn stops the agent, as speech over it does. */
  keyPressed(): void {
    this.interruptions.byKey();
  }

  /** The keypad turn is over: its line goes after the person's spoken turns before it. */
  keypadLine(turn: KeypadTurnEnded): void {
    if (this.deps.ending()) return;
    void this.turns.push(() => {
      const speech: CallerSpeech = {
        utterance: this.utterances++,
        text: keypadLineText(turn.digits),
        startedAtSeconds: turn.startedAtMs / 1000,
        endedAtSeconds: turn.endedAtMs / 1000,
        ...this.interruptions.take(),
      };
      this.deliver(speech);
      this.deps.logger.info('caller keypad turn', { callId: this.deps.callId, utterance: speech.utterance });
    });
  }

  private turnEnded(event: Extract<TurnEvent, { type: 'turn_ended' }>): void {
    const speech = this.speech;
    this.speech = null;
    // A short sound the agent talked on through (an "mm-hm", a cough) neither stopped it nor is a
    // line; the same short word in the agent's silence ("Hello?") is one, and so is one the agent fell
    // silent under (a quick "Yes." over the last word of its question).
    if (this.shortOverAgent(speech)) {
      this.deps.logger.info('short sound over the agent: no turn', { callId: this.deps.callId });
      this.heardAhead.drop();
      this.deps.loop?.dropPrepared();
      return;
    }
    // Speech over the agent whose first words were only a backchannel, the agent still talking.
    const judged = this.interruptions.speechEnded();
    if (judged === 'backchannel') {
      this.deps.logger.info('backchannel over the agent: no turn', { callId: this.deps.callId });
      this.heardAhead.drop();
      this.deps.loop?.dropPrepared();
      return;
    }
    const speechEndedAt = this.deps.startedAt + event.endedAtMs;
    // When the turn ended: the endpointing wait is over, so what follows is the service's and STT's.
    const turnEndedAt = Date.now();
    // The pause's transcription is the turn's when no speech came after it (the same audio).
    const heard = this.heardAhead.takeFor(event);
    if (!heard) this.deps.loop?.dropPrepared();
    void this.turns.push(() => {
      const sttStartedAt = heard?.requestedAt ?? Date.now();
      const text = heard
        ? heard.text.catch(() => this.transcribe(event.audio))
        : this.transcribe(event.audio);
      return text.then(
        (words) => {
          // Its first words never came in time: the whole turn's judge whether it interrupts.
          if (judged === 'unjudged' && !this.interruptions.judgeTurn(words)) return;
          this.sendLine(event, words, {
            speechEndedAt,
            endpointedMs: turnEndedAt - speechEndedAt,
            sttMs: (heard?.answeredAt ?? Date.now()) - sttStartedAt,
            sttAfterTurnMs: Math.max(0, Date.now() - turnEndedAt),
            heardAhead: heard !== null,
          });
        },
        (error: unknown) => {
          this.deps.logger.error('speech not recognised', { callId: this.deps.callId, error: `${error}` });
          this.held.heard(null);
          // After the turn in flight is told: the workflow's apology goes after its lines.
          void this.answers.push(() => this.deps.callBack({ type: 'speech_failed' }));
        },
      );
    });
  }

  /**
   * The person paused: what they said so far is transcribed now, and while the turns are the
   * gateway's (and no turn of the agent's is under way) the answer to it is asked for.
   */
  private hearAhead(event: Extract<TurnEvent, { type: 'speech_paused' }>): void {
    this.dropHeardAhead();
    // A short sound the agent talks on through will be no turn (turnEnded): nothing to hear ahead.
    if (this.deps.ending() || this.shortOverAgent(this.speech)) return;
    const ahead = this.heardAhead.begin(event);
    const { loop } = this.deps;
    ahead.text.then(
      (text) => {
        const words = text.trim();
        if (!this.heardAhead.isCurrent(ahead) || !words || !this.deps.preemptiveGeneration) return;
        // Not while the turns are the workflow's, or while the agent is answering.
        if (!loop?.holding || this.linesInFlight > 0 || this.deps.ending()) return;
        loop
          .prepare({ text: words, startedAtSeconds: event.startedAtMs / 1000, ...this.interruptions.pending })
          .catch((error: unknown) =>
            this.deps.logger.warn('answer ahead not begun', { callId: this.deps.callId, error: `${error}` }),
          );
      },
      () => {}, // the turn transcribes again if it ends with this audio (turnEnded)
    );
  }

  /** Speech begun over the agent, too short to stop it, and the agent still talking. */
  private shortOverAgent(speech: SpeechHeard | null): boolean {
    return speech !== null && speech.overAgent && !speech.confirmed && this.deps.voice.speaking();
  }

  /** The person went on from their pause: its transcription and the answer asked for it are dropped. */
  private dropHeardAhead(): void {
    if (this.heardAhead.drop()) this.deps.loop?.dropPrepared();
  }

  private transcribe(audio: Int16Array, signal?: AbortSignal): Promise<string> {
    return transcribeTurn(this.deps.stt, this.deps.language, audio, signal);
  }

  private sendLine(
    event: Extract<TurnEvent, { type: 'turn_ended' }>,
    text: string,
    timing: TurnTiming,
  ): void {
    const { speechEndedAt } = timing;
    const words = text.trim();
    // Nothing was said (noise, a cough), or only "go on" with an answer waiting (held-answer.ts): no
    // line; a barge-in waits for the next one.
    if (this.held.heard(words) === 'go_on' || !words) {
      const message = words ? 'only a backchannel: the waiting answer plays' : 'caller turn without words';
      this.deps.logger.info(message, { callId: this.deps.callId, sttMs: timing.sttMs });
      this.deps.loop?.dropPrepared();
      return;
    }
    const transcribedAt = Date.now();
    const speech: CallerSpeech = {
      utterance: this.utterances++,
      text: words,
      startedAtSeconds: event.startedAtMs / 1000,
      endedAtSeconds: event.endedAtMs / 1000,
      speechTiming: { speechEndedAt, transcribedAt },
      ...this.interruptions.take(),
    };
    this.deliver(speech);
    this.deps.logger.info('caller turn', {
      callId: this.deps.callId,
      utterance: speech.utterance,
      transcriptMs: transcribedAt - speechEndedAt,
      // Its parts: the silence that ended the turn, the transcription (queueing included), begun at
      // the pause (`heardAhead`) or at the turn's end, and the part of it the turn waited for.
      endpointedMs: timing.endpointedMs,
      turnEndedAt: timing.speechEndedAt + timing.endpointedMs,
      sttMs: timing.sttMs,
      sttAfterTurnMs: timing.sttAfterTurnMs,
      heardAhead: timing.heardAhead,
    });
  }

  /** The person's line, in order: answered here while the turns are the gateway's, else by the workflow. */
  private deliver(speech: CallerSpeech): void {
    this.sent = speech.utterance;
    this.linesInFlight++;
    // The person already speaks on: the answer to this line waits (held-answer.ts).
    if (this.speech?.confirmed && !this.speech.overAgent) this.held.speaking();
    const { loop, outbox } = this.deps;
    void this.answers
      .push(async () => {
        const line = this.held.withDropped(speech);
        if (loop?.holding && !this.deps.ending()) {
          void outbox.send(gatewayTurnSignal, await loop.turn(line));
        } else {
          loop?.dropPrepared();
          void outbox.send(callerSpeechSignal, line);
        }
      })
      .catch((error: unknown) =>
        this.deps.logger.error('caller line not handled', { callId: this.deps.callId, error: `${error}` }),
      )
      .finally(() => {
        this.linesInFlight--;
      });
  }
}
