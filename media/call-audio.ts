import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { decodeMulaw } from '../lib/audio/mulaw.js';
import type { TurnDetector, TurnEvent } from '../lib/audio/turn-detector.js';
import { keypadLineText } from '../lib/calls/keypad-line.js';
import type { Logger } from '../lib/logger.js';
import type { MediaCommand } from '../lib/media/media-control.js';
import {
  mediaBargeIns,
  mediaSttDuration,
  mediaTurnDetectionLag,
  timed,
} from '../lib/metrics/gateway-metrics.js';
import type { SpeechToText } from '../lib/speech/speech-ports.js';
import {
  type CallerSpeech,
  type CarrierCallback,
  callerSpeechSignal,
  carrierCallbackSignal,
  gatewayTurnSignal,
  type TransferReport,
} from '../lib/temporal/call-messages.js';
import type { VoiceRuntime } from '../lib/voice-runtime/voice-runtime.js';
import type { AgentAudioOut, AgentVoice } from './agent-voice.js';
import type { CallRecording } from './call-recording.js';
import { HeardAhead } from './heard-ahead.js';
import { KeypadTurn, type KeypadTurnEnded } from './keypad-turn.js';
import { PickUpScreen } from './pick-up-screen.js';
import { TurnLoop } from './turn-loop.js';
import { WorkflowOutbox } from './workflow-outbox.js';

// One call's audio in the media gateway: the turn loop. The person's audio goes through voice
// activity detection; a turn that ends (VOICE_ENDPOINTING_MS of silence) is transcribed. Once the
// call workflow has handed the call's turns to the gateway (`take_turns`), the gateway answers
// the line itself and tells the workflow the turn (turn-loop.ts); until then, and whenever the
// workflow has them back, the line goes to the workflow (the `callerSpeech` callback: no audio in
// Temporal), whose carrier brings the agent's lines back as commands (media/control-api.ts).
// Either way the agent's voice speaks them (agent-voice.ts), speech over the agent stops it
// (barge-in), and everything the workflow is told goes in order (workflow-outbox.ts). Both sides
// are recorded.
//
// The turn's end is heard ahead: when the person pauses (200 ms), the utterance so far is
// transcribed during the rest of the endpointing wait and, while the turns are the gateway's, the
// model is asked for the answer to it (preemptive generation, VOICE_PREEMPTIVE_GENERATION). If the
// turn then ends with that same utterance, it takes both; if the person goes on, they are dropped.
// The words and the answer are the same either way; only the wait after the turn is shorter
// (docs/voice.md, "Hearing the turn's end ahead").

/** Caller frames waiting for voice activity detection before new ones are dropped (10 s). */
const MAX_FRAMES_BEHIND = 500;
/** After the agent's last line, the longest its audio may take to play before the stream closes. */
const PLAYOUT_LIMIT_MS = 60_000;
/** The person hung up mid-sentence: how long their last words may take to be transcribed. */
const LAST_WORDS_LIMIT_MS = 10_000;
/** μ-law at 8 kHz: 8 samples (bytes) a millisecond. */
const SAMPLES_PER_MS = 8;

export interface CallAudioDeps {
  callId: string;
  /** The call workflow the person's turns go to (known once the call is taken). */
  callWorkflowId: string | null;
  temporal: Client;
  stt: SpeechToText;
  /** The agent's language, for the transcription (BCP 47). */
  language: string;
  detector: TurnDetector;
  voice: AgentVoice;
  recording: CallRecording | null;
  /** Closes the client's socket. */
  close(code: number, reason: string): void;
  out: CallAudioOut;
  /** Milliseconds on the call's clock (since its stream started). */
  clock: () => number;
  /** Epoch ms of the call clock's 0. */
  startedAt: number;
  logger: Logger;
  /** The agent's runtime, for the turns the gateway takes; null: the workflow keeps them. */
  voiceRuntime: VoiceRuntime | null;
  /** The database, for those turns' lines. */
  em: () => EntityManager;
  /** VOICE_PREEMPTIVE_GENERATION: the answer is asked for during the person's pause (turns in the gateway only). */
  preemptiveGeneration: boolean;
  /**
   * The client tries a transfer's target itself and reports whether it answered (`transfer: report`
   * in its `start`: the SIP side), so the stream stays open until then; other clients are closed
   * with the target in the close reason.
   */
  reportsTransfers?: boolean;
  /**
   * An outbound phone call that detects answering machines, on a carrier that cannot tell who
   * answered (the SIP side): the gateway hears whether the far end spoke at pick-up, and the beep.
   */
  screensPickUp?: boolean;
}

/** What the call's audio sends the client: the agent's voice, and a transfer's target. */
export interface CallAudioOut extends AgentAudioOut {
  /** The typed `transfer` message (stream-messages.ts): the SIP side dials this target, never a close reason. */
  transfer(to: string): void;
}

export type CallAudioEnd = 'caller_hung_up' | 'released' | 'transferred';

export class CallAudio {
  /** The person's audio heard so far, in ms: each message counts as long as it is (10 to 100 ms), not as one 20 ms frame. */
  private heardMs = 0;
  private framesBehind = 0;
  private detection: Promise<void> = Promise.resolve();
  /** The person's turns, transcribed and sent one after the other. */
  private turns: Promise<void> = Promise.resolve();
  private utterances = 0;
  /** The speech being heard: whether the agent was speaking when it began, and whether it lasted long enough to barge in. */
  private speech: { overAgent: boolean; confirmed: boolean } | null = null;
  /** A barge-in waiting to go to the workflow with the person's next line. */
  private interrupted: CallerSpeech['interrupted'] | undefined;
  /** The person's lines after transcription, answered here or sent to the workflow, one after the other. */
  private agentTurns: Promise<void> = Promise.resolve();
  /** The last utterance handed on (answered here or sent): the workflow takes its turns back only once it has it. */
  private lastSent = -1;
  /** Lines handed on whose turn is not over yet (answered here or sent). */
  private linesInFlight = 0;
  /** The transcription of the person's current pause, if they paused. */
  private readonly heardAhead = new HeardAhead((pause, signal) => this.transcribe(pause, signal));
  private readonly outbox: WorkflowOutbox;
  private readonly loop: TurnLoop | null;
  /** The caller's keys, as turns of their own (media/keypad-turn.ts). */
  private readonly keypad = new KeypadTurn({
    clock: () => this.deps.clock(),
    ended: (turn) => this.keypadLine(turn),
  });
  private readonly stopTurns = new AbortController();
  private ending: CallAudioEnd | null = null;
  /** What the first moments say of who answered (screensPickUp), else null. */
  readonly pickUp: PickUpScreen | null;
  /** A reported transfer under way: its target. The person's audio is recorded, not turned into turns. */
  private transferringTo: string | null = null;
  private resolveEnded!: () => void;
  /** Resolves when the call's audio is over (the media session, lib/media/media-session.ts). */
  readonly ended = new Promise<void>((resolve) => {
    this.resolveEnded = resolve;
  });

  constructor(private readonly deps: CallAudioDeps) {
    this.outbox = new WorkflowOutbox({
      temporal: deps.temporal,
      workflowId: () => this.deps.callWorkflowId,
      callId: deps.callId,
      logger: deps.logger,
    });
    this.pickUp = deps.screensPickUp
      ? new PickUpScreen({
          beep: () => this.afterGreeting({ type: 'beep' }),
          quiet: () => this.afterGreeting({ type: 'quiet' }),
        })
      : null;
    this.loop = deps.voiceRuntime
      ? new TurnLoop({
          callId: deps.callId,
          em: deps.em,
          voiceRuntime: deps.voiceRuntime,
          logger: deps.logger,
          signal: this.stopTurns.signal,
          // The turn's words go straight to this call's voice, as the workflow's commands would.
          carrier: {
            saySentence: async ({ index, seq, text }) => {
              await this.command({ type: 'sentence', index, seq, text });
            },
            say: async ({ index, text, hangUp }) =>
              (await this.command({ type: 'say', index, text, ...(hangUp ? { hangUp } : {}) })) as {
                firstAudioAt: number | null;
              },
            sendDigits: async ({ index, digits }) => {
              await this.command({ type: 'digits', index, digits });
            },
          },
        })
      : null;
  }

  get callId(): string {
    return this.deps.callId;
  }

  /** Answers asked for at a pause: taken by their turn, or thrown away. */
  get answersAhead(): { taken: number; dropped: number } {
    return this.loop?.answersAhead ?? { taken: 0, dropped: 0 };
  }

  /** The person's next audio (μ-law at 8 kHz, a sample a byte: 10 to 100 ms a message), in order. */
  hear(payload: Uint8Array): void {
    if (this.ending) return;
    const atMs = this.heardMs;
    const untilMs = atMs + payload.length / SAMPLES_PER_MS;
    this.heardMs = untilMs;
    const samples = decodeMulaw(payload);
    this.deps.recording?.caller(samples, atMs);
    this.pickUp?.heard(samples, atMs);
    // The far end is being handed over: what it hears (ringing, the target) is not the agent's to answer.
    if (this.transferringTo) return;
    if (this.framesBehind >= MAX_FRAMES_BEHIND) return; // detection fell behind: bounded, not queued forever
    this.framesBehind++;
    const arrived = performance.now();
    this.detection = this.detection
      .then(() => this.deps.detector.push(samples, atMs))
      .then((events) => {
        for (const event of events) {
          if (event.type === 'speech_started' || event.type === 'turn_ended') {
            mediaTurnDetectionLag.observe({ event: event.type }, (performance.now() - arrived) / 1000);
          }
          this.onTurnEvent(event);
        }
        this.pickUp?.detected(untilMs, events);
      })
      .catch((error: unknown) =>
        this.deps.logger.error('voice activity detection failed', { error: `${error}` }),
      )
      .finally(() => {
        this.framesBehind--;
      });
  }

  /**
   * A key the person pressed (Media Streams `dtmf`; RFC 4733 or SIP INFO, which the SIP side
   * turns into the same message): the first key of a turn stops the agent (a barge-in), and the
   * keys become a line `[keypad] …` once `#` is pressed or 2 s pass without another.
   */
  pressed(digit: string): void {
    if (this.ending || this.transferringTo) return;
    if (!this.keypad.press(digit)) return;
    this.loop?.dropPrepared();
    const interruption = this.deps.voice.bargeIn();
    if (interruption) {
      mediaBargeIns.inc();
      this.interrupted = interruption;
      this.deps.logger.info('barge-in by a key', { callId: this.callId, ...interruption });
    }
  }

  /** The keypad turn is over: its line goes after the person's spoken turns before it. */
  private keypadLine(turn: KeypadTurnEnded): void {
    if (this.ending) return;
    this.turns = this.turns.then(() => {
      const speech: CallerSpeech = {
        utterance: this.utterances++,
        text: keypadLineText(turn.digits),
        startedAtSeconds: turn.startedAtMs / 1000,
        endedAtSeconds: turn.endedAtMs / 1000,
        ...(this.interrupted ? { interrupted: this.interrupted } : {}),
      };
      this.interrupted = undefined;
      this.deliver(speech);
      this.deps.logger.info('caller keypad turn', { callId: this.callId, utterance: speech.utterance });
    });
  }

  markEchoed(name: string): void {
    this.deps.voice.markEchoed(name);
  }

  /** A command of the call workflow's carrier; the answer goes back to it. */
  async command(command: MediaCommand): Promise<Record<string, unknown>> {
    const { voice } = this.deps;
    // The call is ending: nothing more is played (a line the person hung up on is not heard).
    if (this.ending && command.type !== 'answer') return command.type === 'say' ? { firstAudioAt: null } : {};
    switch (command.type) {
      case 'answer':
        this.deps.callWorkflowId = command.callWorkflowId;
        return {};
      case 'connect_agent':
        if (command.opening) await voice.say(command.opening.index, command.opening.text);
        return {};
      case 'sentence':
        voice.takeSentence(command.index, command.seq, command.text);
        return {};
      case 'say': {
        const played = await voice.say(command.index, command.text);
        if (command.hangUp) void this.endFromOurSide('released', 1000, 'the agent hung up');
        return played;
      }
      case 'digits':
        await voice.pressKeys(command.index, command.digits);
        return {};
      case 'transfer':
        if (this.deps.reportsTransfers) {
          void this.handOverReported(command.to);
          return { transfer: 'reported' };
        }
        // The target goes typed, right before the close: the SIP side dials only that. The close
        // reason still names it for other Media Streams clients.
        void this.endFromOurSide('transferred', 1000, `transferred to ${command.to}`, () =>
          this.deps.out.transfer(command.to),
        );
        return { transfer: 'handed_over' };
      case 'release':
        void this.endFromOurSide(
          'released',
          1000,
          command.reason === 'cancel' ? 'canceled' : 'the agent hung up',
        );
        return {};
      case 'take_turns':
        return { turns: this.loop ? this.loop.take(command, this.lastSent) : 'never' };
    }
  }

  /**
   * A transfer the client reports: once the agent's last audio has played, the typed `transfer`
   * goes and the stream stays open while the client tries the target (telephony spec section 1).
   */
  private async handOverReported(to: string): Promise<void> {
    if (this.transferringTo) return;
    this.transferringTo = to;
    await this.deps.voice.played(PLAYOUT_LIMIT_MS);
    if (!this.ending) this.deps.out.transfer(to);
  }

  /**
   * The client's report of that transfer (its `transfer_connected` or `transfer_failed` callback,
   * media/carrier-callbacks.ts), told to the workflow in order with the call's other news; resolves
   * once told. Connected: the call is the target's, its audio here is over. Failed: the person is
   * still here, and their turns are heard again.
   */
  async transferReported(report: TransferReport): Promise<void> {
    if (this.ending) return;
    this.transferringTo = null;
    if (!report.connected) {
      await this.callBack({ type: 'transfer_failed', failure: report.failure });
      return;
    }
    this.ending = 'transferred';
    await this.callBack({ type: 'transfer_connected' });
    this.deps.close(1000, 'transferred');
    await this.finish();
  }

  /**
   * An answering machine's beep or the end of its greeting (media/pick-up-screen.ts) goes to the
   * workflow as a carrier's callback (workflows/call/screen.ts), after the greeting: its turn ends
   * here, and its words go first, so the transcript keeps the greeting before the message.
   */
  private afterGreeting(callback: CarrierCallback): void {
    this.detection = this.detection.then(() => {
      const greeting = this.deps.detector.flush();
      if (greeting) this.onTurnEvent(greeting);
    });
    void this.detection
      .then(() => withLimit(this.turns, LAST_WORDS_LIMIT_MS))
      .then(() => this.callBack(callback));
  }

  /** The person hung up (`stop`, or the socket closed): their last words, then the hang-up, go to the workflow. */
  async callerHungUp(): Promise<void> {
    if (this.ending) return;
    this.ending = 'caller_hung_up';
    const atSeconds = this.deps.clock() / 1000;
    await this.detection;
    const last = this.deps.detector.flush();
    if (last) this.onTurnEvent(last);
    await withLimit(this.turns, LAST_WORDS_LIMIT_MS);
    // A turn of the agent's in flight is told before the hang-up (the lines are in that order).
    await withLimit(this.agentTurns, LAST_WORDS_LIMIT_MS);
    // Queued after the last words; not waited for: the caller is gone, so the call's audio
    // (socket, recording, voice) is released now, whatever Temporal's state. The outbox goes on
    // telling the workflow (told()); the media session waits for that (media-session-worker.ts).
    void this.callBack({ type: 'hung_up', atSeconds });
    this.deps.close(1000, 'stopped');
    await this.finish();
  }

  /** Everything this call's audio had to tell its workflow went through (or was given up). */
  told(): Promise<void> {
    return this.outbox.drained();
  }

  /** The gateway is stopping: the socket closes; the workflow learns it from the media session (media-session-worker.ts). */
  async abandon(): Promise<void> {
    this.ending ??= 'released';
    this.deps.close(1001, 'the media gateway is stopping');
    await this.finish();
  }

  private onTurnEvent(event: TurnEvent): void {
    if (event.type === 'speech_started') {
      this.dropHeardAhead();
      this.speech = { overAgent: this.deps.voice.speaking(), confirmed: false };
      return;
    }
    if (event.type === 'speech_resumed') {
      this.dropHeardAhead();
      return;
    }
    if (event.type === 'speech_paused') {
      this.hearAhead(event);
      return;
    }
    if (event.type === 'speech_confirmed') {
      if (this.speech) this.speech.confirmed = true;
      // Barge-in: the person has spoken long enough over the agent to stop it.
      const interruption = this.deps.voice.bargeIn();
      if (interruption) {
        mediaBargeIns.inc();
        this.interrupted = interruption;
        this.deps.logger.info('barge-in', { callId: this.callId, ...interruption, atMs: event.atMs });
      }
      return;
    }
    const speech = this.speech;
    this.speech = null;
    // A short sound while the agent spoke (an "mm-hm", a cough) neither stopped it nor is a line;
    // the same short word in the agent's silence ("Hello?") is one.
    if (speech?.overAgent && !speech.confirmed) {
      this.deps.logger.info('short sound over the agent: no turn', { callId: this.callId });
      this.heardAhead.drop();
      this.loop?.dropPrepared();
      return;
    }
    const speechEndedAt = this.deps.startedAt + event.endedAtMs;
    // When the turn ended: the endpointing wait is over, so what follows is the service's and STT's.
    const turnEndedAt = Date.now();
    // The pause's transcription is the turn's when no speech came after it (the same audio).
    const heard = this.heardAhead.takeFor(event);
    if (!heard) this.loop?.dropPrepared();
    this.turns = this.turns.then(() => {
      const sttStartedAt = heard?.requestedAt ?? Date.now();
      const text = heard ? heard.text.catch(() => this.transcribe(event)) : this.transcribe(event);
      return text.then(
        (words) =>
          this.sendLine(event, words, {
            speechEndedAt,
            endpointedMs: turnEndedAt - speechEndedAt,
            sttMs: (heard?.answeredAt ?? Date.now()) - sttStartedAt,
            sttAfterTurnMs: Math.max(0, Date.now() - turnEndedAt),
            heardAhead: heard !== null,
          }),
        (error: unknown) => {
          this.deps.logger.error('speech not recognised', { callId: this.callId, error: `${error}` });
          // After the turn in flight is told: the workflow's apology goes after its lines.
          this.agentTurns = this.agentTurns.then(() => this.callBack({ type: 'speech_failed' }));
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
    // A short sound over the agent will be no turn (onTurnEvent): nothing to hear ahead.
    if (this.ending || (this.speech?.overAgent && !this.speech.confirmed)) return;
    const ahead = this.heardAhead.begin(event);
    ahead.text.then(
      (text) => {
        const words = text.trim();
        if (!this.heardAhead.isCurrent(ahead) || !words || !this.deps.preemptiveGeneration) return;
        if (!this.loop?.holding || this.linesInFlight > 0 || this.ending) {
          this.deps.logger.debug('no answer ahead: the turns are the workflow’s, or the agent is answering', {
            callId: this.callId,
          });
          return;
        }
        this.loop
          .prepare({
            text: words,
            startedAtSeconds: event.startedAtMs / 1000,
            ...(this.interrupted ? { interrupted: this.interrupted } : {}),
          })
          .catch((error: unknown) =>
            this.deps.logger.warn('answer ahead not begun', { callId: this.callId, error: `${error}` }),
          );
      },
      () => {}, // the turn transcribes again if it ends with this audio (onTurnEvent)
    );
  }

  /** The person went on from their pause: its transcription and the answer asked for it are dropped. */
  private dropHeardAhead(): void {
    if (this.heardAhead.drop()) this.loop?.dropPrepared();
  }

  private transcribe(
    event: Extract<TurnEvent, { type: 'turn_ended' } | { type: 'speech_paused' }>,
    signal?: AbortSignal,
  ): Promise<string> {
    return timed(mediaSttDuration, () =>
      this.deps.stt.transcribe(
        { sampleRate: 8000, samples: event.audio },
        { language: this.deps.language, ...(signal ? { signal } : {}) },
      ),
    );
  }

  /** Caller frames waiting for voice activity detection (the gateway's `media_frames_behind`). */
  get framesWaiting(): number {
    return this.framesBehind;
  }

  private async sendLine(
    event: Extract<TurnEvent, { type: 'turn_ended' }>,
    text: string,
    timing: {
      speechEndedAt: number;
      endpointedMs: number;
      sttMs: number;
      sttAfterTurnMs: number;
      heardAhead: boolean;
    },
  ): Promise<void> {
    const { speechEndedAt } = timing;
    const words = text.trim();
    if (!words) {
      // Nothing was said (noise, a cough): no line; a barge-in waits for the next one.
      this.deps.logger.info('caller turn without words', { callId: this.callId, sttMs: timing.sttMs });
      this.loop?.dropPrepared();
      return;
    }
    const speech: CallerSpeech = {
      utterance: this.utterances++,
      text: words,
      startedAtSeconds: event.startedAtMs / 1000,
      endedAtSeconds: event.endedAtMs / 1000,
      speechTiming: { speechEndedAt, transcribedAt: Date.now() },
      ...(this.interrupted ? { interrupted: this.interrupted } : {}),
    };
    this.interrupted = undefined;
    this.deliver(speech);
    this.deps.logger.info('caller turn', {
      callId: this.callId,
      utterance: speech.utterance,
      transcriptMs: speech.speechTiming!.transcribedAt - speechEndedAt,
      // Its parts: the silence that ended the turn (VOICE_ENDPOINTING_MS and detection), the
      // transcription itself (queueing at the speech server included), begun at the pause
      // (`heardAhead`) or when the turn ended, and the part of it the turn waited for.
      endpointedMs: timing.endpointedMs,
      sttMs: timing.sttMs,
      sttAfterTurnMs: timing.sttAfterTurnMs,
      heardAhead: timing.heardAhead,
    });
  }

  /**
   * The person's line, in order: answered here while the turns are the gateway's (the person did
   * not hang up), else sent to the workflow, which answers it.
   */
  private deliver(speech: CallerSpeech): void {
    this.lastSent = speech.utterance;
    this.linesInFlight++;
    this.agentTurns = this.agentTurns
      .then(async () => {
        if (this.loop?.holding && !this.ending) {
          void this.outbox.send(gatewayTurnSignal, await this.loop.turn(speech));
        } else {
          this.loop?.dropPrepared();
          void this.outbox.send(callerSpeechSignal, speech);
        }
      })
      .catch((error: unknown) =>
        this.deps.logger.error('caller line not handled', { callId: this.callId, error: `${error}` }),
      )
      .finally(() => {
        this.linesInFlight--;
      });
  }

  private callBack(callback: CarrierCallback): Promise<void> {
    return this.outbox.send(carrierCallbackSignal, callback);
  }

  /**
   * Our side ends the call: the agent's last audio plays out, then `lastMessage` goes (a transfer's
   * target: not before the audio, or the caller would be handed over mid-line), then the socket closes.
   */
  private async endFromOurSide(
    how: CallAudioEnd,
    code: number,
    reason: string,
    lastMessage?: () => void,
  ): Promise<void> {
    if (this.ending) return;
    this.ending = how;
    await this.deps.voice.played(PLAYOUT_LIMIT_MS);
    lastMessage?.();
    this.deps.close(code, reason);
    await this.finish();
  }

  private finished = false;
  private async finish(): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    this.stopTurns.abort();
    this.keypad.stop();
    // For the voice bench and operators: how often the answer asked for at a pause was the turn's.
    if (this.loop)
      this.deps.logger.info('call audio over', { callId: this.callId, answersAhead: this.answersAhead });
    this.deps.voice.stop();
    await this.deps.recording?.close();
    this.resolveEnded();
  }
}

async function withLimit(work: Promise<unknown>, limitMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise((resolve) => (timer = setTimeout(resolve, limitMs)))]).finally(() =>
    clearTimeout(timer),
  );
}
