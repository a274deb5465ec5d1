// The media gateway's control API: what the call workflow's carrier asks of the gateway holding a
// call's audio (lib/carrier/media-gateway-carrier.ts → media/control-api.ts). One POST per command,
// JSON, with `Authorization: Bearer MEDIA_CONTROL_TOKEN`, on the gateway's control port; each is
// checked against its JSON Schema (media-command-schema.ts). 404: the gateway does not hold the
// call (any more).

export type MediaCommand =
  /** The call workflow took the call: from here on the person's turns go to it. */
  | { type: 'answer'; callWorkflowId: string }
  /** The agent joined; its opening line (or none: it listens first). */
  | { type: 'connect_agent'; opening: { index: number; text: string } | null }
  /** One sentence of agent line `index` while the rest is still being made. */
  | { type: 'sentence'; index: number; seq: number; text: string }
  /** The whole agent line `index`, played from the first sentence not yet played; answers `{ firstAudioAt }` once its audio is made. */
  | { type: 'say'; index: number; text: string; hangUp?: boolean }
  /** Keys the agent pressed (agent line `index`), played as in-band DTMF tones after its audio so far; answers once they are queued. */
  | { type: 'digits'; index: number; digits: string }
  /**
   * Hand the person over to `to`: the stream ends once the agent's last audio has played. With
   * `bridgeable` (the carrier can dial a leg with audio to this gateway) a warm transfer, and a cold
   * one whose client would only be told the target, answers `bridge`: nothing happens here yet, the
   * workflow dials the target as a leg of this call (`expect_leg`) and joins the two (`bridge`).
   */
  | { type: 'transfer'; to: string; mode?: 'cold' | 'warm'; bridgeable?: boolean }
  /** End the call from our side once the agent's last audio has played. */
  | { type: 'release'; reason: 'hang_up' | 'cancel' }
  /**
   * The call workflow hands the turns to the gateway: from here on the gateway answers the
   * person itself, writing line `nextIndex` onwards, and reports each turn (`gatewayTurn`). Taken
   * only when every utterance the gateway sent has reached the workflow (`heardThrough`, the last
   * one it saw; -1: none). Answers `{ turns: 'taken' | 'not_now' }`.
   */
  | TakeTurns
  | TransferLegCommand;

/**
 * A transfer bridged here (media/transfer-bridge.ts), sent to the call being transferred: the
 * stream of leg `legId` (the person rung, dialled through the carrier with audio to this gateway)
 * may attach, its news going to `legWorkflowId` (`expect_leg`); then the two are joined and the
 * agent leaves both (`bridge`, answering whether the leg was still there to join).
 */
export type TransferLegCommand =
  | { type: 'expect_leg'; legId: string; legWorkflowId: string }
  | { type: 'bridge'; legId: string };

/** The commands one call's audio acts on (media/call-audio.ts); the gateway itself serves a transfer's leg. */
export type CallAudioCommand = Exclude<MediaCommand, TransferLegCommand>;

export interface TakeTurns {
  type: 'take_turns';
  nextIndex: number;
  heardThrough: number;
  /** The call has tool calls stored: the model is shown them. */
  withStoredToolCalls: boolean;
}

/** The gateway's answer to `take_turns`; `never`: it does not hold the call, or cannot take its turns. */
export type TurnsHandOver = 'taken' | 'not_now' | 'never';

/**
 * What the gateway answers each command, by its `type` (checked by the carrier against
 * media-command-schema.ts): `say` when its first audio left (null: it never played), `transfer`
 * whether the client reports the outcome, `take_turns` whether the turns were taken.
 */
export interface MediaCommandAnswers {
  answer: Record<string, never>;
  connect_agent: Record<string, never>;
  sentence: Record<string, never>;
  say: { firstAudioAt: number | null };
  digits: Record<string, never>;
  transfer: { transfer: TransferAnswer };
  release: Record<string, never>;
  take_turns: { turns: TurnsHandOver };
  expect_leg: Record<string, never>;
  bridge: { bridged: boolean };
}

/**
 * `reported`: the client tries the target and reports; `bridge`: dial a leg, then `bridge`;
 * `refused`: not made, as nobody could tell whether the target answered (a client that does not
 * report, and no leg can be dialled with audio) or the call's audio is over; `handed_over`: done,
 * with no outcome to come (gateways before `refused` answered it in its place).
 */
export type TransferAnswer = 'reported' | 'handed_over' | 'bridge' | 'refused';

/** The answer to command `C`. */
export type MediaCommandAnswer<C extends MediaCommand = MediaCommand> = MediaCommandAnswers[C['type']];

/** The answer to a command that came once the call's audio was ending: nothing more plays, nothing is taken. */
export function answerOnceEnded<C extends MediaCommand>(command: C): MediaCommandAnswer<C> {
  const answers: { [T in MediaCommand['type']]?: MediaCommandAnswers[T] } = {
    say: { firstAudioAt: null },
    transfer: { transfer: 'refused' },
    take_turns: { turns: 'never' },
    bridge: { bridged: false },
  };
  return (answers[command.type] ?? {}) as MediaCommandAnswer<C>;
}

export function mediaControlPath(callId: string): string {
  return `/media/control/calls/${encodeURIComponent(callId)}`;
}

/** The Media Streams WebSocket endpoint, on the gateway's one port beside the control API. */
export const MEDIA_STREAMS_PATH = '/media/streams';

/** The Media Streams URL of the gateway whose control URL is `controlUrl` (`http://HOST:PORT`). */
export function mediaStreamsUrl(controlUrl: string): string {
  const url = new URL(MEDIA_STREAMS_PATH, controlUrl);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.toString();
}
