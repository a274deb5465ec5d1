import type { CallChannel } from '../../db/entities/index.js';
import type { TakeTurns, TurnsHandOver } from '../media/media-control.js';

// The carrier port: the telephone network as the call workflow sees it. Every outcome of a
// request here (ringing, answered, busy, what the person says, their hang-up) comes back later
// as an asynchronous callback into the call workflow (workflows/call-messages.ts), the way a
// provider's status and media callbacks would; no method waits for the far end.

export interface DialRequest {
  callId: string;
  /** Where callbacks go. */
  callWorkflowId: string;
  to: string;
  from: string | null;
  ringTimeoutSeconds: number;
  /**
   * The media gateway (control URL) holding the call's audio: the far end answers with a Media
   * Streams connection to it (`mediaStream`: the speaking simulator, the SIP side). Unset: a
   * text-only call.
   */
  mediaGateway?: string;
  /** With `mediaGateway`: the stream the far end opens, with the call's own token. */
  mediaStream?: MediaStreamAccess;
  /**
   * A transfer's leg (its `callId` is the leg's own): the call it is dialled for. A call whose audio
   * a gateway holds gets the leg's audio there too, to be bridged (media/transfer-legs.ts).
   */
  legOf?: string;
}

/**
 * Where a call's far end opens its Media Streams connection, and the call's own stream token
 * (lib/media/stream-token.ts).
 */
export interface MediaStreamAccess {
  /** ws://HOST:MEDIA_PORT/media/streams */
  url: string;
  token: string;
}

/** A call that came in (lib/carrier/incoming-call.ts) and that the service takes. */
export interface AnswerRequest {
  callId: string;
  /** Where callbacks go. */
  callWorkflowId: string;
  channel: CallChannel;
  /** Who is calling: their number (phone), or the label a web call was started with; null when unknown. */
  caller: string | null;
  /** Who is at the far end: the simulator's scripted person (default), or a person in the dashboard's test panel. */
  farEnd?: 'simulator' | 'browser';
  /** A test run's call: the far end is a caller the language model plays from this prompt. */
  testCaller?: { prompt: string; maxTurns: number };
  /** The media gateway (control URL) holding the call's audio: the simulated caller speaks there. Unset: text. */
  mediaGateway?: string;
  /** With `mediaGateway`: the stream the simulated caller opens, with the call's own token. */
  mediaStream?: MediaStreamAccess;
}

/** Where a call's audio is held: the media gateway whose `holdMedia` activity lives on `taskQueue`. */
export interface CallMedia {
  taskQueue: string;
}

/** What playing a line took, for a call with audio: when its first audio left (epoch ms; null: none did). */
export interface SpeechPlayed {
  firstAudioAt: number | null;
}

/**
 * How a transfer was handed over (`Carrier.transfer`): `bridge`, not yet: the workflow dials the
 * target as a leg of the call (`DialRequest.legOf`) and joins the two once they answered (`bridge`).
 * `refused`: not made, because its outcome could not be known (telephony spec section 1: a transfer
 * is `connected` only once the target answered) or the call's audio is already over.
 */
export type TransferHandOver = 'handed_over' | 'reported' | 'bridge' | 'refused';

/** A request about a transfer's leg names the call it is of (a leg has no Call row of its own). */
export interface LegOf {
  legOf?: string;
}

export interface Carrier {
  /**
   * Places the call. Idempotent per call id: a retried dial never rings twice. For a call with
   * audio, says where it is held (the call workflow watches that gateway's session).
   */
  dial(request: DialRequest): Promise<CallMedia | undefined>;
  /**
   * Picks up a call that came in and connects the caller's audio. Idempotent per call id. For a
   * call with audio, says where it is held (the call workflow watches that gateway's session).
   */
  answer(request: AnswerRequest): Promise<CallMedia | undefined>;
  /** Joins the agent's audio to the answered call; `opening` is played first (null: the agent listens). */
  connectAgent(
    request: { callId: string; opening: { index: number; text: string } | null } & LegOf,
  ): Promise<void>;
  /**
   * Plays one agent line; the far end ignores a line index it already heard. With `hangUp` the
   * agent hangs up once the line is said: one request for the last line and the release.
   */
  say(request: {
    callId: string;
    index: number;
    text: string;
    hangUp?: boolean;
  }): Promise<SpeechPlayed | undefined>;
  /**
   * One sentence of agent line `index` while the answer is still being made (`seq` counts them
   * from 0), so a carrier with audio starts speaking before the line is whole; `say` then brings
   * the whole line (which it plays from the first sentence not yet played). Optional: a carrier
   * of whole lines (the simulator) has none.
   */
  saySentence?(request: { callId: string; index: number; seq: number; text: string }): Promise<void>;
  /**
   * Presses keys on the call (telephony spec section 7): `digits` of `[0-9*#w]` (`w` a 0.5 s
   * pause), agent line `index` (`[keypad] …`); the far end ignores a line index it already heard.
   * Optional: a carrier that cannot (a test's stand-in) has none, and a turn that presses keys fails.
   */
  sendDigits?(request: { callId: string; index: number; digits: string }): Promise<void>;
  /**
   * Hands the far end over to `to`; the agent leaves the call. `reported`: the far end's side
   * (the SIP side) tries the target and reports whether it answered, as a `transfer_connected` or
   * `transfer_failed` callback; until then the caller is still on the call. `refused`: nothing was
   * handed over and the call goes on. Otherwise (nothing, or `handed_over`: the simulator's text
   * far ends) the call is the target's from here.
   */
  transfer(request: {
    callId: string;
    to: string;
    mode?: 'cold' | 'warm';
  }): Promise<TransferHandOver | undefined>;
  /**
   * After a `bridge` answer: joins the call and its leg `legId`, whose person answered; the agent
   * leaves both. False when either is gone already (nothing was joined). Optional: only a carrier
   * that answers `bridge` has it.
   */
  bridge?(request: { callId: string; legId: string }): Promise<boolean>;
  /** Ends the call from our side: hang up a connected call, or cancel a dial still ringing. */
  release(request: { callId: string; reason: 'hang_up' | 'cancel' } & LegOf): Promise<void>;
  /**
   * A call whose audio a media gateway holds: hands the call's turns to the gateway, which then
   * answers the person itself and reports each turn to the call workflow (lib/media/media-control.ts,
   * `take_turns`). Absent, or `never`: the workflow takes every turn (a text call; a far end that
   * paces its script on the agent's lines as text).
   */
  handOverTurns?(request: { callId: string } & Omit<TakeTurns, 'type'>): Promise<TurnsHandOver>;
}
