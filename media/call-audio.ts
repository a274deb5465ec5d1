import type { CallAudioCommand, MediaCommandAnswer } from '../lib/media/media-control.js';
import { answerOnceEnded } from '../lib/media/media-control.js';
import type { CarrierCallback, TransferReport } from '../lib/temporal/call-messages.js';
import { carrierCallbackSignal } from '../lib/temporal/call-messages.js';
import type { CallAudioDeps, CallAudioEnd } from './call-audio-ports.js';
import { recordingCut } from './call-recording.js';
import { CallerAudioIn } from './caller-audio-in.js';
import { KeypadTurn } from './keypad-turn.js';
import { GREETING_WORDS_LIMIT_MS, PickUpScreen } from './pick-up-screen.js';
import type { BridgeEnd, BridgeSide } from './transfer-bridge.js';
import { commandsCarrier, TurnLoop } from './turn-loop.js';
import { UserTurns } from './user-turns.js';
import { withLimit } from './with-limit.js';
import { WorkflowOutbox } from './workflow-outbox.js';

// One call's audio in the media gateway, as stages (docs/voice.md, "The turn loop"):
//   caller audio in     decode, record (ch. 1), pick-up screen, voice activity, turn detection  caller-audio-in.ts
//   the person's turns  barge-in (interruptions.ts), heard ahead, transcribed, a line per turn  user-turns.ts
//   the turn's owner    the gateway's loop once the workflow handed it the turns (`take_turns`),
//                       else the call workflow (`callerSpeech`; no audio in Temporal)  turn-loop.ts
//   the agent's voice   lines as commands (control-api.ts), synthesised, played, cut, recorded (ch. 2)  agent-voice.ts
//   to the workflow     everything it is told, in order                      workflow-outbox.ts
// This class wires them and owns the call's end: hang-ups, transfers (bridged: transfer-bridge.ts), the drain.

const RELEASED = { cancel: 'canceled', hang_up: 'the agent hung up' } as const; // the close's reason
/** After the agent's last line, the longest its audio may take to play before the stream closes. */
const PLAYOUT_LIMIT_MS = 60_000;
/** The person hung up mid-sentence: how long their last words may take to be transcribed. */
const LAST_WORDS_LIMIT_MS = 10_000;

export class CallAudio {
  /** The person's audio in: decoded, recorded, screened, through turn detection (media/caller-audio-in.ts). */
  private readonly callerIn: CallerAudioIn;
  private readonly outbox: WorkflowOutbox;
  private readonly loop: TurnLoop | null;
  /** The person's turns: barge-in, heard ahead, transcribed, answered here or told (media/user-turns.ts). */
  private readonly userTurns: UserTurns;
  /** The caller's keys, as turns of their own (media/keypad-turn.ts). */
  private readonly keypad = new KeypadTurn({
    clock: () => this.deps.clock(),
    ended: (turn) => this.userTurns.keypadLine(turn),
  });
  private readonly stopTurns = new AbortController();
  private ending: CallAudioEnd | null = null;
  /** What the first moments say of who answered (screensPickUp), else null. */
  readonly pickUp: PickUpScreen | null;
  /** A reported transfer under way: its target. The person's audio is recorded, not turned into turns. */
  private transferringTo: string | null = null;
  /** Joined to a transfer's other side (media/transfer-bridge.ts): the person's audio and hang-up go there. */
  private bridged: BridgeEnd | null = null;
  private readonly over = Promise.withResolvers<void>();
  /** Resolves when the call's audio is over (the media session, lib/media/media-session.ts). */
  readonly ended = this.over.promise;

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
          carrier: commandsCarrier((command) => this.command(command)),
        })
      : null;
    this.callerIn = new CallerAudioIn({
      detector: deps.detector,
      recording: deps.recording,
      pickUp: this.pickUp,
      onTurnEvent: (event) => this.userTurns.onTurnEvent(event),
      logger: deps.logger,
    });
    this.userTurns = new UserTurns({
      callId: deps.callId,
      stt: deps.stt,
      language: deps.language,
      voice: deps.voice,
      loop: this.loop,
      outbox: this.outbox,
      startedAt: deps.startedAt,
      preemptiveGeneration: deps.preemptiveGeneration,
      ending: () => this.ending !== null,
      callBack: (callback) => this.callBack(callback),
      obeyingInterruptions: [recordingCut(deps.recording)],
      speechSoFar: () => deps.detector.speechSoFar(),
      ...(deps.heardAhead ? { heardAhead: deps.heardAhead } : {}),
      logger: deps.logger,
    });
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
    // Bridged: the other side hears it. Being handed over (a reported transfer): not the agent's to answer.
    if (this.bridged) this.bridged.heard(payload);
    else if (!this.ending) this.callerIn.hear(payload, !this.transferringTo);
  }

  /** A key the person pressed (Media Streams `dtmf`; the SIP side's RFC 4733 or SIP INFO): a turn's first key
   * stops the agent (a barge-in); the keys become a line `[keypad] …` at `#` or 2 s after the last. */
  pressed(digit: string): void {
    if (this.ending || this.transferringTo) return;
    if (!this.keypad.press(digit)) return;
    this.userTurns.keyPressed();
  }

  markEchoed(name: string): void {
    this.deps.voice.markEchoed(name);
  }

  /** A command of the call workflow's carrier; its answer (media-control.ts) goes back to it. */
  async command<C extends CallAudioCommand>(command: C): Promise<MediaCommandAnswer<C>> {
    // The call is ending: nothing more is played (a line the person hung up on is not heard).
    if (this.ending && command.type !== 'answer') return answerOnceEnded(command);
    return (await this.act(command)) as MediaCommandAnswer<C>;
  }

  private async act(command: CallAudioCommand): Promise<MediaCommandAnswer> {
    const { voice } = this.deps;
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
        const played = await voice.say(command.index, command.text, command.hangUp === true);
        if (command.hangUp) void this.endFromOurSide('released', 1000, 'the agent hung up');
        return played;
      }
      case 'digits':
        await voice.pressKeys(command.index, command.digits);
        return {};
      case 'transfer':
        // Bridged here (media/transfer-bridge.ts): the workflow dials the leg; the call goes on meanwhile.
        if (command.bridgeable && (command.mode === 'warm' || !this.deps.reportsTransfers))
          return { transfer: 'bridge' };
        if (this.deps.reportsTransfers) {
          void this.handOverReported(command.to);
          return { transfer: 'reported' };
        }
        // Neither bridged nor reported: whether the target answered could never be known, so the
        // transfer is not made and the agent tells the caller (telephony spec section 1).
        return { transfer: 'refused' };
      case 'release':
        void this.endFromOurSide('released', 1000, RELEASED[command.reason]);
        return {};
      case 'take_turns':
        return { turns: this.loop ? this.loop.take(command, this.userTurns.lastSent) : 'never' };
    }
  }

  /** A transfer the client reports (spec section 1): the typed `transfer` once the agent's audio played; the stream stays open. */
  private async handOverReported(to: string): Promise<void> {
    if (this.transferringTo) return;
    this.transferringTo = to;
    await this.deps.voice.played(PLAYOUT_LIMIT_MS);
    if (!this.ending) this.deps.out.transfer(to);
  }

  /** The client's report of it (media/carrier-callbacks.ts), told in order with the call's other news; resolves once
   * told. Connected: the call is the target's, its audio here over. Failed: the person's turns are heard again. */
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

  /** An answering machine's beep or greeting's end (pick-up-screen.ts) goes to the workflow as a carrier's
   * callback (workflows/call/screen.ts) after the greeting's words, so the transcript keeps it first. */
  private afterGreeting(callback: CarrierCallback): void {
    void this.callerIn
      .flush()
      .then(() => withLimit(this.userTurns.transcribing, GREETING_WORDS_LIMIT_MS))
      .then(() => this.callBack(callback));
  }

  /** This call's stream as a side of a transfer's bridge, the other side's audio played as it comes; null once ending. */
  get bridgeSide(): BridgeSide | null {
    if (this.ending) return null;
    return {
      play: (payload) => this.deps.out.media(payload),
      hangUp: (why) => this.deps.close(1000, why),
      playedOut: () => this.deps.voice.played(PLAYOUT_LIMIT_MS),
      over: () => this.finish(),
      join: this.deps.clientJoin ?? null,
    };
  }

  /** A bridge joins this call (one with a `bridgeSide`): the agent leaves (its stages stop once its audio played), the
   * person's audio and hang-up go to `end`; over with the bridge, as the caller is on the line till then. */
  joinBridge(end: BridgeEnd): void {
    this.ending = 'transferred';
    this.bridged = end;
    void this.deps.voice.played(PLAYOUT_LIMIT_MS).then(() => this.stopStages());
  }

  /** The person hung up (`stop`, or the socket closed): their last words, then the hang-up, go to the workflow. */
  async callerHungUp(): Promise<void> {
    if (this.bridged) return this.bridged.gone();
    if (this.ending) return;
    this.ending = 'caller_hung_up';
    const atSeconds = this.deps.clock() / 1000;
    await this.callerIn.flush();
    await withLimit(this.userTurns.transcribing, LAST_WORDS_LIMIT_MS);
    // A turn of the agent's in flight is told before the hang-up (the lines are in that order).
    await withLimit(this.userTurns.answering, LAST_WORDS_LIMIT_MS);
    // Queued after the last words, not waited for: the caller is gone, the audio is released now. The
    // outbox goes on telling the workflow (told()); the media session waits for that (media-session-worker.ts).
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

  /** Caller frames waiting for voice activity detection (the gateway's `media_frames_behind`). */
  get framesWaiting(): number {
    return this.callerIn.framesWaiting;
  }

  private callBack(callback: CarrierCallback): Promise<void> {
    return this.outbox.send(carrierCallbackSignal, callback);
  }

  /** Our side ends the call: the agent's last audio plays out, then `lastMessage` goes (a transfer's
   * target: not before, or the caller is handed over mid-line), then the socket closes. */
  private async endFromOurSide(how: CallAudioEnd, code: number, reason: string) {
    if (this.ending) return;
    this.ending = how;
    await this.deps.voice.played(PLAYOUT_LIMIT_MS);
    this.deps.close(code, reason);
    await this.finish();
  }

  private async finish(): Promise<void> {
    await this.stopStages();
    this.over.resolve();
  }

  private stopped: Promise<void> | null = null;
  /** Stops each stage once: the turns, the keys, the agent's voice, the recording. */
  private stopStages(): Promise<void> {
    this.stopped ??= this.stopEachStage();
    return this.stopped;
  }
  private async stopEachStage(): Promise<void> {
    this.stopTurns.abort();
    this.keypad.stop();
    this.userTurns.stop();
    // For the voice bench and operators: how often the answer asked for at a pause was the turn's.
    if (this.loop)
      this.deps.logger.info('call audio over', { callId: this.callId, answersAhead: this.answersAhead });
    this.deps.voice.stop();
    await this.deps.recording?.close();
  }
}
