import { readMediaCommandAnswer } from '../media/media-command-schema.js';
import {
  type MediaCommand,
  type MediaCommandAnswer,
  mediaControlPath,
  type TakeTurns,
  type TurnsHandOver,
} from '../media/media-control.js';
import { mediaTaskQueue } from '../media/media-session.js';
import type { AnswerRequest, CallMedia, SpeechPlayed, TransferHandOver } from './carrier.js';
import { postControl } from './control-request.js';

// The carrier port's side of a call whose audio a media gateway holds (a Media Streams call): each
// request is a command to the gateway's control API (media/control-api.ts), where the call's
// stream lives. A gateway that no longer holds the call (the person hung up, the stream is over)
// answers 404: like a far end that is gone, nothing is left to hear or release, so that is not a
// failure. A gateway that cannot be reached, or fails, is: the step is retried by its activity.

/** One control request may take this long; `say` waits for the line's audio to be made. */
const CONTROL_TIMEOUT_MS = 30_000;

export class MediaGatewayError extends Error {
  override name = 'MediaGatewayError';
}

export class MediaGatewayCarrier {
  constructor(private readonly options: { token: string; taskQueuePrefix: string }) {}

  async answer(gateway: string, request: AnswerRequest): Promise<CallMedia> {
    await this.command(gateway, request.callId, { type: 'answer', callWorkflowId: request.callWorkflowId });
    return this.callMedia(gateway);
  }

  /** Where a call on `gateway` is held: the task queue of the gateway's media sessions. */
  callMedia(gateway: string): CallMedia {
    return { taskQueue: mediaTaskQueue(this.options.taskQueuePrefix, gateway) };
  }

  async connectAgent(
    gateway: string,
    request: { callId: string; opening: { index: number; text: string } | null },
  ): Promise<void> {
    await this.command(gateway, request.callId, { type: 'connect_agent', opening: request.opening });
  }

  async saySentence(
    gateway: string,
    request: { callId: string; index: number; seq: number; text: string },
  ): Promise<void> {
    const { callId, ...sentence } = request;
    await this.command(gateway, callId, { type: 'sentence', ...sentence });
  }

  async say(
    gateway: string,
    request: { callId: string; index: number; text: string; hangUp?: boolean },
  ): Promise<SpeechPlayed | undefined> {
    const { callId, ...line } = request;
    return this.command(gateway, callId, { type: 'say' as const, ...line });
  }

  /** Keys pressed: the gateway plays them as in-band DTMF tones on the call's audio. */
  async sendDigits(
    gateway: string,
    request: { callId: string; index: number; digits: string },
  ): Promise<void> {
    const { callId, index, digits } = request;
    await this.command(gateway, callId, { type: 'digits', index, digits });
  }

  /**
   * `reported`: the gateway's client (the SIP side) reports the outcome as a callback; `bridge`
   * (only when `bridgeable`: the leg can be dialled with audio to the gateway): the workflow dials
   * the target and the gateway joins the two; `refused` when neither (nobody could tell whether the
   * target answered) or the gateway no longer holds the call.
   */
  async transfer(
    gateway: string,
    request: { callId: string; to: string; mode?: 'cold' | 'warm'; bridgeable: boolean },
  ): Promise<TransferHandOver> {
    const { callId, to, mode, bridgeable } = request;
    const command = { type: 'transfer' as const, to, bridgeable, ...(mode ? { mode } : {}) };
    const answer = await this.command(gateway, callId, command);
    return answer?.transfer ?? 'refused';
  }

  /** A transfer's leg `legId` may attach its stream at the gateway holding call `callId`; its news goes to `legWorkflowId`. */
  async expectLeg(gateway: string, request: { callId: string; legId: string; legWorkflowId: string }) {
    const { callId, ...leg } = request;
    const answer = await this.command(gateway, callId, { type: 'expect_leg' as const, ...leg });
    if (!answer) throw new MediaGatewayError(`media gateway ${gateway} no longer holds call ${callId}`);
  }

  /** Joins the call and its answered leg at the gateway; false when either is gone. */
  async bridge(gateway: string, request: { callId: string; legId: string }): Promise<boolean> {
    const answer = await this.command(gateway, request.callId, {
      type: 'bridge' as const,
      legId: request.legId,
    });
    return answer?.bridged ?? false;
  }

  async release(gateway: string, request: { callId: string; reason: 'hang_up' | 'cancel' }): Promise<void> {
    await this.command(gateway, request.callId, { type: 'release', reason: request.reason });
  }

  /** `take_turns`: a gateway that no longer holds the call, or answers otherwise, takes none. */
  async handOverTurns(
    gateway: string,
    request: { callId: string } & Omit<TakeTurns, 'type'>,
  ): Promise<TurnsHandOver> {
    const { callId, ...handOver } = request;
    const answer = await this.command(gateway, callId, { type: 'take_turns' as const, ...handOver });
    return answer?.turns ?? 'never';
  }

  /**
   * The gateway's answer, checked against the command's answer schema (media-command-schema.ts),
   * or undefined when it no longer holds the call.
   */
  private async command<C extends MediaCommand>(
    gateway: string,
    callId: string,
    command: C,
  ): Promise<MediaCommandAnswer<C> | undefined> {
    const answer = await postControl(
      new URL(mediaControlPath(callId), gateway),
      { token: this.options.token, body: command, timeoutMs: CONTROL_TIMEOUT_MS },
      (error) =>
        new MediaGatewayError(`media gateway ${gateway} not reached (${command.type}): ${String(error)}`),
    );
    if (answer.status === 404) return undefined;
    const { body } = answer;
    if (!answer.ok) {
      throw new MediaGatewayError(
        `media gateway ${gateway} answered ${answer.status} to ${command.type}: ${String(body.error ?? '')}`,
      );
    }
    const checked = readMediaCommandAnswer(command.type, body);
    if ('error' in checked) {
      throw new MediaGatewayError(`media gateway ${gateway} answered ${command.type} with ${checked.error}`);
    }
    return checked.answer as MediaCommandAnswer<C>;
  }
}
