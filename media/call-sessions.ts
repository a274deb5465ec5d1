import type { CallAudio } from './call-audio.js';

// The calls whose audio this gateway holds, by call id. A command of the call workflow's carrier
// can come a moment before its stream is registered (the workflow starts while the gateway still
// sets the call up), so a lookup waits a little for a call about to arrive.

/** How long a command waits for its call's stream to be registered. */
const ARRIVAL_WAIT_MS = 5000;
/** A transfer's leg is expected this long (its ring time is at most 30 s, plus the dial's own retries). */
const LEG_EXPECTED_MS = 5 * 60_000;

/** A transfer's leg a call expects (`expect_leg`): the call it belongs to, and the workflow its news goes to. */
export interface TransferLeg {
  callId: string;
  legWorkflowId: string;
}

export class CallSessions {
  private readonly sessions = new Map<string, CallAudio>();
  private readonly waiting = new Map<string, ((session: CallAudio) => void)[]>();
  /** Calls a stream has claimed whose audio is still being opened. */
  private readonly claimed = new Set<string>();
  /** Sessions not over, or over with signals still on their way to the workflow. */
  private readonly unsettled = new Set<CallAudio>();
  /** Transfer legs whose stream may attach here, by leg id. */
  private readonly legs = new Map<string, TransferLeg>();
  /** Transfers bridged here and not over (media/transfer-bridge.ts). */
  private bridges = 0;
  /** Legs bridged here (a while), to the call they were joined to: a retried `bridge` finds it done. */
  private readonly bridgedLegs = new Map<string, string>();

  get size(): number {
    return this.sessions.size;
  }

  /**
   * Calls held here: those whose audio is still being opened, those whose workflow has not been
   * told all yet (a hung-up call's audio is released at once; its last signals may wait), and
   * transfers bridged here (a draining gateway lets them finish too).
   */
  get live(): number {
    return this.claimed.size + this.unsettled.size + this.bridges;
  }

  /** Leg `legId` of a transfer may attach its stream here for a while (`expect_leg`). */
  expectLeg(legId: string, leg: TransferLeg): void {
    this.legs.set(legId, leg);
    setTimeout(() => this.legs.get(legId) === leg && this.legs.delete(legId), LEG_EXPECTED_MS).unref();
  }

  /** The transfer leg `legId` is of, when one is expected here. */
  leg(legId: string): TransferLeg | undefined {
    return this.legs.get(legId);
  }

  /** Leg `legId` was joined to call `callId` here. */
  bridged(callId: string, legId: string): boolean {
    return this.bridgedLegs.get(legId) === callId;
  }

  /** A transfer bridged here (call `callId` and its leg `legId`), live until `done`. */
  holdBridge(callId: string, legId: string, done: Promise<void>): void {
    this.bridgedLegs.set(legId, callId);
    setTimeout(() => this.bridgedLegs.delete(legId), LEG_EXPECTED_MS).unref();
    this.bridges += 1;
    void done.finally(() => {
      this.bridges -= 1;
    });
  }

  /**
   * One stream per call: claims `callId` for the stream about to open its audio, at once (no await
   * between the check and the claim, so two streams racing for one call cannot both pass); null
   * when the call already has a stream or one is opening. The claim ends with `add`, or with the
   * returned release when opening failed.
   */
  claim(callId: string): (() => void) | null {
    if (this.sessions.has(callId) || this.claimed.has(callId)) return null;
    this.claimed.add(callId);
    return () => {
      this.claimed.delete(callId);
    };
  }

  add(session: CallAudio): void {
    this.claimed.delete(session.callId);
    this.sessions.set(session.callId, session);
    for (const wake of this.waiting.get(session.callId) ?? []) wake(session);
    this.waiting.delete(session.callId);
    this.unsettled.add(session);
    void session.ended.then(() => {
      if (this.sessions.get(session.callId) === session) this.sessions.delete(session.callId);
    });
    void session.ended.then(() => session.told()).finally(() => this.unsettled.delete(session));
  }

  get(callId: string): CallAudio | undefined {
    return this.sessions.get(callId);
  }

  /** The call's session, waiting up to ARRIVAL_WAIT_MS for one about to be registered; undefined when none comes. */
  async arriving(callId: string, waitMs = ARRIVAL_WAIT_MS): Promise<CallAudio | undefined> {
    const known = this.sessions.get(callId);
    if (known || waitMs <= 0) return known;
    return new Promise((resolve) => {
      const wake = (session: CallAudio | undefined) => {
        clearTimeout(timer);
        resolve(session);
      };
      const timer = setTimeout(() => {
        const list = this.waiting.get(callId)?.filter((w) => w !== wake) ?? [];
        if (list.length) this.waiting.set(callId, list);
        else this.waiting.delete(callId);
        resolve(undefined);
      }, waitMs);
      this.waiting.set(callId, [...(this.waiting.get(callId) ?? []), wake]);
    });
  }

  all(): CallAudio[] {
    return [...this.sessions.values()];
  }
}
