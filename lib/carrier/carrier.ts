import type { CallChannel } from '../../db/entities/index.js';

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
}

export interface Carrier {
  /** Places the call. Idempotent per call id: a retried dial never rings twice. */
  dial(request: DialRequest): Promise<void>;
  /** Picks up a call that came in and connects the caller's audio. Idempotent per call id. */
  answer(request: AnswerRequest): Promise<void>;
  /** Joins the agent's audio to the answered call; `opening` is played first (null: the agent listens). */
  connectAgent(request: { callId: string; opening: { index: number; text: string } | null }): Promise<void>;
  /**
   * Plays one agent line; the far end ignores a line index it already heard. With `hangUp` the
   * agent hangs up once the line is said: one request for the last line and the release.
   */
  say(request: { callId: string; index: number; text: string; hangUp?: boolean }): Promise<void>;
  /** Hands the far end over to `to`; the agent leaves the call. */
  transfer(request: { callId: string; to: string }): Promise<void>;
  /** Ends the call from our side: hang up a connected call, or cancel a dial still ringing. */
  release(request: { callId: string; reason: 'hang_up' | 'cancel' }): Promise<void>;
}
